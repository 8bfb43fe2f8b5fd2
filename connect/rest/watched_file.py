"""A parsed file that is parsed again when it changes on disk.

The credentials and bearer-token files are read through this, so adding a user or
revoking a token takes effect on the next request, with no restart. Each ``current()``
costs one ``stat``; the file is parsed again only when its modification time, size or
inode changed. A change that does not parse (or a file that vanished) keeps the last good
contents in force and is logged once per change: a typo must not lock every user out of a
running worker, and it must not go unnoticed either.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

from connect.api.errors import ConnectException

log = logging.getLogger(__name__)

T = TypeVar("T")

_Stamp = tuple[int, int, int]  # (mtime_ns, size, inode)
_GONE: _Stamp = (-1, -1, -1)  # the stamp of a file that cannot be read


def _stamp(path: Path) -> _Stamp:
    st = os.stat(path)
    return (st.st_mtime_ns, st.st_size, st.st_ino)


class WatchedFile(Generic[T]):
    """``parse(path)`` of a file, kept current. The first parse happens in the constructor
    and its errors propagate (a worker must not start with a file it cannot use)."""

    def __init__(self, path: str | Path, parse: Callable[[Path], T], what: str) -> None:
        self.path = Path(path)
        self.what = what
        self._parse = parse
        self._lock = threading.Lock()
        try:
            stamp = _stamp(self.path)
        except OSError as exc:
            raise ConnectException(f"{self.path}: cannot read the {what}: {exc.strerror}") from None
        self._value = parse(self.path)
        self._stamp: _Stamp = stamp
        self._rejected: _Stamp | None = None  # the last change that did not parse, logged once

    def current(self) -> T:
        """The contents, parsed again first if the file changed since the last look."""
        try:
            stamp = _stamp(self.path)
        except OSError as exc:
            self._reject(_GONE, f"{self.path}: cannot read the {self.what}: {exc.strerror}")
            return self._value
        if stamp == self._stamp or stamp == self._rejected:
            return self._value
        with self._lock:
            if stamp == self._stamp:
                return self._value
            try:
                value = self._parse(self.path)
            except ConnectException as exc:
                self._reject(stamp, str(exc))
                return self._value
            self._value, self._stamp, self._rejected = value, stamp, None
            log.info("reloaded the %s %s", self.what, self.path)
            return value

    def _reject(self, stamp: _Stamp, message: str) -> None:
        if stamp == self._rejected:
            return  # said already
        self._rejected = stamp
        log.error("%s; the %s read before stays in force until the file is fixed", message, self.what)
