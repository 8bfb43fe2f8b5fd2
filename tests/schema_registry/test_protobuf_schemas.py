"""PROTOBUF schemas in process: protoc's parse and its messages, the canonical .proto text
(round trips through protoc to the same descriptor, normalize), the base64 descriptor
form confluent-kafka's serializer registers, references and well-known imports, and
Confluent's SchemaDiff rules (a table of cases in the spirit of protobuf-provider's
diff-schema-examples.json, written here)."""

from __future__ import annotations

import base64

import pytest
from google.protobuf import descriptor_pb2, timestamp_pb2
from hypothesis import given, settings
from hypothesis import strategies as st

from schema_registry.protobuf_diff import differences
from schema_registry.protobuf_schemas import ProtobufParsed, formatted, parse_protobuf, protobuf_reads
from schema_registry.schema_kind import SchemaProblem

RICH_PROTO2 = """
syntax = "proto2";
package p.q;
import "google/protobuf/descriptor.proto";
import "google/protobuf/timestamp.proto";
option java_package = "com.x";
option optimize_for = SPEED;
extend google.protobuf.FieldOptions { optional string doc = 50001; optional Meta meta = 50002; }
message Meta { optional string a = 1; repeated int32 b = 2; }
message A {
  reserved 10, 12 to 14, 1000 to max;
  reserved "old", "older";
  option deprecated = true;
  required int32 a_b = 1 [json_name="X", default=3, (doc) = "he said \\"hi\\"\\n",
                          (meta) = {a: "x" b: 1 b: 2}];
  optional string s = 2 [default = "a\\tb"];
  optional bytes by = 3 [default = "\\001\\377"];
  repeated int64 r = 4 [packed = true, deprecated = true];
  optional group G = 5 { optional int32 q = 1; }
  map<string, Inner> m = 6;
  optional E e = 7 [default = TWO];
  optional double d = 8 [default = inf];
  oneof choice { int32 x = 20; string y = 21; }
  extensions 100 to 199;
  message Inner { optional .google.protobuf.Timestamp t = 1; }
  enum E { option allow_alias = true; ONE = 1; TWO = 2; DUO = 2 [deprecated = true]; reserved 5 to 6, 9; }
}
extend A { optional int32 ext = 100; }
enum Top { T0 = 0; }
service S { rpc Go (A) returns (stream Meta) { option deprecated = true; } rpc Hi (Meta) returns (A); }
"""

ORDER_PROTO3 = """
syntax = "proto3";
package acme.orders;
import "google/protobuf/timestamp.proto";

// an order
message Order {
  int64 id = 1;
  map<string, int64> quantities = 2;
  optional string note = 3;
  google.protobuf.Timestamp placed_at = 4;
  oneof payment { string card = 5; int32 voucher = 6; }
  repeated Line lines = 7;
  Status status = 8;
  message Line { string sku = 1; int32 count = 2; }
  enum Status { NEW = 0; PAID = 1; }
}
"""


def parsed(text: str, refs: tuple[tuple[str, str], ...] = (), normalize: bool = False) -> ProtobufParsed:
    return parse_protobuf(text, refs, normalize)[1]


def canonical(text: str, refs: tuple[tuple[str, str], ...] = (), normalize: bool = False) -> str:
    return parse_protobuf(text, refs, normalize)[0]


# -- parsing and the canonical text ---------------------------------------------------------------


@pytest.mark.parametrize("text", [RICH_PROTO2, ORDER_PROTO3])
def test_canonical_text_compiles_back_to_the_same_descriptor(text: str) -> None:
    first_text, first = parse_protobuf(text, (), False)
    second_text, second = parse_protobuf(first_text, (), False)
    assert second.file == first.file
    assert second_text == first_text


def test_canonical_text_reads_like_confluents() -> None:
    text = canonical(ORDER_PROTO3)
    assert text.startswith(
        'syntax = "proto3";\npackage acme.orders;\n\nimport "google/protobuf/timestamp.proto";\n'
    )
    assert "  map<string, int64> quantities = 2;\n" in text
    assert "  optional string note = 3;\n" in text
    assert "  .google.protobuf.Timestamp placed_at = 4;\n" in text
    assert "  oneof payment {\n    string card = 5;\n    int32 voucher = 6;\n  }\n" in text
    assert "  repeated .acme.orders.Order.Line lines = 7;\n" in text
    assert "QuantitiesEntry" not in text and "_note" not in text and "an order" not in text


