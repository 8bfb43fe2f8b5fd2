"""Broker throughput: confluent-kafka produce and consume against Sluiceway's broker,
with librdkafka's in-memory mock broker as the produce baseline in the same run.

    python benchmarks/broker_throughput.py [--records 2000000] [--size 100]

Targets (issue #2): produce >= 0.9x the mock with our data on disk; consume >=
1.0x our own produce rate (the mock's fetch path is too slow to be a baseline).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import Producer

from benchmarks._common import broker_process, consume_timed, fmt_rate, mock_cluster, peak_rss_mb
from benchmarks._worker import create_topic

TOPIC = "bench"


def produce(bootstrap: str, n: int, payload: bytes, topic: str = TOPIC) -> float:
    p = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": "all",
            "linger.ms": 5,
            "batch.size": 1_000_000,
            "queue.buffering.max.messages": 2_000_000,
            "queue.buffering.max.kbytes": 2_000_000,
            "compression.type": "none",
        }
    )
    errors = []

    def on_delivery(err: object, _msg: object) -> None:
        if err is not None:
            errors.append(err)

    start = time.perf_counter()
    produce_ = p.produce
    for _ in range(n):
        try:
            produce_(topic, payload, partition=0)
        except BufferError:
            p.poll(0.005)
            produce_(topic, payload, partition=0)
    p.flush(300)
    elapsed = time.perf_counter() - start
    if errors:
        raise RuntimeError(f"{len(errors)} delivery errors, first: {errors[0]}")
    return elapsed


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=2_000_000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="interleaved mock/sluiceway produce rounds; medians are reported (default 3)",
    )
    args = ap.parse_args()
    n, payload = args.records, b"x" * args.size
    nbytes = n * args.size

    # On a small machine the client itself needs more than a core, so single runs are
    # noisy; alternating the two brokers and taking medians compares like with like.
    mock_runs: list[float] = []
    ours_runs: list[float] = []
    consume_runs: list[float] = []
    with broker_process() as (bootstrap, proc):
        for r in range(args.rounds):
            with mock_cluster() as mock:
                mock_runs.append(produce(mock, n, payload))
            topic = f"{TOPIC}-{r}"
            create_topic(bootstrap, topic)
            ours_runs.append(produce(bootstrap, n, payload, topic))
            consume_runs.append(consume_timed(bootstrap, topic, n))
        rss = peak_rss_mb(proc.pid)

    mock_s, ours_s, consume_s = (statistics.median(x) for x in (mock_runs, ours_runs, consume_runs))
    print(
        f"records: {n:,} x {args.size} bytes, acks=all, linger.ms=5, batch.size=1MB, one partition; "
        f"median of {args.rounds} rounds"
    )
    print(f"produce  mock (librdkafka, in memory): {fmt_rate(n, nbytes, mock_s)}")
    print(f"produce  sluiceway (on disk):          {fmt_rate(n, nbytes, ours_s)}")
    print(f"consume  sluiceway:                    {fmt_rate(n, nbytes, consume_s)}")
    print(
        f"produce ratio sluiceway/mock:    {mock_s / ours_s:.2f}x  (target >= 0.9; rounds: "
        + ", ".join(f"{m / o:.2f}" for m, o in zip(mock_runs, ours_runs, strict=True))
        + ")"
    )
    print(
        f"consume ratio consume/produce:   {ours_s / consume_s:.2f}x  (target >= 1.0; rounds: "
        + ", ".join(f"{o / c:.2f}" for o, c in zip(ours_runs, consume_runs, strict=True))
        + ")"
    )
    print(f"broker peak RSS: {rss:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
