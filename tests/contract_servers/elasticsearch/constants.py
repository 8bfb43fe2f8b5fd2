"""Versions, limits and shard counts the contract server answers with."""

from __future__ import annotations

from pathlib import Path
from typing import Final

VERSION: Final = "8.15.0"
_LUCENE: Final = "9.11.1"
_VERSION_ID: Final = "8512000"
_SHARDS: Final = {"total": 2, "successful": 1, "failed": 0}
_NOOP_SHARDS: Final = {"total": 0, "successful": 0, "failed": 0}
_SEARCH_SHARDS: Final = {"total": 1, "successful": 1, "skipped": 0, "failed": 0}
_MAX_ID_BYTES: Final = 512
_MAX_INDEX_NAME_BYTES: Final = 255
_MAX_RESULT_WINDOW: Final = 10_000
_DEFAULT_TOTAL_FIELDS: Final = 1000
_DEFAULT_GC_DELETES_S: Final = 60.0
_MISSING: Final = object()
_ROOT = Path(__file__).resolve().parents[3]