def test_proto2_labels_defaults_options_groups_and_services_survive() -> None:
    text = canonical(RICH_PROTO2)
    for piece in [
        'syntax = "proto2";',
        'option java_package = "com.x";',
        "reserved 10, 12 to 14, 1000 to max;",
        'reserved "old", "older";',
        "required int32 a_b = 1 [",
        '(p.q.doc) = "he said \\"hi\\"\\n"',
        'json_name = "X"',
        '[default = "\\001\\377"]',
        "optional group G = 5 {",
        "optional .p.q.A.E e = 7 [default = TWO];",
        "extensions 100 to 199;",
        "extend .p.q.A {",
        "rpc Go (.p.q.A) returns (stream .p.q.Meta) {",
    ]:
        assert piece in text, piece


def test_whitespace_comments_and_name_qualification_do_not_change_the_canonical_text() -> None:
    a = 'syntax = "proto3"; package x; message M { N n = 1; } message N { int32 v = 1; }'
    b = 'syntax="proto3";\n// hi\npackage x;\nmessage M {\n  .x.N n = 1; /* c */\n}\n'
    b += "message N { int32 v = 1; }\n"
    assert canonical(a) == canonical(b)


def test_normalize_orders_what_carries_no_meaning() -> None:
    a = """syntax = "proto3"; import "google/protobuf/timestamp.proto";
    import "google/protobuf/duration.proto";
    option java_package = "j"; option go_package = "g";
    message M { string b = 2; int32 a = 1; oneof o { string z = 9; string y = 8; }
      google.protobuf.Timestamp t = 3; google.protobuf.Duration d = 4; }
    enum E { Z = 0; B = 2; A = 1; }"""
    b = """syntax = "proto3"; import "google/protobuf/duration.proto";
    import "google/protobuf/timestamp.proto";
    option go_package = "g"; option java_package = "j";
    message M { int32 a = 1; string b = 2; google.protobuf.Timestamp t = 3; google.protobuf.Duration d = 4;
      oneof o { string y = 8; string z = 9; } }
    enum E { Z = 0; A = 1; B = 2; }"""
    assert canonical(a) != canonical(b)
    assert canonical(a, normalize=True) == canonical(b, normalize=True)
    # the normalized text is itself a schema that normalizes to itself
    assert canonical(canonical(a, normalize=True), normalize=True) == canonical(a, normalize=True)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('syntax = "proto3"; message A { strin x = 1; }', 'the schema:1:32: "strin" is not defined.'),
        (
            'syntax = "proto3"; message A { int32 x = 1; int32 y = 1; }',
            "Field number 1 has already been used",
        ),
        ('syntax = "proto3";\nmessage A {\n  int32 x = 1', "the schema:3:14: Reached end of input"),
        ('syntax = "proto3"; import "nowhere.proto"; message A {}', "nowhere.proto: File not found."),
        ('syntax = "proto9";', 'Unrecognized syntax identifier "proto9"'),
        ("{not a schema", "the schema:1:1"),
    ],
)
def test_a_schema_protoc_refuses_is_a_problem_with_protocs_message(text: str, expected: str) -> None:
    with pytest.raises(SchemaProblem) as problem:
        parse_protobuf(text, (), False)
    assert str(problem.value).startswith("Could not parse Protobuf - ")
    assert expected in str(problem.value)


@pytest.mark.parametrize("name", ["/etc/passwd", "../x.proto", "a/../../b.proto", ""])
def test_a_reference_name_that_leaves_the_import_tree_is_refused(name: str) -> None:
    with pytest.raises(SchemaProblem, match=r"not a relative \.proto import path"):
        parse_protobuf('syntax = "proto3"; message A {}', ((name, 'syntax = "proto3";'),), False)


