"""What the demo checks before it starts anything, so bad input costs one clear line."""

from __future__ import annotations

import errno
import os
import socket
import uuid
from pathlib import Path

from spark_sink.session import java_problem


class DemoInputError(Exception):
    """Something the user can fix; the demo prints it on one line and exits with status 2."""


def check_data_dir(path: Path) -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".write-test-{uuid.uuid4().hex}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise DemoInputError(
            f"cannot write to the data dir {path} ({reason}); choose another with --data-dir"
        ) from exc


def check_port(port: int, what: str, flag: str) -> None:
    """A chosen port must be free on 127.0.0.1; 0 means any free port."""
    if not port:
        return
    with socket.socket() as s:
        if os.name != "nt":
            # As the broker and uvicorn bind: a port in TIME_WAIT is free to them.
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise DemoInputError(
                    f"port {port} for the {what} is taken on 127.0.0.1; stop what uses it or choose "
                    f"another with {flag} (0 picks a free one)"
                ) from exc
            raise DemoInputError(f"cannot use port {port} for the {what}: {exc.strerror or exc}") from exc


def check_java() -> None:
    problem = java_problem()
    if problem is not None:
        raise DemoInputError(f"the demo's Spark sink cannot start: {problem}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
