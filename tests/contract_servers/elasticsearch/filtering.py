"""The Elasticsearch contract server: response filtering (filter_path)."""

from __future__ import annotations

import fnmatch
from typing import Any

from tests.contract_servers.elasticsearch.constants import _MISSING


def _filter_path(value: Any, spec: str) -> Any:
    includes = [p.split(".") for p in spec.split(",") if p and not p.startswith("-")]
    excludes = [p[1:].split(".") for p in spec.split(",") if p.startswith("-")]
    if includes:
        value = _filter_include(value, includes)
        if value is _MISSING:
            value = {}
    if excludes:
        value = _filter_exclude(value, excludes)
    return value


def _matches(key: str, pattern: str) -> bool:
    # Plain names and "*" need no glob machinery (they are nearly all of them, and a bulk
    # answer filters thousands of items).
    if pattern == "*":
        return True
    if "*" not in pattern and "?" not in pattern and "[" not in pattern:
        return key == pattern
    return fnmatch.fnmatchcase(key, pattern)


def _advance(key: str, patterns: list[list[str]]) -> tuple[bool, list[list[str]]]:
    full = False
    rest: list[list[str]] = []
    for pattern in patterns:
        head = pattern[0]
        if head == "**":
            rest.append(pattern)
            if len(pattern) == 1:
                full = True
            elif _matches(key, pattern[1]):
                if len(pattern) == 2:
                    full = True
                else:
                    rest.append(pattern[2:])
        elif _matches(key, head):
            if len(pattern) == 1:
                full = True
            else:
                rest.append(pattern[1:])
    return full, rest


def _filter_include(value: Any, patterns: list[list[str]]) -> Any:
    if isinstance(value, list):
        kept = [v for v in (_filter_include(item, patterns) for item in value) if v is not _MISSING]
        return kept if kept else _MISSING
    if not isinstance(value, dict):
        return _MISSING
    out: dict[str, Any] = {}
    for key, child in value.items():
        full, rest = _advance(key, patterns)
        if full:
            out[key] = child
        elif rest:
            sub = _filter_include(child, rest)
            if sub is not _MISSING:
                out[key] = sub
    return out if out else _MISSING


def _filter_exclude(value: Any, patterns: list[list[str]]) -> Any:
    if isinstance(value, list):
        return [_filter_exclude(item, patterns) for item in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, child in value.items():
        full, rest = _advance(key, patterns)
        if full:
            continue
        out[key] = _filter_exclude(child, rest) if rest else child
    return out
