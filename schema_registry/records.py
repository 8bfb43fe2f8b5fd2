"""The records of the ``_schemas`` topic, in Confluent's format (``storage/*Key.java``,
``*Value.java``): JSON keys and values, so a registry of either kind can read the other's
topic.

A key's fields come in a fixed order, ``keytype`` first, ``magic`` last, and unset fields
are left out: the key's bytes are its compaction identity, so the same logical key must
always be written as the same bytes. A null value is a tombstone (a permanent delete, an
unset config or mode).

| keytype | key | value |
|---|---|---|
| SCHEMA | subject, version, magic 1 | subject, version, id, schemaType (not for AVRO), |
| | | references, schema, deleted |
| CONFIG | subject (none: global), magic 0 | compatibilityLevel |
| MODE | subject (none: global), magic 0 | mode |
| DELETE_SUBJECT | subject, magic 0 | subject, version: versions up to it are deleted |
| CLEAR_SUBJECT | subject, magic 0 | subject |
| NOOP | magic 0 | null (written to learn the end of the topic) |
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

__all__ = [
    "ClearSubjectKey",
    "ClearSubjectValue",
    "ConfigKey",
    "ConfigValue",
    "DeleteSubjectKey",
    "DeleteSubjectValue",
    "Key",
    "ModeKey",
    "ModeValue",
    "NoopKey",
    "RecordError",
    "Reference",
    "SchemaKey",
    "SchemaValue",
    "Value",
    "decode_key",
    "decode_value",
    "encode_key",
    "encode_value",
]


class RecordError(ValueError):
    """A record of the topic that is not in Confluent's format (skipped with a warning)."""


@dataclass(frozen=True, slots=True)
class Reference:
    """A schema's reference to another subject's version, named as the schema refers to it."""

    name: str
    subject: str
    version: int

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "subject": self.subject, "version": self.version}


@dataclass(frozen=True, slots=True)
class SchemaKey:
    subject: str
    version: int


@dataclass(frozen=True, slots=True)
class ConfigKey:
    subject: str | None  # None: the global config


@dataclass(frozen=True, slots=True)
class ModeKey:
    subject: str | None


@dataclass(frozen=True, slots=True)
class DeleteSubjectKey:
    subject: str


@dataclass(frozen=True, slots=True)
class ClearSubjectKey:
    subject: str


@dataclass(frozen=True, slots=True)
class NoopKey:
    pass


Key = SchemaKey | ConfigKey | ModeKey | DeleteSubjectKey | ClearSubjectKey | NoopKey


@dataclass(frozen=True, slots=True)
class SchemaValue:
    subject: str
    version: int
    id: int
    schema_type: str  # AVRO, JSON or PROTOBUF
    schema: str
    references: tuple[Reference, ...] = ()
    deleted: bool = False


@dataclass(frozen=True, slots=True)
class ConfigValue:
    compatibility_level: str


@dataclass(frozen=True, slots=True)
class ModeValue:
    mode: str


@dataclass(frozen=True, slots=True)
class DeleteSubjectValue:
    subject: str
    version: int


@dataclass(frozen=True, slots=True)
class ClearSubjectValue:
    subject: str


Value = SchemaValue | ConfigValue | ModeValue | DeleteSubjectValue | ClearSubjectValue


def encode_key(key: Key) -> bytes:
    out: dict[str, Any]
    match key:
        case SchemaKey(subject, version):
            out = {"keytype": "SCHEMA", "subject": subject, "version": version, "magic": 1}
        case ConfigKey(subject) | ModeKey(subject):
            out = {"keytype": "CONFIG" if isinstance(key, ConfigKey) else "MODE"}
            if subject is not None:
                out["subject"] = subject
            out["magic"] = 0
        case DeleteSubjectKey(subject) | ClearSubjectKey(subject):
            keytype = "DELETE_SUBJECT" if isinstance(key, DeleteSubjectKey) else "CLEAR_SUBJECT"
            out = {"keytype": keytype, "subject": subject, "magic": 0}
        case NoopKey():
            out = {"keytype": "NOOP", "magic": 0}
    return orjson.dumps(out)


