"""read_committed through a real broker, judged by real clients.

A partition holds plain records, a committed transaction, an aborted one interleaved
with them, and an open one followed by a plain record; transactional batches and
markers are written straight into the partition log on the broker's own event loop (no
coordinator needed). confluent-kafka and kafka-python consumers with
isolation.level=read_committed must see exactly the committed records, nothing at or
past the last stable offset until the open transaction commits; the wire answers
(Fetch, ListOffsets, DescribeProducers, Produce refusals) are checked field by field.
"""

from __future__ import annotations

import asyncio
import select
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from confluent_kafka import Consumer, TopicPartition
from kafka import KafkaConsumer
from kafka import TopicPartition as KafkaTopicPartition
from kafka.record.default_records import DefaultRecordBatch
from kio.schema.errors import ErrorCode

from broker.broker import Broker
from broker.protocol.build import build
from broker.protocol.codec import decode_response, encode_request, request_class
from broker.protocol.versions import ApiKey
from broker.server import EmbeddedBroker
from broker.storage.batch import CONTROL, TRANSACTIONAL, iter_batches, read_header, validate_produced
from broker.storage.log import PartitionLog
from broker.storage.records import Record, build_batch
from tests.support import embedded_broker, unique
from tests.wire import WireClient, sample_request

T = TypeVar("T")
# Recent timestamps, taken when a scenario is written (not at import: a test may run long
# after its module was collected, e.g. under pytest-xdist): markers carry the broker's clock,
# and a segment rolls when its records span more than segment.ms (a fetch reads one segment
# at a time).
LATE_MS = 60_000  # how far after the markers' timestamps the late records are
COMMITTED_PID, ABORTED_PID, OPEN_PID = 1000, 2000, 3000
HOUR_MS = 3_600_000


def on_broker(eb: EmbeddedBroker, fn: Callable[[Broker], T]) -> T:
    """Run ``fn`` on the broker's event loop, where its partition logs live."""
    assert eb.server is not None and eb._loop is not None

    async def call() -> T:
        assert eb.server is not None
        return fn(eb.server.broker)

    return asyncio.run_coroutine_threadsafe(call(), eb._loop).result(30)


def recent() -> int:
    """A minute ago, in ms: a recent timestamp, before any marker written from now on."""
    return int(time.time() * 1000) - 60_000


def batch(
    values: list[str], pid: int = -1, seq: int = -1, ts: int | None = None, attributes: int = 0
) -> bytes:
    recs = [Record(i, i, f"key-{v}".encode(), v.encode()) for i, v in enumerate(values)]
    return build_batch(
        0,
        recs,
        base_timestamp=recent() if ts is None else ts,
        attributes=attributes,
        producer_id=pid,
        producer_epoch=0,
        base_sequence=seq,
    )


def put(plog: PartitionLog, raw: bytes) -> int:
    return plog.append(raw, validate_produced(raw, 1 << 20)).base_offset


class Scenario:
    """Offsets: 0 p0 | 1-2 c0 c1 (committed txn) | 3 a0 (aborted txn) | 4 p1 | 5 a1 |
    6 COMMIT | 7 ABORT | 8 o0 (open txn) | 9 p2, at a later timestamp."""

    COMMITTED_VIEW = ["p0", "c0", "c1", "p1"]
    EVERYTHING = ["p0", "c0", "c1", "a0", "p1", "a1", "o0", "p2"]

    def __init__(self, eb: EmbeddedBroker) -> None:
        self.eb = eb
        self.topic = unique("rc")
        self.t0 = recent()
        self.late = self.t0 + 60_000 + LATE_MS  # after the markers' timestamps
        on_broker(eb, self._write)

    def _write(self, b: Broker) -> None:
        b.logs.create_topic(self.topic, 1)
        plog = b.logs.get(self.topic, 0)
        assert plog is not None
        txn = TRANSACTIONAL
        t0, late = self.t0, self.late
        assert put(plog, batch(["p0"], ts=t0)) == 0
        assert put(plog, batch(["c0", "c1"], COMMITTED_PID, 0, t0, txn)) == 1
        assert put(plog, batch(["a0"], ABORTED_PID, 0, t0, txn)) == 3
        assert put(plog, batch(["p1"], ts=t0)) == 4
        assert put(plog, batch(["a1"], ABORTED_PID, 1, t0, txn)) == 5
        assert plog.append_marker(COMMITTED_PID, 0, True, 0) == 6
        assert plog.append_marker(ABORTED_PID, 0, False, 0) == 7
        assert put(plog, batch(["o0"], OPEN_PID, 0, late, txn)) == 8
        assert put(plog, batch(["p2"], ts=late + 1)) == 9
        assert plog.last_stable_offset == 8

    def commit_open(self) -> None:
        def commit(b: Broker) -> None:
            plog = b.logs.get(self.topic, 0)
            assert plog is not None
            assert plog.append_marker(OPEN_PID, 0, True, 0) == 10
            b.logs.notify((self.topic, 0))  # as the coordinator does after a marker

        on_broker(self.eb, commit)


