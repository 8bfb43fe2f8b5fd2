"""The file source exactly once (KIP-618) against the same source at least once, same run.

    python benchmarks/eos_source.py [--lines 500000] [--size 100] [--rounds 3]

Two distributed workers on one broker, each its own Connect cluster: one with
``exactly.once.source.support=enabled`` (a transaction per poll of ``batch.size`` lines,
the offsets written in it), one with it disabled (at least once). Each round,
FileStreamSource reads the same file of ``--lines`` lines into a fresh topic on each
cluster, one after the other, twice:

- **committed**: the topic's last stable offset (ListOffsets, read_committed: where a
  read_committed consumer must stop) is polled every few milliseconds; the time from the
  first record becoming visible to the last is the source's. A read_committed consumer
  then checks, untimed, that exactly ``--lines`` records are visible. This is the target's
  measure: the source alone, as Kafka's producer benchmarks measure producers.
- **read alongside**: a read_committed consumer in this process reads and counts the
  records while the source writes them, and its first-to-last time is the source's. On a
  2-core machine that consumer is a third busy process, and with exactly once every
  commit wakes it with the whole transaction at once, just as the next one starts; this
  line shows what a downstream reader costs the source.

Connector start-up is printed separately. Medians of the interleaved rounds are compared.

Target: exactly once >= 0.7x at least once, committed (issue 24).
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
from confluent_kafka import OFFSET_BEGINNING, Consumer, IsolationLevel, KafkaError, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

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


# How often the committed measure asks for the last stable offset: the timing's resolution
# (a ListOffsets round trip adds about a millisecond), under 1% of a run, and few enough
# requests (one or two per transaction) not to load the broker much.
_LSO_POLL_S = 0.005
# The last stable offset unchanged this long, at or past --lines, ends the polling. (The
# offsets count the transactions' markers too: whether every record is in is checked after.)
_SETTLED_S = 1.0


def _start(worker: DistributedWorkerProcess, src: Path, topic: str) -> str:
    name = f"src-{topic}"
    config = {"connector.class": "FileStreamSource", "file": str(src), "topic": topic, "batch.size": "2000"}
    r = httpx.put(f"{worker.url}connectors/{name}/config", json=config, timeout=60)
    r.raise_for_status()
    return name


def _consumer(bootstrap: str, topic: str) -> Consumer:
    """A read_committed consumer of the topic from its start."""
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
    return consumer


def run_source_committed(
    worker: DistributedWorkerProcess, bootstrap: str, src: Path, topic: str, n: int
) -> tuple[float, float]:
    """(seconds from the connector's creation to its first committed record, seconds from
    then to the last), by the topic's last stable offset; then checks, untimed, that a
    read_committed consumer sees exactly ``n`` records."""
    create_topic(bootstrap, topic)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    tp = TopicPartition(topic, 0)

    def stable_offset() -> int:
        futures = admin.list_offsets({tp: OffsetSpec.latest()}, isolation_level=IsolationLevel.READ_COMMITTED)
        return int(futures[tp].result(30).offset)

    stable_offset()  # connected before the clock starts
    begin = time.perf_counter()
    name = _start(worker, src, topic)
    series: list[tuple[float, int]] = []
    settled = 0.0
    deadline = begin + 600
    try:
        while True:
            offset, now = stable_offset(), time.perf_counter()
            if series and offset == series[-1][1]:
                if offset >= n and now - settled >= _SETTLED_S:
                    break
            else:
                series.append((now, offset))
                settled = now
            if now > deadline:
                raise TimeoutError(f"{topic}: last stable offset {offset} after 600 s")
            time.sleep(_LSO_POLL_S)
    finally:
        httpx.delete(f"{worker.url}connectors/{name}", timeout=60)
    first_offset, last_offset = _visible_offsets(bootstrap, topic, n)
    # The first poll that saw each record below the last stable offset (the offsets count
    # the transaction markers too, so the records' own are read back).
    if series[-1][1] <= last_offset:
        raise RuntimeError(f"{topic}: the source stalled for {_SETTLED_S} s before its last records")
    seen_first = next(t for t, o in series if o > first_offset)
    seen_last = next(t for t, o in series if o > last_offset)
    return seen_first - begin, seen_last - seen_first


def _visible_offsets(bootstrap: str, topic: str, n: int) -> tuple[int, int]:
    """The offsets of the first and the last record a read_committed consumer sees, read
    until nothing more comes for a second; raises unless it saw exactly ``n``."""
    consumer = _consumer(bootstrap, topic)
    got, first, last = 0, -1, -1
    start = quiet_since = time.perf_counter()
    try:
        while True:
            now = time.perf_counter()
            # Up to 30 s for the first record (the consumer connects first), then until a
            # second passes without one.
            if (now - start >= 30.0) if not got else (now - quiet_since >= 1.0):
                break
            batch = consumer.consume(10_000, 0.2)
            for m in batch:
                err = m.error()
                if err is None:
                    if first < 0:
                        first = m.offset()
                    last = m.offset()
                    got += 1
                elif err.code() != KafkaError._PARTITION_EOF:
                    raise RuntimeError(str(err))
            if batch:
                quiet_since = time.perf_counter()
    finally:
        consumer.close()
    if got != n:
        raise RuntimeError(
            f"{topic}: a read_committed consumer sees {got} records, not {n} (a source that "
            f"stalls for {_SETTLED_S} s near its end is stopped with its last transaction open)"
        )
    return first, last


def run_source_read_alongside(
    worker: DistributedWorkerProcess, bootstrap: str, src: Path, topic: str, n: int
) -> tuple[float, float]:
    """(seconds from the connector's creation to its first visible record, seconds from
    then to the last), as a read_committed consumer reading alongside sees them."""
    create_topic(bootstrap, topic)
    consumer = _consumer(bootstrap, topic)
    consumer.consume(1, 0.5)  # connected before the clock starts
    begin = time.perf_counter()
    name = _start(worker, src, topic)
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


MEASURES = {"committed": run_source_committed, "read alongside": run_source_read_alongside}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=500_000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    report(args.lines, args.size, args.rounds)
    return 0


def report(n: int, size: int, rounds: int) -> None:
    """Time both, print the rates and the ratios (also called by benchmarks/transactions.py)."""
    with tempfile.TemporaryDirectory(prefix="sluiceway-eos-bench-") as tmp:
        work = Path(tmp)
        src = work / "input.txt"
        body = "x" * (size - 8)
        with open(src, "w") as f:
            for i in range(n):
                f.write(f"{i:07d}{body}\n")
        nbytes = src.stat().st_size
        results: dict[tuple[str, str], list[tuple[float, float]]] = {
            (measure, label): [] for measure in MEASURES for label in ("alo", "eos")
        }
        with broker_process() as (bootstrap, _broker):
            alo = cluster_worker(work, bootstrap, "alo", "disabled")
            eos = cluster_worker(work, bootstrap, "eos", "enabled")
            try:
                for r in range(rounds):
                    order = [("alo", alo), ("eos", eos)]
                    for measure, run in MEASURES.items():
                        for label, w in order if r % 2 == 0 else order[::-1]:  # neither always goes first
                            topic = f"{label}-{measure.split()[0]}-{r}"
                            results[measure, label].append(run(w, bootstrap, src, topic, n))
            finally:
                eos.stop()
                alo.stop()
    print(
        f"lines: {n:,} x {size} bytes ({nbytes / 1e6:.0f} MB), one task, batch.size=2000; "
        f"median of {rounds} rounds"
    )
    for measure in MEASURES:
        alo_s = statistics.median(s for _, s in results[measure, "alo"])
        eos_s = statistics.median(s for _, s in results[measure, "eos"])
        target = " (target >= 0.7x)" if measure == "committed" else ""
        print(f"-- {measure}")
        print(f"FileStreamSource at least once:        {fmt_rate(n, nbytes, alo_s)}")
        print(f"FileStreamSource exactly once (poll):  {fmt_rate(n, nbytes, eos_s)}")
        pairs = zip(results[measure, "alo"], results[measure, "eos"], strict=True)
        rounds_text = " ".join(f"{a / e:.2f}" for (_, a), (_, e) in pairs)
        print(f"exactly once / at least once: {alo_s / eos_s:.2f}x{target}; rounds: {rounds_text}")
    starts = {label: statistics.median(a for a, _ in results["committed", label]) for label in ("alo", "eos")}
    print(
        "connector start until the first record: "
        f"at least once {starts['alo'] * 1000:.0f} ms, "
        f"exactly once {starts['eos'] * 1000:.0f} ms (not in the rates)"
    )


if __name__ == "__main__":
    sys.exit(main())
