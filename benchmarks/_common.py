"""Helpers shared by the benchmarks: a broker subprocess, librdkafka's mock cluster, and a
throughput consumer."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_READY = re.compile(r"listening on PLAINTEXT://([^:\s]+):(\d+)")


@contextmanager
def broker_process(
    *overrides: str, data_dir: str | None = None
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """A ``sluiceway broker`` subprocess on an ephemeral port; yields (bootstrap, process)."""
    tmp = None
    if data_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="sluiceway-bench-")
        data_dir = tmp.name
    args = [
        sys.executable,
        "-m",
        "broker",
        "--override",
        "listeners=PLAINTEXT://127.0.0.1:0",
        "--override",
        f"log.dirs={data_dir}",
        "--override",
        "group.initial.rebalance.delay.ms=0",
    ]
    for o in overrides:
        args += ["--override", o]
    proc = subprocess.Popen(args, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    bootstrap = None
    deadline = time.time() + 30
    while time.time() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        m = _READY.search(line)
        if m:
            bootstrap = f"{m.group(1)}:{m.group(2)}"
            break
    if bootstrap is None:
        proc.kill()
        raise RuntimeError("broker did not start")
    threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()  # type: ignore[union-attr]
    try:
        yield bootstrap, proc
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
        if tmp is not None:
            tmp.cleanup()


def peak_rss_mb(pid: int) -> float:
    """VmHWM: the process's peak resident set size so far."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


@contextmanager
def mock_cluster() -> Iterator[str]:
    """librdkafka's in-memory mock broker; yields its bootstrap address while it lives."""
    from confluent_kafka import Producer

    found: list[str] = []
    pattern = re.compile(r"replaced with (\S+)")

    class _Grab(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            m = pattern.search(record.getMessage())
            if m:
                found.append(m.group(1).rstrip(","))

    logger = logging.getLogger("mock-cluster")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    logger.addHandler(_Grab())
    holder = Producer({"bootstrap.servers": "unused:9092", "test.mock.num.brokers": 1, "logger": logger})
    deadline = time.time() + 10
    while not found and time.time() < deadline:
        holder.poll(0.1)
    if not found:
        raise RuntimeError("librdkafka did not report the mock cluster address")
    try:
        yield found[0]
    finally:
        holder.flush(1)
        del holder


def consume_timed(bootstrap: str, topic: str, n: int, isolation: str = "read_committed") -> float:
    """Seconds for a confluent-kafka consumer tuned for throughput to read all ``n`` records
    of ``topic``'s partition 0 from the start (``isolation``: librdkafka's default unless
    told)."""
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "bench-consumer",
            "isolation.level": isolation,
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,  # nothing is committed: skip per-message offset stores
            "fetch.max.bytes": 52_428_800,
            "max.partition.fetch.bytes": 10_485_760,
            "queued.max.messages.kbytes": 1_048_576,
            # librdkafka pauses fetching for fetch.queue.backoff.ms (1 s) whenever more than
            # queued.min.messages (100k) are buffered, which one 10 MB fetch of 100-byte
            # records already is; a throughput consumer raises the threshold.
            "queued.min.messages": 1_000_000,
            "fetch.queue.backoff.ms": 10,
        }
    )
    c.assign([TopicPartition(topic, 0, 0)])
    got = 0
    start = time.perf_counter()
    deadline = start + 600
    while got < n and time.perf_counter() < deadline:
        batch = c.consume(100_000, 1.0)
        errors = [m.error() for m in batch if m.error() is not None]
        if errors:
            raise RuntimeError(f"consume error: {errors[0]}")
        got += len(batch)
    elapsed = time.perf_counter() - start
    c.close()
    if got != n:
        raise RuntimeError(f"{isolation}: consumed {got} of {n}")
    return elapsed


def fmt_rate(records: int, nbytes: int, seconds: float) -> str:
    return f"{records / seconds:>12,.0f} rec/s {nbytes / seconds / 1e6:>8.1f} MB/s ({seconds:.2f} s)"


def cpu_count() -> int:
    return os.cpu_count() or 1