def test_references_resolve_by_import_path_in_dependency_order() -> None:
    money = 'syntax = "proto3"; package common; message Money { int64 units = 1; string currency = 2; }'
    customer = (
        'syntax = "proto3"; package crm; import "common/money.proto";'
        "message Customer { string name = 1; common.Money credit = 2; }"
    )
    text = 'syntax = "proto3"; import "crm/customer.proto"; message Order { crm.Customer who = 1; }'
    money_text = canonical(money)
    customer_text = canonical(customer, (("common/money.proto", money_text),))
    refs = (("common/money.proto", money_text), ("crm/customer.proto", customer_text))
    result = parsed(text, refs)
    assert result.file.dependency == ["crm/customer.proto"]
    assert result.file.message_type[0].field[0].type_name == ".crm.Customer"
    assert {f.name for f in result.descriptors.imports} >= {"common/money.proto", "crm/customer.proto"}
    with pytest.raises(SchemaProblem, match=r"common/money\.proto: File not found"):
        parse_protobuf(text, refs[1:], False)


def test_well_known_types_resolve_without_references() -> None:
    text = """syntax = "proto3"; import "google/protobuf/any.proto"; import "google/protobuf/wrappers.proto";
    import "google/protobuf/struct.proto"; import "google/type/date.proto";
    message W { google.protobuf.Any a = 1; google.protobuf.StringValue s = 2; google.protobuf.Struct st = 3;
      google.type.Date d = 4; }"""
    assert [f.type_name for f in parsed(text).file.message_type[0].field] == [
        ".google.protobuf.Any",
        ".google.protobuf.StringValue",
        ".google.protobuf.Struct",
        ".google.type.Date",
    ]


def test_confluents_own_files_resolve_as_confluents_registry_resolves_them() -> None:
    text = """syntax = "proto3"; import "confluent/meta.proto"; import "confluent/type/decimal.proto";
    message Price { confluent.type.Decimal amount = 1 [(confluent.field_meta) = { params: [
      { key: "precision", value: "8" }, { key: "scale", value: "2" } ] }]; }"""
    result = parsed(text)
    assert result.file.message_type[0].field[0].type_name == ".confluent.type.Decimal"
    printed = canonical(text)
    assert '(confluent.field_meta) = { params { key: "precision" value: "8" }' in printed
    assert parsed(printed).file == result.file
    # registered as a descriptor (the ProtobufConverter's way), the option is read by name too
    assert canonical(_b64(result.file)) == printed


def _b64(fdp: descriptor_pb2.FileDescriptorProto) -> str:
    return base64.b64encode(fdp.SerializeToString()).decode()


def test_a_base64_descriptor_is_the_same_schema_as_its_text() -> None:
    compiled = parsed(ORDER_PROTO3).file
    compiled.name = "orders/order.proto"  # the name the serializer's file had
    text, from_descriptor = parse_protobuf(_b64(compiled), (), False)
    assert text == canonical(ORDER_PROTO3)
    assert formatted(from_descriptor, "serialized") == formatted(parsed(ORDER_PROTO3), "serialized")


def test_the_descriptor_of_a_generated_class_registers_as_text() -> None:
    # what ProtobufSerializer sends for a dependency: the well-known file's serialized_pb
    text, result = parse_protobuf(
        base64.b64encode(timestamp_pb2.DESCRIPTOR.serialized_pb).decode(), (), False
    )
    # (its fields carry their json_name, kept: Confluent prints a json_name a descriptor has)
    assert 'message Timestamp {\n  int64 seconds = 1 [json_name = "seconds"];\n' in text
    assert result.file.package == "google.protobuf"


def test_base64_references_are_read_as_descriptors() -> None:
    dep = parsed('syntax = "proto3"; package d; message D { int32 v = 1; }').file
    dep.name = "d.proto"
    text = canonical(
        'syntax = "proto3"; import "d.proto"; message M { d.D x = 1; }', (("d.proto", _b64(dep)),)
    )
    assert "  .d.D x = 1;\n" in text


