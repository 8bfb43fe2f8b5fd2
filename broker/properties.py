"""Java ``.properties`` files, parsed by jproperties (escapes, continuations, ``=``/``:``/space)."""

from __future__ import annotations

from pathlib import Path

from jproperties import Properties


class PropertiesError(Exception):
    pass


def load_properties(path: str | Path) -> dict[str, str]:
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise PropertiesError(f"{p}: cannot read: {exc.strerror}") from exc
    props = Properties()
    try:
        props.load(raw, "utf-8")
    except Exception as exc:  # jproperties raises ParseError and UnicodeDecodeError
        raise PropertiesError(f"{p}: {exc}") from exc
    return {k: v for k, (v, _meta) in props.items()}


def parse_overrides(items: list[str]) -> dict[str, str]:
    """``key=value`` strings from ``--override`` flags."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise PropertiesError(f"--override {item!r}: expected key=value")
        out[key.strip()] = value
    return out
