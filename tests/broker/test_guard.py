"""The bounds check that runs before kio decodes a request (``broker.protocol.guard``), in
process: every valid request passes and is walked to its last byte, and whatever it lets
through kio decodes or refuses with an exception, never by aborting the process (kio's
native reader reserves an array's memory from the count the peer sent; a count it cannot
allocate aborts Python, which would end this test run). ``tests/fuzz/test_frames.py``
throws the same mutations at a broker process. (When the walk was rebuilt per class on
2026-11-30 it accepted and refused exactly what the schema-interpreting walk before it did,
on 70,400 and, in a review, 113,202 mutated frames of every API and version.)"""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from broker.protocol.codec import _reader, peek_request_header, request_class
from broker.protocol.guard import Malformed, _walker, check_layout
from broker.protocol.versions import ApiKey
from tests.fuzz.test_frames import SEEDS, _mutate, mutation


def _class_of(frame: bytes) -> type:
    api_key, api_version, _ = peek_request_header(frame)
    return request_class(api_key, api_version)  # type: ignore[no-any-return]


@pytest.mark.parametrize("frame", SEEDS, ids=lambda f: "{}-v{}".format(*peek_request_header(f)[:2]))
def test_every_request_of_every_version_passes_and_is_walked_to_its_end(frame: bytes) -> None:
    cls = _class_of(frame)
    check_layout(frame, cls)
    end = len(frame)
    after_header = _walker(cls.__header_schema__, True)(frame, 0, end)  # type: ignore[attr-defined]
    assert _walker(cls, False)(frame, after_header, end) == end


@settings(max_examples=2000, deadline=None)
@given(seed=st.sampled_from(range(len(SEEDS))), ops=st.lists(mutation, min_size=1, max_size=4))
def test_what_passes_kio_decodes_or_refuses(seed: int, ops: list[tuple[str, int, bytes]]) -> None:
    frame = _mutate(SEEDS[seed], ops)
    if len(frame) < 8:
        return  # shorter than a request header: refused before the guard runs
    try:
        cls = request_class(*peek_request_header(frame)[:2])
    except Exception:
        return  # a mutated API key or version: refused before the guard runs
    try:
        check_layout(frame, cls)
    except Malformed:
        return
    try:
        _, used = _reader(cls.__header_schema__)(frame, 0)
        _reader(cls)(frame, used)
    except Exception:
        pass  # refused: the broker reports a malformed request


def _metadata_v12(topics_count: bytes) -> bytes:
    # Header v2: api key, version, correlation id, null client id, no tagged fields; then the
    # body's topics (a compact nullable array) and nothing after.
    return struct.pack(">hhih", ApiKey.METADATA, 12, 7, -1) + b"\x00" + topics_count


def test_a_count_larger_than_what_is_left_is_malformed() -> None:
    cls = request_class(ApiKey.METADATA, 12)
    frame = _metadata_v12(b"\xff\xff\xff\xff\x0f")  # 2**32 - 2 topics
    with pytest.raises(Malformed, match="array of 4294967294 elements at byte 16 cannot fit"):
        check_layout(frame, cls)


def test_a_length_past_the_end_and_a_null_where_none_is_allowed_are_malformed() -> None:
    cls = request_class(ApiKey.METADATA, 12)
    # One topic, cut short: its topic id (a UUID) needs 16 bytes, only 3 are left.
    with pytest.raises(
        Malformed, match="a field of 16 bytes at byte 12 runs past the end of the 15-byte frame"
    ):
        check_layout(_metadata_v12(b"\x02" + b"\x00" * 3), cls)
    # ApiVersions v3's client_software_name is a compact string that may not be null.
    cls = request_class(ApiKey.API_VERSIONS, 3)
    frame = struct.pack(">hhih", ApiKey.API_VERSIONS, 3, 7, -1) + b"\x00" + b"\x00"
    with pytest.raises(Malformed, match="non-nullable field client_software_name was serialized as null"):
        check_layout(frame, cls)