def test_a_base64_descriptor_keeps_custom_options_declared_in_its_references() -> None:
    opts = 'syntax = "proto3"; package o; import "google/protobuf/descriptor.proto";'
    opts += " extend google.protobuf.FieldOptions { string label_of = 51234; }"
    refs = (("o/opts.proto", canonical(opts)),)
    text = 'syntax = "proto3"; import "o/opts.proto"; message M { int32 a = 1 [(o.label_of) = "x"]; }'
    printed = canonical(text, refs)
    assert '[(o.label_of) = "x"]' in printed
    assert canonical(_b64(parsed(text, refs).file), refs) == printed


def test_formats() -> None:
    result = parsed(RICH_PROTO2)
    serialized = formatted(result, "serialized")
    assert serialized is not None
    assert descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(serialized)) == result.file
    plain = formatted(result, "IGNORE_EXTENSIONS")
    assert (
        plain is not None
        and "(p.q.doc)" not in plain
        and "extend " not in plain
        and "extensions " not in plain
    )
    assert formatted(result, "") is None and formatted(result, "something-new") is None


# -- compatibility: Confluent's SchemaDiff ----------------------------------------------------------

P3 = 'syntax = "proto3";\n'


def diff(
    original: str,
    update: str,
    refs_o: tuple[tuple[str, str], ...] = (),
    refs_u: tuple[tuple[str, str], ...] = (),
) -> set[str]:
    return {
        f"{kind} {path}"
        for kind, path in differences(
            parsed(original, refs_o).descriptors, parsed(update, refs_u).descriptors
        )
    }


def compatible(original: str, update: str) -> bool:
    return not protobuf_reads(parsed(update), parsed(original))


