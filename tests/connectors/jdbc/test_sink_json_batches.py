"""The JDBC sink's records come from JSON with schemas read a batch at a time
(``JsonConverter.to_connect_batch``, ``connect/converters/json_envelopes.py``): each datum
of a batch must get exactly the schema and value, or the error, that reading it alone
gives, whatever its neighbours (the batch may split each envelope and parse only the
payload, caching schemas by their text). The field readers' fast paths
(``json_readers.with_fast_path``) read every value as the full readers do."""

from __future__ import annotations

from typing import Any

import pytest

from connect.api import DataException, Schema, SchemaBuilder, Timestamp, Type
from connect.converters.json import JsonConverter
from connect.converters.json_errors import JsonProblem
from connect.converters.json_readers import with_fast_path

ROW = (
    b'{"type":"struct","name":"shop.Row","fields":[{"field":"id","type":"int32","optional":false},'
    b'{"field":"price","type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal",'
    b'"parameters":{"scale":"2"}},{"field":"at","type":"int64","optional":true,'
    b'"name":"org.apache.kafka.connect.data.Timestamp","version":1}]}'
)


def envelope(schema: bytes, payload: bytes) -> bytes:
    return b'{"schema":' + schema + b',"payload":' + payload + b"}"


DATA: list[bytes | None] = [
    envelope(ROW, b'{"id":1,"at":1700000000000}'),
    envelope(ROW, b'{"id":2,"price":"AZA="}'),
    envelope(ROW, b'{"id":3,"price":12.25}'),  # exact numbers: the careful parser
    envelope(ROW, b'{"id":1.5}'),  # not an int32
    envelope(ROW, b"null"),  # a null required struct
    b'{"payload":{"id":4},"schema":' + ROW + b"}",  # members in the other order
    envelope(ROW, b'{"id":5}')[:-1] + b',"extra":1}',  # a third member
    envelope(b"null", b'{"free":[1,2]}'),  # no schema
    envelope(b'{"type":"strin"}', b'"x"'),  # not a schema
    envelope(b'{"type":"double"}', b"1e400"),  # beyond double range
    envelope(b'{"type":"string"}', b'"\\ud800"'),  # a lone surrogate
    envelope(b'{"type":"string"}', b'"\xff"'),  # not UTF-8
    envelope(b'{"type":"string","doc":"\xff"}', b'"x"'),  # not UTF-8 in the schema
    envelope(b'{"type":"int64","optional":true}', b"null"),
    b' {"schema":{"type":"int64"},"payload":7} ',
    b"\xef\xbb\xbf" + envelope(b'{"type":"int64"}', b"7"),
    b'{"schema":{"type":"int64"},"payload":7',  # cut short
    b"[1]",
    b"{}",
    b"null",
    b"",
    None,
]


def one(converter: JsonConverter, datum: bytes | None) -> tuple[str, Any, Any]:
    try:
        converted = converter.to_connect_data("t", datum)
    except DataException as exc:
        return ("error", type(exc), str(exc))
    return ("ok", converted.schema, converted.value)


@pytest.mark.parametrize("datum", DATA)
def test_a_batch_reads_each_datum_as_reading_it_alone(datum: bytes | None) -> None:
    converter = JsonConverter()
    converter.configure({"schemas.enable": "true"}, is_key=False)
    alone = one(converter, datum)
    good = envelope(ROW, b'{"id":9}')
    try:
        batch = converter.to_connect_batch("t", [good, datum, good])
        got: tuple[str, Any, Any] = ("ok", batch.schemas[1], batch.values[1])
        assert batch.values[0] == batch.values[2] == one(converter, good)[2]
    except DataException as exc:
        got = ("error", type(exc), str(exc))
    assert got == alone


def test_a_batch_of_every_datum_fails_as_the_first_bad_one_alone() -> None:
    converter = JsonConverter()
    converter.configure({"schemas.enable": "true"}, is_key=False)
    first_bad = next(r for r in (one(converter, d) for d in DATA) if r[0] == "error")
    with pytest.raises(DataException) as caught:
        converter.to_connect_batch("t", DATA)
    assert ("error", type(caught.value), str(caught.value)) == first_bad


TRICKY: list[Any] = [None, True, False, 0, 1, -1, 127, 128, 2**31, 2**63 - 1, 2**63, -(2**63) - 1]
TRICKY += [10**17, -(10**17), 1.5, 0.0, float("inf"), "x", "", [], {}, [1], {"a": 1}]


def outcome(read: Any, v: Any) -> tuple[str, Any]:
    try:
        return ("ok", read(v))
    except (JsonProblem, DataException) as exc:
        return ("error", str(exc))


@pytest.mark.parametrize("optional", [False, True])
@pytest.mark.parametrize(
    "schema",
    [
        *(SchemaBuilder.type(t).build() for t in (Type.INT8, Type.INT16, Type.INT32, Type.INT64)),
        Schema.STRING_SCHEMA,
        Schema.FLOAT64_SCHEMA,
        Timestamp.SCHEMA,
    ],
    ids=lambda s: s.name or s.type.name,
)
def test_the_readers_fast_paths_read_every_value_as_the_full_readers(schema: Schema, optional: bool) -> None:
    converter = JsonConverter()
    base = converter._base_reader(schema)

    def full(v: Any) -> Any:  # what the readers were before their fast paths
        if v is None:
            if optional:
                return None
            raise JsonProblem(f"Invalid null value for required {schema.type.name} field")
        return base(v)

    fast = with_fast_path(schema, full, optional)
    for v in TRICKY:
        assert outcome(fast, v) == outcome(full, v), v
