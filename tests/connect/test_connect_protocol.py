"""Tests of connect.herder.protocol: Kafka Connect's group metadata and assignment bytes.

The expected bytes are written out field by field from Kafka's schemas
(``ConnectProtocol.CONFIG_STATE_V0``/``ASSIGNMENT_V0``,
``IncrementalCooperativeConnectProtocol.ALLOCATION_V1``/``ASSIGNMENT_V1``): a Kafka
Connect worker reading what we write, or writing what we read, sees the same fields.
"""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connect.herder.protocol import (
    CONFIG_MISMATCH,
    NO_ERROR,
    Allocation,
    ConnectAssignment,
    ConnectProtocolCompatibility,
    ProtocolError,
    WorkerMetadata,
    decode_assignment,
    decode_metadata,
    encode_assignment,
    encode_metadata,
)
from connect.runtime.status import ConnectorTaskId

EAGER = ConnectProtocolCompatibility.EAGER
COMPATIBLE = ConnectProtocolCompatibility.COMPATIBLE
SESSIONED = ConnectProtocolCompatibility.SESSIONED


# Kafka protocol types, spelled out so the expected bytes below read like the schemas.
def i16(v: int) -> bytes:
    return struct.pack(">h", v)


def i32(v: int) -> bytes:
    return struct.pack(">i", v)


def i64(v: int) -> bytes:
    return struct.pack(">q", v)


def s(v: str) -> bytes:
    data = v.encode()
    return i16(len(data)) + data


def entry(connector: str, *task_ids: int) -> bytes:
    """One ``Connector Assignment``: connector:STRING tasks:[INT32]."""
    return s(connector) + i32(len(task_ids)) + b"".join(i32(t) for t in task_ids)


def array(*entries: bytes) -> bytes:
    return i32(len(entries)) + b"".join(entries)


# -- sub-protocol names and versions -------------------------------------------------------------


def test_modes_have_kafkas_names_and_versions() -> None:
    assert [(m.value, m.version) for m in ConnectProtocolCompatibility] == [
        ("default", 0),
        ("compatible", 1),
        ("sessioned", 2),
    ]


def test_mode_from_config_uses_the_mode_name_case_insensitively() -> None:
    assert ConnectProtocolCompatibility.from_config("eager") is EAGER
    assert ConnectProtocolCompatibility.from_config("Compatible") is COMPATIBLE
    assert ConnectProtocolCompatibility.from_config("SESSIONED") is SESSIONED
    with pytest.raises(ValueError, match="Unknown Connect protocol compatibility mode: default"):
        ConnectProtocolCompatibility.from_config("default")  # a protocol name, not a mode name


def test_mode_from_protocol_name_and_version() -> None:
    assert ConnectProtocolCompatibility.from_name("default") is EAGER
    assert ConnectProtocolCompatibility.from_name("SESSIONED") is SESSIONED
    with pytest.raises(ValueError):
        ConnectProtocolCompatibility.from_name("eager")
    assert ConnectProtocolCompatibility.from_version(1) is COMPATIBLE
    with pytest.raises(ValueError):
        ConnectProtocolCompatibility.from_version(3)


def test_protocols_offered_in_preference_order() -> None:
    assert SESSIONED.protocols_offered() == [SESSIONED, COMPATIBLE, EAGER]
    assert COMPATIBLE.protocols_offered() == [COMPATIBLE, EAGER]
    assert EAGER.protocols_offered() == [EAGER]


# -- metadata, byte for byte ---------------------------------------------------------------------


def test_metadata_v0_bytes() -> None:
    meta = WorkerMetadata("http://w1:8083/", 5, Allocation.of(["ignored"]))
    expected = i16(0) + s("http://w1:8083/") + i64(5)
    assert encode_metadata(meta, EAGER) == expected
    assert expected.hex() == "0000000f687474703a2f2f77313a383038332f0000000000000005"
    assert decode_metadata(expected) == (0, WorkerMetadata("http://w1:8083/", 5, None))


def test_metadata_v1_without_allocation_is_a_null_bytes_field() -> None:
    meta = WorkerMetadata("http://w1:8083/", 42)
    expected = i16(1) + s("http://w1:8083/") + i64(42) + i32(-1)
    assert encode_metadata(meta, COMPATIBLE) == expected
    assert decode_metadata(expected) == (1, meta)


