"""``connect-distributed workers.properties --processes N``: N worker processes on one host.

A Python worker runs its tasks on threads, and one interpreter runs Python on about one
core at a time (the GIL), where Kafka Connect's JVM spreads a worker's tasks over every
core. N worker processes of the same cluster (same ``group.id``, storage topics and
broker) do what the JVM does: the group protocol spreads connectors and tasks over them,
each process on its own core. This module is the supervisor the command runs:

- worker ``i`` listens on each of ``listeners``' ports plus ``i`` (``http://:8083`` gives
  8083, 8084, ...; port 0 stays "any free port"), so its REST API, and Kafka Connect's
  worker id, are its own; any worker answers every request, as in any cluster;
- with ``embedded.broker.enable=true`` worker 0 runs the broker and the others use it;
- SIGTERM or SIGINT stop every worker gracefully (offsets committed, group left); a
  worker that dies otherwise is started again, after a pause that doubles up to 30 s,
  and the group gives its tasks to the others meanwhile.

The trade-offs (``docs/operations.md``): memory and start-up are per process; tasks of
one connector on different workers share nothing in memory; a rebalance moves tasks
between processes as between machines.
"""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

log = logging.getLogger(__name__)

_MAX_BACKOFF_S = 30.0


def listeners_of(listeners: Sequence[str], index: int) -> str:
    """Worker ``index``'s listeners: each port plus ``index`` (0, any free port, stays 0)."""
    out = []
    for listener in listeners:
        parts = urlsplit(listener)
        port = parts.port
        if port is None:
            raise ValueError(f"listener {listener!r} names no port; give one, e.g. http://:8083")
        shifted = port + index if port else 0
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        out.append(urlunsplit((parts.scheme, f"{host}:{shifted}", parts.path, parts.query, parts.fragment)))
    return ",".join(out)


@dataclass
class _Child:
    index: int
    command: list[str]
    process: subprocess.Popen[bytes] | None = None
    backoff_s: float = 1.0
    started_at: float = 0.0

    def start(self) -> None:
        self.process = subprocess.Popen(self.command)
        self.started_at = time.monotonic()
        log.info("worker %d started (pid %d)", self.index, self.process.pid)


class WorkerProcesses:
    """Runs and watches the worker processes until asked to stop."""

    def __init__(self, commands: list[list[str]]) -> None:
        self.children = [_Child(i, command) for i, command in enumerate(commands)]
        self._stopping = threading.Event()

    def stop(self) -> None:
        self._stopping.set()

    def run(self) -> int:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: self._stopping.set())
        for child in self.children:
            child.start()
        restart_at: dict[int, float] = {}
        while not self._stopping.wait(0.2):
            now = time.monotonic()
            for child in self.children:
                assert child.process is not None
                code = child.process.poll()
                if code is None:
                    if now - child.started_at > 60:
                        child.backoff_s = 1.0  # it ran a while: the next death starts over
                    continue
                due = restart_at.get(child.index)
                if due is None:
                    log.error(
                        "worker %d (pid %d) exited with status %d; starting it again in %.0f s",
                        child.index,
                        child.process.pid,
                        code,
                        child.backoff_s,
                    )
                    restart_at[child.index] = now + child.backoff_s
                    child.backoff_s = min(child.backoff_s * 2, _MAX_BACKOFF_S)
                elif now >= due:
                    del restart_at[child.index]
                    child.start()
        return self._shutdown()

    def _shutdown(self) -> int:
        log.info("stopping %d workers", len(self.children))
        for child in self.children:
            if child.process is not None and child.process.poll() is None:
                child.process.send_signal(signal.SIGTERM)
        worst = 0
        for child in self.children:
            if child.process is None:
                continue
            try:
                code = child.process.wait(120)
            except subprocess.TimeoutExpired:
                log.error("worker %d did not stop within 120 s; killing it", child.index)
                child.process.kill()
                code = child.process.wait()
            # A worker stopped by our SIGTERM exits 0; one that had already died keeps its code.
            worst = worst or (0 if code in (0, -signal.SIGTERM, -signal.SIGINT) else code)
        return worst


@dataclass(frozen=True)
class Layout:
    """What differs between the worker processes, from the worker config."""

    listeners: Sequence[str]
    advertised_port: int | None
    embedded_broker: bool


def worker_commands(
    properties: str, overrides: list[str], layout: Layout, processes: int, log_level: str
) -> list[list[str]]:
    """The command line of each worker process: this interpreter running one worker."""
    commands = []
    for i in range(processes):
        extra = ["--override", f"listeners={listeners_of(layout.listeners, i)}"]
        if layout.advertised_port:
            extra += ["--override", f"rest.advertised.port={layout.advertised_port + i}"]
        if layout.embedded_broker and i > 0:
            extra += ["--override", "embedded.broker.enable=false"]
        command = [sys.executable, "-m", "connect.distributed", properties, "--log-level", log_level]
        for pair in overrides:
            command += ["--override", pair]
        commands.append(command + extra)
    return commands
