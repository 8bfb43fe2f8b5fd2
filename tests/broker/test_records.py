"""Record-level encoding: build_batch/parse_records round trips, codecs, xerial snappy, bad payloads."""

from __future__ import annotations

import struct

import cramjam
import pytest
from crc32c import crc32c
from hypothesis import given, settings
from hypothesis import strategies as st

from broker.storage.batch import (
    ATTRIBUTES_OFFSET,
    CRC_OFFSET,
    HEADER_SIZE,
    LOG_OVERHEAD,
    TRANSACTIONAL,
    Codec,
    read_header,
    validate_produced,
)
from broker.storage.records import (
    Record,
    RecordsError,
    build_batch,
    compress,
    decompress,
    parse_records,
    simple_batch,
)

CODECS = [Codec.NONE, Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD]
TS = 1_700_000_000_000
XERIAL_MAGIC = b"\x82SNAPPY\x00"


def with_body(batch: bytes, body: bytes, codec: int | None = None) -> bytes:
    """``batch``'s header over a new body, with the length, codec and CRC fixed up."""
    head = bytearray(batch[:HEADER_SIZE])
    struct.pack_into(">i", head, 8, HEADER_SIZE - LOG_OVERHEAD + len(body))
    if codec is not None:
        (attrs,) = struct.unpack_from(">h", head, ATTRIBUTES_OFFSET)
        struct.pack_into(">h", head, ATTRIBUTES_OFFSET, (attrs & ~0x07) | codec)
    struct.pack_into(">I", head, CRC_OFFSET, crc32c(bytes(head[ATTRIBUTES_OFFSET:]) + body))
    return bytes(head) + body


def xerial(raw: bytes, block_size: int) -> bytes:
    """Java's (xerial snappy-java) stream framing of ``raw`` in blocks of ``block_size``."""
    out = XERIAL_MAGIC + struct.pack(">ii", 1, 1)
    for i in range(0, len(raw), block_size):
        block = bytes(cramjam.snappy.compress_raw(raw[i : i + block_size]))
        out += struct.pack(">i", len(block)) + block
    return out


def as_tuples(records: list[Record]) -> list[tuple[object, ...]]:
    return [(r.offset_delta, r.timestamp_delta, r.key, r.value, r.headers, r.attributes) for r in records]


def sample_records() -> list[Record]:
    return [
        Record(0, 0, b"key-a", b"value-a" * 20, [("h1", b"x"), ("h2", None)]),
        Record(1, 15, None, b"keyless"),
        Record(2, -7, b"tomb", None),
        Record(3, 2**40, b"", b"", [("", b""), ("\u00e9t\u00e9", b"\x00\xff")]),
        Record(4, 1, b"k" * 300, b"v" * 5000),  # lengths whose varints take two bytes
    ]


# -- round trips ----------------------------------------------------------------------


@pytest.mark.parametrize("codec", CODECS)
def test_round_trip_every_field(codec: int) -> None:
    recs = sample_records()
    batch = build_batch(
        100,
        recs,
        base_timestamp=TS,
        attributes=codec | TRANSACTIONAL,
        producer_id=77,
        producer_epoch=3,
        base_sequence=12,
        leader_epoch=4,
    )
    h = validate_produced(batch, 1 << 20)
    assert h.codec == codec
    assert h.is_transactional
    assert (h.base_offset, h.leader_epoch, h.count, h.last_offset_delta) == (100, 4, 5, 4)
    assert (h.producer_id, h.producer_epoch, h.base_sequence) == (77, 3, 12)
    assert h.base_timestamp == TS
    assert h.max_timestamp == TS + 2**40
    h2, parsed = parse_records(batch)
    assert h2 == h
    assert as_tuples(parsed) == as_tuples(recs)


@pytest.mark.parametrize("codec", [Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD])
def test_compressed_batches_are_smaller_for_repetitive_data(codec: int) -> None:
    recs = [Record(i, 0, b"key", b"abc" * 200) for i in range(10)]
    plain = build_batch(0, recs, base_timestamp=TS)
    packed = build_batch(0, recs, base_timestamp=TS, attributes=codec)
    assert len(packed) < len(plain) // 2
    assert as_tuples(parse_records(packed)[1]) == as_tuples(recs)