def test_metadata_v2_embeds_the_allocation_as_an_assignment() -> None:
    running = Allocation.of(["sink"], [ConnectorTaskId("sink", 0), ConnectorTaskId("src", 1)])
    meta = WorkerMetadata("http://w2:8083/", 7, running)
    embedded = (
        i16(2)  # the allocation carries its own protocol version
        + i16(NO_ERROR)
        + s("")  # leader: Kafka's leader reads only connectors and tasks from it
        + s("")  # leader-url
        + i64(7)
        + array(entry("sink", -1, 0), entry("src", 1))
        + array()  # revoked
        + i32(0)  # delay
    )
    expected = i16(2) + s("http://w2:8083/") + i64(7) + i32(len(embedded)) + embedded
    assert encode_metadata(meta, SESSIONED) == expected
    assert decode_metadata(expected) == (2, meta)


def test_metadata_with_an_empty_allocation_keeps_it_present() -> None:
    meta = WorkerMetadata("u", 0, Allocation())
    data = encode_metadata(meta, COMPATIBLE)
    embedded = i16(1) + i16(NO_ERROR) + s("") + s("") + i64(0) + array() + array() + i32(0)
    assert data == i16(1) + s("u") + i64(0) + i32(len(embedded)) + embedded
    assert decode_metadata(data) == (1, meta)


def test_metadata_v1_without_the_allocation_field_defaults_to_none() -> None:
    # ALLOCATION_V1 tolerates the field missing altogether (e.g. a V0-shaped body).
    assert decode_metadata(i16(1) + s("u") + i64(3)) == (1, WorkerMetadata("u", 3, None))


def test_metadata_of_a_newer_version_is_read_by_its_known_prefix() -> None:
    data = i16(9) + s("u") + i64(3) + i32(-1) + b"future fields"
    assert decode_metadata(data) == (9, WorkerMetadata("u", 3, None))


def test_v0_metadata_ignores_trailing_bytes() -> None:
    assert decode_metadata(i16(0) + s("u") + i64(3) + b"\x00\x01") == (0, WorkerMetadata("u", 3))


# -- assignments, byte for byte ------------------------------------------------------------------

LEADER_FIELDS = i16(NO_ERROR) + s("leader-1") + s("http://l:8083/") + i64(12)


def test_assignment_v0_bytes_group_tasks_under_their_connector() -> None:
    a = ConnectAssignment(
        NO_ERROR,
        "leader-1",
        "http://l:8083/",
        12,
        ("c1", "c3"),
        (ConnectorTaskId("c1", 0), ConnectorTaskId("c2", 1), ConnectorTaskId("c1", 2)),
    )
    expected = i16(0) + LEADER_FIELDS + array(entry("c1", -1, 0, 2), entry("c3", -1), entry("c2", 1))
    assert encode_assignment(a, 0) == expected
    version, decoded = decode_assignment(expected)
    assert version == 0
    assert decoded.connectors == ("c1", "c3")
    assert decoded.tasks == (ConnectorTaskId("c1", 0), ConnectorTaskId("c1", 2), ConnectorTaskId("c2", 1))
    assert (decoded.revoked_connectors, decoded.revoked_tasks, decoded.delay_ms) == ((), (), 0)


def test_assignment_v1_and_v2_bytes_add_revoked_and_delay() -> None:
    a = ConnectAssignment(
        NO_ERROR,
        "leader-1",
        "http://l:8083/",
        12,
        ("c1",),
        (ConnectorTaskId("c2", 0),),
        revoked_connectors=("c9",),
        revoked_tasks=(ConnectorTaskId("c9", 3), ConnectorTaskId("c8", 0)),
        delay_ms=300000,
    )
    body = (
        LEADER_FIELDS
        + array(entry("c1", -1), entry("c2", 0))
        + array(entry("c9", -1, 3), entry("c8", 0))
        + i32(300000)
    )
    assert encode_assignment(a, 1) == i16(1) + body
    assert encode_assignment(a, 2) == i16(2) + body
    assert decode_assignment(i16(1) + body) == (1, a)
    assert decode_assignment(i16(2) + body) == (2, a)