@pytest.fixture
def scenario(broker: EmbeddedBroker) -> Iterator[Scenario]:
    yield Scenario(broker)


def fetch_request(topic: str, offset: int, isolation: int, max_wait_ms: int = 0) -> dict[str, Any]:
    request = sample_request(ApiKey.FETCH, topic, "g")
    request["isolation_level"] = isolation
    request["max_wait"] = max_wait_ms
    request["topics"][0]["partitions"][0]["fetch_offset"] = offset
    return request


def record_offsets(records: bytes) -> list[int]:
    out = []
    for pos, _, _ in iter_batches(records):
        h = read_header(records, pos)
        out += list(range(h.base_offset, h.last_offset + 1))
    return out


# -- real consumers -----------------------------------------------------------------------


def test_confluent_kafka_read_committed_sees_only_committed_records(scenario: Scenario) -> None:
    c = Consumer(
        {
            "bootstrap.servers": scenario.eb.bootstrap,
            "group.id": unique("g"),
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
            "fetch.wait.max.ms": 100,
        }
    )
    try:
        tp = TopicPartition(scenario.topic, 0, 0)
        # librdkafka asks ListOffsets with the consumer's isolation level: the LSO.
        assert c.get_watermark_offsets(tp, timeout=15) == (0, 8)
        c.assign([tp])
        got: list[str] = []
        while len(got) < len(Scenario.COMMITTED_VIEW):
            for m in c.consume(100, 1.0):
                assert m.error() is None, m.error()
                got.append(m.value().decode())
        assert got == Scenario.COMMITTED_VIEW
        # Whatever a fetch returned came at once; nothing past the LSO was in it.
        assert c.consume(100, 1.0) == []
        scenario.commit_open()
        while got[-1] != "p2":
            for m in c.consume(100, 1.0):
                assert m.error() is None, m.error()
                got.append(m.value().decode())
        assert got == [*Scenario.COMMITTED_VIEW, "o0", "p2"]
        assert c.get_watermark_offsets(tp, timeout=15) == (0, 11)
    finally:
        c.close()


def test_confluent_kafka_read_uncommitted_sees_everything(scenario: Scenario) -> None:
    c = Consumer(
        {
            "bootstrap.servers": scenario.eb.bootstrap,
            "group.id": unique("g"),
            "isolation.level": "read_uncommitted",
            "enable.auto.commit": False,
        }
    )
    try:
        tp = TopicPartition(scenario.topic, 0, 0)
        assert c.get_watermark_offsets(tp, timeout=15) == (0, 10)
        c.assign([tp])
        got: list[str] = []
        while len(got) < len(Scenario.EVERYTHING):
            got += [m.value().decode() for m in c.consume(100, 1.0) if m.error() is None]
        assert got == Scenario.EVERYTHING
    finally:
        c.close()


def test_kafka_python_read_committed_sees_only_committed_records(scenario: Scenario) -> None:
    c = KafkaConsumer(
        bootstrap_servers=scenario.eb.bootstrap,
        isolation_level="read_committed",
        enable_auto_commit=False,
        fetch_max_wait_ms=100,
    )
    try:
        tp = KafkaTopicPartition(scenario.topic, 0)
        c.assign([tp])
        c.seek_to_beginning(tp)
        assert c.end_offsets([tp])[tp] == 8  # kafka-python asks with its isolation level too
        got: list[str] = []

        def poll() -> list[str]:
            return [r.value.decode() for rs in c.poll(timeout_ms=1000).values() for r in rs]

        while len(got) < len(Scenario.COMMITTED_VIEW):
            got += poll()
        assert got == Scenario.COMMITTED_VIEW
        assert poll() == []
        scenario.commit_open()
        while got[-1] != "p2":
            got += poll()
        assert got == [*Scenario.COMMITTED_VIEW, "o0", "p2"]
    finally:
        c.close()


