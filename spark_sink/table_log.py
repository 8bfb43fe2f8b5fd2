"""The table's commit log: what makes the Spark sink exactly once with plain readers.

A table directory holds data files any Spark reader lists, and a hidden ``_sluiceway``
directory (Hadoop and Spark skip names starting with ``_`` or ``.``)::

    <table>/part-orders+0+00000000000000000000+00000000000000049999-00000.snappy.parquet
    <table>/account=7/part-orders+1+...                   (with partition.by)
    <table>/_sluiceway/staging/<task>/<batch>/...          Spark's output, not yet published
    <table>/_sluiceway/commits/orders+0/00000000000000050000.json   one manifest per range
    <table>/_sluiceway/schema/0000000003.json              the table schema, versioned

A flush of a task is one Spark job writing into a staging directory. Then, per topic
partition, the task writes a *manifest* naming the offset range [start, end] and the
staged files with their final names (``part-<topic>+<partition>+<start>+<end>-<n>``),
created exclusively under the name of its start offset, and renames the files into
place. The manifest is the commit point:

- a crash before the manifest exists leaves only staging files (deleted on restart);
  the range is consumed again and written again;
- a crash after it rolls forward on restart: files still staged are renamed, files
  already in place are left alone (renames are idempotent by final name);
- the consumer position of a partition is the end of its newest manifest plus one,
  handed to the consumer with ``context.offset()`` when the partition is opened, so the
  table, not the consumer group, decides where to resume;
- two writers of the same range (a zombie task after a rebalance) race for the same
  manifest name; exactly one wins, the other discards its files.

Only the newest manifest of a partition is kept once its files are in place.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass

from connect.api import ConnectException
from connect.api.records import TopicPartition
from spark_sink.hadoop_fs import HadoopFs

log = logging.getLogger(__name__)

LOG_DIR = "_sluiceway"
COMMITS = f"{LOG_DIR}/commits"
STAGING = f"{LOG_DIR}/staging"
SCHEMAS = f"{LOG_DIR}/schema"
MANIFEST_VERSION = 1
_OFFSET_WIDTH = 20  # Long.MAX_VALUE has 19 digits: zero-padded names sort by offset
_TP_DIR = re.compile(r"^(?P<topic>.+)\+(?P<partition>\d+)$")


# -- names (pure) ------------------------------------------------------------------------


def tp_dir(tp: TopicPartition) -> str:
    return f"{COMMITS}/{tp.topic}+{tp.partition}"


def manifest_path(tp: TopicPartition, start: int) -> str:
    return f"{tp_dir(tp)}/{start:0{_OFFSET_WIDTH}d}.json"


def data_file_name(tp: TopicPartition, start: int, end: int, seq: int, extension: str) -> str:
    """``part-<topic>+<partition>+<start>+<end>-<seq><extension>``: deterministic, so a
    publish rolled forward after a crash lands on the same name, and sorted by offset.
    The ``part-`` prefix keeps the file visible to readers even for topics named ``_x``."""
    w = _OFFSET_WIDTH
    return f"part-{tp.topic}+{tp.partition}+{start:0{w}d}+{end:0{w}d}-{seq:05d}{extension}"


def spark_extension(file_name: str) -> str:
    """The extension of a file Spark wrote (``part-00000-<uuid>-c000.snappy.parquet`` →
    ``.snappy.parquet``): kept on publish, since readers pick codecs by it (``.json.gz``)."""
    dot = file_name.find(".")
    return file_name[dot:] if dot > 0 else ""


def is_data_file(name: str) -> bool:
    """What Spark's readers list: not hidden (``_``, ``.``), not a checksum file."""
    return not name.startswith(("_", ".")) and not name.endswith(".crc")


# -- manifests (pure) --------------------------------------------------------------------