def test_config_mismatch_assignment_bytes() -> None:
    a = ConnectAssignment(CONFIG_MISMATCH, "leader-1", "http://l:8083/", 30, (), ())
    expected = i16(1) + i16(1) + s("leader-1") + s("http://l:8083/") + i64(30) + array() + array() + i32(0)
    assert encode_assignment(a, 1) == expected
    assert decode_assignment(expected)[0] == 1
    decoded = decode_assignment(expected)[1]
    assert decoded.failed and decoded.error == CONFIG_MISMATCH
    assert decoded.assigned() == decoded.revoked() == Allocation()


def test_entries_may_mix_the_connector_and_its_tasks_in_any_order() -> None:
    data = i16(1) + LEADER_FIELDS + array(entry("c", 2, -1, 0)) + array(entry("d", 1)) + i32(5)
    _, a = decode_assignment(data)
    assert a.connectors == ("c",)
    assert a.tasks == (ConnectorTaskId("c", 2), ConnectorTaskId("c", 0))
    assert a.revoked() == Allocation.of((), [ConnectorTaskId("d", 1)])
    assert a.delay_ms == 5


@pytest.mark.parametrize(
    ("tail", "revoked", "delay"),
    [
        (b"", Allocation(), 0),  # ends after the assignment
        (array(entry("r", 0)), Allocation.of((), [ConnectorTaskId("r", 0)]), 0),  # no delay
        (array(entry("r", -1)) + i32(9), Allocation.of(["r"]), 9),
    ],
)
def test_v1_assignment_tolerates_missing_trailing_fields(
    tail: bytes, revoked: Allocation, delay: int
) -> None:
    data = i16(1) + LEADER_FIELDS + array(entry("a", -1)) + tail
    _, a = decode_assignment(data)
    assert a.assigned() == Allocation.of(["a"])
    assert (a.revoked(), a.delay_ms) == (revoked, delay)


def test_assignment_ending_after_the_config_offset_assigns_nothing() -> None:
    _, a = decode_assignment(i16(1) + LEADER_FIELDS)
    assert (a.leader, a.leader_url, a.config_offset) == ("leader-1", "http://l:8083/", 12)
    assert a.assigned() == a.revoked() == Allocation()


def test_null_arrays_read_as_empty() -> None:
    _, a = decode_assignment(i16(1) + LEADER_FIELDS + i32(-1) + i32(-1) + i32(0))
    assert a.assigned() == a.revoked() == Allocation()


def test_assignment_of_a_newer_version_is_read_by_its_known_prefix() -> None:
    data = i16(3) + LEADER_FIELDS + array(entry("a", -1)) + array() + i32(1) + b"\x07future"
    version, a = decode_assignment(data)
    assert version == 3
    assert (a.connectors, a.delay_ms) == (("a",), 1)


def test_duplicates_are_written_once() -> None:
    t = ConnectorTaskId("c", 0)
    a = ConnectAssignment(NO_ERROR, "l", "u", 0, ("c", "c"), (t, t))
    assert encode_assignment(a, 0) == i16(0) + i16(0) + s("l") + s("u") + i64(0) + array(entry("c", -1, 0))


# -- what cannot be encoded ----------------------------------------------------------------------


def test_v0_cannot_carry_revocations_or_a_delay() -> None:
    with pytest.raises(ValueError, match="V0"):
        encode_assignment(ConnectAssignment(0, "l", "u", 0, (), (), revoked_connectors=("c",)), 0)
    with pytest.raises(ValueError, match="V0"):
        encode_assignment(ConnectAssignment(0, "l", "u", 0, (), (), delay_ms=1), 0)


def test_unknown_versions_and_out_of_range_values_are_refused() -> None:
    a = ConnectAssignment(0, "l", "u", 0, (), ())
    for version in (-1, 3):
        with pytest.raises(ValueError, match="version"):
            encode_assignment(a, version)
    with pytest.raises(ValueError, match="error"):
        encode_assignment(ConnectAssignment(1 << 15, "l", "u", 0, (), ()), 1)
    with pytest.raises(ValueError, match="delay"):
        encode_assignment(ConnectAssignment(0, "l", "u", 0, (), (), delay_ms=1 << 31), 1)
    with pytest.raises(ValueError, match="task id"):
        encode_assignment(ConnectAssignment(0, "l", "u", 0, (), (ConnectorTaskId("c", 1 << 31),)), 1)
    with pytest.raises(ValueError, match="leader is 32768 bytes"):
        encode_assignment(ConnectAssignment(0, "x" * 32768, "u", 0, (), ()), 1)
    with pytest.raises(ValueError, match="url"):
        encode_metadata(WorkerMetadata("é" * 20000, 0), EAGER)


