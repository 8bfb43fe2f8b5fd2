"""Test support: real brokers, in-process or as separate processes.

Nothing here fakes a component: ``embedded_broker`` runs the real broker on its own
thread and event loop; ``BrokerProcess`` runs ``python -m broker`` and can kill it.
Every broker listens on an ephemeral port on 127.0.0.1 and stops by itself when
the test ends.
"""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from broker.config import load_config
from broker.server import EmbeddedBroker

ROOT = Path(__file__).resolve().parent.parent
_READY = re.compile(r"listening on PLAINTEXT://([^:\s]+):(\d+)")

# Fast group settings for tests: no initial rebalance delay, short session timeouts allowed.
TEST_OVERRIDES = {
    "group.initial.rebalance.delay.ms": "0",
    "group.min.session.timeout.ms": "500",
    "offsets.topic.num.partitions": "5",
    "transaction.state.log.num.partitions": "5",
}


def unique(prefix: str = "t") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def embedded_broker(data_dir: str | Path, **overrides: str) -> Iterator[EmbeddedBroker]:
    values = {"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": str(data_dir), **TEST_OVERRIDES}
    values.update({k.replace("_", "."): v for k, v in overrides.items()})
    eb = EmbeddedBroker(load_config(values)).start()
    try:
        yield eb
    finally:
        eb.stop()


class BrokerProcess:
    """``python -m broker`` in a subprocess, restartable on the same port and data."""

    def __init__(self, data_dir: str | Path, port: int | None = None, **overrides: str) -> None:
        self.data_dir = str(data_dir)
        self.port = port if port is not None else free_port()
        self.overrides = {**TEST_OVERRIDES, **{k.replace("_", "."): v for k, v in overrides.items()}}
        self.proc: subprocess.Popen[str] | None = None
        self.log: list[str] = []
        self._lock = threading.Lock()

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        args = [
            sys.executable,
            "-m",
            "broker",
            "--override",
            f"listeners=PLAINTEXT://127.0.0.1:{self.port}",
            "--override",
            f"log.dirs={self.data_dir}",
        ]
        for k, v in self.overrides.items():
            args += ["--override", f"{k}={v}"]
        return args

    def start(self, timeout: float = 30.0, preexec_fn=None) -> BrokerProcess:  # type: ignore[no-untyped-def]
        self.proc = subprocess.Popen(
            self.command(),
            cwd=ROOT,
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
            preexec_fn=preexec_fn,
        )
        assert self.proc.stderr is not None
        deadline = time.time() + timeout
        while time.time() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            self._record(line)
            if _READY.search(line):
                threading.Thread(target=self._drain, args=(self.proc,), daemon=True).start()
                return self
        self.proc.kill()
        code = self.proc.wait(10)
        raise RuntimeError(f"broker did not start (exit code {code}):\n" + "".join(self.log[-30:]))

    def _record(self, line: str) -> None:
        with self._lock:
            self.log.append(line)

    def _drain(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            self._record(line)

    def output(self) -> str:
        with self._lock:
            return "".join(self.log)

    def kill9(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def terminate(self, timeout: float = 30.0) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.terminate(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


@contextmanager
def broker_process(data_dir: str | Path, **overrides: str) -> Iterator[BrokerProcess]:
    bp = BrokerProcess(data_dir, **overrides).start()
    try:
        yield bp
    finally:
        bp.stop()


def wait_until(predicate, timeout: float = 20.0, interval: float = 0.05, message: str = "condition") -> None:  # type: ignore[no-untyped-def]
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {message}")


def write_props(path: Path, values: dict[str, str]) -> Path:
    """A ``.properties`` file of ``values``."""
    path.write_text("".join(f"{k}={v}\n" for k, v in values.items()))
    return path


def terminate(proc: subprocess.Popen[bytes], timeout: float = 60) -> int:
    """SIGTERM (a graceful stop), SIGKILL if it takes longer than ``timeout``; the exit code."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)
    return int(proc.returncode)


class StandaloneWorkerProcess:
    """``python -m connect.standalone`` with the given properties files; its log goes to a
    file beside the first (a pipe nobody reads would fill up and stall it)."""

    def __init__(self, *files: Path, env: dict[str, str] | None = None) -> None:
        self.files = [str(f) for f in files]
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def log_path(self) -> Path:
        return Path(self.files[0]).with_suffix(".log")

    def start(self) -> StandaloneWorkerProcess:
        with open(self.log_path, "ab") as log:  # the child keeps its own
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "connect.standalone", *self.files],
                cwd=ROOT,
                stdout=subprocess.DEVNULL,
                stderr=log,
                env=self.env,
            )
        return self

    def kill9(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> int:
        assert self.proc is not None
        return terminate(self.proc)