CASES: list[tuple[str, str, str, set[str], bool]] = [
    (
        "a new field",
        P3 + "message M { int32 a = 1; }",
        P3 + "message M { int32 a = 1; string b = 2; }",
        {"FIELD_ADDED #/M/2"},
        True,
    ),
    (
        "a removed field",
        P3 + "message M { int32 a = 1; string b = 2; }",
        P3 + "message M { int32 a = 1; }",
        {"FIELD_REMOVED #/M/2"},
        True,
    ),
    (
        "package changed",
        P3 + "package a; message M {}",
        P3 + "package b; message M {}",
        {"PACKAGE_CHANGED #/"},
        False,
    ),
    (
        "required field added (proto2)",
        "message M { optional int32 a = 1; }",
        "message M { optional int32 a = 1; required int32 b = 2; }",
        {"REQUIRED_FIELD_ADDED #/M/2"},
        False,
    ),
    (
        "required field removed (proto2)",
        "message M { optional int32 a = 1; required int32 b = 2; }",
        "message M { optional int32 a = 1; }",
        {"REQUIRED_FIELD_REMOVED #/M/2"},
        False,
    ),
    (
        "renumbered field",
        P3 + "message M { int32 a = 1; }",
        P3 + "message M { int32 a = 2; }",
        {"FIELD_REMOVED #/M/1", "FIELD_ADDED #/M/2"},
        True,
    ),
    (
        "renamed field",
        P3 + "message M { int32 a = 1; }",
        P3 + "message M { int32 b = 1; }",
        {"FIELD_NAME_CHANGED #/M/1"},
        True,
    ),
    ("int32 to int64", P3 + "message M { int32 a = 1; }", P3 + "message M { int64 a = 1; }", set(), True),
    ("uint64 to bool", P3 + "message M { uint64 a = 1; }", P3 + "message M { bool a = 1; }", set(), True),
    ("string to bytes", P3 + "message M { string a = 1; }", P3 + "message M { bytes a = 1; }", set(), True),
    ("sint32 to sint64", P3 + "message M { sint32 a = 1; }", P3 + "message M { sint64 a = 1; }", set(), True),
    (
        "fixed32 to sfixed32",
        P3 + "message M { fixed32 a = 1; }",
        P3 + "message M { sfixed32 a = 1; }",
        set(),
        True,
    ),
    (
        "fixed64 to sfixed64",
        P3 + "message M { fixed64 a = 1; }",
        P3 + "message M { sfixed64 a = 1; }",
        set(),
        True,
    ),
    (
        "int32 to sint32",
        P3 + "message M { int32 a = 1; }",
        P3 + "message M { sint32 a = 1; }",
        {"FIELD_SCALAR_KIND_CHANGED #/M/1"},
        False,
    ),
    (
        "int32 to string",
        P3 + "message M { int32 a = 1; }",
        P3 + "message M { string a = 1; }",
        {"FIELD_SCALAR_KIND_CHANGED #/M/1"},
        False,
    ),
    (
        "float to double",
        P3 + "message M { float a = 1; }",
        P3 + "message M { double a = 1; }",
        {"FIELD_SCALAR_KIND_CHANGED #/M/1"},
        False,
    ),
    (
        "fixed32 to fixed64",
        P3 + "message M { fixed32 a = 1; }",
        P3 + "message M { fixed64 a = 1; }",
        {"FIELD_SCALAR_KIND_CHANGED #/M/1"},
        False,
    ),
    (
        "number to enum",
        P3 + "message M { int32 a = 1; }",
        P3 + "message M { E a = 1; } enum E { X = 0; }",
        {"ENUM_ADDED #/E"},
        True,
    ),
    (
        "enum to number",
        P3 + "message M { E a = 1; } enum E { X = 0; }",
        P3 + "message M { int32 a = 1; }",
        {"ENUM_REMOVED #/E"},
        True,
    ),
    (
        "number to message",
        P3 + "message M { int32 a = 1; }",
        P3 + "message M { N a = 1; } message N {}",
        {"FIELD_KIND_CHANGED #/M/1", "MESSAGE_ADDED #/N"},
        False,
    ),
    (
        "message type renamed",
        P3 + "message M { N a = 1; } message N { int32 v = 1; }",
        P3 + "message M { O a = 1; } message O { int32 v = 1; }",
        {"FIELD_NAMED_TYPE_CHANGED #/M/1", "MESSAGE_REMOVED #/N", "MESSAGE_ADDED #/O"},
        False,
    ),
    (
        "message removed",
        P3 + "message M {} message N {}",
        P3 + "message M {}",
        {"MESSAGE_REMOVED #/N"},
        False,
    ),
    (
        "messages reordered",
        P3 + "message M {} message N {}",
        P3 + "message N {} message M {}",
        {"MESSAGE_MOVED #/M", "MESSAGE_MOVED #/N"},
        True,
    ),
    (
        "nested field added",
        P3 + "message W { message M { int32 a = 1; } }",
        P3 + "message W { message M { int32 a = 1; int32 b = 2; } }",
        {"FIELD_ADDED #/W/M/2"},
        True,
    ),
    (
        "enum constants",
        P3 + "enum E { A = 0; B = 1; C = 2; }",
        P3 + "enum E { A = 0; BB = 1; D = 3; }",
        {"ENUM_CONST_CHANGED #/E/1", "ENUM_CONST_REMOVED #/E/2", "ENUM_CONST_ADDED #/E/3"},
        True,
    ),
    (
        "repeated number (label change)",
        P3 + "message M { optional int32 a = 1; }",
        P3 + "message M { repeated int32 a = 1; }",
        {"FIELD_NUMERIC_LABEL_CHANGED #/M/1"},
        False,
    ),
    (
        "repeated string (label change)",
        P3 + "message M { optional string a = 1; }",
        P3 + "message M { repeated string a = 1; }",
        {"FIELD_STRING_OR_BYTES_LABEL_CHANGED #/M/1"},
        True,
    ),
    (
        "repeated message (label change)",
        P3 + "message M { N a = 1; } message N {}",
        P3 + "message M { repeated N a = 1; } message N {}",
        set(),
        True,
    ),
    (
        "map value kind changed",
        P3 + "message M { map<string, int32> a = 1; }",
        P3 + "message M { map<string, string> a = 1; }",
        {"FIELD_SCALAR_KIND_CHANGED #/M/1"},
        False,
    ),
    (
        "map to message",
        P3 + "message M { map<string, int32> a = 1; }",
        P3 + "message M { repeated N a = 1; } message N {}",
        {"FIELD_KIND_CHANGED #/M/1", "MESSAGE_ADDED #/N"},
        False,
    ),
    (
        "field into a new oneof with a new field",
        P3 + "message M { int32 a = 1; }",
        P3 + "message M { oneof o { int32 a = 1; int32 b = 2; } }",
        {"ONEOF_ADDED #/M/o", "ONEOF_FIELD_ADDED #/M/o/2"},
        True,
    ),
    (
        "two fields into a oneof",
        P3 + "message M { int32 a = 1; int32 b = 2; }",
        P3 + "message M { oneof o { int32 a = 1; int32 b = 2; } }",
        {"ONEOF_ADDED #/M/o", "MULTIPLE_FIELDS_MOVED_TO_ONEOF #/M/o"},
        False,
    ),
    (
        "a field into an existing oneof",
        P3 + "message M { int32 a = 1; oneof o { int32 b = 2; } }",
        P3 + "message M { oneof o { int32 a = 1; int32 b = 2; } }",
        {"FIELD_MOVED_TO_EXISTING_ONEOF #/M/o"},
        False,
    ),
    (
        "a oneof member removed",
        P3 + "message M { oneof o { int32 a = 1; int32 b = 2; } }",
        P3 + "message M { oneof o { int32 a = 1; } }",
        {"ONEOF_FIELD_REMOVED #/M/o/2"},
        False,
    ),
    (
        "a whole oneof removed",
        P3 + "message M { int32 z = 9; oneof o { int32 a = 1; int32 b = 2; } }",
        P3 + "message M { int32 z = 9; }",
        {"ONEOF_REMOVED #/M/o"},
        True,
    ),
    (
        "a oneof member out to the top level",
        P3 + "message M { oneof o { int32 a = 1; int32 b = 2; } }",
        P3 + "message M { oneof o { int32 a = 1; } int32 b = 2; }",
        {"ONEOF_FIELD_MOVED_TO_TOP_LEVEL #/M/2"},
        True,
    ),
    (
        "type change inside a renamed oneof",
        P3 + "message M { oneof o { int32 a = 1; int32 b = 2; } }",
        P3 + "message M { oneof p { int32 a = 1; string b = 2; } }",
        {"ONEOF_REMOVED #/M/o", "ONEOF_ADDED #/M/p", "FIELD_SCALAR_KIND_CHANGED #/M/p/2"},
        False,
    ),
    (
        # a proto3 singular field has no label to compare (Confluent compares two labels only)
        "proto3 optional on a number",
        P3 + "message M { int32 a = 1; }",
        P3 + "message M { optional int32 a = 1; }",
        set(),
        True,
    ),
    (
        "proto2 optional to repeated number",
        "message M { optional int32 a = 1; }",
        "message M { repeated int32 a = 1; }",
        {"FIELD_NUMERIC_LABEL_CHANGED #/M/1"},
        False,
    ),
    (
        "recursive type",
        P3 + "message T { int32 v = 1; repeated T kids = 2; }",
        P3 + "message T { int64 v = 1; repeated T kids = 2; int32 w = 3; }",
        {"FIELD_ADDED #/T/3"},
        True,
    ),
]


