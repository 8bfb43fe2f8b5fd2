"""Connector configs from files: Java ``.properties`` or JSON, as ``apply``/``validate`` read them.

Accepted shapes (the ones Kafka Connect users already have):

- ``.properties``: ``name=...``, ``connector.class=...`` (what ``connect-standalone`` takes);
- JSON ``{"name": "...", "config": {...}}`` (the body of ``POST /connectors``);
- JSON flat config ``{"name": "...", "connector.class": "...", ...}`` (the body of
  ``PUT /connectors/{name}/config``).

Values become strings as the REST API stores them; JSON booleans are written the Java
way (``true``/``false``). Every error names the file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from jproperties import Properties

from sluiceway.ctl.errors import UsageError

Format = Literal["json", "properties"]


@dataclass(frozen=True, slots=True)
class ConnectorFile:
    """A connector's name and flat string config (``config["name"] == name``)."""

    name: str
    config: dict[str, str]
    source: str


def detect_format(source: str, text: str) -> Format:
    """By extension; for stdin or other names, JSON when the text starts with ``{``."""
    lowered = source.lower()
    if lowered.endswith(".json"):
        return "json"
    if lowered.endswith((".properties", ".props", ".conf")):
        return "properties"
    return "json" if text.lstrip().startswith("{") else "properties"


def parse_properties(text: str, source: str) -> dict[str, str]:
    props = Properties()
    try:
        props.load(text, "utf-8")
    except Exception as exc:  # jproperties raises its ParseError (and others) on bad escapes
        raise UsageError(f"{source}: not a valid .properties file: {exc}") from None
    return {str(k): str(v) for k, (v, _meta) in props.items()}


def _string_value(value: Any, key: str, source: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):  # before int: bool is an int
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if value is None:
        raise UsageError(f"{source}: the value of '{key}' is null; give a string or leave the key out")
    raise UsageError(f"{source}: the value of '{key}' must be a string, not a JSON {type(value).__name__}")


def _string_map(raw: dict[str, Any], source: str) -> dict[str, str]:
    return {k: _string_value(v, k, source) for k, v in raw.items()}


def parse_json_config(text: str, source: str) -> tuple[str | None, dict[str, str]]:
    """(name given in the file or None, config) of either JSON shape."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{source}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from None
    if not isinstance(doc, dict):
        raise UsageError(f"{source}: expected a JSON object, not a JSON {type(doc).__name__}")
    if isinstance(doc.get("config"), dict):
        extra = sorted(set(doc) - {"name", "config"})
        if extra:
            raise UsageError(f"{source}: unexpected key(s) {', '.join(extra)} beside 'name' and 'config'")
        config = _string_map(doc["config"], source)
        outer = doc.get("name")
        if outer is not None and not isinstance(outer, str):
            raise UsageError(f"{source}: 'name' must be a string")
        inner = config.get("name")
        if outer is not None and inner is not None and outer != inner:
            raise UsageError(f"{source}: 'name' ({outer}) differs from the name in 'config' ({inner})")
        return outer if outer is not None else inner, config
    if "config" in doc:
        raise UsageError(f"{source}: 'config' must be a JSON object of strings")
    config = _string_map(doc, source)
    return config.get("name"), config


def parse_config(
    text: str, source: str, name_override: str | None = None, fmt: Format | None = None
) -> tuple[str | None, dict[str, str]]:
    """(name or None, config) of a connector file; ``name_override`` (``--name``) wins.

    The config has ``name`` set whenever a name is known.
    """
    kind = fmt or detect_format(source, text)
    if kind == "json":
        name, config = parse_json_config(text, source)
    else:
        config = parse_properties(text, source)
        name = config.get("name")
    if name_override is not None:
        name = name_override
    if not config or set(config) == {"name"}:
        raise UsageError(f"{source}: the file holds no connector configuration")
    if name is not None:
        name = name.strip()
        config = {**config, "name": name}
    return name, config


def parse_connector(
    text: str, source: str, name_override: str | None = None, fmt: Format | None = None
) -> ConnectorFile:
    """A connector file that must name its connector (what ``apply`` needs)."""
    name, config = parse_config(text, source, name_override, fmt)
    if name is None:
        raise UsageError(f"{source}: no connector name: set 'name' in the file or pass --name")
    if not name:
        raise UsageError(f"{source}: the connector name is empty")
    if "/" in name:
        raise UsageError(f"{source}: the connector name '{name}' must not contain '/'")
    return ConnectorFile(name, config, source)
