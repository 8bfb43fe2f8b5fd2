"""The file source exactly once (KIP-618) against the same source at least once, same run.

    python benchmarks/eos_source.py [--lines 500000] [--size 100] [--rounds 3]

Two distributed workers on one broker, each its own Connect cluster: one with
``exactly.once.source.support=enabled`` (a transaction per poll of ``batch.size`` lines,
the offsets written in it), one with it disabled (at least once). Each round,
FileStreamSource reads the same file of ``--lines`` lines into a fresh topic on each
cluster, one after the other; a read_committed consumer counts the records as they
become visible and the time from the first to the last is the source's (connector
start-up is printed separately). Medians of the interleaved rounds are compared.

Target: exactly once >= 0.7x at least once (issue 24).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

from benchmarks._common import broker_process, fmt_rate
from benchmarks._worker import create_topic
from sluiceway.embedded import DistributedWorkerProcess


def cluster_worker(work: Path, bootstrap: str, name: str, support: str) -> DistributedWorkerProcess:
    w = DistributedWorkerProcess(
        work,
        name,
        bootstrap,
        **{
            "group.id": f"bench-{name}",
            "config.storage.topic": f"{name}-configs",
            "offset.storage.topic": f"{name}-offsets",
            "status.storage.topic": f"{name}-status",
            "offset.storage.partitions": "5",
            "status.storage.partitions": "3",
            "offset.flush.interval.ms": "10000",
            "exactly.once.source.support": support,
        },
    )
    w.start()
    deadline = time.time() + 60
    while not w.healthy():
        if time.time() > deadline:
            raise RuntimeError(f"worker {name} did not start; see {w.log}")
        time.sleep(0.2)
    return w


def run_source(
    worker: DistributedWorkerProcess, bootstrap: str, src: Path, topic: str, n: int
) -> tuple[float, float]:
    """(seconds from the connector's creation to its first visible record, seconds from
    then to the last), as a read_committed consumer sees them."""
    create_topic(bootstrap, topic)
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"bench-count-{topic}",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
            "queued.min.messages": 1_000_000,
            "fetch.queue.backoff.ms": 10,
            "fetch.wait.max.ms": 10,
        }
    )
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    consumer.consume(1, 0.5)  # connected before the clock starts
    name = f"src-{topic}"
    config = {"connector.class": "FileStreamSource", "file": str(src), "topic": topic, "batch.size": "2000"}
    begin = time.perf_counter()
    r = httpx.put(f"{worker.url}connectors/{name}/config", json=config, timeout=60)
    r.raise_for_status()
    got, first = 0, 0.0
    deadline = begin + 600
    try:
        while got < n:
            if time.perf_counter() > deadline:
                raise TimeoutError(f"{topic}: {got} of {n} records after 600 s")
            for m in consumer.consume(10_000, 0.05):
                err = m.error()
                if err is None:
                    if not got:
                        first = time.perf_counter()
                    got += 1
                elif err.code() != KafkaError._PARTITION_EOF:
                    raise RuntimeError(str(err))
        last = time.perf_counter()
    finally:
        consumer.close()
        httpx.delete(f"{worker.url}connectors/{name}", timeout=60)
    return first - begin, last - first


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=500_000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    report(args.lines, args.size, args.rounds)
    return 0


def report(n: int, size: int, rounds: int) -> None:
    """Time both, print the rates and the ratio (also called by benchmarks/transactions.py)."""
    with tempfile.TemporaryDirectory(prefix="sluiceway-eos-bench-") as tmp:
        work = Path(tmp)
        src = work / "input.txt"
        body = "x" * (size - 8)
        with open(src, "w") as f:
            for i in range(n):
                f.write(f"{i:07d}{body}\n")
        nbytes = src.stat().st_size
        with broker_process() as (bootstrap, _broker):
            alo = cluster_worker(work, bootstrap, "alo", "disabled")
            eos = cluster_worker(work, bootstrap, "eos", "enabled")
            try:
                results: dict[str, list[tuple[float, float]]] = {"alo": [], "eos": []}
                for r in range(rounds):
                    order = [("alo", alo), ("eos", eos)]
                    for label, w in order if r % 2 == 0 else order[::-1]:  # neither always goes first
                        results[label].append(run_source(w, bootstrap, src, f"{label}-{r}", n))
            finally:
                eos.stop()
                alo.stop()
    alo_s = statistics.median(s for _, s in results["alo"])
    eos_s = statistics.median(s for _, s in results["eos"])
    print(
        f"lines: {n:,} x {size} bytes ({nbytes / 1e6:.0f} MB), one task, batch.size=2000; "
        f"median of {rounds} rounds"
    )
    print(f"FileStreamSource at least once:        {fmt_rate(n, nbytes, alo_s)}")
    print(f"FileStreamSource exactly once (poll):  {fmt_rate(n, nbytes, eos_s)}")
    print(
        "connector start until the first record: "
        f"at least once {statistics.median(a for a, _ in results['alo']) * 1000:.0f} ms, "
        f"exactly once {statistics.median(a for a, _ in results['eos']) * 1000:.0f} ms (not in the rates)"
    )
    ratio = alo_s / eos_s
    print(f"exactly once / at least once: {ratio:.2f}x (target >= 0.7x)")


if __name__ == "__main__":
    sys.exit(main())
