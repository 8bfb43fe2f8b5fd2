"""``sluiceway schema-registry`` as its own process, killed with SIGKILL mid-work and
started again: every subject, version, id and config it acknowledged is still there
(the topic is the only state), and ids go on from where they were."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest

from broker.server import EmbeddedBroker
from tests.support import ROOT, free_port


class RegistryProcess:
    def __init__(self, bootstrap: str, topic: str, port: int, work: Path, *overrides: str) -> None:
        self.url = f"http://127.0.0.1:{port}"
        self.log = (work / f"registry-{port}-{time.monotonic_ns()}.log").open("w")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "sluiceway.cli",
                "schema-registry",
                "--override",
                f"listeners={self.url}",
                "--override",
                f"kafkastore.bootstrap.servers={bootstrap}",
                "--override",
                f"kafkastore.topic={topic}",
                "--override",
                "schema.compatibility.level=full",
                "--override",
                "kafkagroup.session.timeout.ms=6000",
                *[a for o in overrides for a in ("--override", o)],
            ],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=self.log,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"the registry exited with {self.proc.returncode}"
            try:
                if httpx.get(self.url + "/", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        raise AssertionError("the registry did not start")

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        self.log.close()

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(30)
        self.log.close()
        return code


def schema(n: int) -> str:
    fields = [{"name": f"f{i}", "type": "string", "default": ""} for i in range(n)]
    return json.dumps({"type": "record", "name": "R", "fields": [{"name": "id", "type": "long"}, *fields]})


@pytest.mark.slow
def test_everything_acknowledged_survives_kill_9(shared_broker: EmbeddedBroker, tmp_path: Path) -> None:
    topic = f"_schemas-{uuid.uuid4().hex[:8]}"
    port = free_port()
    first = RegistryProcess(shared_broker.bootstrap, topic, port, tmp_path)
    acknowledged: dict[tuple[str, int], int] = {}
    try:
        for s in range(4):
            subject = f"topic{s}-value"
            for n in range(5):
                r = httpx.post(
                    f"{first.url}/subjects/{subject}/versions", json={"schema": schema(n)}, timeout=30
                )
                assert r.status_code == 200, r.text
                acknowledged[(subject, n + 1)] = r.json()["id"]
        assert (
            httpx.put(f"{first.url}/config/topic0-value", json={"compatibility": "NONE"}).status_code == 200
        )
        assert httpx.delete(f"{first.url}/subjects/topic1-value/versions/1").json() == 1
    finally:
        first.kill9()

    second = RegistryProcess(shared_broker.bootstrap, topic, port, tmp_path)
    try:
        for (subject, version), schema_id in acknowledged.items():
            got = httpx.get(f"{second.url}/subjects/{subject}/versions/{version}?deleted=true").json()
            assert (got["id"], got["version"]) == (schema_id, version)
            assert httpx.get(f"{second.url}/schemas/ids/{schema_id}").status_code == 200
        assert httpx.get(f"{second.url}/subjects/topic1-value/versions").json() == [2, 3, 4, 5]
        assert httpx.get(f"{second.url}/config/topic0-value").json() == {"compatibilityLevel": "NONE"}
        assert httpx.get(f"{second.url}/config").json() == {"compatibilityLevel": "FULL"}
        # Writes wait for the killed instance's group session to end (6 s here): then this
        # instance is the primary.
        fresh = httpx.post(
            f"{second.url}/subjects/new-value/versions", json={"schema": '"bytes"'}, timeout=60
        ).json()
        assert fresh == {"id": max(acknowledged.values()) + 1}
    finally:
        assert second.stop() == 0


def primary_of(*registries: RegistryProcess) -> RegistryProcess:
    """The instance the group made the primary (its log says so)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for r in registries:
            r.log.flush()
            if "is the primary" in Path(r.log.name).read_text():
                return r
        time.sleep(0.1)
    raise AssertionError("no instance became the primary")


@pytest.mark.slow
def test_two_instances_one_primary_and_failover_after_kill_9(
    shared_broker: EmbeddedBroker, tmp_path: Path
) -> None:
    topic, group = f"_schemas-{uuid.uuid4().hex[:8]}", f"sr-{uuid.uuid4().hex[:8]}"
    both = [
        RegistryProcess(
            shared_broker.bootstrap, topic, free_port(), tmp_path, f"schema.registry.group.id={group}"
        )
        for _ in range(2)
    ]
    watcher = RegistryProcess(
        shared_broker.bootstrap,
        topic,
        free_port(),
        tmp_path,
        f"schema.registry.group.id={group}",
        "leader.eligibility=false",
    )
    try:
        primary = primary_of(*both)
        follower = both[1] if primary is both[0] else both[0]
        # Writes to any instance land through the primary; reads anywhere see them.
        ids = []
        for n, r in enumerate((follower, watcher, primary)):
            got = httpx.post(f"{r.url}/subjects/s-value/versions", json={"schema": schema(n)}, timeout=60)
            assert got.status_code == 200, got.text
            ids.append(got.json()["id"])
        assert ids == [1, 2, 3]
        # Reads are each instance's own view, tailing the topic: they catch up within moments.
        for r in (follower, watcher, primary):
            deadline = time.monotonic() + 10
            while (versions := httpx.get(f"{r.url}/subjects/s-value/versions", timeout=10).json()) != [
                1,
                2,
                3,
            ]:
                assert time.monotonic() < deadline, f"{r.url} sees {versions}"
                time.sleep(0.1)
        primary.kill9()
        # The follower takes over once the primary's session ends; the ineligible one forwards to it.
        got = httpx.post(f"{watcher.url}/subjects/s-value/versions", json={"schema": schema(3)}, timeout=60)
        assert got.status_code == 200, got.text
        assert got.json() == {"id": 4}
        assert "is the primary" in Path(follower.log.name).read_text()
        assert "is the primary" not in Path(watcher.log.name).read_text()
        assert httpx.get(f"{follower.url}/subjects/s-value/versions").json() == [1, 2, 3, 4]
    finally:
        for r in (*both, watcher):
            if r.proc.poll() is None:
                r.stop()