def test_simple_batch_round_trip() -> None:
    items = [(b"a", b"1"), (None, b"2"), (b"c", None), (None, None)]
    h, recs = parse_records(simple_batch(9, items, TS))
    assert h.base_offset == 9
    assert h.base_timestamp == h.max_timestamp == TS
    assert [(r.offset_delta, r.timestamp_delta) for r in recs] == [(0, 0), (1, 0), (2, 0), (3, 0)]
    assert [(r.key, r.value) for r in recs] == items


def test_explicit_max_timestamp_and_last_offset_delta_are_kept() -> None:
    batch = build_batch(
        0, [Record(0, 5, b"k", b"v")], base_timestamp=TS, max_timestamp=TS + 99, last_offset_delta=0
    )
    h = read_header(batch)
    assert h.max_timestamp == TS + 99
    assert h.last_offset_delta == 0


_blob = st.binary(max_size=40)
_record = st.tuples(
    st.one_of(st.none(), _blob),  # key
    st.one_of(st.none(), _blob),  # value (None: tombstone)
    st.lists(st.tuples(st.text(max_size=8), st.one_of(st.none(), _blob)), max_size=3),  # headers
    st.integers(min_value=-(2**40), max_value=2**40),  # timestamp delta
    st.integers(min_value=1, max_value=1000),  # gap to the next offset delta
)


@settings(max_examples=50, deadline=None)
@given(
    codec=st.sampled_from(CODECS),
    items=st.lists(_record, min_size=1, max_size=12),
    base_ts=st.integers(min_value=0, max_value=2**45),
    first_delta=st.integers(min_value=0, max_value=5),
)
def test_round_trip_property(
    codec: int,
    items: list[tuple[bytes | None, bytes | None, list[tuple[str, bytes | None]], int, int]],
    base_ts: int,
    first_delta: int,
) -> None:
    recs = []
    delta = first_delta
    for key, value, headers, ts_delta, gap in items:
        recs.append(Record(delta, ts_delta, key, value, headers))
        delta += gap
    batch = build_batch(0, recs, base_timestamp=base_ts, attributes=codec)
    h, parsed = parse_records(batch)
    assert h.codec == codec
    assert h.count == len(recs)
    assert h.last_offset_delta == recs[-1].offset_delta
    assert h.max_timestamp == max(base_ts + r.timestamp_delta for r in recs)
    assert as_tuples(parsed) == as_tuples(recs)
    # a batch parsed from a memoryview (as read from a segment) gives the same records
    assert as_tuples(parse_records(memoryview(batch))[1]) == as_tuples(recs)


@settings(max_examples=50, deadline=None)
@given(codec=st.sampled_from(CODECS), data=st.binary(max_size=3000))
def test_compress_decompress_property(codec: int, data: bytes) -> None:
    assert decompress(codec, compress(codec, data)) == data
    assert decompress(codec, memoryview(compress(codec, data))) == data


# -- snappy framings ------------------------------------------------------------------


def test_snappy_raw_block_as_librdkafka_writes_it() -> None:
    recs = sample_records()
    plain = build_batch(0, recs, base_timestamp=TS)
    raw = plain[HEADER_SIZE:]
    batch = with_body(plain, bytes(cramjam.snappy.compress_raw(raw)), Codec.SNAPPY)
    assert read_header(batch).codec == Codec.SNAPPY
    assert as_tuples(parse_records(batch)[1]) == as_tuples(recs)


@pytest.mark.parametrize("block_size", [1 << 15, 1000, 64, 1])
def test_snappy_in_java_xerial_framing(block_size: int) -> None:
    recs = sample_records()
    plain = build_batch(5, recs, base_timestamp=TS)
    raw = plain[HEADER_SIZE:]
    framed = xerial(raw, block_size)
    assert framed.startswith(XERIAL_MAGIC)
    assert decompress(Codec.SNAPPY, framed) == raw
    batch = with_body(plain, framed, Codec.SNAPPY)
    validate_produced(batch, 1 << 20)
    h, parsed = parse_records(batch)
    assert h.codec == Codec.SNAPPY
    assert as_tuples(parsed) == as_tuples(recs)


