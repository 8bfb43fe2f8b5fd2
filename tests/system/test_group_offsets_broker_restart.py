"""A worker process whose REST API reads consumer group offsets (KIP-875's
``GET /connectors/{name}/offsets`` of a sink, the console's ``/sluiceway/topics/{name}``)
while its broker stops and starts again must stay alive and answer once the broker is back.

librdkafka 2.x aborts the whole process (``rd_kafka_enq_once_del_source_return: Assertion
`eonce->refcnt > 0' failed``, confluentinc/librdkafka#4605) when a coordinator-bound admin
request (OffsetFetch, OffsetCommit, DescribeGroups, DeleteGroups) meets a dropped
connection; these endpoints read group offsets through a consumer of the group instead
(``connect.api.kafka_groups``). With the admin client's calls the worker here died of that
assertion (exit -6) in the first or second restart, in each of two runs.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # re-exported untyped

from tests.hammer import Request, RequestHammer
from tests.support import BrokerProcess, StandaloneWorkerProcess, free_port, wait_until, write_props

pytestmark = pytest.mark.slow

TOPIC = "lines"
RECORDS = 20
ROUNDS = 3
# Requests the hammer must have finished (any answer) while the broker was down, per round:
# enough that some were in flight when the connections dropped, and some met no broker at all.
ANSWERS_WHILE_DOWN = 6


def _get(path: str) -> Request:
    return lambda http, _n: http.get(path)


def _connect_error(r: httpx.Response) -> bool:
    """Kafka Connect's error body."""
    try:
        body = r.json()
    except ValueError:
        return False
    return (
        isinstance(body, dict)
        and body.get("error_code") == r.status_code
        and isinstance(body.get("message"), str)
    )


def test_worker_outlives_broker_restarts_under_group_offset_reads(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "broker").start()
    rest_port = free_port()
    rest = f"http://127.0.0.1:{rest_port}"
    worker_file = write_props(
        tmp_path / "worker.properties",
        {
            "bootstrap.servers": broker.bootstrap,
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            "offset.storage.file.filename": str(tmp_path / "offsets.json"),
            "offset.flush.interval.ms": "200",
            "listeners": f"http://127.0.0.1:{rest_port}",
            # Reads of a stopped broker give up soon, so the hammer keeps asking; with the
            # admin client's group calls, short timeouts were also what made librdkafka
            # abort within a few restarts.
            "admin.request.timeout.ms": "1000",
            "admin.socket.timeout.ms": "1000",
        },
    )
    sink_file = write_props(
        tmp_path / "sink.properties",
        {
            "name": "sink",
            "connector.class": "FileStreamSink",
            "file": str(tmp_path / "out.txt"),
            "topics": TOPIC,
        },
    )
    worker: StandaloneWorkerProcess | None = None
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})  # outlives its future
        admin.create_topics([NewTopic(TOPIC, 1, 1)])[TOPIC].result(30)
        producer = Producer({"bootstrap.servers": broker.bootstrap})
        for i in range(RECORDS):
            producer.produce(TOPIC, f"line-{i}")
        assert producer.flush(30) == 0
        worker = StandaloneWorkerProcess(worker_file, sink_file).start()
        proc = worker.proc
        assert proc is not None

        def log() -> str:
            return worker.log_path.read_text(errors="replace")[-4000:] if worker else ""

        partition = {"kafka_topic": TOPIC, "kafka_partition": 0}
        at_end = [{"partition": partition, "offset": {"kafka_offset": RECORDS}}]

        def sink_offsets() -> object:
            try:
                r = httpx.get(f"{rest}/connectors/sink/offsets", timeout=60)
            except httpx.TransportError:
                return None
            return r.json().get("offsets") if r.status_code == 200 else None

        def committed_and_listed() -> bool:
            assert proc.poll() is None, f"the worker exited ({proc.returncode}):\n{log()}"
            if sink_offsets() != at_end:
                return False
            r = httpx.get(f"{rest}/sluiceway/topics/{TOPIC}", timeout=60)
            groups = r.json().get("consumer_groups", []) if r.status_code == 200 else []
            return [g["group_id"] for g in groups] == ["connect-sink"]

        wait_until(committed_and_listed, 90, interval=0.2, message="the sink's committed offset")

        paths = ["/connectors/sink/offsets", f"/sluiceway/topics/{TOPIC}", "/connectors/sink/offsets"]
        targets = [(rest, _get(p)) for p in paths]
        with RequestHammer(targets, _connect_error) as hammer:
            for _ in range(ROUNDS):
                up = hammer.total()
                wait_until(
                    lambda u=up: proc.poll() is not None or hammer.total() >= u + 3,
                    60,
                    message="answers with the broker up",
                )
                assert proc.poll() is None, f"the worker exited ({proc.returncode}):\n{log()}"
                broker.kill9()  # connections drop at once, requests in flight
                down = hammer.total()
                wait_until(
                    lambda d=down: proc.poll() is not None or hammer.total() >= d + ANSWERS_WHILE_DOWN,
                    120,
                    message="answers while the broker is down",
                )
                assert proc.poll() is None, f"the worker died with its broker ({proc.returncode}):\n{log()}"
                broker.start()
            assert proc.poll() is None, f"the worker exited ({proc.returncode}):\n{log()}"
        assert hammer.refused == [], f"the worker stopped answering: {hammer.refused[:3]}\n{log()}"
        # Answers while the broker was away are errors in Kafka Connect's body.
        statuses = hammer.statuses()
        assert set(statuses) <= {200, 500}, statuses
        assert statuses[500] > 0, "no request met the stopped broker"
        assert hammer.odd_bodies == [], hammer.odd_bodies[:3]

        wait_until(
            committed_and_listed, 90, interval=0.2, message="the offsets again once the broker is back"
        )
        assert proc.poll() is None
    finally:
        if worker is not None and worker.proc is not None and worker.proc.poll() is None:
            worker.stop()
        broker.stop()