# -- the wire -------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [4, 11, 12])
def test_fetch_stops_at_the_lso_and_names_the_aborted_transactions(scenario: Scenario, version: int) -> None:
    with WireClient(scenario.eb.bootstrap) as client:
        committed = client.request(ApiKey.FETCH, version, fetch_request(scenario.topic, 0, 1))
        (part,) = committed.responses[0].partitions
        assert part.error_code == 0
        assert (part.high_watermark, part.last_stable_offset) == (10, 8)
        assert record_offsets(part.records) == list(range(8))
        assert [(a.producer_id, a.first_offset) for a in part.aborted_transactions] == [(ABORTED_PID, 3)]
        # From the LSO on there is nothing to read yet: an empty answer, not an error.
        at_lso = client.request(ApiKey.FETCH, version, fetch_request(scenario.topic, 8, 1))
        (part,) = at_lso.responses[0].partitions
        assert (part.error_code, part.last_stable_offset) == (0, 8)
        assert not part.records and list(part.aborted_transactions) == []
        uncommitted = client.request(ApiKey.FETCH, version, fetch_request(scenario.topic, 0, 0))
        (part,) = uncommitted.responses[0].partitions
        assert (part.high_watermark, part.last_stable_offset) == (10, 8)
        assert record_offsets(part.records) == list(range(10))
        assert part.aborted_transactions is None


def test_a_read_committed_long_poll_wakes_when_the_lso_moves(scenario: Scenario) -> None:
    body = build(request_class(ApiKey.FETCH, 11), fetch_request(scenario.topic, 8, 1, HOUR_MS))
    with WireClient(scenario.eb.bootstrap, timeout=30) as waiting:
        waiting.send_raw(encode_request(1, body, client_id="long-poll"))
        with WireClient(scenario.eb.bootstrap) as other:  # the broker serves others meanwhile
            assert other.request(ApiKey.METADATA, 9, topics=[], allow_auto_topic_creation=False).brokers
        assert select.select([waiting.sock], [], [], 0)[0] == [], "the fetch did not wait"
        scenario.commit_open()
        _, response = decode_response(ApiKey.FETCH, 11, waiting.recv_frame())
    (part,) = response.responses[0].partitions
    assert (part.error_code, part.last_stable_offset, part.high_watermark) == (0, 11, 11)
    assert record_offsets(part.records) == [8, 9, 10]
    assert list(part.aborted_transactions) == []  # the aborted one ended before offset 8


@pytest.mark.parametrize("version", [2, 5, 7])
def test_list_offsets_read_committed_ends_at_the_lso(scenario: Scenario, version: int) -> None:
    def offset(timestamp: int, isolation: int) -> int:
        with WireClient(scenario.eb.bootstrap) as client:
            partition = {"partition_index": 0, "timestamp": timestamp, "current_leader_epoch": -1}
            response = client.request(
                ApiKey.LIST_OFFSETS,
                version,
                replica_id=-1,
                isolation_level=isolation,
                topics=[{"name": scenario.topic, "partitions": [partition]}],
            )
            (part,) = response.topics[0].partitions
            assert part.error_code == 0
            return int(part.offset)

    assert (offset(-1, 1), offset(-1, 0)) == (8, 10)
    assert (offset(-2, 1), offset(-2, 0)) == (0, 0)
    # A timestamp that lands past the LSO finds nothing for read_committed.
    assert (offset(scenario.late, 1), offset(scenario.late, 0)) == (-1, 8)
    assert offset(scenario.t0 + 1, 1) == 2  # c1 (offset 2, timestamp delta 1) is committed, below the LSO
    if version >= 7:
        assert (offset(-3, 1), offset(-3, 0)) == (-1, 9)  # the newest record is p2, past the LSO


def test_describe_producers_shows_epochs_sequences_and_open_transactions(scenario: Scenario) -> None:
    with WireClient(scenario.eb.bootstrap) as client:
        response = client.request(
            ApiKey.DESCRIBE_PRODUCERS,
            0,
            topics=[
                {"name": scenario.topic, "partition_indexes": [0, 5]},
                {"name": unique("missing"), "partition_indexes": [0]},
            ],
        )
    present, missing = response.topics
    ok, absent = present.partitions
    assert ok.error_code == 0 and absent.error_code == ErrorCode.unknown_topic_or_partition
    assert missing.partitions[0].error_code == ErrorCode.unknown_topic_or_partition
    states = {p.producer_id: p for p in ok.active_producers}
    assert set(states) == {COMMITTED_PID, ABORTED_PID, OPEN_PID}
    assert (states[COMMITTED_PID].last_sequence, states[COMMITTED_PID].current_txn_start_offset) == (1, -1)
    assert (states[ABORTED_PID].last_sequence, states[ABORTED_PID].coordinator_epoch) == (1, 0)
    assert (states[OPEN_PID].current_txn_start_offset, states[OPEN_PID].producer_epoch) == (8, 0)


