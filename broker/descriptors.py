"""How many partitions this process can still open, from its file-descriptor limit.

Each partition holds three files open (log, offset index, time index), as Kafka's do.
A CreateTopics or CreatePartitions that would take the process to its ``ulimit -n``
fails half-way with EMFILE, and then so does every ``accept()``: no client could connect
until partitions are deleted. So partitions are refused up front, with the numbers, while
a reserve stays for connections, segment rolls and the metrics listener.
"""

from __future__ import annotations

import os
import resource
from typing import Final

FILES_PER_PARTITION: Final = 3
# Kept free for sockets and everything else: a tenth of the limit, and at least this many.
MIN_RESERVE: Final = 1024


def raise_soft_limit() -> tuple[int, int]:
    """Raise this process's soft RLIMIT_NOFILE to its hard limit (the JVM does the same for
    Kafka on Linux, -XX:+MaxFDLimit) and return (soft, hard)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):
            pass  # some sandboxes refuse; the lower limit then applies
    return soft, hard


def partitions_that_fit(limit: int, open_now: int) -> int:
    """How many more partitions may be opened with ``open_now`` descriptors in use out of
    ``limit`` (``resource.RLIM_INFINITY``: no limit), keeping the reserve free."""
    if limit == resource.RLIM_INFINITY or limit < 0:
        return 1 << 62
    reserve = max(MIN_RESERVE, limit // 10)
    return max(0, (limit - reserve - open_now) // FILES_PER_PARTITION)


def open_descriptors(fallback: int) -> int:
    """Descriptors this process has open (``fallback`` where /proc is not there)."""
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return fallback


def check_room_for(partitions: int, open_partitions: int) -> str | None:
    """Why ``partitions`` more would not fit (None if they do)."""
    limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    room = partitions_that_fit(limit, open_descriptors(open_partitions * FILES_PER_PARTITION + 64))
    if partitions <= room:
        return None
    return (
        f"{partitions} more partitions need {partitions * FILES_PER_PARTITION} open files; this broker "
        f"can open {room} more partitions within its limit of {limit} open files (ulimit -n), keeping "
        f"{max(MIN_RESERVE, limit // 10)} for connections. Raise the limit or delete topics."
    )