@pytest.mark.parametrize(("what", "original", "update", "expected", "ok"), CASES, ids=[c[0] for c in CASES])
def test_schema_diff(what: str, original: str, update: str, expected: set[str], ok: bool) -> None:
    assert diff(original, update) == expected
    assert compatible(original, update) is ok


def test_a_type_from_a_reference_is_compared_field_by_field() -> None:
    old_dep = 'syntax = "proto3"; package home; message GoogleHome { string name = 1; }'
    new_dep = 'syntax = "proto3"; package home; message GoogleHome { int32 name = 1; }'
    text = 'syntax = "proto3"; import "home.proto"; message M { home.GoogleHome h = 1; }'
    got = diff(text, text, (("home.proto", old_dep),), (("home.proto", new_dep),))
    assert got == {"FIELD_SCALAR_KIND_CHANGED #/GoogleHome/1", "FIELD_NAMED_TYPE_CHANGED #/M/1"}
    same = diff(text, text, (("home.proto", old_dep),), (("home.proto", old_dep),))
    assert same == set()


def test_moving_a_message_into_an_import_removes_it() -> None:
    dep = 'syntax = "proto3"; message GoogleHome { string name = 1; }'
    before = 'syntax = "proto3"; message M { GoogleHome h = 1; } message GoogleHome { string name = 1; }'
    after = 'syntax = "proto3"; import "home.proto"; message M { GoogleHome h = 1; }'
    assert diff(before, after, (), (("home.proto", dep),)) == {"MESSAGE_REMOVED #/GoogleHome"}
    assert diff(after, before, (("home.proto", dep),), ()) == {"MESSAGE_ADDED #/GoogleHome"}


