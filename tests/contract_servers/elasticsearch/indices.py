"""The Elasticsearch contract server: indices, data streams and templates."""

from __future__ import annotations

import base64
import fnmatch
import os
import re
import time
from typing import TYPE_CHECKING, Any

from tests.contract_servers.elasticsearch.constants import (
    _DEFAULT_GC_DELETES_S,
    _DEFAULT_TOTAL_FIELDS,
    _MAX_INDEX_NAME_BYTES,
    _VERSION_ID,
)
from tests.contract_servers.elasticsearch.errors import EsError, _illegal
from tests.contract_servers.elasticsearch.mappings import _MapOpts, _Mapping

if TYPE_CHECKING:
    from tests.contract_servers.elasticsearch.documents import _Doc


def _new_uuid() -> str:
    return base64.urlsafe_b64encode(os.urandom(16)).rstrip(b"=").decode()


def _setting_text(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return [_setting_text(v) for v in value]
    if value is None:
        return None
    return str(value)


def _flatten_settings(settings: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(settings, dict):
        raise EsError(400, "settings_exception", "Failed to load settings from [settings]")
    out: dict[str, Any] = {}
    for key, value in settings.items():
        if isinstance(value, dict):
            out.update(_flatten_settings(value, f"{prefix}{key}."))
        else:
            full = f"{prefix}{key}"
            out[full if full.startswith("index.") else "index." + full] = _setting_text(value)
    return out


def _nest_settings(flat: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in flat.items():
        node = out
        parts = key.split(".")
        for part in parts[:-1]:
            nxt = node.setdefault(part, {})
            if not isinstance(nxt, dict):
                break
            node = nxt
        else:
            node[parts[-1]] = value
    return out


def _time_setting_seconds(text: str) -> float:
    match = re.fullmatch(r"(-?\d+(?:\.\d+)?)(nanos|micros|ms|s|m|h|d)?", text.strip())
    if not match:
        raise _illegal(f"failed to parse setting [index.gc_deletes] with value [{text}] as a time value")
    scale = {"nanos": 1e-9, "micros": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600, "d": 86400}
    return float(match.group(1)) * scale[match.group(2) or "ms"]


def _validate_index_name(name: str) -> None:
    def bad(why: str) -> EsError:
        return EsError(
            400,
            "invalid_index_name_exception",
            f"Invalid index name [{name}], {why}",
            extra={"index_uuid": "_na_", "index": name},
        )

    if any(ch in name for ch in '\\/*?"<>| ,'):
        raise bad('must not contain the following characters [ , ", *, \\, <, |, ,, >, /, ?]')
    if not name:
        raise bad("must not be empty")
    if "#" in name:
        raise bad("must not contain '#'")
    if ":" in name:
        raise bad("must not contain ':'")
    if name[0] in "_-+":
        raise bad("must not start with '_', '-', or '+'")
    size = len(name.encode())
    if size > _MAX_INDEX_NAME_BYTES:
        raise bad(f"index name is too long, ({size} > {_MAX_INDEX_NAME_BYTES})")
    if name in (".", ".."):
        raise bad("must not be '.' or '..'")
    if name.lower() != name:
        raise bad("must be lowercase")


class _Index:
    def __init__(
        self, name: str, settings: dict[str, Any], mapping: _Mapping, data_stream: str | None
    ) -> None:
        self.name = name
        self.uuid = _new_uuid()
        self.created_ms = int(time.time() * 1000)
        self.data_stream = data_stream
        self.docs: dict[str, _Doc] = {}
        self.tombstones: dict[str, tuple[int, int, float]] = {}
        self.seq_no = -1
        self.settings: dict[str, Any] = {
            "index.number_of_shards": "1",
            "index.number_of_replicas": "1",
            "index.routing.allocation.include._tier_preference": "data_content",
            **settings,
            "index.provided_name": name,
            "index.creation_date": str(self.created_ms),
            "index.uuid": self.uuid,
            "index.version.created": _VERSION_ID,
        }
        self.mapping = mapping
        self.opts = _MapOpts()
        self.total_fields_limit = _DEFAULT_TOTAL_FIELDS
        self.ignore_dynamic_beyond_limit = False
        self.gc_deletes = _DEFAULT_GC_DELETES_S
        self.apply_settings()
        self.field_count = mapping.field_count()

    def apply_settings(self) -> None:
        flat = self.settings
        self.opts = _MapOpts(
            ignore_malformed=flat.get("index.mapping.ignore_malformed") == "true",
            coerce=flat.get("index.mapping.coerce", "true") != "false",
        )
        try:
            self.total_fields_limit = int(flat.get("index.mapping.total_fields.limit", _DEFAULT_TOTAL_FIELDS))
        except ValueError:
            raise _illegal("Failed to parse value for setting [index.mapping.total_fields.limit]") from None
        self.ignore_dynamic_beyond_limit = (
            flat.get("index.mapping.total_fields.ignore_dynamic_beyond_limit") == "true"
        )
        self.gc_deletes = _time_setting_seconds(str(flat.get("index.gc_deletes", "60s")))
        shards = flat.get("index.number_of_shards", "1")
        if not str(shards).isdigit() or not 1 <= int(shards) <= 1024:
            raise _illegal(
                f"Failed to parse value [{shards}] for setting [index.number_of_shards] must be >= 1"
            )

    def next_seq(self) -> int:
        self.seq_no += 1
        return self.seq_no

    def tombstone(self, doc_id: str, now: float) -> tuple[int, int, float] | None:
        """A delete is remembered for ``index.gc_deletes`` (versions continue from it)."""
        entry = self.tombstones.get(doc_id)
        if entry is not None and now - entry[2] > self.gc_deletes:
            del self.tombstones[doc_id]
            return None
        return entry

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "aliases": {},
            "mappings": self.mapping.render(),
            "settings": _nest_settings(self.settings),
        }
        if self.data_stream is not None:
            out["data_stream"] = self.data_stream
        return out


class _Template:
    def __init__(self, name: str, body: dict[str, Any], builtin: bool = False) -> None:
        self.name = name
        self.body = body
        self.builtin = builtin
        patterns = body.get("index_patterns")
        self.patterns: list[str] = [patterns] if isinstance(patterns, str) else list(patterns or [])
        self.priority = int(body.get("priority") or 0)
        self.data_stream = body.get("data_stream")
        self.composed_of: list[str] = list(body.get("composed_of") or [])
        self.ignore_missing: list[str] = list(body.get("ignore_missing_component_templates") or [])

    def matches(self, name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self.patterns)


class _DataStream:
    def __init__(self, name: str, template: str) -> None:
        self.name = name
        self.template = template
        self.indices: list[_Index] = []
        self.generation = 0

    @property
    def write_index(self) -> _Index:
        return self.indices[-1]

    def describe(self, meta: Any) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "timestamp_field": {"name": "@timestamp"},
            "indices": [
                {"index_name": i.name, "index_uuid": i.uuid, "prefer_ilm": True, "managed_by": "Unmanaged"}
                for i in self.indices
            ],
            "generation": self.generation,
            "status": "GREEN",
            "template": self.template,
            "next_generation_managed_by": "Unmanaged",
            "prefer_ilm": True,
            "hidden": False,
            "system": False,
            "allow_custom_routing": False,
            "replicated": False,
            "rollover_on_write": False,
        }
        if meta is not None:
            out["_meta"] = meta
        return out


def _builtin_components() -> dict[str, dict[str, Any]]:
    """Simplified versions of the component templates behind Elasticsearch's built-in data
    stream templates: what matters to a writer (field types, strings as keywords, no date
    detection, lenient logs) is kept; lifecycle and pipelines beyond ``@timestamp`` are not."""

    def kind_mappings(kind: str) -> dict[str, Any]:
        return {
            "date_detection": False,
            "properties": {
                "@timestamp": {"type": "date"},
                "data_stream": {
                    "properties": {
                        "type": {"type": "constant_keyword", "value": kind},
                        "dataset": {"type": "constant_keyword"},
                        "namespace": {"type": "constant_keyword"},
                    }
                },
            },
        }

    ecs_templates = [
        {"ecs_timestamp": {"match": "@timestamp", "mapping": {"type": "date", "ignore_malformed": False}}},
        {
            "ecs_message_match_only_text": {
                "path_match": ["message", "*.message"],
                "unmatch_mapping_type": "object",
                "mapping": {"type": "match_only_text"},
            }
        },
        {
            "ecs_ip": {
                "path_match": ["ip", "*.ip", "*_ip"],
                "match_mapping_type": "string",
                "mapping": {"type": "ip"},
            }
        },
        {
            "all_strings_to_keywords": {
                "match_mapping_type": "string",
                "mapping": {"type": "keyword", "ignore_above": 1024},
            }
        },
    ]
    beyond_limit = {"index": {"mapping": {"total_fields": {"ignore_dynamic_beyond_limit": True}}}}
    out: dict[str, dict[str, Any]] = {
        "data-streams@mappings": {"template": {"mappings": {"properties": {"@timestamp": {"type": "date"}}}}},
        "ecs@mappings": {"template": {"mappings": {"dynamic_templates": ecs_templates}}},
        "logs@settings": {
            "template": {
                "settings": {
                    "index": {
                        "lifecycle": {"name": "logs"},
                        "codec": "best_compression",
                        "default_pipeline": "logs@default-pipeline",
                        "mapping": {
                            "ignore_malformed": True,
                            "total_fields": {"ignore_dynamic_beyond_limit": True},
                        },
                    }
                }
            }
        },
        "metrics@settings": {"template": {"settings": {**beyond_limit, "index.lifecycle.name": "metrics"}}},
        "traces@settings": {"template": {"settings": {"index.lifecycle.name": "traces"}}},
        "synthetics@settings": {"template": {"settings": {"index.lifecycle.name": "synthetics"}}},
    }
    for kind in ("logs", "metrics", "traces", "synthetics"):
        out[f"{kind}@mappings"] = {"template": {"mappings": kind_mappings(kind)}}
    return out


def _builtin_templates() -> dict[str, _Template]:
    out: dict[str, _Template] = {}
    for kind in ("logs", "metrics", "traces", "synthetics"):
        body = {
            "index_patterns": [f"{kind}-*-*"],
            "priority": 100,
            "data_stream": {"hidden": False, "allow_custom_routing": False},
            "composed_of": [f"{kind}@mappings", f"{kind}@settings", f"{kind}@custom", "ecs@mappings"],
            "ignore_missing_component_templates": [f"{kind}@custom"],
            "allow_auto_create": True,
            "_meta": {"description": f"default {kind} template installed by x-pack", "managed": True},
        }
        out[kind] = _Template(kind, body, builtin=True)
    return out


def _expand_mapping_props(defn: dict[str, Any]) -> dict[str, Any]:
    """Dotted property names as nested objects, so template layers merge field by field."""
    props = defn.get("properties")
    if not isinstance(props, dict):
        return defn
    expanded: dict[str, Any] = {}
    for key, value in props.items():
        parts = key.split(".")
        node = expanded
        for part in parts[:-1]:
            holder = node.setdefault(part, {"properties": {}})
            node = holder.setdefault("properties", {})
        node[parts[-1]] = _expand_mapping_props(value) if isinstance(value, dict) else value
    return {**defn, "properties": expanded}


def _merge_mapping_layers(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        if key == "properties" and isinstance(value, dict) and isinstance(out.get("properties"), dict):
            props = dict(out["properties"])
            for name, defn in value.items():
                old = props.get(name)
                if (
                    isinstance(old, dict)
                    and isinstance(defn, dict)
                    and "properties" in old
                    and "properties" in defn
                ):
                    props[name] = _merge_mapping_layers(old, defn)
                else:
                    props[name] = defn
            out["properties"] = props
        elif key == "dynamic_templates" and isinstance(value, list) and isinstance(out.get(key), list):
            names = {next(iter(t)) for t in value if isinstance(t, dict) and t}
            out[key] = [
                t for t in out[key] if not (isinstance(t, dict) and t and next(iter(t)) in names)
            ] + value
        else:
            out[key] = value
    return out
