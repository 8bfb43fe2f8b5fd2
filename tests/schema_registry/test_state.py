"""RegistryState: what a sequence of ``_schemas`` records means (pure)."""

from __future__ import annotations

from schema_registry.records import (
    ConfigKey,
    ConfigValue,
    DeleteSubjectKey,
    DeleteSubjectValue,
    ModeKey,
    ModeValue,
    NoopKey,
    Reference,
    SchemaKey,
    SchemaValue,
)
from schema_registry.state import RegistryState


def schema(
    subject: str, version: int, schema_id: int, text: str = '"string"', deleted: bool = False
) -> SchemaValue:
    return SchemaValue(subject, version, schema_id, "AVRO", text, (), deleted)


def test_versions_ids_and_soft_deletes() -> None:
    state = RegistryState()
    state.apply(SchemaKey("a", 1), schema("a", 1, 1))
    state.apply(SchemaKey("a", 2), schema("a", 2, 2, '"int"'))
    state.apply(SchemaKey("b", 1), schema("b", 1, 1))
    state.apply(NoopKey(), None)
    assert state.subjects() == ["a", "b"]
    assert [e.version for e in state.versions("a")] == [1, 2]
    assert state.max_id == 2
    assert state.id_of(("AVRO", '"string"', ())) == 1
    assert [(e.subject, e.version) for e in state.with_id(1)] == [("a", 1), ("b", 1)]

    state.apply(SchemaKey("a", 1), schema("a", 1, 1, deleted=True))
    assert [e.version for e in state.versions("a")] == [2]
    assert [e.version for e in state.versions("a", deleted=True)] == [1, 2]
    assert state.schema(1) is not None  # soft-deleted versions keep their ids

    state.apply(DeleteSubjectKey("a"), DeleteSubjectValue("a", 2))
    assert state.subjects() == ["b"]
    assert state.subjects(deleted=True) == ["a", "b"]
    assert state.subjects(deleted_only=True) == ["a"]
    assert state.max_version("a") == 2


def test_permanent_deletes_drop_versions_and_ids_no_version_carries() -> None:
    state = RegistryState()
    state.apply(SchemaKey("a", 1), schema("a", 1, 1))
    state.apply(SchemaKey("b", 1), schema("b", 1, 1))
    state.apply(SchemaKey("a", 2), schema("a", 2, 2, '"int"'))
    state.apply(SchemaKey("a", 1), None)
    assert state.schema(1) is not None  # b still carries it
    state.apply(SchemaKey("b", 1), None)
    assert state.schema(1) is None and state.id_of(("AVRO", '"string"', ())) is None
    assert not state.has_subject("b")
    assert state.max_id == 2  # ids never go back


def test_configs_modes_and_references() -> None:
    state = RegistryState()
    state.apply(ConfigKey(None), ConfigValue("full"))
    state.apply(ConfigKey("a"), ConfigValue("NONE"))
    state.apply(ModeKey("a"), ModeValue("READONLY"))
    assert state.configs == {None: "FULL", "a": "NONE"}
    state.apply(ConfigKey("a"), None)
    state.apply(ModeKey("a"), None)
    assert state.configs == {None: "FULL"} and state.modes == {}

    state.apply(SchemaKey("addr", 1), schema("addr", 1, 1))
    ref = Reference("Addr", "addr", 1)
    state.apply(SchemaKey("cust", 1), SchemaValue("cust", 1, 2, "AVRO", '"x"', (ref,)))
    assert state.referenced_by("addr", 1) == [2]
    state.apply(SchemaKey("cust", 1), SchemaValue("cust", 1, 2, "AVRO", '"x"', (ref,), True))
    assert state.referenced_by("addr", 1) == []
