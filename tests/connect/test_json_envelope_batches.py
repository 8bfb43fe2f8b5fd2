"""JsonConverter's batch reading of schema envelopes (``to_connect_batch`` with
``schemas.enable``): a batch of Kafka-written envelopes of one schema is read by its bytes
and a field at a time, and must give exactly what reading each record gives, value, schema
and error alike, whatever the payloads hold and whatever record breaks the pattern."""

from __future__ import annotations

import datetime
import decimal
from typing import Any

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from connect.api.data import SchemaAndValue, Struct
from connect.api.errors import DataException
from connect.converters import JsonConverter

TIMESTAMP = {
    "type": "int64",
    "optional": False,
    "name": "org.apache.kafka.connect.data.Timestamp",
    "version": 1,
}
ROW: dict[str, Any] = {
    "type": "struct",
    "name": "bench.Row",
    "optional": False,
    "fields": [
        {"field": "id", "type": "int64", "optional": False},
        {"field": "account", "type": "string", "optional": False},
        {"field": "amount", "type": "double", "optional": False},
        {"field": "note", "type": "string", "optional": True},
        {"field": "created_at", **TIMESTAMP},
        {"field": "small", "type": "int32", "optional": True},
        {"field": "flag", "type": "boolean", "optional": True, "default": False},
        {"field": "ratio", "type": "float", "optional": True},
        {"field": "blob", "type": "bytes", "optional": True},
        {
            "field": "price",
            "type": "bytes",
            "optional": True,
            "name": "org.apache.kafka.connect.data.Decimal",
            "version": 1,
            "parameters": {"scale": "2"},
        },
        {"field": "tags", "type": "array", "items": {"type": "string", "optional": False}, "optional": True},
        {
            "field": "inner",
            "type": "struct",
            "optional": True,
            "fields": [
                {"field": "a", "type": "int16", "optional": False},
                {"field": "b", "optional": True, **{k: v for k, v in TIMESTAMP.items() if k != "optional"}},
                {"field": "c", "type": "string", "optional": False, "default": "none"},
            ],
        },
    ],
}
OTHER = {"type": "struct", "optional": True, "fields": [{"field": "id", "type": "int64", "optional": True}]}
KEY = {"type": "int64", "optional": False}

# JSON texts a field may hold: the usual, and what a reader refuses or reads its own way
# (numbers orjson reads as floats or not at all, a lone surrogate, the wrong type).
FIELD_TEXTS = [
    b"0",
    b"1",
    b"-1",
    b"7",
    b"-0",
    b"32767",
    b"2147483647",
    b"2147483648",
    b"9223372036854775807",
    b"9223372036854775808",
    b"18446744073709551616",
    b"123456789012345678901234567890",
    b"1764000000000",
    b"4294967295999",
    b"4294967296000",
    b"-4294967295999",
    b"253402300799999",
    b"253402300800000",
    b"1.5",
    b"-0.0",
    b"1.0",
    b"1E2",
    b"1e400",
    b"1.7976931348623157e308",
    b"3.4028235e38",
    b"0.1",
    b'"x"',
    b'""',
    b'"AAE="',
    b'"not base64!"',
    b'"\\ud800"',
    b'"caf\xc3\xa9"',
    b'"NaN"',
    b"true",
    b"false",
    b"null",
    b"[]",
    b'["a","b"]',
    b"[1]",
    b"{}",
    b'{"a":1}',
    b'{"a":2,"b":1764000000000,"c":"z"}',
    b'{"a":40000}',
    b'{"b":1}',
]
NAMES = [f["field"] for f in ROW["fields"]] + ["extra"]
REQUIRED = {"id", "account", "amount", "created_at"}
ROW_TEXT = orjson.dumps(ROW)


def envelope(schema: bytes, payload: bytes) -> bytes:
    return b'{"schema":' + schema + b',"payload":' + payload + b"}"


def usual_payload(i: int) -> bytes:
    return orjson.dumps(
        {
            "id": i,
            "account": f"acct-{i}",
            "amount": i / 100,
            "note": None,
            "created_at": 1_764_000_000_000 + i,
        }
    )


