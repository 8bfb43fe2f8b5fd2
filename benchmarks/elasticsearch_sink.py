"""The Elasticsearch sink against the official client's ``helpers.bulk`` of the same documents
to the same server, in one run.

    python benchmarks/elasticsearch_sink.py [--records 200000]

``--records`` tweet-like schemaless JSON records wait in a topic. The server is the
Elasticsearch contract server (tests/contract_servers) in its own process, so it does not
share a GIL with either side. The sink runs in a standalone worker process
(``key.ignore=true``, defaults otherwise: batch.size 2000, 5 requests in flight); its time
is steady state: from the first documents in the index to the last (what was indexed in
between, scaled to all records), so the task's start and group join are left out; the time
from creating the connector is printed too. The baseline is what
a Python user would write: ``helpers.bulk`` (chunks of 2000) of the same documents, decoded
from the same JSON beforehand, into another index of the same server.

Target (issue #8): sink >= 0.8x helpers.bulk.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import orjson
from confluent_kafka import Producer
from elasticsearch import Elasticsearch, helpers

from benchmarks._common import ROOT, broker_process
from benchmarks._worker import Worker, create_topic, end_offset, wait_for

LANGS = ["en", "fr", "de", "es", "ja"]


def tweet(i: int) -> bytes:
    return orjson.dumps(
        {
            "id": 1_860_000_000_000_000_000 + i,
            "text": f"Streaming tweet {i} into Elasticsearch with #kafka and #connect, see https://t.co/{i:x}",
            "lang": LANGS[i % len(LANGS)],
            "created_at": "2026-11-21T10:00:00.000Z",
            "user": {
                "id": i % 5000,
                "screen_name": f"user_{i % 5000}",
                "followers_count": (i * 37) % 100_000,
            },
            "public_metrics": {"retweet_count": i % 13, "like_count": i % 101, "reply_count": i % 7},
            "hashtags": ["kafka", "connect"],
        }
    )


def produce(bootstrap: str, topic: str, n: int) -> None:
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.num.messages": 10000})
    for i in range(n):
        while True:
            try:
                p.produce(topic, tweet(i))
                break
            except BufferError:
                p.poll(0.05)
    if p.flush(120):
        raise RuntimeError("records were not delivered")


@contextmanager
def contract_server() -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.contract_servers.elasticsearch", "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("LISTENING"):
        proc.kill()
        raise RuntimeError(f"the contract server did not start: {line!r}")
    try:
        yield f"http://127.0.0.1:{int(line.split()[1])}"
    finally:
        proc.terminate()
        proc.wait(30)


def count(es: Elasticsearch, index: str) -> int:
    try:
        return int(es.count(index=index)["count"])
    except Exception:  # not created yet
        return 0


def run_sink(work: Path, bootstrap: str, url: str, topic: str, n: int) -> float:
    work.mkdir(parents=True, exist_ok=True)
    worker = Worker(work, bootstrap)
    es = Elasticsearch(url)
    config = {
        "connector.class": "ElasticsearchSinkConnector",
        "connection.url": url,
        "key.ignore": "true",
        "schema.ignore": "true",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
        "consumer.override.max.poll.records": "10000",
    }
    try:
        # Warm the worker (imports, client pools, index creation) on a small topic first.
        create_topic(bootstrap, topic + "-warmup")
        produce(bootstrap, topic + "-warmup", 2000)
        worker.create("warmup", {**config, "topics": topic + "-warmup"})
        wait_for(lambda: count(es, topic + "-warmup") >= 2000, 120)
        created = time.perf_counter()
        worker.create("tweets", {**config, "topics": topic})
        # Steady state: from the first documents in the index (the task has started and
        # joined its group) to the last, counting only what was indexed in between.
        wait_for(lambda: count(es, topic) > 0, 120, interval=0.01)
        first_seen, already = time.perf_counter(), count(es, topic)
        wait_for(lambda: count(es, topic) >= n, 900, interval=0.02)
        done = time.perf_counter()
        print(
            f"sink, connector created -> all indexed: {n / (done - created):,.0f} documents/s (with startup)"
        )
        return (done - first_seen) * n / (n - already)
    finally:
        worker.stop()
        es.close()


def run_raw(url: str, index: str, n: int) -> float:
    docs = [orjson.loads(tweet(i)) for i in range(n)]
    es = Elasticsearch(url)
    try:
        helpers.bulk(es, ({"_index": index + "-warmup", "_source": d} for d in docs[:2000]), chunk_size=2000)
        started = time.perf_counter()
        ok, errors = helpers.bulk(
            es,
            ({"_index": index, "_id": f"raw+{i}", "_source": d} for i, d in enumerate(docs)),
            chunk_size=2000,
        )
        elapsed = time.perf_counter() - started
        assert ok == n and not errors, (ok, errors)
        return elapsed
    finally:
        es.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--records", type=int, default=200_000)
    args = p.parse_args()
    n = args.records
    work = Path(tempfile.mkdtemp(prefix="bench-es-"))
    try:
        with broker_process(data_dir=str(work / "broker")) as (bootstrap, _), contract_server() as url:
            topic = "bench-tweets"
            create_topic(bootstrap, topic)
            t = time.perf_counter()
            produce(bootstrap, topic, n)
            assert end_offset(bootstrap, topic) == n
            print(f"produced {n:,} records in {time.perf_counter() - t:.1f} s")

            sink_s = run_sink(work / "worker", bootstrap, url, topic, n)
            print(f"sink: {n:,} documents in {sink_s:.2f} s = {n / sink_s:,.0f} documents/s")
            raw_s = run_raw(url, "bench-raw", n)
            print(f"raw helpers.bulk (chunks of 2000): {n / raw_s:,.0f} documents/s")
            print(f"sink / raw = {raw_s / sink_s:.2f}x (target >= 0.8x)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
