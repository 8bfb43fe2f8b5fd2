"""Replacing a small state file so that a crash leaves the old version or the new, never a torn one."""

from __future__ import annotations

import os


def replace_durably(path: str, payload: bytes, mode: int = 0o644) -> None:
    """Write ``payload`` to a temporary file, fsync it, rename it over ``path`` and fsync
    the directory, so the rename itself survives a power loss. ``mode`` applies to a new file
    (0o600 for anything secret)."""
    directory = os.path.dirname(path) or "."
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(payload)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    dfd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)
