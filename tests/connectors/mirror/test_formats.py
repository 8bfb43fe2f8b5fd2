"""Offset syncs, checkpoints and heartbeats are encoded byte for byte as Kafka's Struct
layouts (bytes below written out by hand from the Java schemas), round-trip, and
malformed bytes are refused with the field and position."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connect.api.errors import DataException
from connectors.mirror.formats import Checkpoint, Heartbeat, OffsetSync

INT32 = st.integers(-(2**31), 2**31 - 1)
INT64 = st.integers(-(2**63), 2**63 - 1)
# Strings Kafka can write: any text whose UTF-8 fits in an int16 length (no lone surrogates).
TEXT = st.text(st.characters(blacklist_categories=["Cs"]), max_size=40)


def test_offset_sync_bytes() -> None:
    sync = OffsetSync("orders", 3, 258, 0x0102030405060708)
    # STRING topic: int16 length 6, "orders"; INT32 partition 3
    assert sync.key() == b"\x00\x06orders" + b"\x00\x00\x00\x03"
    # INT64 upstreamOffset 258, INT64 offset; no version header
    assert sync.value() == b"\x00\x00\x00\x00\x00\x00\x01\x02" + b"\x01\x02\x03\x04\x05\x06\x07\x08"
    assert OffsetSync.decode(sync.key(), sync.value()) == sync


def test_checkpoint_bytes() -> None:
    cp = Checkpoint("g1", "A.t", 1, 10, 7, "")
    assert cp.key() == b"\x00\x02g1" + b"\x00\x03A.t" + b"\x00\x00\x00\x01"
    assert cp.value() == (
        b"\x00\x00"  # version 0
        + b"\x00\x00\x00\x00\x00\x00\x00\x0a"  # upstreamOffset
        + b"\x00\x00\x00\x00\x00\x00\x00\x07"  # offset
        + b"\x00\x00"  # metadata: empty STRING
    )
    with_meta = Checkpoint("g", "t", 0, -1, 0, "é")
    assert with_meta.value() == b"\x00\x00" + b"\xff" * 8 + b"\x00" * 8 + b"\x00\x02\xc3\xa9"
    assert Checkpoint.decode(cp.key(), cp.value()) == cp
    assert cp.source_partition() == {"group": "g1", "topic": "A.t", "partition": 1}


def test_heartbeat_bytes() -> None:
    hb = Heartbeat("A", "B", 1_700_000_000_000)
    assert hb.key() == b"\x00\x01A\x00\x01B"
    assert hb.value() == b"\x00\x00" + (1_700_000_000_000).to_bytes(8, "big")
    assert hb.value() == b"\x00\x00\x00\x00\x01\x8b\xcf\xe5\x68\x00"
    assert Heartbeat.decode(hb.key(), hb.value()) == hb
    assert hb.source_partition() == {"sourceClusterAlias": "A", "targetClusterAlias": "B"}


def test_negative_numbers_are_twos_complement() -> None:
    sync = OffsetSync("t", -1, -2, -(2**63))
    assert sync.key() == b"\x00\x01t\xff\xff\xff\xff"
    assert sync.value() == b"\xff" * 7 + b"\xfe" + b"\x80" + b"\x00" * 7


@given(TEXT, INT32, INT64, INT64)
def test_offset_sync_round_trip(topic: str, partition: int, up: int, down: int) -> None:
    sync = OffsetSync(topic, partition, up, down)
    assert OffsetSync.decode(sync.key(), sync.value()) == sync
    assert len(sync.value()) == 16
    assert len(sync.key()) == 2 + len(topic.encode()) + 4


@given(TEXT, TEXT, INT32, INT64, INT64, TEXT)
def test_checkpoint_round_trip(group: str, topic: str, partition: int, up: int, down: int, meta: str) -> None:
    cp = Checkpoint(group, topic, partition, up, down, meta)
    assert Checkpoint.decode(cp.key(), cp.value()) == cp


@given(TEXT, TEXT, INT64)
def test_heartbeat_round_trip(source: str, target: str, ts: int) -> None:
    hb = Heartbeat(source, target, ts)
    assert Heartbeat.decode(hb.key(), hb.value()) == hb


def test_longest_string_kafka_allows() -> None:
    topic = "t" * 0x7FFF
    sync = OffsetSync(topic, 0, 0, 0)
    assert sync.key()[:2] == b"\x7f\xff"
    assert OffsetSync.decode(sync.key(), sync.value()) == sync
    with pytest.raises(DataException, match="offset sync key: topic is 32768 bytes"):
        OffsetSync("t" * 0x8000, 0, 0, 0).key()
    with pytest.raises(DataException, match="metadata is 32770 bytes"):
        Checkpoint("g", "t", 0, 0, 0, "é" * 0x4001).value()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: OffsetSync("t", 2**31, 0, 0).key(), "partition=2147483648 does not fit in INT32"),
        (
            lambda: OffsetSync("t", 0, 2**63, 0).value(),
            "upstreamOffset=9223372036854775808 does not fit in INT64",
        ),
        (lambda: Checkpoint("g", "t", 0, 0, -(2**63) - 1, "").value(), "offset=.* does not fit in INT64"),
        (lambda: Heartbeat("A", "B", 2**64).value(), "timestamp=.* does not fit"),
        (lambda: Heartbeat("\ud800", "B", 0).key(), "sourceClusterAlias is not encodable"),
    ],
)
def test_unencodable_values_are_refused(make: object, message: str) -> None:
    with pytest.raises(DataException, match=message):
        make()  # type: ignore[operator]


KEY = OffsetSync("orders", 3, 1, 2).key()
VALUE = OffsetSync("orders", 3, 1, 2).value()


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        (b"", VALUE, r"offset sync key: topic's length needs 2 bytes at byte 0, only 0 left of 0"),
        (b"\x00", VALUE, r"topic's length needs 2 bytes at byte 0, only 1 left"),
        (b"\x00\x07orders\x00\x00\x00\x03", VALUE, r"partition needs 4 bytes at byte 9, only 3 left"),
        (b"\x00\x10orders", VALUE, r"topic needs 16 bytes at byte 2, only 6 left"),
        (b"\xff\xfforders", VALUE, r"topic has a negative length -1 at byte 0"),
        (KEY[:-1], VALUE, r"partition needs 4 bytes at byte 8, only 3 left of 11"),
        (KEY + b"\x00", VALUE, r"offset sync key: 1 unexpected bytes after the last field at byte 12"),
        (b"\x00\x02\xff\xfe\x00\x00\x00\x00", VALUE, r"topic at byte 0 is not UTF-8"),
        (KEY, VALUE[:15], r"offset sync value: offset needs 8 bytes at byte 8, only 7 left"),
        (KEY, VALUE + b"\x00", r"offset sync value: 1 unexpected bytes"),
        (KEY, None, r"offset sync value: no bytes \(null\)"),
        (None, VALUE, r"offset sync key: no bytes \(null\)"),
    ],
)
def test_malformed_offset_syncs(key: bytes, value: bytes, message: str) -> None:
    with pytest.raises(DataException, match=message):
        OffsetSync.decode(key, value)


def test_malformed_checkpoints_and_heartbeats() -> None:
    cp = Checkpoint("g", "t", 0, 1, 2, "m")
    with pytest.raises(DataException, match="checkpoint value: version needs 2 bytes"):
        Checkpoint.decode(cp.key(), b"\x00")
    with pytest.raises(DataException, match="checkpoint value: version -1 is negative"):
        Checkpoint.decode(cp.key(), b"\xff\xff" + cp.value()[2:])
    with pytest.raises(DataException, match="checkpoint value: metadata needs 1 bytes at byte 20"):
        Checkpoint.decode(cp.key(), cp.value()[:-1])
    with pytest.raises(DataException, match="checkpoint value: 2 unexpected bytes"):
        Checkpoint.decode(cp.key(), cp.value() + b"xx")
    with pytest.raises(DataException, match="checkpoint key: partition needs 4 bytes"):
        Checkpoint.decode(cp.key()[:-4], cp.value())
    hb = Heartbeat("A", "B", 5)
    with pytest.raises(
        DataException, match="heartbeat value: timestamp needs 8 bytes at byte 2, only 0 left"
    ):
        Heartbeat.decode(hb.key(), b"\x00\x00")
    with pytest.raises(
        DataException, match="heartbeat key: targetClusterAlias's length needs 2 bytes at byte 3"
    ):
        Heartbeat.decode(b"\x00\x01A", hb.value())
    with pytest.raises(DataException, match="heartbeat value: 1 unexpected bytes"):
        Heartbeat.decode(hb.key(), hb.value() + b"\x00")


def test_later_versions_read_the_version_0_fields() -> None:
    """As Kafka: a newer writer's extra fields after the version-0 ones are ignored."""
    cp = Checkpoint("g", "t", 0, 1, 2, "m")
    newer = b"\x00\x01" + cp.value()[2:] + b"\x00\x00\x00\x2a"
    assert Checkpoint.decode(cp.key(), newer) == cp
    hb = Heartbeat("A", "B", 5)
    assert Heartbeat.decode(hb.key(), b"\x00\x03" + hb.value()[2:] + b"extra") == hb


@given(st.binary(max_size=40), st.binary(max_size=40))
def test_arbitrary_bytes_decode_or_raise_data_exception(key: bytes, value: bytes) -> None:
    for cls in (OffsetSync, Checkpoint, Heartbeat):
        try:
            record = cls.decode(key, value)
        except DataException:
            continue
        # Whatever decodes re-encodes to the same key (keys are strict).
        assert record.key() == key
