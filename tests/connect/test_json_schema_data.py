"""Connect ↔ JSON Schema (``connect.api.json_schema``): every Connect schema survives the
trip through its JSON Schema and every value through its JSON document (hypothesis), the
documents match their schemas by ``jsonschema`` (the judge), the schema text is
Confluent's mapping, and schemas written by hand (what Confluent's Python
``JSONSerializer`` users register) read as Confluent's converter reads them."""

from __future__ import annotations

import base64
import datetime
import decimal
import json
from typing import Any

import jsonschema
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connect.api import DataException, Date, Decimal, Schema, SchemaBuilder, Struct, Time, Timestamp, Type
from connect.api.json_schema import ONE_OF, JsonSchemaData

ENUM = "io.confluent.connect.json.Enum"
_INT_BITS = {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32, Type.INT64: 64}


def _text(doc: Any) -> bytes:
    """A document as the converter writes it (a decimal.Decimal as its exact digits)."""

    def exact(v: Any) -> Any:
        if isinstance(v, decimal.Decimal):
            return orjson.Fragment(str(v))
        raise TypeError

    return orjson.dumps(doc, default=exact)


def _parsed(text: bytes) -> Any:
    return json.loads(text, parse_float=decimal.Decimal)


# -- strategies: Connect schemas of every type, and values for them ---------------------------


def _leaf_value(schema: Schema) -> st.SearchStrategy[Any]:
    if schema.name == Decimal.LOGICAL_NAME:
        scale = Decimal.scale(schema)
        return st.integers(-(10**20), 10**20).map(lambda n: decimal.Decimal(n).scaleb(-scale))
    if schema.name == Date.LOGICAL_NAME:
        return st.dates(datetime.date(1, 1, 1), datetime.date(9999, 12, 31))
    if schema.name == Time.LOGICAL_NAME:
        return st.integers(0, 86_399_999).map(lambda ms: Time.to_logical(schema, ms))
    if schema.name == Timestamp.LOGICAL_NAME:
        return st.integers(-(2**41), 2**41).map(lambda ms: Timestamp.to_logical(schema, ms))
    if schema.type in _INT_BITS:
        bits = _INT_BITS[schema.type]
        return st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    if schema.type is Type.FLOAT32:
        return st.floats(width=32, allow_nan=False, allow_infinity=False)
    if schema.type is Type.FLOAT64:
        return st.floats(allow_nan=False, allow_infinity=False)
    if schema.type is Type.BOOLEAN:
        return st.booleans()
    if schema.type is Type.STRING:
        if schema.parameters and ENUM in schema.parameters:
            return st.sampled_from(["RED", "GREEN"])
        return st.text(max_size=8)
    return st.binary(max_size=8)


LEAVES = st.sampled_from(
    [
        Schema.INT8_SCHEMA,
        Schema.INT16_SCHEMA,
        Schema.INT32_SCHEMA,
        Schema.INT64_SCHEMA,
        Schema.FLOAT32_SCHEMA,
        Schema.FLOAT64_SCHEMA,
        Schema.BOOLEAN_SCHEMA,
        Schema.STRING_SCHEMA,
        Schema.BYTES_SCHEMA,
        Decimal.schema(0),
        Decimal.schema(3),
        Date.SCHEMA,
        Time.SCHEMA,
        Timestamp.SCHEMA,
        SchemaBuilder.string().parameters({ENUM: "", f"{ENUM}.RED": "RED", f"{ENUM}.GREEN": "GREEN"}).build(),
        SchemaBuilder.string().doc("with a doc").parameter("p", "q").version(3).build(),
        SchemaBuilder.int32().default_value(7).build(),
        SchemaBuilder.string().name("a.Named").default_value("x").build(),
    ]
)
KEYS = st.sampled_from(
    [Schema.STRING_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA, Schema.INT32_SCHEMA, Date.SCHEMA]
)
NAMES = st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f"]), min_size=1, max_size=4, unique=True)


def _optional(schema: Schema, optional: bool) -> Schema:
    if not optional or schema.optional or schema.default_value is not None:
        return schema
    return Schema(
        schema.type,
        optional=True,
        name=schema.name,
        version=schema.version,
        doc=schema.doc,
        parameters=schema.parameters,
        key_schema=schema.key_schema,
        value_schema=schema.value_schema,
        fields=schema.fields,
    )


