"""The table's schema, versioned in ``_sluiceway/schema/<version>.json``.

Every batch is conformed to this schema, so all files of the table agree on each
column's type whatever each batch looked like (schemaless JSON infers types per batch).
A batch that brings new columns writes the next version, created exclusively: when
tasks evolve the schema at the same time, the loser reloads the winner's version,
merges again and retries, so no column is ever lost or retyped.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable

import pyarrow as pa

from connect.api import ConnectException
from spark_sink.hadoop_fs import HadoopFs
from spark_sink.table_log import SCHEMAS

_WIDTH = 10


class SchemaStore:
    def __init__(self, fs: HadoopFs) -> None:
        self.fs = fs
        self.version = 0
        self.schema: pa.Schema | None = None

    def load(self) -> pa.Schema | None:
        """The newest stored schema (None for a table we have never written)."""
        versions = sorted(e.path for e in self.fs.list(SCHEMAS) if e.name.endswith(".json"))
        if not versions:
            return self.schema
        newest = versions[-1]
        try:
            data = json.loads(self.fs.read_text(newest))
            schema = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(data["arrow"])))
        except (ValueError, KeyError, pa.ArrowInvalid) as exc:
            raise ConnectException(f"The table schema {self.fs.root}/{newest} is unreadable: {exc}") from None
        self.version = int(newest.rsplit("/", 1)[-1].split(".")[0])
        self.schema = schema
        return schema

    def evolve(self, change: Callable[[pa.Schema | None], pa.Schema]) -> pa.Schema:
        """Apply ``change`` to the current schema and store the result as the next
        version, retrying on a newer version written meanwhile. Returns the schema."""
        for _ in range(100):
            wanted = change(self.schema)
            if self.schema is not None and wanted.equals(self.schema):
                return self.schema
            text = json.dumps(
                {
                    "arrow": base64.b64encode(wanted.serialize().to_pybytes()).decode(),
                    "columns": [f"{f.name}: {f.type}" for f in wanted],
                },
                indent=2,
            )
            if self.fs.create_exclusive(f"{SCHEMAS}/{self.version + 1:0{_WIDTH}d}.json", text):
                self.version += 1
                self.schema = wanted
                return wanted
            self.load()  # another task evolved the table first: merge onto its version
        raise ConnectException(f"Could not store a new schema version of {self.fs.root}: too much contention")
