"""MirrorMaker 2's replication A -> B (MirrorSourceConnector) against a raw confluent-kafka
consume -> produce loop between the same two brokers.

    python benchmarks/mirror.py [--records 300000] [--size 100] [--rounds 3] [--tasks 1]

Two ``sluiceway broker`` processes, A and B. Each round fills a fresh topic on A with
``--records`` records over 3 partitions (a key, a ``--size``-byte value, one header, a
timestamp), then copies it to B twice, one after the other (the order alternates by round):

- connector: MirrorSourceConnector (``tasks.max=--tasks``, offset syncs on, Kafka's
  defaults otherwise) in a standalone worker process on B running ByteArrayConverter for
  keys, values and headers, as MM2 is meant to run; the topic goes to ``A.<topic>``.
- raw: a process of its own runs what the connector does minus Connect: a consumer
  assigned the 3 partitions from the start reads batches of ``max.poll.records`` (500,
  Kafka's default and the task's), and each record is produced to the same partition of a
  3-partition topic on B with its key, value, timestamp and headers, by a producer with
  the worker's settings (``acks=all``, idempotence, ``linger.ms=5``).

Both are timed the same way, by this process watching B's end offsets: from the first
record on B until the last (start-up, the connector's topic creation and the consumers'
first fetch are printed separately). One task against one loop: each is one Python thread
moving records. Rounds interleave (on two cores single runs swing); medians are compared.
Over the same span the CPU time of the worker process and of the raw loop's process
(all their threads, librdkafka's included) is printed too: when the brokers rather than
the copying thread set the pace, the wall-time ratio hides what a record costs, the CPU
ratio does not.

Target (issue 26): the connector >= 0.7x the raw loop.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # re-exported untyped

from benchmarks._common import ROOT, broker_process
from benchmarks._worker import Worker

PARTITIONS = 3
BATCH = 500  # Kafka's max.poll.records default, which MirrorSourceTask uses too
BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
CONNECTOR = "connectors.mirror.source_connector.MirrorSourceConnector"
# The worker's producer settings (connect/runtime/clients.py), for the raw loop's producer.
WORKER_PRODUCER = {"acks": "all", "enable.idempotence": True, "linger.ms": 5}


def rate(n: int, seconds: float) -> str:
    return f"{n / seconds:>10,.0f} records/s ({seconds:.2f} s)"


class Watermarks:
    """The sum of a topic's end offsets on one cluster (0 while it does not exist), from one
    long-lived client so that watching costs little CPU."""

    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-watermarks"})

    def total(self, topic: str) -> int:
        try:
            return sum(
                int(
                    self.consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10, cached=False)[1]
                )
                for p in range(PARTITIONS)
            )
        except KafkaException:
            # A topic the connector has not created yet. The client would keep believing
            # that; the next call asks with a fresh one.
            self.consumer.close()
            self.consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": "bench-watermarks"})
            return 0

    def close(self) -> None:
        self.consumer.close()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far (all its threads)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed_arrival(
    marks: Watermarks, topic: str, n: int, timeout: float, pid: int
) -> tuple[float, float, float]:
    """(seconds until the first record showed on B, seconds from then until the last, CPU
    seconds process ``pid`` spent over that second span)."""
    begin = time.perf_counter()
    first = None
    cpu0 = 0.0
    deadline = begin + timeout
    while time.perf_counter() < deadline:
        now = time.perf_counter()
        cpu = cpu_seconds(pid)
        got = marks.total(topic)
        if first is None and got > 0:
            first, cpu0 = now, cpu
        if got >= n:
            assert first is not None
            return first - begin, time.perf_counter() - first, cpu_seconds(pid) - cpu0
        time.sleep(0.02)
    raise TimeoutError(f"{topic}: {marks.total(topic)} of {n} records after {timeout:.0f} s")


def create_topic(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(topic, PARTITIONS, 1)]).values():
        f.result(30)


def fill(bootstrap: str, topic: str, n: int, size: int) -> None:
    """``n`` records round-robin over the partitions: key, value of ``size`` bytes, one
    header, a timestamp."""
    create_topic(bootstrap, topic)
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.size": 1_000_000})
    pad = b"x" * max(0, size - 12)
    ts = int(time.time() * 1000)
    for i in range(n):
        while True:
            try:
                p.produce(
                    topic,
                    b"%010d|" % i + pad,
                    b"key-%d" % i,
                    i % PARTITIONS,
                    None,
                    None,
                    ts + i // 1000,
                    [("trace", b"%016x" % i)],
                )
                break
            except BufferError:
                p.poll(0.05)
    if p.flush(120):
        raise RuntimeError(f"filling {topic}: records were not delivered")


def connector_round(
    worker: Worker,
    a: str,
    b: str,
    marks: Watermarks,
    topic: str,
    n: int,
    tasks: int,
    connector_class: str = CONNECTOR,
) -> tuple[float, float, float]:
    name = f"mirror-{topic}"
    worker.create(
        name,
        {
            "connector.class": connector_class,
            "source.cluster.alias": "A",
            "target.cluster.alias": "B",
            "source.cluster.bootstrap.servers": a,
            "target.cluster.bootstrap.servers": b,
            "topics": topic,
            "tasks.max": str(tasks),
            "replication.factor": "1",
            "offset-syncs.topic.replication.factor": "1",
            "sync.topic.acls.enabled": "false",
        },
    )
    try:
        return timed_arrival(marks, f"A.{topic}", n, 600, worker.proc.pid)
    except TimeoutError as exc:
        raise TimeoutError(f"{exc}: {worker.status(name)}") from None
    finally:
        worker.delete(name)


def raw_round(a: str, b: str, marks: Watermarks, topic: str, n: int) -> tuple[float, float, float]:
    target = f"raw.{topic}"
    create_topic(b, target)
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "--raw-loop", a, b, topic, target, str(n)], cwd=ROOT
    )
    try:
        return timed_arrival(marks, target, n, 600, proc.pid)
    finally:
        if proc.wait(120) != 0:
            raise RuntimeError(f"the raw loop failed ({proc.returncode})")


def raw_loop(a: str, b: str, topic: str, target: str, n: int) -> None:
    """What MirrorSourceTask and the worker do, minus Connect: batches from A, each record
    to the same partition on B with its key, value, timestamp and headers."""
    consumer = Consumer(
        {
            "bootstrap.servers": a,
            "group.id": "bench-raw-mirror",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    producer = Producer({"bootstrap.servers": b, **WORKER_PRODUCER})
    produce, consume, poll = producer.produce, consumer.consume, producer.poll
    copied = 0
    while copied < n:
        for m in consume(BATCH, 1.0):
            if m.error() is not None:
                continue
            while True:
                try:
                    # Positional, as the worker calls it: partition, callback, on_delivery,
                    # timestamp, headers.
                    produce(
                        target,
                        m.value(),
                        m.key(),
                        m.partition(),  # type: ignore[arg-type]  # set on a consumed message
                        None,
                        None,
                        m.timestamp()[1],
                        m.headers(),
                    )
                    break
                except BufferError:
                    poll(0.05)
            copied += 1
        poll(0)
    if producer.flush(120):
        raise RuntimeError("the raw loop's records were not delivered")
    consumer.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--records", type=int, default=300_000)
    ap.add_argument("--size", type=int, default=100, help="value bytes")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tasks", type=int, default=1, help="MirrorSourceConnector tasks.max")
    ap.add_argument("--connector-class", default=CONNECTOR, help="another build of it, to compare")
    ap.add_argument("--keep-log", help="copy the worker's log here")
    ap.add_argument("--raw-loop", nargs=5, metavar=("A", "B", "TOPIC", "TARGET", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.raw_loop:
        a, b, topic, target, count = args.raw_loop
        raw_loop(a, b, topic, target, int(count))
        return 0
    n = args.records
    conn_s: list[float] = []
    raw_s: list[float] = []
    conn_cpu: list[float] = []
    raw_cpu: list[float] = []
    with tempfile.TemporaryDirectory(prefix="sluiceway-mirror-bench-") as tmp:
        work = Path(tmp)
        with (
            broker_process(data_dir=str(work / "a")) as (a, _),
            broker_process(data_dir=str(work / "b")) as (b, _),
        ):
            worker = Worker(work, b, {f"{kind}.converter": BYTES for kind in ("key", "value", "header")})
            marks = Watermarks(b)
            try:
                for r in range(args.rounds):
                    topic = f"bench-{r}"
                    fill(a, topic, n, args.size)
                    time.sleep(1.0)
                    order = ("connector", "raw") if r % 2 == 0 else ("raw", "connector")
                    startup: dict[str, float] = {}
                    for which in order:
                        if which == "connector":
                            startup[which], seconds, cpu = connector_round(
                                worker, a, b, marks, topic, n, args.tasks, args.connector_class
                            )
                            conn_s.append(seconds)
                            conn_cpu.append(cpu)
                        else:
                            startup[which], seconds, cpu = raw_round(a, b, marks, topic, n)
                            raw_s.append(seconds)
                            raw_cpu.append(cpu)
                    print(
                        f"  round {r}: raw {rate(n, raw_s[-1])}, connector {rate(n, conn_s[-1])}"
                        f"  (first record after: raw {startup['raw']:.2f} s, "
                        f"connector {startup['connector']:.2f} s; "
                        f"CPU s: raw {raw_cpu[-1]:.2f}, connector {conn_cpu[-1]:.2f})"
                    )
            finally:
                marks.close()
                worker.stop()
                if args.keep_log:
                    Path(args.keep_log).write_bytes(worker.log_path.read_bytes())
    raw_m, conn_m = statistics.median(raw_s), statistics.median(conn_s)
    print()
    print(
        f"mirror throughput A -> B, {n:,} records of {args.size} bytes with a header over "
        f"{PARTITIONS} partitions, first -> last record on B (medians of {args.rounds})"
    )
    print(f"  raw consume -> produce loop          {rate(n, raw_m)}")
    print(f"  MirrorSourceConnector (tasks.max={args.tasks})  {rate(n, conn_m)}")
    print(f"  ratio                                {raw_m / conn_m:.2f}x (target >= 0.7x)")
    raw_c, conn_c = statistics.median(raw_cpu), statistics.median(conn_cpu)
    print(
        f"  CPU seconds over that span: raw {raw_c:.2f}, connector {conn_c:.2f}, "
        f"ratio {raw_c / conn_c:.2f}x (medians)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