@dataclass(frozen=True)
class Manifest:
    """One committed offset range of one topic partition and the files holding it."""

    tp: TopicPartition
    start: int
    end: int
    files: tuple[tuple[str, str], ...]  # (staged path, final path), relative to the table
    staging: str = ""  # the directory its files were staged in (this partition's part of a batch)

    def encode(self) -> str:
        return json.dumps(
            {
                "version": MANIFEST_VERSION,
                "topic": self.tp.topic,
                "partition": self.tp.partition,
                "start": self.start,
                "end": self.end,
                "staging": self.staging,
                "files": [list(f) for f in self.files],
            },
            indent=2,
        )

    @staticmethod
    def decode(text: str, where: str) -> Manifest:
        try:
            data = json.loads(text)
            if not isinstance(data, dict):
                raise ValueError(f"expected a JSON object, found {type(data).__name__}")
            if data.get("version") != MANIFEST_VERSION:
                raise ValueError(f"version {data.get('version')!r}, expected {MANIFEST_VERSION}")
            return Manifest(
                TopicPartition(str(data["topic"]), int(data["partition"])),
                int(data["start"]),
                int(data["end"]),
                tuple((str(a), str(b)) for a, b in data["files"]),
                str(data.get("staging", "")),
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise ConnectException(f"The table's commit manifest {where} is unreadable: {exc}") from None


class FencedException(ConnectException):
    """Another writer already committed this offset range of this partition."""


# -- the log (I/O) -----------------------------------------------------------------------


class TableLog:
    def __init__(self, fs: HadoopFs) -> None:
        self.fs = fs

    def manifests(self, tp: TopicPartition) -> list[Manifest]:
        """The partition's manifests, oldest first."""
        entries = sorted(
            e.path for e in self.fs.list(tp_dir(tp)) if not e.is_dir and e.name.endswith(".json")
        )
        return [Manifest.decode(self.fs.read_text(p), f"{self.fs.root}/{p}") for p in entries]

    def committed_partitions(self) -> list[TopicPartition]:
        found = []
        for entry in self.fs.list(COMMITS):
            m = _TP_DIR.match(entry.name)
            if entry.is_dir and m:
                found.append(TopicPartition(m["topic"], int(m["partition"])))
        return found

    def recover(self, tp: TopicPartition) -> int | None:
        """Finish any publish a crash interrupted; the last committed offset of ``tp``
        (the end of its newest manifest), or None when nothing was ever committed."""
        manifests = self.manifests(tp)
        if not manifests:
            return None
        for m in manifests:
            self.publish(m)
        self._prune(tp, manifests[-1])
        return max(m.end for m in manifests)

    def commit(self, manifest: Manifest) -> None:
        """Make ``manifest`` the commit of its range; FencedException if one exists."""
        path = manifest_path(manifest.tp, manifest.start)
        if not self.fs.create_exclusive(path, manifest.encode()):
            raise FencedException(
                f"Offsets from {manifest.start} of {manifest.tp} are already committed to {self.fs.root} "
                "by another writer (a task of another connector writing the same table, or a task that "
                "was replaced); this batch is discarded"
            )

    def publish(self, manifest: Manifest) -> None:
        """Move the manifest's files into place; safe to repeat."""
        for staged, final in manifest.files:
            if self.fs.rename(staged, final) or self.fs.exists(final):
                continue
            raise ConnectException(
                f"Cannot publish {final} of {manifest.tp} offsets {manifest.start}..{manifest.end} in "
                f"{self.fs.root}: its staged file {staged} is gone. The table misses these records; "
                f"consume them again by deleting {manifest_path(manifest.tp, manifest.start)} and "
                "restarting the task."
            )
        if manifest.staging:
            self.fs.delete(manifest.staging, recursive=True)

    def published(self, manifest: Manifest) -> None:
        """``manifest`` is fully in place: older manifests of its partition can go."""
        self._prune(manifest.tp, manifest)

    def _prune(self, tp: TopicPartition, newest: Manifest) -> None:
        keep = manifest_path(tp, newest.start)
        for entry in self.fs.list(tp_dir(tp)):
            if entry.path != keep and entry.name.endswith(".json"):
                self.fs.delete(entry.path)

    def clean_staging(self, owner: str) -> None:
        """Delete what an earlier run of ``owner`` (a task) staged and never committed.

        Every partition's newest manifest is rolled forward first: a staged batch it
        names may be this owner's, committed just before a crash, and its partition may
        now belong to another task that has not opened it yet."""
        for tp in self.committed_partitions():
            manifests = self.manifests(tp)
            if manifests:
                self.publish(manifests[-1])
        self.fs.delete(f"{STAGING}/{owner}", recursive=True)
