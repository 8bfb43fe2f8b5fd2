"""File operations on a table's Hadoop filesystem, through the SparkSession's JVM.

The sink publishes files itself (renames, commit manifests), and it must do so on the
same filesystem Spark writes: a local path, HDFS, S3A or whatever ``table.path``'s
scheme names. Hadoop's ``FileSystem`` of the session's configuration is that
filesystem, so every operation goes through it rather than through Python's ``os``.

Semantics relied on: ``rename`` of a file onto an existing file returns False and
changes nothing (HDFS and the local filesystem both), which makes "write to a temporary
name, rename into place" an exclusive, atomic create of the final name.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass(frozen=True, slots=True)
class Entry:
    """A file or directory, by its path relative to the filesystem root we were given."""

    path: str
    is_dir: bool
    size: int

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]


class HadoopFs:
    """Operations under one root (the table's directory), paths relative to it."""

    def __init__(self, spark: SparkSession, root: str) -> None:
        jvm: Any = spark._jvm
        self._Path = jvm.org.apache.hadoop.fs.Path
        raw = self._Path(root)
        self._fs = raw.getFileSystem(spark._jsc.hadoopConfiguration())
        self._root = self._fs.makeQualified(raw)
        self.root = str(self._root.toString())

    def _p(self, rel: str) -> Any:
        return self._Path(self._root, rel) if rel else self._root

    def exists(self, rel: str) -> bool:
        return bool(self._fs.exists(self._p(rel)))

    def mkdirs(self, rel: str) -> None:
        self._fs.mkdirs(self._p(rel))

    def list(self, rel: str) -> list[Entry]:
        """The entries directly under ``rel`` (empty when it does not exist)."""
        path = self._p(rel)
        if not self._fs.exists(path):
            return []
        prefix = f"{rel}/" if rel else ""
        return [
            Entry(prefix + str(s.getPath().getName()), bool(s.isDirectory()), int(s.getLen()))
            for s in self._fs.listStatus(path)
        ]

    def walk_files(self, rel: str) -> Iterator[Entry]:
        """Every file under ``rel``, recursively."""
        stack = [rel]
        while stack:
            for entry in self.list(stack.pop()):
                if entry.is_dir:
                    stack.append(entry.path)
                else:
                    yield entry

    def rename(self, src: str, dst: str) -> bool:
        """Move ``src`` to ``dst`` (creating ``dst``'s parents); False if ``dst`` exists
        or ``src`` does not."""
        target = self._p(dst)
        parent = target.getParent()
        if parent is not None and not self._fs.exists(parent):
            self._fs.mkdirs(parent)
        try:
            return bool(self._fs.rename(self._p(src), target))
        except Exception as exc:  # py4j wraps FileNotFoundException of a vanished source
            if "java.io.FileNotFoundException" in str(exc):
                return False
            raise

    def delete(self, rel: str, recursive: bool = False) -> None:
        self._fs.delete(self._p(rel), recursive)

    def read_text(self, rel: str) -> str:
        stream = self._fs.open(self._p(rel))
        try:
            return bytes(stream.readAllBytes()).decode("utf-8")
        finally:
            stream.close()

    def create_exclusive(self, rel: str, text: str) -> bool:
        """Write ``text`` to ``rel`` unless ``rel`` exists: written under a temporary
        name, then renamed into place, so readers never see a partial file and of two
        writers racing for the same name exactly one wins. True if this call wrote it."""
        tmp = f"{rel.rsplit('/', 1)[0]}/.{uuid.uuid4().hex}.tmp" if "/" in rel else f".{uuid.uuid4().hex}.tmp"
        self._write(tmp, text)
        if self.rename(tmp, rel):
            return True
        self.delete(tmp)
        return False

    def _write(self, rel: str, text: str) -> None:
        out = self._fs.create(self._p(rel), True)
        try:
            out.write(bytearray(text.encode("utf-8")))
            out.hsync()
        finally:
            out.close()
