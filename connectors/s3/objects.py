"""Object keys and what they say about the committed position. Pure.

A key is ``<topics.dir>/<topic>/<partition path>/<topic>+<partition>+<start>.<ext>``,
the start offset zero-padded so that keys sort by offset. Objects are committed in
*rotations*: the records of one topic partition from offset S to E, spread over one
object per partition path. Each object of a rotation carries S and E in its metadata,
and the object holding record S (the *head*, whose start offset is S) is uploaded last.
So the bucket itself says how far a topic partition got:

- take the object with the highest start offset and read its rotation's S and E;
- if the head (start offset S) exists, the rotation is complete: resume at E + 1;
- otherwise the crash came mid-rotation: resume at S, and the objects written again
  (the same records cut the same way) replace the ones already there.

A partition's rotations upload two at a time, so the newest may land before the one
before it, which then may never land (a crash, a revoked partition, an upload that kept
failing). An object whose upload began while the rotation before it was not yet in S3
names that rotation's start P in its metadata; if no object starts at P, that rotation is
missing and the partition resumes at P. Only the newest can lack its predecessor: a
rotation's upload begins only once every rotation two or more before it is in S3.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

RANGE_START = "sluiceway-range-start"
RANGE_END = "sluiceway-range-end"
RECORDS = "sluiceway-records"
PREVIOUS_START = "sluiceway-previous-start"


@dataclass(frozen=True)
class Naming:
    topics_dir: str
    directory_delim: str
    file_delim: str
    pad: int
    extension: str

    def topic_prefix(self, topic: str) -> str:
        d = self.directory_delim
        return f"{self.topics_dir}{d}{topic}{d}" if self.topics_dir else f"{topic}{d}"

    def key(self, topic: str, encoded_partition: str, partition: int, start: int) -> str:
        f, d = self.file_delim, self.directory_delim
        name = f"{topic}{f}{partition}{f}{start:0{self.pad}d}{self.extension}"
        return f"{self.topic_prefix(topic)}{encoded_partition}{d}{name}"

    def start_offsets(self, topic: str, partition: int, keys: Iterable[str]) -> dict[int, str]:
        """Start offset → key of the objects of one topic partition among ``keys``."""
        f = re.escape(self.file_delim)
        name = re.compile(
            rf"(?:^|{re.escape(self.directory_delim)}){re.escape(topic)}{f}{partition}{f}(\d+){re.escape(self.extension)}$"
        )
        found = {}
        for key in keys:
            m = name.search(key)
            if m:
                found[int(m.group(1))] = key
        return found


def resume_offset(objects: dict[int, str], metadata: Callable[[str], dict[str, str]]) -> int | None:
    """Where a topic partition resumes, from its objects (start offset → key) and a way to
    read one object's metadata; None when the bucket cannot tell (no objects, or objects
    this sink did not write)."""
    if not objects:
        return None
    newest = objects[max(objects)]
    meta = metadata(newest)
    try:
        start, end = int(meta[RANGE_START]), int(meta[RANGE_END])
        previous = int(meta[PREVIOUS_START]) if PREVIOUS_START in meta else None
    except (KeyError, ValueError):
        return None
    if previous is not None and previous not in objects:
        return previous  # the rotation before the newest never landed
    return end + 1 if start in objects else start