def test_reads_names_the_rule_and_the_path() -> None:
    old = parsed(P3 + "message Order { int32 id = 1; string note = 2; }")
    new = parsed(P3 + "message Order { int32 id = 1; double note = 2; }")
    assert protobuf_reads(new, old) == ["FIELD_SCALAR_KIND_CHANGED at #/Order/2"]
    assert protobuf_reads(old, new) == ["FIELD_SCALAR_KIND_CHANGED at #/Order/2"]


# -- generated schemas: the canonical text compiles back to the same descriptor ------------------

_SCALARS = ["int32", "int64", "uint32", "uint64", "sint32", "sint64", "fixed32", "fixed64"]
_SCALARS += ["sfixed32", "sfixed64", "bool", "string", "bytes", "float", "double"]


@st.composite
def proto_files(draw: st.DrawFn) -> str:
    """A proto3 or proto2 file: messages with scalar, enum, message, map and repeated
    fields, oneofs, proto3 optionals, nested types, reserved ranges and options."""
    proto2 = draw(st.booleans())
    names = iter(f"f{i}" for i in range(1000))
    numbers = iter(range(1, 1000))
    types = ["E0", "M0", *_SCALARS]

    def field(in_oneof: bool) -> str:
        kind = draw(st.sampled_from(["plain", "repeated", "map", "optional"] if not in_oneof else ["plain"]))
        type_ = draw(st.sampled_from(types))
        name, number = next(names), next(numbers)
        opts = draw(st.sampled_from(["", " [deprecated = true]", f' [json_name = "j{number}"]']))
        if kind == "map":
            key = draw(st.sampled_from(["string", "int32", "bool", "fixed64"]))
            return f"map<{key}, {type_}> {name} = {number}{opts};"
        if kind == "repeated":
            return f"repeated {type_} {name} = {number}{opts};"
        if in_oneof:
            return f"{type_} {name} = {number}{opts};"
        label = "optional " if proto2 or kind == "optional" else ""
        return f"{label}{type_} {name} = {number}{opts};"

    def message(name: str, depth: int) -> str:
        body = [field(False) for _ in range(draw(st.integers(0, 4)))]
        if draw(st.booleans()):
            members = " ".join(field(True) for _ in range(draw(st.integers(1, 3))))
            body.append(f"oneof o{next(numbers)} {{ {members} }}")
        body += [field(False) for _ in range(draw(st.integers(0, 2)))]
        if draw(st.booleans()):
            low = 900 + draw(st.integers(0, 20))
            body.append(f'reserved {low}, {low + 30} to {low + 40}; reserved "gone";')
        if depth < 2 and draw(st.booleans()):
            body.append(message(f"N{depth}", depth + 1))
        if draw(st.booleans()):
            body.append("option deprecated = true;")
        return f"message {name} {{ {' '.join(body)} }}"

    enum_zero = "A = 0;"
    head = 'syntax = "proto2";' if proto2 else 'syntax = "proto3";'
    package = draw(st.sampled_from(["", "package a.b;"]))
    return (
        f'{head} {package} option java_package = "x.y";'
        f" enum E0 {{ {enum_zero} B = 1; }} message M0 {{ {'optional ' if proto2 else ''}int32 v = 1; }}"
        f" {message('Top', 0)}"
    )


@settings(max_examples=60, deadline=None)
@given(proto_files())
def test_generated_schemas_round_trip_through_their_canonical_text(text: str) -> None:
    first_text, first = parse_protobuf(text, (), False)
    second_text, second = parse_protobuf(first_text, (), False)
    assert second.file == first.file
    assert second_text == first_text
    normalized, _ = parse_protobuf(text, (), True)
    assert parse_protobuf(normalized, (), True)[0] == normalized
    assert differences(first.descriptors, second.descriptors) == []
