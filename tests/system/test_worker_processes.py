"""``connect-distributed workers.properties --processes 2``: two worker processes of one
cluster from one command, each with its REST API; connectors spread over both, a killed
one is started again, and SIGTERM stops them all cleanly."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import httpx
import psutil
import pytest

from tests.support import ROOT, BrokerProcess, free_port, wait_until

pytestmark = pytest.mark.slow


def _up(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/connectors", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def test_two_worker_processes_from_one_command(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "broker").start()
    port = free_port()
    while not all(_free(port + i) for i in range(2)):
        port = free_port()
    props = tmp_path / "workers.properties"
    props.write_text(
        "\n".join(
            [
                f"bootstrap.servers={broker.bootstrap}",
                "group.id=two-processes",
                "config.storage.topic=tp-configs",
                "offset.storage.topic=tp-offsets",
                "status.storage.topic=tp-status",
                "key.converter=org.apache.kafka.connect.storage.StringConverter",
                "value.converter=org.apache.kafka.connect.storage.StringConverter",
                "config.storage.replication.factor=1",
                "offset.storage.replication.factor=1",
                "status.storage.replication.factor=1",
                "offset.storage.partitions=3",
                "status.storage.partitions=2",
                "scheduled.rebalance.max.delay.ms=0",
                "session.timeout.ms=6000",
                "heartbeat.interval.ms=1000",
                f"listeners=http://127.0.0.1:{port}",
            ]
        )
        + "\n"
    )
    log = open(tmp_path / "workers.log", "w")  # noqa: SIM115 - closed below
    command = [sys.executable, "-m", "connect.distributed", str(props), "--processes", "2"]
    proc = subprocess.Popen(
        [*command, "--log-level", "WARNING"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log
    )
    try:
        wait_until(
            lambda: proc.poll() is not None or (_up(port) and _up(port + 1)),
            90,
            message="both workers answer",
        )
        assert proc.poll() is None, (tmp_path / "workers.log").read_text()[-3000:]
        names = [f"hosts-{i}" for i in range(4)]
        for name in names:
            config = {"connector.class": "FileStreamSource", "file": "/etc/hosts", "topic": "hosts"}
            wait_until(
                lambda name=name, config=config: (
                    httpx.put(
                        f"http://127.0.0.1:{port + 1}/connectors/{name}/config", json=config, timeout=30
                    ).status_code
                    in (200, 201)
                ),
                60,
                message=f"{name} created",
            )

        def task_workers() -> set[str]:
            out = set()
            for name in names:
                status = httpx.get(f"http://127.0.0.1:{port}/connectors/{name}/status", timeout=10).json()
                out |= {t["worker_id"] for t in status.get("tasks", []) if t["state"] == "RUNNING"}
            return out

        wait_until(lambda: len(task_workers()) == 2, 60, message="tasks on both workers")
        assert task_workers() == {f"127.0.0.1:{port}", f"127.0.0.1:{port + 1}"}

        # kill -9 one worker: the supervisor starts it again, and it serves again.
        children = psutil.Process(proc.pid).children()
        assert len(children) == 2
        second = next(
            c for c in children if f"listeners=http://127.0.0.1:{port + 1}" in " ".join(c.cmdline())
        )
        second.kill()
        second.wait(10)
        wait_until(
            lambda: any(c.pid != second.pid for c in psutil.Process(proc.pid).children()) and _up(port + 1),
            60,
            message="the killed worker started again",
        )
        assert len(psutil.Process(proc.pid).children()) == 2

        proc.send_signal(signal.SIGTERM)
        assert proc.wait(120) == 0
        assert not psutil.pid_exists(second.pid)
        assert not _up(port) and not _up(port + 1)
    finally:
        if proc.poll() is None:
            for child in psutil.Process(proc.pid).children(recursive=True):
                child.kill()
            proc.kill()
            proc.wait(30)
        log.close()
        broker.stop()


def _free(port: int) -> bool:
    import socket

    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True