def test_produce_refuses_what_only_the_coordinator_may_write(scenario: Scenario) -> None:
    def produce(raw: bytes, transactional_id: str | None = None) -> tuple[int, int]:
        request = sample_request(ApiKey.PRODUCE, scenario.topic, "g")
        request["transactional_id"] = transactional_id
        request["topic_data"][0]["partition_data"][0]["records"] = raw
        with WireClient(scenario.eb.bootstrap) as client:
            response = client.request(ApiKey.PRODUCE, 9, request)
        part = response.responses[0].partition_responses[0]
        return int(part.error_code), int(part.base_offset)

    # A transactional batch needs the request's transactional id (Kafka's authorization answer).
    txn_batch = batch(["x"], OPEN_PID, 1, attributes=TRANSACTIONAL)
    assert produce(txn_batch) == (ErrorCode.transactional_id_authorization_failed, -1)
    # With an id the coordinator has no transaction for, the KIP-890 check refuses it.
    code, _ = produce(txn_batch, unique("txn"))
    assert code not in (ErrorCode.none, ErrorCode.transactional_id_authorization_failed)
    # Markers are the coordinator's.
    control = batch(["x"], OPEN_PID, -1, attributes=TRANSACTIONAL | CONTROL)
    assert produce(control, unique("txn")) == (ErrorCode.invalid_record, -1)
    # A producer id without a sequence is the group coordinator's form, not a client's.
    assert produce(batch(["x"], 77, -1)) == (ErrorCode.invalid_record, -1)
    # A plain batch from a producer whose transaction is open.
    assert produce(batch(["x"], OPEN_PID, 1)) == (ErrorCode.invalid_txn_state, -1)
    # Nothing of that was written; plain producing goes on.
    assert produce(batch(["fine"])) == (ErrorCode.none, 10)


def test_describe_producers_needs_read_on_the_topic(tmp_path: Path) -> None:
    from confluent_kafka.admin import (
        AclBinding,
        AclOperation,
        AclPermissionType,
        AdminClient,
        NewTopic,
        ResourcePatternType,
        ResourceType,
    )

    secured = {
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "allow.everyone.if.no.acl.found": "true",
    }
    with embedded_broker(tmp_path / "logs", **secured) as eb:
        readable, unreadable = unique("ok"), unique("denied")
        admin = AdminClient({"bootstrap.servers": eb.bootstrap})
        for fut in admin.create_topics([NewTopic(readable, 1), NewTopic(unreadable, 1)]).values():
            fut.result(15)
        # Describable but not readable: DescribeProducers needs READ.
        acls = [
            AclBinding(
                ResourceType.TOPIC,
                unreadable,
                ResourcePatternType.LITERAL,
                "User:ANONYMOUS",
                "*",
                op,
                permission,
            )
            for op, permission in [
                (AclOperation.READ, AclPermissionType.DENY),
                (AclOperation.DESCRIBE, AclPermissionType.ALLOW),
            ]
        ]
        for fut in admin.create_acls(acls, request_timeout=10).values():
            fut.result()
        with WireClient(eb.bootstrap) as client:
            response = client.request(
                ApiKey.DESCRIBE_PRODUCERS,
                0,
                topics=[{"name": t, "partition_indexes": [0]} for t in (readable, unreadable)],
            )
    codes = [t.partitions[0].error_code for t in response.topics]
    assert codes == [ErrorCode.none, ErrorCode.topic_authorization_failed]


def test_read_committed_gets_past_what_compaction_removed_before_the_lso(broker: EmbeddedBroker) -> None:
    """The cleaning round's last batch stays, emptied, as in Kafka: a fetch inside what was
    cleaned still gets a batch to move its position on, though nothing else is readable
    before the LSO."""
    topic = unique("compacted")
    compact_now = int(time.time() * 1000) + 3_600_000

    def write_and_compact(b: Broker) -> None:
        from broker.storage import cleaner

        b.logs.create_topic(topic, 1, {"cleanup.policy": "compact"})
        plog = b.logs.get(topic, 0)
        assert plog is not None
        assert put(plog, batch(["x"])) == 0
        assert put(plog, batch(["aborted"], 7, 0, attributes=TRANSACTIONAL)) == 1
        plog.roll()
        assert put(plog, batch(["open"], 8, 0, attributes=TRANSACTIONAL)) == 2
        assert plog.append_marker(7, 0, False, 0) == 3
        assert plog.last_stable_offset == 2
        segs = cleaner.cleanable_segments(plog, compact_now)
        assert [s.base_offset for s in segs] == [0]
        cleaner.install(plog, cleaner.prepare(plog, segs, compact_now))

    on_broker(broker, write_and_compact)
    with WireClient(broker.bootstrap) as client:
        response = client.request(ApiKey.FETCH, 11, fetch_request(topic, 1, 1))
    (part,) = response.responses[0].partitions
    assert (part.error_code, part.last_stable_offset) == (0, 2)
    h = read_header(part.records)
    assert (h.base_offset, h.last_offset, h.count, h.producer_id) == (1, 1, 0, 7)
    assert len(part.records) == h.size  # that batch alone
    # kafka-python's reader takes it as a batch of no records (as from a Kafka broker).
    assert list(DefaultRecordBatch(bytearray(part.records))) == []