# Texts each field reads, usual or not (a null, an integer for a float, the edges of ranges).
VALID_TEXTS = {
    "id": [b"0", b"-1", b"9223372036854775807", b"-9223372036854775808"],
    "account": [b'"x"', b'""', b'"caf\xc3\xa9"', b'"\\u00e9\\n"'],
    "amount": [b"1.5", b"-0.0", b"1", b"1E2", b"18446744073709551616", b"1.7976931348623157e308"],
    "note": [b"null", b'"x"'],
    "created_at": [b"0", b"-1", b"4294967295999", b"4294967296000", b"-4294967296000", b"253402300799999"],
    "small": [b"null", b"2147483647", b"-2147483648"],
    "flag": [b"null", b"true", b"false"],
    "ratio": [b"1.5", b"3.4028235e38", b"1", b"null", b"0.1"],
    "blob": [b'"AAE="', b"null", b'""'],
    "price": [b'"AAE="', b"1", b"null"],
    "tags": [b'["a"]', b"[]", b"null"],
    "inner": [b'{"a":1}', b"null", b'{"a":2,"b":1764000000000,"c":"z"}', b'{"a":2,"b":null,"c":null}'],
    "extra": [b"1", b'{"x":[1]}'],
}


@st.composite
def payloads(draw: st.DrawFn) -> bytes:
    """A row's payload: mostly the usual one, else fields each left out, given a text it
    reads, or given any text; now and then repeated, or not an object at all."""
    kind = draw(st.integers(0, 19))
    if kind < 8:
        return usual_payload(draw(st.integers(-(10**6), 10**6)))
    if kind == 19:
        return draw(st.sampled_from(FIELD_TEXTS))
    parts = []
    for name in NAMES:
        choice = draw(st.integers(0, 9))
        if choice == 0 and name not in REQUIRED:
            continue
        text = draw(st.sampled_from(FIELD_TEXTS if choice == 1 and kind == 18 else VALID_TEXTS[name]))
        parts.append(orjson.dumps(name) + b":" + text)
    if kind == 17:
        parts.append(b'"id":' + draw(st.sampled_from(VALID_TEXTS["id"])))
    return b"{" + b",".join(parts) + b"}"


@st.composite
def records(draw: st.DrawFn) -> bytes | None:
    kind = draw(st.integers(0, 19))
    if kind < 15:
        return envelope(ROW_TEXT, draw(payloads()))
    return draw(
        st.sampled_from(
            [
                None,
                b"",
                envelope(orjson.dumps(OTHER), b'{"id":5}'),  # another schema among them
                envelope(b"null", b'{"id":5}'),
                b'{"schema": ' + ROW_TEXT + b', "payload": ' + usual_payload(3) + b"}",  # spaces
                b'{"payload":' + usual_payload(4) + b',"schema":' + ROW_TEXT + b"}",  # key order
                envelope(ROW_TEXT, usual_payload(5)) + b" ",
                envelope(ROW_TEXT, usual_payload(6) + b',"extra":1'),  # a third member
                envelope(ROW_TEXT, usual_payload(7) + b',"payload":' + usual_payload(8)),
                envelope(ROW_TEXT, b""),
                envelope(ROW_TEXT, usual_payload(9) + b"}"),
                envelope(ROW_TEXT, b'{"id":1}  '),
                b"not json",
                b"\xff\xfe",
            ]
        )
    )


def canonical(value: Any) -> Any:
    """A value with every difference equality hides made visible (-0.0, True and 1, the
    zone of a datetime, the class of a number), and NaN equal to itself."""
    if isinstance(value, Struct):
        return ("struct", value.schema, [canonical(v) for v in value.values(defaults=False)])
    if isinstance(value, float):
        return ("float", repr(value))  # tells -0.0 from 0.0, and NaN equals NaN
    if isinstance(value, datetime.datetime):
        return ("datetime", value, value.tzinfo, value.fold)
    if isinstance(value, list):
        return [canonical(v) for v in value]
    if isinstance(value, dict):
        return {k: canonical(v) for k, v in value.items()}
    return (type(value).__name__, value)


def converter() -> JsonConverter:
    c = JsonConverter()
    c.configure({}, False)
    return c


def per_record(data: list[bytes | None]) -> list[Any] | str:
    c = converter()
    try:
        read = [c.to_connect_data("t", d) for d in data]
    except Exception as exc:
        return type(exc).__name__
    return [(sv.schema, canonical(sv.value)) for sv in read]


def batch(data: list[bytes | None]) -> list[Any] | str:
    c = converter()
    try:
        read = c.to_connect_batch("t", data)
        schemas, values = read.schemas, read.values
    except Exception as exc:
        return type(exc).__name__
    assert len(schemas) == len(values) == len(data)
    return [(s, canonical(v)) for s, v in zip(schemas, values, strict=True)]