# -- malformed input -----------------------------------------------------------------------------


def error_of(data: bytes, decode: str = "assignment") -> ProtocolError:
    with pytest.raises(ProtocolError) as info:
        if decode == "assignment":
            decode_assignment(data)
        else:
            decode_metadata(data)
    return info.value


def test_empty_and_negative_versions() -> None:
    err = error_of(b"")
    assert err.offset == 0 and "truncated assignment version" in str(err)
    err = error_of(i16(-1) + s("u") + i64(0), "metadata")
    assert err.offset == 0 and "unsupported metadata version -1" in str(err)


def test_negative_string_length_points_at_the_length() -> None:
    err = error_of(i16(1) + i16(0) + i16(-1))
    assert err.offset == 4
    assert "leader length -1 cannot be negative" in str(err)


def test_string_longer_than_the_data() -> None:
    err = error_of(i16(0) + s("u")[:2] + b"", "metadata")
    assert err.offset == 2 and "url length 1 exceeds the 0 bytes left" in str(err)


def test_invalid_utf8_points_at_the_bad_byte() -> None:
    err = error_of(i16(0) + i16(3) + b"ab\xff" + i64(0), "metadata")
    assert err.offset == 6 and "not valid UTF-8" in str(err)


def test_bad_array_counts() -> None:
    at = len(i16(1) + LEADER_FIELDS)
    err = error_of(i16(1) + LEADER_FIELDS + i32(-2))
    assert err.offset == at and "assignment count -2 is invalid" in str(err)
    err = error_of(i16(1) + LEADER_FIELDS + i32(1_000_000) + entry("a", -1))
    assert err.offset == at and "assignment count 1000000 needs at least" in str(err)
    # The task list of an entry is not nullable.
    err = error_of(i16(1) + LEADER_FIELDS + i32(1) + s("a") + i32(-1))
    assert err.offset == at + 4 + 3 and "tasks of 'a' count -1 is invalid" in str(err)


def test_partial_trailing_field_is_an_error_not_a_default() -> None:
    data = i16(1) + LEADER_FIELDS + array() + array() + i32(7)[:2]
    err = error_of(data)
    assert err.offset == len(data) - 2 and "truncated delay" in str(err)


def test_bad_allocation_length() -> None:
    head = i16(1) + s("u") + i64(0)
    err = error_of(head + i32(-5), "metadata")
    assert err.offset == len(head) and "allocation length -5 is invalid" in str(err)
    err = error_of(head + i32(100) + b"\x00\x01", "metadata")
    assert err.offset == len(head) and "allocation length 100 exceeds the 2 bytes left" in str(err)


def test_errors_inside_the_allocation_point_into_the_outer_buffer() -> None:
    head = i16(1) + s("u") + i64(0)
    embedded = i16(1) + i16(0) + s("l") + i16(-3)  # leader-url length is corrupt
    err = error_of(head + i32(len(embedded)) + embedded, "metadata")
    assert err.offset == len(head) + 4 + 2 + 2 + 3
    assert "leader-url length -3 cannot be negative" in str(err)
    err = error_of(head + i32(0), "metadata")  # Kafka cannot read an empty allocation either
    assert err.offset == len(head) + 4 and "truncated assignment version" in str(err)


# -- properties ----------------------------------------------------------------------------------

names = st.text(st.characters(codec="utf-8"), max_size=12)
task_ids = st.builds(ConnectorTaskId, names, st.integers(0, 2**31 - 1))
int64s = st.integers(-(2**63), 2**63 - 1)
allocations = st.builds(Allocation, st.frozensets(names, max_size=6), st.frozensets(task_ids, max_size=10))