def _extend(children: st.SearchStrategy[Schema]) -> st.SearchStrategy[Schema]:
    def struct(names: list[str], schemas: list[Schema], name: str | None) -> Schema:
        builder = SchemaBuilder.struct()
        if name is not None:
            builder.name(name)
        for n, s in zip(names, schemas, strict=False):
            builder.field(n, s)
        return builder.build()

    structs = NAMES.flatmap(
        lambda names: st.builds(
            struct,
            st.just(names),
            st.lists(children, min_size=len(names), max_size=len(names)),
            st.sampled_from([None, "shop.Order"]),
        )
    )
    arrays = children.map(lambda s: SchemaBuilder.array(s).build())
    maps = st.builds(lambda k, v: SchemaBuilder.map(k, v).build(), KEYS, children)
    return st.tuples(st.one_of(structs, arrays, maps), st.booleans()).map(lambda t: _optional(*t))


SCHEMAS = st.recursive(st.tuples(LEAVES, st.booleans()).map(lambda t: _optional(*t)), _extend, max_leaves=8)


def _value(schema: Schema) -> st.SearchStrategy[Any]:
    base = _required_value(schema)
    return st.one_of(st.none(), base) if schema.optional else base


def _required_value(schema: Schema) -> st.SearchStrategy[Any]:
    t = schema.type
    if t is Type.ARRAY:
        assert schema.value_schema is not None
        return st.lists(_value(schema.value_schema), max_size=3)
    if t is Type.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        return st.dictionaries(_value(schema.key_schema), _value(schema.value_schema), max_size=3)
    if t is Type.STRUCT:
        return st.tuples(*[_value(f.schema) for f in schema.fields]).map(
            lambda values: Struct.from_values(schema, values)
        )
    return _leaf_value(schema)


SCHEMAS_AND_VALUES = SCHEMAS.flatmap(lambda s: st.tuples(st.just(s), _required_value(s)))


# -- round trips --------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(SCHEMAS)
def test_every_connect_schema_survives_its_json_schema(schema: Schema) -> None:
    data = JsonSchemaData()
    node = json.loads(json.dumps(data.from_connect_schema(schema)))
    jsonschema.Draft7Validator.check_schema(node)  # a valid draft-07 schema, as the registry takes it
    assert data.to_connect_schema(node) == schema


@settings(max_examples=300, deadline=None)
@given(SCHEMAS_AND_VALUES)
def test_every_value_survives_its_document_which_matches_its_schema(pair: tuple[Schema, Any]) -> None:
    schema, value = pair
    data = JsonSchemaData(decimal_format="NUMERIC")
    doc = _parsed(_text(data.from_connect_value(schema, value)))
    # Exact numbers as jsonschema reads integers: the JSON text's integers are ints.
    jsonschema.Draft7Validator(data.from_connect_schema(schema)).validate(doc)
    assert data.to_connect_value(schema, doc) == value


@settings(max_examples=150, deadline=None)
@given(SCHEMAS_AND_VALUES)
def test_base64_decimals_survive_too(pair: tuple[Schema, Any]) -> None:
    schema, value = pair
    data = JsonSchemaData()  # decimal.format=BASE64, Confluent's default
    doc = _parsed(_text(data.from_connect_value(schema, value)))
    assert data.to_connect_value(schema, doc) == value


# -- what Confluent's JsonSchemaData writes ----------------------------------------------------


ORDER = (
    SchemaBuilder.struct()
    .name("shop.Order")
    .version(2)
    .doc("an order")
    .field("id", Schema.INT64_SCHEMA)
    .field("tiny", Schema.INT8_SCHEMA)
    .field("note", Schema.OPTIONAL_STRING_SCHEMA)
    .field("raw", Schema.BYTES_SCHEMA)
    .field("amount", Decimal.schema(2))
    .field("day", Date.SCHEMA)
    .field("when", Timestamp.SCHEMA)
    .field("labels", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build())
    .field("by_id", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).build())
    .field("currency", SchemaBuilder.string().default_value("EUR").build())
    .field("home", SchemaBuilder.struct().field("city", Schema.STRING_SCHEMA).optional().build())
    .build()
)


