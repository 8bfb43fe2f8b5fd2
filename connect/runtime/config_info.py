"""Config definitions and validation results in Kafka Connect's REST shapes.

``ConfigKeyInfo`` (``GET /connector-plugins/{p}/config``) and ``ConfigInfos``
(``PUT /connector-plugins/{p}/config/validate``) are derived from the pydantic
models: a field's alias is the key, its annotation the Kafka type, its description
the documentation, ``json_schema_extra`` (see ``connect.api.config.importance``) the
importance, group and width; ``Literal`` choices become recommended values.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo

from connect.api.config import ConfigIssue

HIDDEN = "[hidden]"


def _unwrap(annotation: Any) -> Any:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _unwrap(args[0]) if len(args) == 1 else annotation
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    return annotation


def kafka_type(f: FieldInfo) -> str:
    extra = f.json_schema_extra if isinstance(f.json_schema_extra, dict) else {}
    if extra.get("kafka_type"):
        return str(extra["kafka_type"])
    t = _unwrap(f.annotation)
    origin = typing.get_origin(t)
    if t is SecretStr:
        return "PASSWORD"
    if t is bool:
        return "BOOLEAN"
    if t is int:
        return "INT"
    if t is float:
        return "DOUBLE"
    if origin in (list, tuple, set) or t in (list, tuple, set):
        return "LIST"
    return "STRING"


def recommended(f: FieldInfo) -> list[str]:
    t = _unwrap(f.annotation)
    if typing.get_origin(t) is typing.Literal:
        return [str(a) for a in typing.get_args(t)]
    return []


def render(value: Any, type_name: str | None = None) -> str | None:
    """A value as Kafka shows it: lists comma-joined, booleans lower-case, passwords hidden."""
    if value is None:
        return None
    if type_name == "PASSWORD" or isinstance(value, SecretStr):
        return HIDDEN
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


@dataclass(slots=True)
class KeyDef:
    name: str
    type: str
    required: bool
    default: str | None
    importance: str
    documentation: str
    group: str | None
    order: int
    width: str
    display_name: str
    recommended: list[str] = field(default_factory=list)

    def info(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "required": self.required,
            "default_value": self.default,
            "importance": self.importance,
            "documentation": self.documentation,
            "group": self.group,
            "order": self.order,
            "width": self.width,
            "display_name": self.display_name,
            "dependents": [],
        }


def key_defs(model: type[BaseModel], prefix: str = "", group: str | None = None) -> list[KeyDef]:
    out = []
    for order, (name, f) in enumerate(model.model_fields.items(), start=1):
        extra = f.json_schema_extra if isinstance(f.json_schema_extra, dict) else {}
        key = prefix + (f.alias or name)
        typ = kafka_type(f)
        default = None if f.is_required() else f.get_default(call_default_factory=True)
        out.append(
            KeyDef(
                name=key,
                type=typ,
                required=f.is_required(),
                default=render(default, typ) if typ != "PASSWORD" else (None if default is None else HIDDEN),
                importance=str(extra.get("importance", "MEDIUM")),
                documentation=f.description or "",
                group=str(extra["group"]) if extra.get("group") else group,
                order=order,
                width=str(extra.get("width", "NONE")),
                display_name=str(extra.get("display_name", key)),
                recommended=recommended(f),
            )
        )
    return out


def synthetic(name: str, doc: str, group: str, required: bool = True, typ: str = "STRING") -> KeyDef:
    """A key that no model declares (``transforms.<alias>.type`` and friends)."""
    return KeyDef(name, typ, required, None, "HIGH", doc, group, 0, "LONG", name)


def config_infos(
    connector_class: str, defs: Sequence[KeyDef], values: Mapping[str, Any], issues: Sequence[ConfigIssue]
) -> dict[str, Any]:
    """Kafka's ``ConfigInfos`` body: every defined key with its value and errors."""
    by_key: dict[str, list[str]] = {}
    for issue in issues:
        by_key.setdefault(issue.key, []).append(issue.message)
    seen: set[str] = set()
    configs = []
    groups: list[str] = []
    for d in defs:
        if d.name in seen:
            continue
        seen.add(d.name)
        if d.group and d.group not in groups:
            groups.append(d.group)
        given = values.get(d.name, d.default)
        configs.append(
            {
                "definition": d.info(),
                "value": {
                    "name": d.name,
                    "value": HIDDEN if d.type == "PASSWORD" and given is not None else render(given),
                    "recommended_values": d.recommended,
                    "errors": by_key.get(d.name, []),
                    "visible": True,
                },
            }
        )
    # Problems with keys no definition covers still have to be reported.
    for key, messages in by_key.items():
        if key not in seen:
            seen.add(key)
            configs.append(
                {
                    "definition": synthetic(key, "", "Common").info(),
                    "value": {
                        "name": key,
                        "value": render(values.get(key)),
                        "recommended_values": [],
                        "errors": messages,
                        "visible": True,
                    },
                }
            )
    error_count = sum(len(c["value"]["errors"]) for c in configs)
    return {"name": connector_class, "error_count": error_count, "groups": groups, "configs": configs}
