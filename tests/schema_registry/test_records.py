"""The ``_schemas`` topic's records in Confluent's format: exact key bytes (the compaction
identity), values both ways, and records that are not Confluent's refused with a reason."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schema_registry.records import (
    ClearSubjectKey,
    ClearSubjectValue,
    ConfigKey,
    ConfigValue,
    DeleteSubjectKey,
    DeleteSubjectValue,
    ModeKey,
    ModeValue,
    NoopKey,
    RecordError,
    Reference,
    SchemaKey,
    SchemaValue,
    decode_key,
    decode_value,
    encode_key,
    encode_value,
)


def test_keys_are_written_as_confluent_writes_them() -> None:
    assert encode_key(SchemaKey("orders-value", 3)) == (
        b'{"keytype":"SCHEMA","subject":"orders-value","version":3,"magic":1}'
    )
    assert encode_key(ConfigKey(None)) == b'{"keytype":"CONFIG","magic":0}'
    assert encode_key(ConfigKey("s")) == b'{"keytype":"CONFIG","subject":"s","magic":0}'
    assert encode_key(ModeKey("s")) == b'{"keytype":"MODE","subject":"s","magic":0}'
    assert encode_key(DeleteSubjectKey("s")) == b'{"keytype":"DELETE_SUBJECT","subject":"s","magic":0}'
    assert encode_key(ClearSubjectKey("s")) == b'{"keytype":"CLEAR_SUBJECT","subject":"s","magic":0}'
    assert encode_key(NoopKey()) == b'{"keytype":"NOOP","magic":0}'


def test_values_are_written_as_confluent_writes_them() -> None:
    avro = SchemaValue("s", 1, 7, "AVRO", '"string"')
    assert encode_value(avro) == b'{"subject":"s","version":1,"id":7,"schema":"\\"string\\"","deleted":false}'
    json_schema = SchemaValue("s", 2, 8, "JSON", "{}", (Reference("r", "other", 1),), True)
    assert encode_value(json_schema) == (
        b'{"subject":"s","version":2,"id":8,"schemaType":"JSON",'
        b'"references":[{"name":"r","subject":"other","version":1}],"schema":"{}","deleted":true}'
    )
    assert encode_value(ConfigValue("FULL")) == b'{"compatibilityLevel":"FULL"}'
    assert encode_value(None) is None


_subjects = st.text(min_size=1, max_size=8)
_keys = st.one_of(
    st.builds(SchemaKey, _subjects, st.integers(1, 2**31 - 1)),
    st.builds(ConfigKey, st.none() | _subjects),
    st.builds(ModeKey, st.none() | _subjects),
    st.builds(DeleteSubjectKey, _subjects),
    st.builds(ClearSubjectKey, _subjects),
    st.just(NoopKey()),
)


@given(_keys)
def test_keys_round_trip(key: object) -> None:
    assert decode_key(encode_key(key)) == key  # type: ignore[arg-type]


@given(
    st.builds(
        SchemaValue,
        _subjects,
        st.integers(1, 100),
        st.integers(1, 10**6),
        st.sampled_from(["AVRO", "JSON", "PROTOBUF"]),
        st.text(max_size=20),
        st.lists(st.builds(Reference, _subjects, _subjects, st.integers(1, 9)), max_size=2).map(tuple),
        st.booleans(),
    )
)
def test_schema_values_round_trip(value: SchemaValue) -> None:
    key = SchemaKey(value.subject, value.version)
    assert decode_value(key, encode_value(value)) == value


def test_other_values_round_trip() -> None:
    for key, value in [
        (ConfigKey(None), ConfigValue("BACKWARD")),
        (ModeKey("s"), ModeValue("IMPORT")),
        (DeleteSubjectKey("s"), DeleteSubjectValue("s", 4)),
        (ClearSubjectKey("s"), ClearSubjectValue("s")),
    ]:
        assert decode_value(key, encode_value(value)) == value  # type: ignore[arg-type]
    assert decode_value(SchemaKey("s", 1), None) is None  # a tombstone


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (b"not json", "not JSON"),
        (b"[1]", "not a JSON object"),
        (b'{"keytype":"SIDEWAYS","magic":0}', "unknown keytype"),
        (b'{"keytype":"SCHEMA","subject":"s","magic":1}', "no integer 'version'"),
        (b'{"keytype":"CONFIG","subject":5,"magic":0}', "subject is not a string"),
    ],
)
def test_keys_that_are_not_confluents_are_refused(raw: bytes, problem: str) -> None:
    with pytest.raises(RecordError, match=problem):
        decode_key(raw)


def test_values_that_are_not_confluents_are_refused() -> None:
    with pytest.raises(RecordError, match="no string 'schema'"):
        decode_value(SchemaKey("s", 1), b'{"subject":"s","version":1,"id":1}')
    with pytest.raises(RecordError, match="no compatibilityLevel"):
        decode_value(ConfigKey(None), b"{}")