def test_the_json_schema_is_confluents_mapping() -> None:
    node = JsonSchemaData().from_connect_schema(ORDER)
    assert (node["type"], node["title"], node["description"], node["connect.version"]) == (
        "object",
        "shop.Order",
        "an order",
        2,
    )
    assert "additionalProperties" not in node and "required" not in node
    props = node["properties"]
    assert list(props) == [f.name for f in ORDER.fields]
    assert props["id"] == {"type": "integer", "connect.type": "int64", "connect.index": 0}
    assert props["tiny"] == {"type": "integer", "connect.type": "int8", "connect.index": 1}
    assert props["note"] == {"oneOf": [{"type": "null"}, {"type": "string"}], "connect.index": 2}
    assert props["raw"] == {"type": "string", "connect.type": "bytes", "connect.index": 3}
    assert props["amount"] == {
        "type": "number",
        "connect.type": "bytes",
        "title": "org.apache.kafka.connect.data.Decimal",
        "connect.version": 1,
        "connect.parameters": {"scale": "2"},
        "connect.index": 4,
    }
    assert props["day"]["title"] == "org.apache.kafka.connect.data.Date"
    assert (props["day"]["type"], props["day"]["connect.type"]) == ("integer", "int32")
    assert (props["when"]["type"], props["when"]["connect.type"]) == ("integer", "int64")
    assert props["labels"] == {
        "type": "object",
        "additionalProperties": {"type": "integer", "connect.type": "int32"},
        "connect.type": "map",
        "connect.index": 7,
    }
    assert props["by_id"]["type"] == "array" and props["by_id"]["connect.type"] == "map"
    assert props["by_id"]["items"]["properties"]["key"]["connect.index"] == 0
    assert props["currency"]["default"] == "EUR"
    home = props["home"]
    assert home["oneOf"][0] == {"type": "null"} and home["oneOf"][1]["type"] == "object"
    assert home["connect.index"] == 10
    closed = JsonSchemaData(allow_additional_properties=False).from_connect_schema(ORDER)
    assert closed["additionalProperties"] is False


def test_documents_hold_json_values() -> None:
    value = (
        Struct(ORDER)
        .put("id", 2**40)
        .put("tiny", -3)
        .put("raw", b"\x00\xff")
        .put("amount", decimal.Decimal("-12.34"))
        .put("day", datetime.date(1970, 1, 3))
        .put("when", datetime.datetime(1970, 1, 1, 0, 0, 1, tzinfo=datetime.UTC))
        .put("labels", {"x": 1})
        .put("by_id", {7: "seven"})
    )
    doc = JsonSchemaData().from_connect_value(ORDER, value)
    assert doc["raw"] == base64.b64encode(b"\x00\xff").decode()
    assert base64.b64decode(doc["amount"]) == (-1234).to_bytes(2, "big", signed=True)
    assert (doc["day"], doc["when"], doc["note"], doc["home"]) == (2, 1000, None, None)
    assert doc["by_id"] == [{"key": 7, "value": "seven"}] and doc["labels"] == {"x": 1}
    assert doc["currency"] == "EUR"  # the default stands for a null
    numeric = JsonSchemaData(decimal_format="NUMERIC").from_connect_value(ORDER, value)
    assert _text(numeric["amount"]) == b"-12.34"


# -- schemas written elsewhere -------------------------------------------------------------------

PLAIN = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "User",
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "who"},
        "age": {"type": "integer"},
        "score": {"type": "number"},
        "active": {"type": "boolean"},
        "email": {"oneOf": [{"type": "null"}, {"type": "string"}]},
        "nick": {"type": ["string", "null"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "color": {"type": "string", "enum": ["RED", "GREEN"]},
        "address": {"$ref": "#/definitions/Address"},
        "either": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
    },
    "required": ["name", "age"],
    "definitions": {"Address": {"type": "object", "properties": {"city": {"type": "string"}}}},
}


