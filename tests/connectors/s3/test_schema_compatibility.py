"""``schema.compatibility`` decisions (Confluent's StorageSchemaCompatibility): which
record schemas start new files and which are projected to the current schema."""

from __future__ import annotations

import pytest

from connect.api import Schema, SchemaBuilder, SchemaProjectorException, SinkRecord, Struct
from connectors.s3.schema_compatibility import LEVELS, project, should_change


def version(n: int | None, extra: bool = False) -> Schema:
    b = SchemaBuilder.struct().name("Order").field("id", Schema.INT64_SCHEMA)
    if extra:
        b.field("note", SchemaBuilder.string().default_value("").build())
    if n is not None:
        b.version(n)
    return b.build()


V1, V2 = version(1), version(2, extra=True)

# (level, record's schema, current schema) -> starts new files
CASES = [
    ("NONE", V1, V1, False),
    ("NONE", V2, V1, True),
    ("NONE", V1, V2, True),
    ("BACKWARD", V2, V1, True),
    ("BACKWARD", V1, V2, False),
    ("BACKWARD", V1, V1, False),
    ("FULL", V2, V1, True),
    ("FULL", V1, V2, False),
    ("FORWARD", V2, V1, False),
    ("FORWARD", V1, V2, True),
]


@pytest.mark.parametrize(("level", "schema", "current", "expected"), CASES)
def test_which_schema_starts_new_files(level: str, schema: Schema, current: Schema, expected: bool) -> None:
    assert should_change(level, schema, current) is expected  # type: ignore[arg-type]


def test_schemaless_records_never_change_and_may_not_mix_with_schemas() -> None:
    for level in LEVELS:
        assert should_change(level, None, None) is False
        with pytest.raises(SchemaProjectorException, match="schema-based and schema-less"):
            should_change(level, V1, None)
        with pytest.raises(SchemaProjectorException, match="schema-based and schema-less"):
            should_change(level, None, V1)


def test_levels_that_order_by_version_need_versions() -> None:
    assert should_change("NONE", version(None), V1) is True
    for level in ("BACKWARD", "FORWARD", "FULL"):
        with pytest.raises(SchemaProjectorException, match=f"Schema version required for {level}"):
            should_change(level, version(None), V1)  # type: ignore[arg-type]


def test_an_older_record_is_projected_to_the_current_schema() -> None:
    record = SinkRecord("t", 0, None, None, V1, Struct(V1).put("id", 7), kafka_offset=3)
    out = project("BACKWARD", record, V2)
    assert out.value_schema == V2 and out.value == Struct(V2).put("id", 7).put("note", "")
    assert (out.topic, out.kafka_offset) == ("t", 3)
    assert project("NONE", record, V2) is record
    assert project("BACKWARD", record, V1) is record