@st.composite
def assignments(draw: st.DrawFn, with_revocations: bool = True) -> ConnectAssignment:
    connectors = tuple(draw(st.lists(names, unique=True, max_size=6)))
    tasks = tuple(draw(st.lists(task_ids, unique=True, max_size=10)))
    revoked_connectors: tuple[str, ...] = ()
    revoked_tasks: tuple[ConnectorTaskId, ...] = ()
    delay = 0
    if with_revocations:
        revoked_connectors = tuple(draw(st.lists(names, unique=True, max_size=4)))
        revoked_tasks = tuple(draw(st.lists(task_ids, unique=True, max_size=6)))
        delay = draw(st.integers(-(2**31), 2**31 - 1))
    return ConnectAssignment(
        draw(st.integers(-(2**15), 2**15 - 1)),
        draw(names),
        draw(names),
        draw(int64s),
        connectors,
        tasks,
        revoked_connectors,
        revoked_tasks,
        delay,
    )


def same_assignment(a: ConnectAssignment, b: ConnectAssignment) -> bool:
    return (
        (a.error, a.leader, a.leader_url, a.config_offset, a.delay_ms)
        == (b.error, b.leader, b.leader_url, b.config_offset, b.delay_ms)
        and a.assigned() == b.assigned()
        and a.revoked() == b.revoked()
    )


@given(
    st.builds(WorkerMetadata, names, int64s, st.none() | allocations),
    st.sampled_from(list(ConnectProtocolCompatibility)),
)
def test_metadata_round_trips(meta: WorkerMetadata, mode: ConnectProtocolCompatibility) -> None:
    version, decoded = decode_metadata(encode_metadata(meta, mode))
    assert version == mode.version
    expected = WorkerMetadata(meta.url, meta.config_offset, None) if mode is EAGER else meta
    assert decoded == expected


@given(assignments(), st.sampled_from([1, 2]))
def test_incremental_assignment_round_trips(a: ConnectAssignment, version: int) -> None:
    data = encode_assignment(a, version)
    decoded_version, decoded = decode_assignment(data)
    assert decoded_version == version
    assert same_assignment(decoded, a)
    # What we decode re-encodes to the very same bytes: the grouping is canonical.
    assert encode_assignment(decoded, version) == data


@given(assignments(with_revocations=False))
def test_eager_assignment_round_trips(a: ConnectAssignment) -> None:
    data = encode_assignment(a, 0)
    version, decoded = decode_assignment(data)
    assert version == 0
    assert same_assignment(decoded, a)
    assert encode_assignment(decoded, 0) == data


@given(assignments(), st.sampled_from([1, 2]), st.data())
def test_truncated_assignments_fail_where_they_end_or_decode_a_prefix(
    a: ConnectAssignment, version: int, data: st.DataObject
) -> None:
    full = encode_assignment(a, version)
    cut = data.draw(st.integers(0, len(full) - 1))
    try:
        _, decoded = decode_assignment(full[:cut])
    except ProtocolError as exc:
        assert exc.offset <= cut
    else:
        # Only whole trailing fields may be missing: what was read is exactly the prefix.
        assert (decoded.leader, decoded.leader_url, decoded.config_offset) == (
            a.leader,
            a.leader_url,
            a.config_offset,
        )
        assert decoded.delay_ms == 0


@given(
    st.builds(WorkerMetadata, names, int64s, allocations), st.sampled_from([COMPATIBLE, SESSIONED]), st.data()
)
def test_truncated_metadata_fails_where_it_ends(
    meta: WorkerMetadata, mode: ConnectProtocolCompatibility, data: st.DataObject
) -> None:
    full = encode_metadata(meta, mode)
    cut = data.draw(st.integers(0, len(full) - 1))
    try:
        _, decoded = decode_metadata(full[:cut])
    except ProtocolError as exc:
        assert exc.offset <= cut
    else:
        # Only the allocation field as a whole may be missing.
        assert cut == len(encode_metadata(meta, EAGER))
        assert decoded.allocation is None


@given(st.binary(max_size=64))
def test_arbitrary_bytes_decode_or_raise_protocol_error(data: bytes) -> None:
    for decode in (decode_assignment, decode_metadata):
        try:
            decode(data)
        except ProtocolError as exc:
            assert 0 <= exc.offset <= len(data)