# Batches of one schema's envelopes, as a topic mostly holds (read by the batch path unless
# a payload is refused), and batches with anything among them.
batches = st.one_of(
    st.lists(payloads().map(lambda p: envelope(ROW_TEXT, p)), min_size=1, max_size=12),
    st.lists(records(), min_size=1, max_size=12),
)


@settings(max_examples=500, deadline=None)
@given(batches)
@example([envelope(ROW_TEXT, usual_payload(i)) for i in range(5)])
@example([envelope(ROW_TEXT, b'{"id":1,"account":"a","amount":1,"created_at":1}')])  # an int for a double
@example([envelope(ROW_TEXT, b'{"id":1,"account":"a","amount":1.5,"created_at":1,"id":2}')])
def test_a_batch_reads_as_each_record_reads(data: list[bytes | None]) -> None:
    assert batch(data) == per_record(data)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(FIELD_TEXTS), min_size=1, max_size=10))
def test_a_batch_of_keys_reads_as_each_key_reads(payloads: list[bytes]) -> None:
    for schema in (
        KEY,
        {"type": "int32", "optional": True},
        {"type": "string", "optional": False},
        TIMESTAMP,
    ):
        data: list[bytes | None] = [envelope(orjson.dumps(schema), p) for p in payloads]
        assert batch(data) == per_record(data)


def test_the_usual_batch_gives_structs_of_the_schema_with_exact_timestamps() -> None:
    data: list[bytes | None] = [envelope(ROW_TEXT, usual_payload(i)) for i in range(3)]
    read = converter().to_connect_batch("t", data)
    first = read.values[0]
    assert isinstance(first, Struct)
    assert first.schema is read.schemas[0] is read.schemas[2]
    assert first.get("created_at") == datetime.datetime(2025, 11, 24, 16, 0, tzinfo=datetime.UTC)
    assert read.values[2].get("created_at").microsecond == 2000
    assert [v.get("amount") for v in read.values] == [0.0, 0.01, 0.02]


def test_a_record_of_another_schema_is_read_with_its_own() -> None:
    data: list[bytes | None] = [
        envelope(ROW_TEXT, usual_payload(1)),
        envelope(orjson.dumps(OTHER), b'{"id":5}'),
        envelope(ROW_TEXT, usual_payload(2)),
    ]
    read = converter().to_connect_batch("t", data)
    assert [s.name if s else "-" for s in read.schemas] == ["bench.Row", None, "bench.Row"]
    assert read.values[1].get("id") == 5
    assert read.values[2].get("id") == 2


def test_a_decimal_given_as_a_number_is_exact() -> None:
    data: list[bytes | None] = [envelope(ROW_TEXT, usual_payload(1)[:-1] + b',"price":0.10000000000000001}')]
    read = converter().to_connect_batch("t", data)
    assert read.values[0].get("price") == decimal.Decimal("0.10000000000000001")
    assert SchemaAndValue(read.schemas[0], read.values[0]) == converter().to_connect_data("t", data[0])


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.sampled_from(["", "ü", "a b", "😀", "x", "__init__", "f0", 'a"b', "a\\b", "\x00", "\u2028"]),
        min_size=1,
        max_size=5,
        unique=True,
    ),
    st.lists(st.booleans(), min_size=1, max_size=6),
)
def test_field_names_of_any_text_read_alike(names: list[str], escaped: list[bool]) -> None:
    """Field names msgspec cannot match go the orjson way; the others match keys written
    with escapes too."""
    schema = orjson.dumps(
        {"type": "struct", "fields": [{"field": n, "type": "string", "optional": True} for n in names]}
    )
    data: list[bytes | None] = []
    for i, escape in enumerate(escaped):
        keys = [
            ("".join(f"\\u{ord(ch):04x}" for ch in n).encode() if escape else orjson.dumps(n)[1:-1])
            for n in names
        ]
        data.append(envelope(schema, b"{" + b",".join(b'"' + k + b'":"v%d"' % i for k in keys) + b"}"))
    expected = per_record(data)
    assert not isinstance(expected, str), expected  # every record reads
    assert batch(data) == expected


def test_bytes_that_are_not_ascii_are_refused_as_data() -> None:
    for field, problem in (("blob", "Invalid bytes field"), ("price", "Invalid bytes for Decimal field")):
        datum = envelope(ROW_TEXT, usual_payload(1)[:-1] + b',"' + field.encode() + b'":"caf\xc3\xa9"}')
        with pytest.raises(DataException, match=problem):
            converter().to_connect_data("t", datum)
        with pytest.raises(DataException, match=problem):
            converter().to_connect_batch("t", [envelope(ROW_TEXT, usual_payload(2)), datum])
