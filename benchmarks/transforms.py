"""The file source pipeline with a chain of five common SMTs, against the same pipeline
without them, on the same broker in the same run.

    python benchmarks/transforms.py [--lines 500000] [--rounds 3]

Both connectors read the same file into a topic through a standalone worker process
with the JSON converter (``schemas.enable=false``); the chain is what a user typically
configures to give raw lines some structure and lineage:

1. ``HoistField$Value``   ``field=line``: the line becomes a struct ``{line}``
2. ``InsertField$Value``  the topic and a static ``origin`` field are added
3. ``ReplaceField$Value`` ``renames=line:text``
4. ``RegexRouter``        the topic ``<x>-raw`` is routed to ``<x>-clean``
5. ``InsertHeader``       a ``pipeline`` header on every record

Throughput is timed from the first record to the last, medians over interleaved rounds.
The chain's own cost per record (in this process, no I/O) is printed too.

Target (issue #4): the chain costs at most 30% of throughput (ratio >= 0.7).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import broker_process, fmt_rate
from benchmarks._worker import Worker, create_topic, end_offset, timed

T = "org.apache.kafka.connect.transforms."
JSON = "org.apache.kafka.connect.json.JsonConverter"

CHAIN = {
    "transforms": "hoist,insert,rename,route,header",
    "transforms.hoist.type": T + "HoistField$Value",
    "transforms.hoist.field": "line",
    "transforms.insert.type": T + "InsertField$Value",
    "transforms.insert.topic.field": "topic",
    "transforms.insert.static.field": "origin",
    "transforms.insert.static.value": "file",
    "transforms.rename.type": T + "ReplaceField$Value",
    "transforms.rename.renames": "line:text",
    "transforms.route.type": T + "RegexRouter",
    "transforms.route.regex": "(.*)-raw",
    "transforms.route.replacement": "$1-clean",
    "transforms.header.type": T + "InsertHeader",
    "transforms.header.header": "pipeline",
    "transforms.header.value.literal": "bench",
}


def chain_costs_us(records: int = 100_000, batch: int = 2000) -> tuple[float, dict[str, float]]:
    """Microseconds per record for the chain as the runtime runs it (over a poll's columns),
    and for each stage's batch form on its own: real plugins, batches of records dropped
    after use as a source task does."""
    import gc

    from connect.api import RecordColumns, Schema, SourceRecord
    from connect.runtime.errors import ErrorsConfig, RetryWithToleranceOperator
    from connect.runtime.plugins import Plugins
    from connect.runtime.transformation_chain import TransformationChain, TransformationStage

    plugins = Plugins()
    stages = []
    for alias in CHAIN["transforms"].split(","):
        prefix = f"transforms.{alias}."
        type_key = prefix + "type"
        settings = {k[len(prefix) :]: v for k, v in CHAIN.items() if k.startswith(prefix) and k != type_key}
        stages.append(TransformationStage(alias, plugins.new_transformation(CHAIN[type_key], settings)))
    chain: TransformationChain[Any] = TransformationChain(stages)
    operator = RetryWithToleranceOperator(ErrorsConfig(), "bench", 0)
    partition = {"filename": "in.txt"}
    gc.collect()
    gc.freeze()  # as the worker does after start-up

    def make() -> list[SourceRecord]:
        return [
            SourceRecord(
                partition,
                {"position": i},
                "bench-raw",
                None,
                None,
                None,
                Schema.STRING_SCHEMA,
                f"{i:07d} line",
            )
            for i in range(batch)
        ]

    whole = 0.0
    per_stage = dict.fromkeys((s.alias for s in stages), 0.0)
    for _ in range(records // batch):
        rs = make()
        started = time.perf_counter()
        chain.apply_batch(rs, operator, _context)
        whole += time.perf_counter() - started
        columns = RecordColumns(rs)
        for stage in stages:
            started = time.perf_counter()
            stage.transformation.apply_columns(columns)
            per_stage[stage.alias] += time.perf_counter() - started
    n = records // batch * batch
    return whole / n * 1e6, {k: v / n * 1e6 for k, v in per_stage.items()}


def header_cost_us(n: int = 200_000) -> float:
    """What one header adds to a produce() call, in microseconds: confluent-kafka turns the
    Python list into librdkafka headers per message. InsertHeader's output costs this much
    in any Python Connect worker, whatever the chain does. Passed by position, as the worker
    does: as a keyword (``headers=``) the call costs about 1 us more."""
    from confluent_kafka import Producer

    producer = Producer(
        {
            "bootstrap.servers": "127.0.0.1:1",  # nothing is sent: produce() only queues
            "queue.buffering.max.messages": 2 * n,
            "queue.buffering.max.kbytes": 2_000_000,
            "log_level": 0,
        }
    )
    value, headers = b'{"text":"0000001 line"}', [("pipeline", b"bench")]
    started = time.perf_counter()
    for _ in range(n):
        producer.produce("t", value, None)
    plain = time.perf_counter() - started
    started = time.perf_counter()
    for _ in range(n):
        producer.produce("t", value, None, -1, None, None, 0, headers)
    with_header = time.perf_counter() - started
    producer.purge()
    return (with_header - plain) / n * 1e6


def _context(record: Any) -> dict[str, Any]:
    return {"source_record": record}


def run_source(worker: Worker, bootstrap: str, name: str, src: Path, topic: str, n: int, smt: bool) -> float:
    config = {
        "connector.class": "FileStreamSource",
        "file": str(src),
        "topic": topic + "-raw",
        "batch.size": "2000",
        "value.converter": JSON,
        "value.converter.schemas.enable": "false",
    }
    if smt:
        config.update(CHAIN)
    out = topic + ("-clean" if smt else "-raw")
    create_topic(bootstrap, out)
    worker.create(name, config)
    _, seconds = timed(lambda: end_offset(bootstrap, out) > 0, lambda: end_offset(bootstrap, out) >= n, 300)
    worker.delete(name)
    return seconds


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=500_000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    n = args.lines
    plain, chained = [], []
    with tempfile.TemporaryDirectory(prefix="sluiceway-smt-bench-") as tmp:
        work = Path(tmp)
        src = work / "input.txt"
        with open(src, "w") as f:
            for i in range(n):
                f.write(f"{i:07d} {'x' * 91}\n")
        nbytes = src.stat().st_size
        with broker_process() as (bootstrap, _broker):
            worker = Worker(work, bootstrap)
            try:
                for r in range(args.rounds):
                    plain.append(run_source(worker, bootstrap, f"plain-{r}", src, f"plain-{r}", n, smt=False))
                    chained.append(run_source(worker, bootstrap, f"smt-{r}", src, f"smt-{r}", n, smt=True))
            finally:
                worker.stop()
    cost, per_stage = chain_costs_us()
    header = header_cost_us()
    plain_s, chained_s = statistics.median(plain), statistics.median(chained)
    print(
        f"lines: {n:,} x 100 bytes, one task, JSON values (schemas.enable=false); "
        f"median of {args.rounds} rounds"
    )
    print(f"file source, no SMTs:        {fmt_rate(n, nbytes, plain_s)}")
    print(f"file source, 5-SMT chain:    {fmt_rate(n, nbytes, chained_s)}")
    print(f"chain alone (in process):    {cost:.2f} us per record")
    print("  per stage: " + ", ".join(f"{k} {v:.2f} us" for k, v in per_stage.items()))
    per_plain = plain_s / n * 1e6
    print(
        f"one header in produce():     {header:.2f} us per record (confluent-kafka); the plain pipeline "
        f"costs {per_plain:.2f} us, so the header alone caps the ratio at "
        f"{per_plain / (per_plain + header):.2f}x"
    )
    ratios = ", ".join(f"{p / c:.2f}" for p, c in zip(plain, chained, strict=True))
    print(f"ratio with/without chain: {plain_s / chained_s:.2f}x  (target >= 0.7; rounds: {ratios})")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
