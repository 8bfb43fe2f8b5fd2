"""A ``SourceRecordBatch`` with a partition, a timestamp and headers per record (what
MirrorSourceTask returns), and the per-record acknowledgements of a task that overrides
``commit_record``: the columns, ``select``, ``SubmittedRecords`` runs, and the worker
sending such a batch with and without a transformation, reporting every record to
``commit_records`` (the batch form, given the batch's columns) or ``commit_record``, and
committing the source offsets only as far as Kafka acknowledged."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # re-exported untyped

from connect.api import Header, Headers, SourceRecordBatch
from connect.runtime.submitted_records import SubmittedRecords
from sluiceway.embedded import EmbeddedConnect
from tests.connect import rows_plugins
from tests.connect.rows_plugins import BYTES, PARTITIONS, TS0, headers_of
from tests.support import unique

BYTES_CONVERTER = "org.apache.kafka.connect.converters.ByteArrayConverter"


def batch(n: int) -> SourceRecordBatch:
    return SourceRecordBatch(
        {"p": 1},
        [{"i": i} for i in range(n)],
        "t",
        BYTES,
        [b"v%d" % i for i in range(n)],
        keys=[b"k%d" % i for i in range(n)],
        key_schema=BYTES,
        kafka_partitions=[i % 3 for i in range(n)],
        timestamps=[TS0 + i for i in range(n)],
        headers=[headers_of(i) for i in range(n)],
        header_schema=BYTES,
    )


# -- the columns ------------------------------------------------------------------------------


def test_a_record_of_the_batch_has_its_own_partition_timestamp_and_headers() -> None:
    b = batch(5)
    assert b.has_row_columns
    for i, r in enumerate(b):
        assert (r.kafka_partition, r.timestamp, r.source_offset, r.key, r.value) == (
            i % 3,
            TS0 + i,
            {"i": i},
            b"k%d" % i,
            b"v%d" % i,
        )
        pairs = headers_of(i)
        assert r.has_headers == bool(pairs)
        if pairs:
            assert r.headers == Headers([Header(k, v, BYTES) for k, v in pairs])
    shared = SourceRecordBatch(None, [None], "t", None, [b"x"], kafka_partition=2, timestamp=7)
    assert not shared.has_row_columns
    assert (shared[0].kafka_partition, shared[0].timestamp, shared[0].has_headers) == (2, 7, False)


def test_select_keeps_the_rows_in_the_order_given() -> None:
    b = batch(6)
    for rows in ([2, 3, 4], [5, 0, 3], [4], []):
        chosen = b.select(rows)
        assert [r.source_offset for r in chosen] == [{"i": i} for i in rows]
        assert [(r.kafka_partition, r.timestamp, r.value) for r in chosen] == [
            (i % 3, TS0 + i, b"v%d" % i) for i in rows
        ]
        assert [r.headers if r.has_headers else None for r in chosen] == [
            r.headers if r.has_headers else None for r in (b[i] for i in rows)
        ]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"timestamps": [1]}, "1 timestamps for 2 values"),
        ({"kafka_partitions": [0, 1, 2]}, "3 kafka_partitions for 2 values"),
        ({"headers": [None]}, "1 headers for 2 values"),
        ({"timestamps": [1, 2], "timestamp": 5}, "timestamp and timestamps both given"),
        (
            {"kafka_partitions": [0, 1], "kafka_partition": 0},
            "kafka_partition and kafka_partitions both given",
        ),
    ],
)
def test_columns_that_do_not_fit_are_refused(extra: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SourceRecordBatch(None, [None, None], "t", None, [b"a", b"b"], **extra)  # type: ignore[arg-type]


# -- runs in SubmittedRecords --------------------------------------------------------------


def test_a_run_commits_up_to_its_first_unacknowledged_row_and_holds_back_what_follows() -> None:
    s = SubmittedRecords()
    part = {"p": 1}
    run = s.submit_run(part, [{"i": i} for i in range(4)])
    after = s.submit(part, {"i": 4})  # the same partition, submitted after the run
    other = s.submit({"p": 2}, {"i": 0})
    assert s.pending == 6
    run.ack(0)
    run.ack(2)
    after.ack()
    other.ack()
    c = s.committable()
    assert {k: v[1] for k, v in c.offsets.items()} == {(("p", 1),): {"i": 0}, (("p", 2),): {"i": 0}}
    assert (c.records, c.pending) == (2, 2)
    run.ack(1)
    c = s.committable()
    assert {k: v[1] for k, v in c.offsets.items()} == {(("p", 1),): {"i": 2}}
    run.ack(3)
    run.ack(3)  # a repeated acknowledgement counts once
    c = s.committable()
    assert {k: v[1] for k, v in c.offsets.items()} == {(("p", 1),): {"i": 4}}
    assert (c.records, c.pending, len(s)) == (2, 0, 0)


def test_a_run_without_offsets_for_its_last_rows_commits_the_newest_it_has() -> None:
    s = SubmittedRecords()
    run = s.submit_run({"p": 1}, [{"i": 0}, {"i": 1}, None])
    for row in range(3):
        run.ack(row)
    assert [v[1] for v in s.committable().offsets.values()] == [{"i": 1}]


# -- the worker ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def connect(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedConnect]:
    with EmbeddedConnect(
        tmp_path_factory.mktemp("rows"),
        {
            "key.converter": BYTES_CONVERTER,
            "value.converter": BYTES_CONVERTER,
            "header.converter": BYTES_CONVERTER,
            "offset.flush.interval.ms": "200",
        },
    ) as c:
        yield c


@pytest.mark.parametrize("transformed", [False, True], ids=["columns", "through-a-transformation"])
def test_each_record_lands_where_the_batch_says_and_is_reported_once_with_its_metadata(
    connect: EmbeddedConnect, transformed: bool
) -> None:
    name, topic, n = unique("rows"), unique("rows"), 300
    admin = AdminClient({"bootstrap.servers": connect.bootstrap})
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(30)
    config = {"connector.class": "tests.connect.rows_plugins.RowsConnector", "topic": topic, "count": str(n)}
    if transformed:
        # A stage (routing each record back to its topic): the records go through the chain.
        config |= {
            "transforms": "same",
            "transforms.same.type": "org.apache.kafka.connect.transforms.RegexRouter",
            "transforms.same.regex": "(.*)",
            "transforms.same.replacement": "$1",
        }
    connect.create_connector(name, config)
    got = connect.consume(topic, n, partitions=PARTITIONS)
    seen = {}
    for m in got:
        value = m.value()
        assert value is not None
        i = int(value[1:])
        seen[i] = m
        assert (m.key(), m.partition(), m.timestamp()[1]) == (b"k%d" % i, i % PARTITIONS, TS0 + i)
        headers = list(m.headers() or [])
        assert headers == (headers_of(i) or [])
    assert sorted(seen) == list(range(n))

    connect.wait_for(lambda: len(rows_plugins.COMMITTED[name]) >= n, 15, f"{n} acknowledgements")
    reports = list(rows_plugins.COMMITTED[name])
    assert Counter(i for _, i, _ in reports) == Counter(range(n))
    for _, i, meta in reports:
        assert meta is not None
        assert (meta.topic, meta.partition, meta.offset) == (topic, i % PARTITIONS, seen[i].offset())
    # As Kafka's commitRecord, the task hears of the records it made (before any
    # transformation): its own batch, as columns.
    assert {how for how, _, _ in reports} == {"batch"}

    def committed() -> object:
        body = connect.request("GET", f"/connectors/{name}/offsets").json()
        return [o["offset"] for o in body["offsets"]]

    connect.wait_for(lambda: committed() == [{"i": n - 1}], 15, "the last offset committed")