def test_xerial_framing_with_no_blocks_is_empty() -> None:
    assert decompress(Codec.SNAPPY, XERIAL_MAGIC + struct.pack(">ii", 1, 1)) == b""


@pytest.mark.parametrize(
    "framed",
    [
        xerial(b"hello world" * 50, 100)[:-3],  # last block cut short
        XERIAL_MAGIC + struct.pack(">ii", 1, 1) + struct.pack(">i", 500) + b"abc",  # size past the end
        XERIAL_MAGIC + struct.pack(">ii", 1, 1) + struct.pack(">i", -4) + b"abcd",  # negative size
        XERIAL_MAGIC + struct.pack(">ii", 1, 1) + struct.pack(">i", 4) + b"\xff\xff\xff\xff",  # bad block
    ],
)
def test_broken_xerial_framing_raises_records_error(framed: bytes) -> None:
    with pytest.raises(RecordsError):
        decompress(Codec.SNAPPY, framed)


# -- garbage --------------------------------------------------------------------------


GARBAGE = [
    b"",
    b"\x00",
    b"\xff" * 10,
    b"this is not compressed at all" * 3,
    bytes(range(256)),
]


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("garbage", GARBAGE)
def test_garbage_payload_raises_records_error(codec: int, garbage: bytes) -> None:
    template = build_batch(0, [Record(0, 0, b"k", b"v")], base_timestamp=TS, attributes=codec)
    batch = with_body(template, garbage)
    with pytest.raises(RecordsError):
        parse_records(batch)


@pytest.mark.parametrize("codec", [Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD])
def test_truncated_compressed_payload_raises_records_error(codec: int) -> None:
    recs = [Record(i, 0, b"key%d" % i, bytes(range(256)) * 4) for i in range(5)]
    good = build_batch(0, recs, base_timestamp=TS, attributes=codec)
    body = good[HEADER_SIZE:]
    with pytest.raises(RecordsError):
        parse_records(with_body(good, body[: len(body) // 2]))


@pytest.mark.parametrize("codec", CODECS)
def test_well_compressed_garbage_records_raise_records_error(codec: int) -> None:
    template = build_batch(0, [Record(0, 0, b"k", b"v")] * 2, base_timestamp=TS, attributes=codec)
    # decompresses fine, but the record inside claims more bytes than there are
    body = compress(codec, b"\x7f\x00\x00\x00\x02ab")
    with pytest.raises(RecordsError):
        parse_records(with_body(template, body))


def test_count_larger_than_the_records_present_raises_records_error() -> None:
    batch = bytearray(build_batch(0, [Record(0, 0, b"k", b"v")], base_timestamp=TS))
    struct.pack_into(">i", batch, 57, 3)
    with pytest.raises(RecordsError):
        parse_records(bytes(batch))


def test_record_length_not_matching_its_fields_raises_records_error() -> None:
    good = build_batch(0, [Record(0, 0, b"k", b"v")], base_timestamp=TS)
    body = bytearray(good[HEADER_SIZE:])
    body[0] += 2  # the record's length varint (small, one byte) now claims two extra bytes
    with pytest.raises(RecordsError):
        parse_records(with_body(good, bytes(body) + b"\x00\x00"))


@pytest.mark.parametrize("codec", [5, 6, 7])
def test_unknown_codec_raises_records_error(codec: int) -> None:
    with pytest.raises(RecordsError):
        decompress(codec, b"abc")
    with pytest.raises(RecordsError):
        compress(codec, b"abc")


@settings(max_examples=50, deadline=None)
@given(
    codec=st.sampled_from(CODECS), data=st.binary(max_size=200), count=st.integers(1, 4), wrap=st.booleans()
)
def test_any_payload_parses_or_raises_records_error(codec: int, data: bytes, count: int, wrap: bool) -> None:
    template = bytearray(build_batch(0, [Record(0, 0, b"k", b"v")], base_timestamp=TS, attributes=codec))
    struct.pack_into(">i", template, 57, count)
    body = compress(codec, data) if wrap else data
    try:
        h, recs = parse_records(with_body(bytes(template), body))
    except RecordsError:
        return
    assert len(recs) == h.count == count