def test_a_plain_json_schema_reads_as_confluent_reads_it() -> None:
    schema = JsonSchemaData().to_connect_schema(PLAIN, version=4)
    assert (schema.name, schema.version, schema.type) == ("User", 4, Type.STRUCT)
    fields = {f.name: f.schema for f in schema.fields}
    assert [f.name for f in schema.fields] == list(PLAIN["properties"])
    assert fields["name"] == SchemaBuilder.string().doc("who").build()
    assert fields["age"] == Schema.INT64_SCHEMA and fields["score"] == Schema.FLOAT64_SCHEMA
    assert fields["active"] == Schema.BOOLEAN_SCHEMA
    assert (
        fields["email"] == Schema.OPTIONAL_STRING_SCHEMA and fields["nick"] == Schema.OPTIONAL_STRING_SCHEMA
    )
    assert fields["tags"] == SchemaBuilder.array(Schema.STRING_SCHEMA).build()
    assert fields["color"].parameters == {ENUM: "", f"{ENUM}.RED": "RED", f"{ENUM}.GREEN": "GREEN"}
    assert fields["address"] == SchemaBuilder.struct().field("city", Schema.STRING_SCHEMA).build()
    either = fields["either"]
    assert either.name == ONE_OF and [f.schema for f in either.fields] == [
        Schema.OPTIONAL_INT64_SCHEMA,
        Schema.OPTIONAL_STRING_SCHEMA,
    ]
    doc = {
        "name": "ann",
        "age": 30,
        "score": 2,
        "active": True,
        "email": None,
        "nick": "a",
        "tags": ["x"],
        "color": "RED",
        "address": {"city": "Oslo"},
        "either": "s",
    }
    value = JsonSchemaData().to_connect_value(schema, doc)
    assert (value.get("age"), value.get("score"), value.get("email"), value.get("color")) == (
        30,
        2.0,
        None,
        "RED",
    )
    assert value.get("address").get("city") == "Oslo"
    assert value.get("either").get(f"{ONE_OF}.field.1") == "s"
    assert (
        JsonSchemaData().to_connect_value(schema, {**doc, "either": 5}).get("either").get(f"{ONE_OF}.field.0")
        == 5
    )


def test_use_optional_for_nonrequired_makes_properties_not_required_optional() -> None:
    fields = {
        f.name: f.schema
        for f in JsonSchemaData(use_optional_for_nonrequired=True).to_connect_schema(PLAIN).fields
    }
    assert (
        fields["name"] == SchemaBuilder.string().doc("who").build() and fields["age"] == Schema.INT64_SCHEMA
    )
    assert fields["score"] == Schema.OPTIONAL_FLOAT64_SCHEMA and fields["address"].optional


def test_references_all_of_and_field_order() -> None:
    referenced = {"address.json": {"type": "object", "properties": {"city": {"type": "string"}}}}
    node = {
        "allOf": [
            {"type": "object", "properties": {"b": {"type": "integer", "connect.index": 1}}},
            {"type": "object", "properties": {"a": {"$ref": "address.json", "connect.index": 0}}},
        ]
    }
    schema = JsonSchemaData().to_connect_schema(node, referenced)
    assert [f.name for f in schema.fields] == ["a", "b"]
    assert schema.fields[0].schema.fields[0].name == "city"


@pytest.mark.parametrize(
    ("node", "problem"),
    [
        ({"type": "object", "properties": {"next": {"$ref": "#"}}}, "refers to itself"),
        ({"$ref": "other.json"}, "no referenced schema is called other.json"),
        ({"$ref": "#/definitions/Nope"}, "nothing at /definitions/Nope"),
        ({}, "has no Connect schema"),
        ({"type": "null"}, "null schema"),
        ({"type": "integer", "connect.type": "int128"}, "unknown connect.type"),
    ],
)
def test_schemas_without_a_connect_schema_say_why(node: dict[str, Any], problem: str) -> None:
    with pytest.raises(DataException, match=problem):
        JsonSchemaData().to_connect_schema(node)


@pytest.mark.parametrize(
    ("doc", "problem"),
    [
        ({"id": "5"}, "/id: expected an integer, found string"),
        ({"id": 5, "tiny": 300}, "/tiny: 300 does not fit int8"),
        ({"id": 5, "raw": "%%"}, "/raw: '%%' is not base64"),
        ({"id": None}, "/id: null for a required int64"),
        ({"id": 5, "by_id": {"7": "x"}}, "/by_id: expected an array of {key, value} objects"),
        ([1], "the document: expected an object, found array"),
    ],
)
def test_documents_that_do_not_fit_say_where(doc: Any, problem: str) -> None:
    with pytest.raises(DataException, match=problem.replace("{", r"\{").replace("}", r"\}")):
        JsonSchemaData().to_connect_value(ORDER, doc)
