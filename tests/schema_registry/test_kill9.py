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
    def __init__(self, bootstrap: str, topic: str, port: int, work: Path) -> None:
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
        fresh = httpx.post(f"{second.url}/subjects/new-value/versions", json={"schema": '"bytes"'}).json()
        assert fresh == {"id": max(acknowledged.values()) + 1}
    finally:
        assert second.stop() == 0
