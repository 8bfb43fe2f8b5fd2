"""Record batch v2 headers: validation of produced batches, LogAppendTime stamping, batch iteration."""

from __future__ import annotations

import struct

import pytest
from crc32c import crc32c

from broker.storage.batch import (
    ATTRIBUTES_OFFSET,
    CONTROL,
    CRC_OFFSET,
    HEADER_SIZE,
    LOG_OVERHEAD,
    TIMESTAMP_TYPE_LOG_APPEND,
    Codec,
    InvalidBatch,
    iter_batches,
    read_header,
    rewritten_prefix,
    set_log_append_time,
    validate_produced,
)
from broker.storage.records import Record, build_batch, parse_records, simple_batch

MAX = 1 << 20
TS = 1_700_000_000_000


def good_batch(n: int = 3, attributes: int = 0, **kw: int) -> bytes:
    recs = [Record(i, i * 10, f"k{i}".encode(), f"value-{i}".encode()) for i in range(n)]
    return build_batch(0, recs, base_timestamp=TS, attributes=attributes, **kw)


def with_valid_crc(batch: bytearray) -> bytes:
    struct.pack_into(">I", batch, CRC_OFFSET, crc32c(bytes(batch[ATTRIBUTES_OFFSET:])))
    return bytes(batch)


def kind_of(records: bytes, max_message_bytes: int = MAX, allow_zstd: bool = True) -> str:
    with pytest.raises(InvalidBatch) as info:
        validate_produced(records, max_message_bytes, allow_zstd)
    return info.value.kind


# -- validate_produced: accepted ------------------------------------------------------


def test_accepts_a_good_batch_and_returns_its_header() -> None:
    batch = good_batch(3, producer_id=42, producer_epoch=1, base_sequence=7)
    h = validate_produced(batch, MAX)
    assert h.magic == 2
    assert h.count == 3
    assert h.last_offset_delta == 2
    assert h.size == len(batch)
    assert h.batch_length == len(batch) - LOG_OVERHEAD
    assert h.base_timestamp == TS
    assert h.max_timestamp == TS + 20
    assert (h.producer_id, h.producer_epoch, h.base_sequence) == (42, 1, 7)
    assert h.last_sequence == 9
    assert h.codec == Codec.NONE
    assert not h.is_control and not h.is_transactional


def test_accepts_simple_batch_and_a_memoryview() -> None:
    batch = simple_batch(0, [(b"a", b"1"), (None, b"2"), (b"c", None)], TS)
    h = validate_produced(memoryview(batch), MAX)
    assert h.count == 3
    assert h.max_timestamp == TS


@pytest.mark.parametrize("codec", [Codec.NONE, Codec.GZIP, Codec.SNAPPY, Codec.LZ4, Codec.ZSTD])
def test_accepts_every_known_codec(codec: int) -> None:
    h = validate_produced(good_batch(4, attributes=codec), MAX)
    assert h.codec == codec


def test_accepts_a_batch_of_exactly_max_message_bytes() -> None:
    batch = good_batch()
    assert validate_produced(batch, len(batch)).size == len(batch)


def test_last_sequence_wraps_at_2_pow_31() -> None:
    h = read_header(good_batch(3, producer_id=1, producer_epoch=0, base_sequence=2**31 - 2))
    assert h.last_sequence == 0
    assert read_header(good_batch(3)).last_sequence == -1


# -- validate_produced: rejected ------------------------------------------------------


@pytest.mark.parametrize("position", [21, 22, 30, 40, 57, 60, 61, -1])
def test_bad_crc_is_corrupt(position: int) -> None:
    batch = bytearray(good_batch())
    batch[position] ^= 0x01
    assert kind_of(bytes(batch)) == "corrupt"


def test_bad_stored_crc_is_corrupt() -> None:
    batch = bytearray(good_batch())
    batch[CRC_OFFSET] ^= 0xFF
    assert kind_of(bytes(batch)) == "corrupt"


@pytest.mark.parametrize("magic", [0, 1, 3, 0xFF])
def test_bad_magic_is_corrupt(magic: int) -> None:
    batch = bytearray(good_batch())
    batch[16] = magic
    with pytest.raises(InvalidBatch, match="magic") as info:
        validate_produced(bytes(batch), MAX)
    assert info.value.kind == "corrupt"


def test_shorter_than_a_header_is_corrupt() -> None:
    assert kind_of(good_batch()[: HEADER_SIZE - 1]) == "corrupt"
    assert kind_of(b"") == "corrupt"


def test_truncated_batch_is_corrupt() -> None:
    batch = good_batch()
    assert kind_of(batch[:-1]) == "corrupt"


def test_length_field_larger_than_the_bytes_sent_is_corrupt() -> None:
    batch = bytearray(good_batch())
    (length,) = struct.unpack_from(">i", batch, 8)
    struct.pack_into(">i", batch, 8, length + 5)
    assert kind_of(bytes(batch)) == "corrupt"


def test_length_field_below_the_header_size_is_corrupt() -> None:
    batch = bytearray(good_batch())
    struct.pack_into(">i", batch, 8, 10)
    assert kind_of(bytes(batch)) == "corrupt"


def test_two_batches_concatenated_are_invalid() -> None:
    batch = good_batch()
    with pytest.raises(InvalidBatch, match="exactly one") as info:
        validate_produced(batch + batch, MAX)
    assert info.value.kind == "invalid"


def test_oversized_batch_is_too_large() -> None:
    batch = good_batch(20)
    assert kind_of(batch, max_message_bytes=len(batch) - 1) == "too_large"
    assert kind_of(batch, max_message_bytes=HEADER_SIZE) == "too_large"


