"""The body of ``PATCH /connectors/{name}/config`` from ``--set KEY=VALUE`` and ``--unset KEY``.

A ``null`` value removes the key (Kafka 3.9+), so ``--unset`` sends null.
"""

from __future__ import annotations

from collections.abc import Sequence

from sluiceway.ctl.errors import UsageError


def parse_assignment(raw: str) -> tuple[str, str]:
    """``KEY=VALUE``: split at the first ``=`` (values may contain ``=``, keys do not)."""
    key, sep, value = raw.partition("=")
    key = key.strip()
    if not sep:
        raise UsageError(f"--set '{raw}': expected KEY=VALUE")
    if not key:
        raise UsageError(f"--set '{raw}': the key is empty")
    return key, value


def build_patch(sets: Sequence[str], unsets: Sequence[str]) -> dict[str, str | None]:
    patch: dict[str, str | None] = {}
    for raw in sets:
        key, value = parse_assignment(raw)
        patch[key] = value  # a repeated key: the last one wins, as with any repeated option
    for raw in unsets:
        key = raw.strip()
        if not key:
            raise UsageError("--unset: the key is empty")
        if key in patch and patch[key] is not None:
            raise UsageError(f"'{key}' is both set and unset")
        patch[key] = None
    if "name" in patch:
        raise UsageError("'name' cannot be patched: it is the connector's identity (apply a copy instead)")
    if not patch:
        raise UsageError("nothing to change: give --set KEY=VALUE and/or --unset KEY")
    return patch
