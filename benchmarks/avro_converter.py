"""AvroConverter in a pipeline against raw loops of Confluent's serializers, same broker,
same registry, same run.

    python benchmarks/avro_converter.py [--lines 300000] [--rounds 3]

(Not ``benchmarks/avro.py``: run as a script, a file of that name would stand in for the
``avro`` package the registry imports.)

- source: FileStreamSource with ``HoistField$Value`` (each line a struct ``{line}``) and
  ``value.converter=io.confluent.connect.avro.AvroConverter`` writes a file into a topic;
  the baseline reads the file and produces each line through confluent-kafka's
  ``AvroSerializer`` (the same Avro schema, already registered). Both are timed until
  the last record is in the topic.
- sink: FileStreamSink with the AvroConverter writes the baseline's topic to a file; the
  baseline consumes the topic through ``AvroDeserializer`` and writes each record. Both
  are timed until the file holds every line.
- registry: ``GET /schemas/ids/{id}`` lookups a second from 4 client processes, against a registry
  in its own process (``python -m schema_registry``) on the same topic; then 1,000 clients
  at once each registering a schema of its own, counting answers that are not 200.

The worker runs in its own process, the pipelines' registry in this one (it serves a
handful of requests: both sides cache schemas). Targets (issue 23): source and sink >= 0.7x their
raw loops; the registry >= 1,000 lookups/s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from benchmarks._common import broker_process
from benchmarks._worker import Worker, create_topic, end_offset, free_port, timed, wait_for
from benchmarks.file_pipeline import line_count
from schema_registry.server import RegistryConfig, RegistryServer

AVRO = "io.confluent.connect.avro.AvroConverter"


def avro_settings(url: str) -> dict[str, str]:
    return {"value.converter": AVRO, "value.converter.schema.registry.url": url}


def raw_source(bootstrap: str, url: str, path: Path, topic: str, n: int, schema: str) -> float:
    # Default settings: the schema registered once, then only the encoding.
    serializer = AvroSerializer(SchemaRegistryClient({"url": url}), schema)
    ctx = SerializationContext(topic, MessageField.VALUE)
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True, "linger.ms": 5})
    p.list_topics(topic, timeout=10)
    serializer({"line": "warm-up"}, ctx)  # the schema fetched before the clock starts
    start = time.perf_counter()
    produce = p.produce
    with open(path, encoding="utf-8") as f:
        for line in f:
            value = serializer({"line": line[:-1]}, ctx)
            while True:
                try:
                    produce(topic, value)
                    break
                except BufferError:
                    p.poll(0.01)
    p.flush(120)
    wait_for(lambda: end_offset(bootstrap, topic) >= n, 120)
    return time.perf_counter() - start


def raw_sink(bootstrap: str, url: str, topic: str, out: Path, n: int) -> float:
    deserializer = AvroDeserializer(SchemaRegistryClient({"url": url}))
    ctx = SerializationContext(topic, MessageField.VALUE)
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "bench-raw-avro-sink",
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
                start = time.perf_counter()
            f.write("".join(f"Struct{{line={deserializer(m.value(), ctx)['line']}}}\n" for m in batch))
            f.flush()
            got += len(batch)
    elapsed = time.perf_counter() - start
    c.close()
    return elapsed


def lookups(bootstrap: str, schema_id: int, seconds: float = 3.0) -> tuple[float, tuple[int, int, float]]:
    """GET /schemas/ids/{id} a second against a registry process of its own (in this
    process it would share the GIL with the clients)."""
    url = f"http://127.0.0.1:{free_port()}"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "schema_registry",
            "--override",
            f"listeners={url}",
            "--override",
            f"kafkastore.bootstrap.servers={bootstrap}",
            "--log-level",
            "WARNING",
        ],
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: _answers(url), 60)
        return _hammer(url, schema_id, seconds), _crowd(url, 1000)
    finally:
        proc.terminate()
        proc.wait(30)


def _crowd(url: str, clients: int) -> tuple[int, int, float]:
    """``clients`` connections at once, each registering its own schema: (answers that were
    200, answers that were 5xx or failed, seconds)."""
    import asyncio

    async def one(client: httpx.AsyncClient, i: int) -> int:
        schema = {"type": "record", "name": f"Crowd{i}", "fields": [{"name": "f", "type": "long"}]}
        try:
            r = await client.post(
                f"{url}/subjects/crowd-{i}-value/versions", json={"schema": json.dumps(schema)}
            )
        except httpx.HTTPError:
            return 599
        return r.status_code

    async def crowd() -> list[int]:
        limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
        async with httpx.AsyncClient(timeout=120, limits=limits) as client:
            return await asyncio.gather(*(one(client, i) for i in range(clients)))

    start = time.perf_counter()
    codes = asyncio.run(crowd())
    return codes.count(200), sum(1 for c in codes if c >= 500), time.perf_counter() - start


def _answers(url: str) -> bool:
    try:
        return httpx.get(url + "/", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def _count(url: str, schema_id: int, deadline_s: float) -> int:
    count = 0
    with httpx.Client() as client:
        while time.time() < deadline_s:
            if client.get(f"{url}/schemas/ids/{schema_id}").status_code != 200:
                raise RuntimeError("a lookup failed")
            count += 1
    return count


def _hammer(url: str, schema_id: int, seconds: float) -> float:
    """Clients in 4 processes (in threads of one, their own GIL would be what is measured)."""
    deadline = time.time() + seconds
    start = time.perf_counter()
    with ProcessPoolExecutor(4) as pool:
        total = sum(pool.map(_count, [url] * 4, [schema_id] * 4, [deadline] * 4))
    return total / (time.perf_counter() - start)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=300_000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    n = args.lines
    with tempfile.TemporaryDirectory(prefix="sluiceway-avro-bench-") as tmp:
        work = Path(tmp)
        src = work / "input.txt"
        body = "x" * (args.size - 8)
        with open(src, "w") as f:
            for i in range(n):
                f.write(f"{i:07d}{body}\n")
        with broker_process() as (bootstrap, _broker):
            config = RegistryConfig.parse(
                {
                    "listeners": f"http://127.0.0.1:{free_port()}",
                    "kafkastore.bootstrap.servers": bootstrap,
                    "kafkastore.topic": "_schemas",
                }
            )
            registry = RegistryServer(config).start()
            url = registry.url
            worker = Worker(work, bootstrap)
            try:
                raw_src, conn_src, raw_snk, conn_snk = [], [], [], []
                schema = ""
                for r in range(args.rounds):
                    conn_topic, raw_topic = f"conn-source-{r}", f"raw-source-{r}"
                    create_topic(bootstrap, conn_topic)
                    worker.create(
                        f"avro-source-{r}",
                        {
                            "connector.class": "FileStreamSource",
                            "file": str(src),
                            "topic": conn_topic,
                            "batch.size": "2000",
                            "transforms": "hoist",
                            "transforms.hoist.type": "org.apache.kafka.connect.transforms.HoistField$Value",
                            "transforms.hoist.field": "line",
                            **avro_settings(url),
                        },
                    )
                    _, seconds = timed(
                        lambda t=conn_topic: end_offset(bootstrap, t) > 0,
                        lambda t=conn_topic: end_offset(bootstrap, t) >= n,
                        300,
                    )
                    conn_src.append(seconds)
                    worker.delete(f"avro-source-{r}")
                    client = SchemaRegistryClient({"url": url})
                    schema = client.get_latest_version(f"{conn_topic}-value").schema.schema_str
                    # The baseline serializes with the schema the converter registered.
                    client.register_schema(
                        f"{raw_topic}-value", client.get_latest_version(f"{conn_topic}-value").schema
                    )
                    create_topic(bootstrap, raw_topic)
                    raw_src.append(raw_source(bootstrap, url, src, raw_topic, n, schema))

                    raw_out, conn_out = work / f"raw-out-{r}.txt", work / f"conn-out-{r}.txt"
                    raw_snk.append(raw_sink(bootstrap, url, raw_topic, raw_out, n))
                    worker.create(
                        f"avro-sink-{r}",
                        {
                            "connector.class": "FileStreamSink",
                            "file": str(conn_out),
                            "topics": raw_topic,
                            **avro_settings(url),
                        },
                    )
                    _, seconds = timed(
                        lambda o=conn_out: o.exists() and o.stat().st_size > 0,
                        lambda o=conn_out: line_count(o) >= n,
                        300,
                    )
                    conn_snk.append(seconds)
                    worker.delete(f"avro-sink-{r}")
                    if conn_out.read_bytes() != raw_out.read_bytes():
                        raise RuntimeError("the sink's file differs from the raw loop's")
                    raw_out.unlink()
                    conn_out.unlink()
                schema_id = (
                    SchemaRegistryClient({"url": url}).get_latest_version("raw-source-0-value").schema_id
                )
                rate, (ok, failed, crowd_s) = lookups(bootstrap, schema_id)
            finally:
                worker.stop()
                registry.stop()

    med = statistics.median
    print(
        f"lines: {n:,} x {args.size} bytes as Avro records {{line}} (schema {json.loads(schema)['name']}); "
        f"median of {args.rounds} rounds"
    )
    print(f"source  raw AvroSerializer + produce:      {n / med(raw_src):>10,.0f} records/s")
    print(f"source  FileStreamSource + AvroConverter:  {n / med(conn_src):>10,.0f} records/s")
    print(f"sink    raw consume + AvroDeserializer:    {n / med(raw_snk):>10,.0f} records/s")
    print(f"sink    FileStreamSink + AvroConverter:    {n / med(conn_snk):>10,.0f} records/s")
    print(
        f"source ratio converter/raw: {med(raw_src) / med(conn_src):.2f}x (target >= 0.7; rounds: "
        + ", ".join(f"{a / b:.2f}" for a, b in zip(raw_src, conn_src, strict=True))
        + ")"
    )
    print(
        f"sink ratio converter/raw:   {med(raw_snk) / med(conn_snk):.2f}x (target >= 0.7; rounds: "
        + ", ".join(f"{a / b:.2f}" for a, b in zip(raw_snk, conn_snk, strict=True))
        + ")"
    )
    print(f"registry: {rate:,.0f} GET /schemas/ids/{{id}} a second from 4 client processes (target >= 1,000)")
    print(
        f"registry: 1,000 clients registering at once: {ok} registered, {failed} 5xx or failed, in "
        f"{crowd_s:.1f} s (target: no 5xx)"
    )
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