def test_control_batch_is_invalid() -> None:
    batch = good_batch(1, attributes=CONTROL)
    with pytest.raises(InvalidBatch, match="control") as info:
        validate_produced(batch, MAX)
    assert info.value.kind == "invalid"


@pytest.mark.parametrize("last_offset_delta", [0, 1, 3, 10, -1])
def test_count_last_offset_delta_mismatch_is_corrupt(last_offset_delta: int) -> None:
    batch = good_batch(3, last_offset_delta=last_offset_delta)
    assert read_header(batch).count == 3
    assert kind_of(batch) == "corrupt"


def test_empty_batch_is_corrupt() -> None:
    batch = build_batch(0, [], base_timestamp=TS)
    assert read_header(batch).count == 0
    assert kind_of(batch) == "corrupt"


@pytest.mark.parametrize("codec", [5, 6, 7])
def test_unknown_codec_is_corrupt(codec: int) -> None:
    batch = bytearray(good_batch())
    struct.pack_into(">h", batch, ATTRIBUTES_OFFSET, codec)
    assert kind_of(with_valid_crc(batch)) == "corrupt"


def test_zstd_needs_allow_zstd() -> None:
    batch = good_batch(3, attributes=Codec.ZSTD)
    assert kind_of(batch, allow_zstd=False) == "unsupported_compression"
    assert validate_produced(batch, MAX, allow_zstd=True).codec == Codec.ZSTD
    # other codecs are unaffected by allow_zstd
    assert validate_produced(good_batch(3, attributes=Codec.LZ4), MAX, allow_zstd=False).codec == Codec.LZ4


# -- set_log_append_time ------------------------------------------------------------


@pytest.mark.parametrize("codec", [Codec.NONE, Codec.GZIP, Codec.ZSTD])
def test_set_log_append_time_stamps_and_keeps_crc_valid(codec: int) -> None:
    original = good_batch(3, attributes=codec, producer_id=5, producer_epoch=0, base_sequence=0)
    before = read_header(original)
    buf = bytearray(original)
    stamp = TS + 123_456
    set_log_append_time(buf, stamp)
    after = validate_produced(bytes(buf), MAX)  # CRC still matches
    assert after.attributes == before.attributes | TIMESTAMP_TYPE_LOG_APPEND
    assert after.codec == codec
    assert after.max_timestamp == stamp
    assert after.base_timestamp == before.base_timestamp
    assert after.crc != before.crc
    assert (after.count, after.last_offset_delta, after.base_sequence) == (3, 2, 0)
    _, records = parse_records(bytes(buf))
    assert [r.value for r in records] == [b"value-0", b"value-1", b"value-2"]
    # only the CRC, the attributes and the max timestamp change; the records stay as they were
    changed = {i for i in range(len(buf)) if buf[i] != original[i]}
    assert len(buf) == len(original)
    assert changed <= set(range(CRC_OFFSET, ATTRIBUTES_OFFSET + 2)) | set(range(35, 43))


def test_set_log_append_time_is_idempotent_on_the_flag() -> None:
    buf = bytearray(good_batch(2))
    set_log_append_time(buf, TS + 1)
    set_log_append_time(buf, TS + 2)
    h = validate_produced(bytes(buf), MAX)
    assert h.attributes & TIMESTAMP_TYPE_LOG_APPEND
    assert h.max_timestamp == TS + 2


def test_rewriting_the_prefix_keeps_the_crc_valid() -> None:
    batch = good_batch(3)
    h = read_header(batch)
    stored = rewritten_prefix(1234, h.batch_length, 9) + batch[16:]
    h2 = validate_produced(stored, MAX)
    assert (h2.base_offset, h2.leader_epoch, h2.last_offset) == (1234, 9, 1236)


# -- iter_batches -------------------------------------------------------------------


def _log_of(*counts: int) -> tuple[bytes, list[tuple[int, int, int]]]:
    out = b""
    expected = []
    offset = 0
    for n in counts:
        raw = good_batch(n)
        h = read_header(raw)
        stored = rewritten_prefix(offset, h.batch_length, 0) + raw[16:]
        expected.append((len(out), offset, len(stored)))
        out += stored
        offset += n
    return out, expected


def test_iter_batches_yields_every_whole_batch() -> None:
    buf, expected = _log_of(1, 3, 2)
    assert list(iter_batches(buf)) == expected
    assert list(iter_batches(memoryview(buf))) == expected
    assert list(iter_batches(bytearray(buf))) == expected


@pytest.mark.parametrize("cut", [1, 11, 12, 13, HEADER_SIZE, -1])
def test_iter_batches_stops_at_a_torn_tail(cut: int) -> None:
    buf, expected = _log_of(1, 3, 2)
    last_pos, _, last_size = expected[-1]
    torn = buf[: last_pos + (cut if cut > 0 else last_size + cut)]
    assert list(iter_batches(torn)) == expected[:-1]


def test_iter_batches_stops_at_a_garbage_length() -> None:
    buf, expected = _log_of(2, 2)
    garbage = struct.pack(">qi", 99, 3) + b"\x00" * 100  # a length below the header size
    assert list(iter_batches(buf + garbage)) == expected
    assert list(iter_batches(buf + b"\xff" * 40)) == expected


def test_iter_batches_honours_start_and_end() -> None:
    buf, expected = _log_of(1, 1, 1)
    second_pos = expected[1][0]
    assert list(iter_batches(buf, start=second_pos)) == expected[1:]
    assert list(iter_batches(buf, end=expected[2][0])) == expected[:2]
    assert list(iter_batches(buf, end=expected[2][0] + 5)) == expected[:2]
    assert list(iter_batches(b"")) == []
