"""Source offset storage in Kafka Connect's key/value format.

Keys are the JSON array ``["<connector>", {<source partition>}]`` and values the
JSON offset map, exactly the bytes Kafka Connect writes to its offsets topic; the
file store keeps the same bytes (as text) in a JSON file, replaced atomically on
every flush, so standalone offsets survive restarts and can move to a cluster.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson

from connect.api.errors import ConnectException
from connect.api.task import OffsetStorageReader

log = logging.getLogger(__name__)


def offset_key(connector: str, partition: Mapping[str, Any]) -> bytes:
    """The key bytes; partition fields sorted so equal partitions always give equal keys."""
    return orjson.dumps([connector, dict(partition)], option=orjson.OPT_SORT_KEYS)


def canonical_key(key: bytes) -> bytes:
    """Keys written by others (Kafka Connect's Java maps have no set order) in our form."""
    parsed = parse_key(key)
    return key if parsed is None else offset_key(*parsed)


def offset_value(offset: Mapping[str, Any] | None) -> bytes | None:
    return None if offset is None else orjson.dumps(dict(offset))


def parse_key(key: bytes) -> tuple[str, dict[str, Any]] | None:
    """(connector, partition) of an offsets key, or None if it is not one."""
    try:
        data = orjson.loads(key)
    except orjson.JSONDecodeError:
        return None
    if isinstance(data, list) and len(data) == 2 and isinstance(data[0], str) and isinstance(data[1], dict):
        return data[0], data[1]
    return None


class OffsetBackingStore:
    """Key/value bytes of source offsets; thread-safe."""

    def __init__(self) -> None:
        self._data: dict[bytes, bytes] = {}
        self._lock = threading.Lock()

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def refresh(self, timeout: float) -> bool:
        """Catch up with offsets others wrote (the offsets topic); True when done in time."""
        return True

    def get(self, keys: Iterable[bytes]) -> dict[bytes, bytes | None]:
        with self._lock:
            return {k: self._data.get(k) for k in keys}

    def set(self, values: Mapping[bytes, bytes | None]) -> None:
        with self._lock:
            for k, v in values.items():
                if v is None:
                    self._data.pop(k, None)
                else:
                    self._data[k] = v
            self._persist()

    def items(self) -> list[tuple[bytes, bytes]]:
        with self._lock:
            return list(self._data.items())

    def _persist(self) -> None:
        """Called with the lock held after every change (the file store writes here)."""


class MemoryOffsetBackingStore(OffsetBackingStore):
    pass


class FileOffsetBackingStore(OffsetBackingStore):
    """``offset.storage.file.filename``: JSON ``{key: value}`` of the offset bytes as text."""

    def __init__(self, path: str | Path) -> None:
        super().__init__()
        self.path = Path(path)

    def start(self) -> None:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return
        try:
            data = orjson.loads(raw) if raw.strip() else {}
        except orjson.JSONDecodeError as exc:
            raise ConnectException(f"offset file {self.path} is not valid JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise ConnectException(f"offset file {self.path} does not hold a JSON object")
        with self._lock:
            self._data = {
                canonical_key(k.encode()): v.encode() for k, v in data.items() if isinstance(v, str)
            }

    def _persist(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        payload = orjson.dumps(
            {k.decode(): v.decode() for k, v in sorted(self._data.items())}, option=orjson.OPT_INDENT_2
        )
        with open(tmp, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)
        with contextlib.suppress(OSError):
            dfd = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)


class ConnectorOffsetReader(OffsetStorageReader):
    """One connector's view of the offsets (what its tasks and ``alter_offsets`` see)."""

    def __init__(self, store: OffsetBackingStore, connector: str) -> None:
        self.store = store
        self.connector = connector

    def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        key = offset_key(self.connector, partition)
        raw = self.store.get([key]).get(key)
        if raw is None:
            return None
        value = orjson.loads(raw)
        return value if isinstance(value, dict) else None

    def all(self) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """Every (partition, offset) of this connector."""
        out = []
        for k, v in self.store.items():
            parsed = parse_key(k)
            if parsed is not None and parsed[0] == self.connector:
                value = orjson.loads(v)
                if isinstance(value, dict):
                    out.append((parsed[1], value))
        return out


class OffsetStorageWriter:
    """Writes one connector's committable offsets to the store."""

    def __init__(self, store: OffsetBackingStore, connector: str) -> None:
        self.store = store
        self.connector = connector

    def write(self, offsets: Iterable[tuple[Mapping[str, Any], Mapping[str, Any] | None]]) -> int:
        values = {offset_key(self.connector, p): offset_value(o) for p, o in offsets}
        if values:
            self.store.set(values)
        return len(values)


class LayeredOffsetBackingStore(OffsetBackingStore):
    """A connector's own offsets topic (``offsets.storage.topic``, KIP-618) over the worker's.

    Reads prefer the connector's store and fall back to the worker's, so a connector
    moved to its own topic resumes from what it committed before; writes go to the
    connector's store and then to the worker's too, so moving it back loses nothing.
    The connector's store is started and stopped with this one; the worker's is not
    (the worker owns it).
    """

    def __init__(self, primary: OffsetBackingStore, secondary: OffsetBackingStore) -> None:
        super().__init__()
        self.primary = primary
        self.secondary = secondary

    def start(self) -> None:
        self.primary.start()

    def stop(self) -> None:
        self.primary.stop()

    def refresh(self, timeout: float) -> bool:
        return self.primary.refresh(timeout) and self.secondary.refresh(timeout)

    def get(self, keys: Iterable[bytes]) -> dict[bytes, bytes | None]:
        wanted = list(keys)
        found = self.primary.get(wanted)
        missing = [k for k, v in found.items() if v is None]
        if missing:
            found.update(self.secondary.get(missing))
        return found

    def set(self, values: Mapping[bytes, bytes | None]) -> None:
        self.primary.set(values)
        try:
            self.secondary.set(values)
        except ConnectException as exc:
            # The connector's own topic has them: that is what it resumes from.
            log.warning("offsets written to the connector's topic but not to the worker's: %s", exc)

    def items(self) -> list[tuple[bytes, bytes]]:
        merged = dict(self.secondary.items())
        merged.update(self.primary.items())
        return list(merged.items())
