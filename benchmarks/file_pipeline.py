"""File connectors against raw confluent-kafka loops, on the same broker in the same run.

    python benchmarks/file_pipeline.py [--lines 1000000] [--size 100]

- source: FileStreamSource (a standalone worker process) reads a file of ``--lines``
  lines into a topic; the baseline reads the same file and produces each line with
  confluent-kafka. Both are timed until the last record is in the topic.
- sink: FileStreamSink writes the topic to a file; the baseline consumes the topic and
  writes each value to a file. Both are timed until the file holds every line.
- latency: lines appended to the source file at 1,000/s, each carrying its write time,
  are timed when they appear in the sink's file: p50/p99 end to end.
- idle worker RSS: a worker with no connectors.

Throughput is timed from the first record to the last for both (connector start-up,
a REST call and a consumer group join, is printed separately).

Targets: the source >= 0.8x its raw loop (issue 22; 0.7x before), the sink >= 0.7x, p99 <= 20 ms,
idle RSS <= 120 MB.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

from benchmarks._common import broker_process, fmt_rate
from benchmarks._worker import Worker, create_topic, end_offset, timed, wait_for


def line_count(path: Path) -> int:
    try:
        with open(path, "rb") as f:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
    except FileNotFoundError:
        return 0


def raw_source(bootstrap: str, path: Path, topic: str, n: int) -> float:
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True, "linger.ms": 5})
    p.list_topics(topic, timeout=10)  # connected before the clock starts, as the connector's producer is
    start = time.perf_counter()
    produce = p.produce
    with open(path, "rb") as f:
        for line in f:
            while True:
                try:
                    produce(topic, line[:-1])
                    break
                except BufferError:
                    p.poll(0.01)
    p.flush(120)
    wait_for(lambda: end_offset(bootstrap, topic) >= n, 120)
    return time.perf_counter() - start


def raw_sink(bootstrap: str, topic: str, out: Path, n: int) -> float:
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "bench-raw-sink",
            "enable.auto.commit": False,
            "queued.min.messages": 1_000_000,
            "fetch.queue.backoff.ms": 10,
        }
    )
    c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    got = 0
    start = 0.0
    with open(out, "w", encoding="utf-8") as f:
        while got < n:
            batch = [m for m in c.consume(500, 1.0) if m.error() is None]
            if batch and not start:
                start = time.perf_counter()  # from the first record, as the connector is timed
            f.write("".join(m.value().decode() + "\n" for m in batch))
            f.flush()
            got += len(batch)
    elapsed = time.perf_counter() - start
    c.close()
    return elapsed


def latency(worker: Worker, work: Path, rate: int, seconds: float) -> list[float]:
    src, out, topic = work / "lat-in.txt", work / "lat-out.txt", "latency"
    src.write_text("")
    create_topic_done = threading.Event()
    worker.create("lat-source", {"connector.class": "FileStreamSource", "file": str(src), "topic": topic})
    worker.create("lat-sink", {"connector.class": "FileStreamSink", "file": str(out), "topics": topic})
    # Warm up: the first line creates the topic and the sink's assignment.
    with open(src, "a") as f:
        f.write(f"warmup {time.time()}\n")
    wait_for(lambda: line_count(out) >= 1, 60)
    create_topic_done.set()
    samples: list[float] = []
    stop = threading.Event()

    def reader() -> None:
        seen = 1
        with open(out) as f:
            f.readline()
            buf = ""
            while not stop.is_set() or seen < total:
                chunk = f.readline()
                if not chunk:
                    time.sleep(0.0005)
                    continue
                buf += chunk
                if not buf.endswith("\n"):
                    continue
                now = time.time()
                sent = float(buf.split()[1])
                samples.append((now - sent) * 1000)
                buf = ""
                seen += 1

    total = int(rate * seconds) + 1
    t = threading.Thread(target=reader, daemon=True)
    t.start()
    interval = 1.0 / rate
    with open(src, "a", buffering=1) as f:
        next_at = time.perf_counter()
        for i in range(total - 1):
            f.write(f"line {time.time():.6f} {i}\n")
            next_at += interval
            delay = next_at - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
    stop.set()
    t.join(30)
    worker.delete("lat-source")
    worker.delete("lat-sink")
    return samples


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--latency-seconds", type=float, default=10.0)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    n = args.lines
    with tempfile.TemporaryDirectory(prefix="sluiceway-file-bench-") as tmp:
        work = Path(tmp)
        src = work / "input.txt"
        body = "x" * (args.size - 8)
        with open(src, "w") as f:
            for i in range(n):
                f.write(f"{i:07d}{body}\n")  # args.size bytes with the newline
        nbytes = src.stat().st_size
        with broker_process() as (bootstrap, _broker):
            worker = Worker(work, bootstrap)
            try:
                time.sleep(2.0)
                idle_rss = worker.rss_mb()
                raw_src, conn_src, raw_snk, conn_snk, startups = [], [], [], [], []
                # Interleaved rounds, medians reported: on two cores single runs swing a lot.
                for r in range(args.rounds):
                    raw_topic, conn_topic = f"raw-source-{r}", f"conn-source-{r}"
                    create_topic(bootstrap, raw_topic)
                    raw_src.append(raw_source(bootstrap, src, raw_topic, n))
                    create_topic(bootstrap, conn_topic)
                    worker.create(
                        f"bench-source-{r}",
                        {
                            "connector.class": "FileStreamSource",
                            "file": str(src),
                            "topic": conn_topic,
                            "batch.size": "2000",
                        },
                    )
                    started, seconds = timed(
                        lambda t=conn_topic: end_offset(bootstrap, t) > 0,
                        lambda t=conn_topic: end_offset(bootstrap, t) >= n,
                        300,
                    )
                    conn_src.append(seconds)
                    worker.delete(f"bench-source-{r}")

                    raw_out, conn_out = work / f"raw-out-{r}.txt", work / f"conn-out-{r}.txt"
                    raw_snk.append(raw_sink(bootstrap, raw_topic, raw_out, n))
                    worker.create(
                        f"bench-sink-{r}",
                        {"connector.class": "FileStreamSink", "file": str(conn_out), "topics": raw_topic},
                    )
                    sink_started, seconds = timed(
                        lambda o=conn_out: o.exists() and o.stat().st_size > 0,
                        lambda o=conn_out: o.stat().st_size >= nbytes,
                        300,
                    )
                    conn_snk.append(seconds)
                    startups.append((started, sink_started))
                    worker.delete(f"bench-sink-{r}")
                    assert conn_out.read_bytes() == raw_out.read_bytes() == src.read_bytes(), "outputs differ"
                    raw_out.unlink()
                    conn_out.unlink()

                samples = latency(worker, work, 1000, args.latency_seconds)
                busy_rss = worker.rss_mb()
            finally:
                worker.stop()

    raw_src_s, conn_src_s, raw_sink_s, conn_sink_s = (
        statistics.median(x) for x in (raw_src, conn_src, raw_snk, conn_snk)
    )
    src_startup = statistics.median(a for a, _ in startups)
    sink_startup = statistics.median(b for _, b in startups)
    samples.sort()
    p50 = statistics.median(samples)
    p99 = samples[int(len(samples) * 0.99) - 1]
    print(
        f"lines: {n:,} x {args.size} bytes ({nbytes / 1e6:.0f} MB), one partition, one task; "
        f"median of {args.rounds} rounds"
    )
    print(f"source  raw confluent-kafka loop: {fmt_rate(n, nbytes, raw_src_s)}")
    print(f"source  FileStreamSource:         {fmt_rate(n, nbytes, conn_src_s)}")
    print(f"sink    raw consumer loop:        {fmt_rate(n, nbytes, raw_sink_s)}")
    print(f"sink    FileStreamSink:           {fmt_rate(n, nbytes, conn_sink_s)}")
    print(
        f"connector start until the first record: source {src_startup * 1000:.0f} ms, "
        f"sink {sink_startup * 1000:.0f} ms (not in the rates)"
    )
    print(
        f"source ratio connector/raw: {raw_src_s / conn_src_s:.2f}x  (target >= 0.8; rounds: "
        + ", ".join(f"{a / b:.2f}" for a, b in zip(raw_src, conn_src, strict=True))
        + ")"
    )
    print(
        f"sink ratio connector/raw:   {raw_sink_s / conn_sink_s:.2f}x  (target >= 0.7; rounds: "
        + ", ".join(f"{a / b:.2f}" for a, b in zip(raw_snk, conn_snk, strict=True))
        + ")"
    )
    print(
        f"end-to-end latency at 1,000 lines/s ({len(samples)} lines): p50 {p50:.1f} ms, p99 {p99:.1f} ms "
        f"(target p99 <= 20 ms)"
    )
    print(f"worker RSS: idle {idle_rss:.0f} MB (target <= 120), after the runs {busy_rss:.0f} MB")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
