"""Transactions: what exactly-once costs on Sluiceway's broker, measured with confluent-kafka.

    python benchmarks/transactions.py [--records 1000000] [--size 100] [--txn-records 10000]

Same broker, same run, rounds interleaved and medians reported:
- produce: a transactional producer committing every ``--txn-records`` records against an
  idempotent producer (target >= 0.8x);
- consume: read_committed against read_uncommitted of the same transactional topic, whose
  control batches the consumer skips (target >= 0.9x);
- the file source exactly once against at least once (``benchmarks/eos_source.py``,
  ``--source-lines``; target >= 0.7x).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import Producer

from benchmarks import eos_source
from benchmarks._common import broker_process, consume_timed, fmt_rate, peak_rss_mb
from benchmarks._worker import create_topic

PRODUCER: dict[str, Any] = {
    "acks": "all",
    "linger.ms": 5,
    "batch.size": 1_000_000,
    "queue.buffering.max.messages": 2_000_000,
    "queue.buffering.max.kbytes": 2_000_000,
    "compression.type": "none",
    "enable.idempotence": True,
}


def produce(
    bootstrap: str,
    topic: str,
    n: int,
    payload: bytes,
    txn_records: int | None,
    commits: list[float] | None = None,
) -> float:
    """Seconds to write ``n`` records; with ``txn_records``, in transactions of that many, the
    seconds each ``commit_transaction`` blocked appended to ``commits``."""
    config = {"bootstrap.servers": bootstrap, **PRODUCER}
    if txn_records is not None:
        config["transactional.id"] = f"bench-{topic}"
    p = Producer(config)
    errors: list[object] = []

    def on_delivery(err: object, _msg: object) -> None:
        if err is not None:
            errors.append(err)

    if txn_records is not None:
        p.init_transactions(30)
    start = time.perf_counter()
    produce_ = p.produce
    for i in range(n):
        if txn_records is not None and i % txn_records == 0:
            if i:
                _commit(p, commits)
            p.begin_transaction()
        try:
            produce_(topic, payload, partition=0, on_delivery=on_delivery)
        except BufferError:
            p.poll(0.005)
            produce_(topic, payload, partition=0, on_delivery=on_delivery)
    if txn_records is not None:
        _commit(p, commits)
    p.flush(300)
    elapsed = time.perf_counter() - start
    if errors:
        raise RuntimeError(f"{len(errors)} delivery errors, first: {errors[0]}")
    return elapsed


def _commit(p: Producer, commits: list[float] | None) -> None:
    started = time.perf_counter()
    p.commit_transaction(300)
    if commits is not None:
        commits.append(time.perf_counter() - started)


def _rounds(a: list[float], b: list[float]) -> str:
    return ", ".join(f"{x / y:.2f}" for x, y in zip(a, b, strict=True))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--txn-records", type=int, default=10_000, help="records per transaction")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds; medians are reported")
    ap.add_argument("--source-lines", type=int, default=500_000, help="lines for the file source; 0 skips it")
    args = ap.parse_args()
    n, payload = args.records, b"x" * args.size
    nbytes = n * args.size

    idem: list[float] = []
    txn: list[float] = []
    committed: list[float] = []
    commits: list[float] = []  # each commit_transaction's wait
    uncommitted: list[float] = []
    with broker_process() as (bootstrap, proc):
        for r in range(args.rounds):
            plain_topic, txn_topic = f"idempotent-{r}", f"transactional-{r}"
            create_topic(bootstrap, plain_topic)
            create_topic(bootstrap, txn_topic)
            idem.append(produce(bootstrap, plain_topic, n, payload, None))
            txn.append(produce(bootstrap, txn_topic, n, payload, args.txn_records, commits))
            # Alternate which isolation level reads first, so neither always finds a warm cache.
            order = ["read_uncommitted", "read_committed"][:: 1 if r % 2 == 0 else -1]
            for isolation in order:
                seconds = consume_timed(bootstrap, txn_topic, n, isolation)
                (committed if isolation == "read_committed" else uncommitted).append(seconds)
        rss = peak_rss_mb(proc.pid)

    idem_s, txn_s, rc_s, ru_s = (statistics.median(x) for x in (idem, txn, committed, uncommitted))
    print(
        f"records: {n:,} x {args.size} bytes, acks=all, linger.ms=5, one partition; "
        f"transactions of {args.txn_records:,} records; median of {args.rounds} rounds"
    )
    print(f"produce  idempotent:           {fmt_rate(n, nbytes, idem_s)}")
    print(f"produce  transactional:        {fmt_rate(n, nbytes, txn_s)}")
    print(f"consume  read_uncommitted:     {fmt_rate(n, nbytes, ru_s)}")
    print(f"consume  read_committed:       {fmt_rate(n, nbytes, rc_s)}")
    print(
        f"transactional/idempotent produce:  {idem_s / txn_s:.2f}x  (target >= 0.8; rounds: "
        f"{_rounds(idem, txn)})"
    )
    # Where a transaction's fixed cost shows: the producer drains what was sent, then EndTxn.
    print(
        f"commit_transaction: median {statistics.median(commits) * 1000:.2f} ms, "
        f"p90 {statistics.quantiles(commits, n=10)[-1] * 1000:.2f} ms; "
        f"{sum(commits) / sum(txn):.0%} of the transactional produce time"
    )
    print(
        f"read_committed/read_uncommitted:   {ru_s / rc_s:.2f}x  (target >= 0.9; rounds: "
        f"{_rounds(uncommitted, committed)})"
    )
    print(f"broker peak RSS: {rss:.0f} MB")
    if args.source_lines:
        print()
        eos_source.report(args.source_lines, args.size, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
