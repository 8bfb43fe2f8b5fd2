"""The body of ``PATCH /connectors/{name}/offsets`` from a file, checked before sending.

The file has the shape ``GET /connectors/{name}/offsets`` returns (KIP-875), so the output
of ``sluiceway ctl get offsets NAME -o json`` can be edited and applied back::

    {"offsets": [{"partition": {"filename": "/data/in.txt"}, "offset": {"position": 0}}]}

A bare JSON list of entries is accepted too; ``"offset": null`` resets that partition.
"""

from __future__ import annotations

import json
from typing import Any

from sluiceway.ctl.errors import UsageError


def parse_offsets(text: str, source: str) -> dict[str, Any]:
    """The request body ``{"offsets": [...]}``; each entry is checked and named by position."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{source}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from None
    entries = doc.get("offsets") if isinstance(doc, dict) else doc
    if not isinstance(entries, list):
        raise UsageError(f'{source}: expected {{"offsets": [...]}} or a JSON list of offsets')
    if not entries:
        raise UsageError(f"{source}: the list of offsets is empty")
    for i, entry in enumerate(entries):
        where = f"{source}: offsets[{i}]"
        if not isinstance(entry, dict):
            raise UsageError(f"{where}: expected an object with 'partition' and 'offset'")
        extra = sorted(set(entry) - {"partition", "offset"})
        if extra:
            raise UsageError(f"{where}: unexpected key(s) {', '.join(extra)}")
        if not isinstance(entry.get("partition"), dict):
            raise UsageError(f"{where}: 'partition' must be a JSON object")
        if "offset" not in entry:
            raise UsageError(f"{where}: 'offset' is missing (use null to reset the partition)")
        if entry["offset"] is not None and not isinstance(entry["offset"], dict):
            raise UsageError(f"{where}: 'offset' must be a JSON object or null")
    return {"offsets": entries}