def encode_value(value: Value | None) -> bytes | None:
    out: dict[str, Any]
    match value:
        case None:
            return None
        case SchemaValue():
            out = {"subject": value.subject, "version": value.version, "id": value.id}
            if value.schema_type != "AVRO":
                out["schemaType"] = value.schema_type
            if value.references:
                out["references"] = [r.to_json() for r in value.references]
            out["schema"] = value.schema
            out["deleted"] = value.deleted
        case ConfigValue(level):
            out = {"compatibilityLevel": level}
        case ModeValue(mode):
            out = {"mode": mode}
        case DeleteSubjectValue(subject, version):
            out = {"subject": subject, "version": version}
        case ClearSubjectValue(subject):
            out = {"subject": subject}
    return orjson.dumps(out)


def _load(raw: bytes, what: str) -> dict[str, Any]:
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise RecordError(f"{what} is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise RecordError(f"{what} is not a JSON object: {raw[:200]!r}")
    return data


def _str(data: dict[str, Any], field: str, what: str) -> str:
    value = data.get(field)
    if not isinstance(value, str):
        raise RecordError(f"{what} has no string {field!r}: {data}")
    return value


def _int(data: dict[str, Any], field: str, what: str) -> int:
    value = data.get(field)
    if not isinstance(value, int) or isinstance(value, bool):
        raise RecordError(f"{what} has no integer {field!r}: {data}")
    return value


def decode_key(raw: bytes) -> Key:
    data = _load(raw, "key")
    keytype = data.get("keytype")
    subject = data.get("subject")
    if subject is not None and not isinstance(subject, str):
        raise RecordError(f"key's subject is not a string: {data}")
    match keytype:
        case "SCHEMA":
            return SchemaKey(_str(data, "subject", "SCHEMA key"), _int(data, "version", "SCHEMA key"))
        case "CONFIG":
            return ConfigKey(subject)
        case "MODE":
            return ModeKey(subject)
        case "DELETE_SUBJECT":
            return DeleteSubjectKey(_str(data, "subject", "DELETE_SUBJECT key"))
        case "CLEAR_SUBJECT":
            return ClearSubjectKey(_str(data, "subject", "CLEAR_SUBJECT key"))
        case "NOOP":
            return NoopKey()
    raise RecordError(f"unknown keytype {keytype!r}: {data}")


def decode_value(key: Key, raw: bytes | None) -> Value | None:
    """The value of a record with this key (None: a tombstone, or a NOOP)."""
    if raw is None or isinstance(key, NoopKey):
        return None
    data = _load(raw, f"{type(key).__name__}'s value")
    match key:
        case SchemaKey():
            references = data.get("references") or []
            if not isinstance(references, list):
                raise RecordError(f"SCHEMA value's references are not a list: {data}")
            return SchemaValue(
                subject=_str(data, "subject", "SCHEMA value"),
                version=_int(data, "version", "SCHEMA value"),
                id=_int(data, "id", "SCHEMA value"),
                schema_type=data.get("schemaType") or "AVRO",
                schema=_str(data, "schema", "SCHEMA value"),
                references=tuple(
                    Reference(
                        _str(r, "name", "reference"),
                        _str(r, "subject", "reference"),
                        _int(r, "version", "reference"),
                    )
                    for r in references
                    if isinstance(r, dict)
                ),
                deleted=data.get("deleted") is True,
            )
        case ConfigKey():
            level = data.get("compatibilityLevel") or data.get("compatibility")
            if not isinstance(level, str):
                raise RecordError(f"CONFIG value has no compatibilityLevel: {data}")
            return ConfigValue(level)
        case ModeKey():
            return ModeValue(_str(data, "mode", "MODE value"))
        case DeleteSubjectKey():
            return DeleteSubjectValue(
                _str(data, "subject", "DELETE_SUBJECT value"), _int(data, "version", "DELETE_SUBJECT value")
            )
        case ClearSubjectKey():
            return ClearSubjectValue(_str(data, "subject", "CLEAR_SUBJECT value"))
    raise RecordError(f"no value format for {key}")
