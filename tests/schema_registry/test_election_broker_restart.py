"""Two registry processes on one topic, writes sent to both (the follower forwards its own to
the primary, so every one of them needs the primary's URL), while their broker is killed
and restarted twice: both stay alive, answer meanwhile with the registry's error
body, and take writes again once the broker is back.

librdkafka 2.x aborts the whole process (``rd_kafka_enq_once_del_source_return: Assertion
`eonce->refcnt > 0' failed``, confluentinc/librdkafka#4605) when a coordinator-bound admin
request meets a dropped connection. The election found the primary's URL with
``describe_consumer_groups``; it now reads it from the group's committed offset through a
consumer (``schema_registry.election``). With that admin client given 1000 ms request and
socket timeouts, a registry here died of that assertion (exit -6) in each of three runs;
with librdkafka's default timeouts none died in six runs, but two failed anyway (the
describe's unhandled TimeoutError answered a plain-text 500, connections reset).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import httpx
import pytest

from tests.hammer import RequestHammer
from tests.schema_registry.test_kill9 import RegistryProcess
from tests.support import BrokerProcess, free_port, wait_until

pytestmark = pytest.mark.slow

# Two restarts: each round waits out forwarded writes that find no primary (up to
# rest._FORWARD_WAIT_S, 30 s), which is most of the test's time.
ROUNDS = 2
# Answers the hammer must have had while the broker was down, per round: enough that some
# requests were under way when the connections dropped, and some met no broker at all.
ANSWERS_WHILE_DOWN = 6
SUBJECT = "s-value"


def schema(n: int) -> str:
    """Version ``n`` of a record that only ever gains fields with defaults (FULL-compatible)."""
    fields = [{"name": f"f{i}", "type": "string", "default": ""} for i in range(n)]
    return json.dumps({"type": "record", "name": "R", "fields": [{"name": "id", "type": "long"}, *fields]})


def _registry_error(r: httpx.Response) -> bool:
    """Confluent's error body, whose code starts with the HTTP status."""
    try:
        body = r.json()
    except ValueError:
        return False
    return (
        isinstance(body, dict)
        and str(body.get("error_code", "")).startswith(str(r.status_code))
        and isinstance(body.get("message"), str)
    )


def test_registries_outlive_broker_restarts_under_forwarded_writes(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "broker").start()
    topic, group = f"_schemas-{uuid.uuid4().hex[:8]}", f"sr-{uuid.uuid4().hex[:8]}"
    registries: list[RegistryProcess] = []
    try:
        registries = [
            RegistryProcess(
                broker.bootstrap, topic, free_port(), tmp_path, f"schema.registry.group.id={group}"
            )
            for _ in range(2)
        ]

        def logs() -> str:
            return "\n".join(
                f"--- {r.url} (exit {r.proc.poll()}):\n{Path(r.log.name).read_text(errors='replace')[-3000:]}"
                for r in registries
            )

        def alive() -> bool:
            return all(r.proc.poll() is None for r in registries)

        def writes_everywhere() -> bool:
            assert alive(), logs()
            try:
                return all(
                    httpx.post(
                        f"{r.url}/subjects/{SUBJECT}/versions", json={"schema": schema(0)}, timeout=60
                    ).status_code
                    == 200
                    for r in registries
                )
            except httpx.TransportError:
                return False

        wait_until(writes_everywhere, 60, interval=0.2, message="writes through both registries")

        # Several writes at once through each: the follower has lookups of the primary under
        # way most of the time, so some meet the dropped connections.
        def register(http: httpx.Client, n: int) -> httpx.Response:
            return http.post(f"/subjects/{SUBJECT}/versions", json={"schema": schema(n % 4)})

        targets = [(r.url, register) for r in registries for _ in range(3)]
        with RequestHammer(targets, _registry_error) as hammer:
            for _ in range(ROUNDS):
                # A write taken through each registry (the follower's forwarded) with the
                # broker up, before it goes away again.
                up = {r.url: hammer.taken(r.url) for r in registries}
                wait_until(
                    lambda u=up: not alive() or all(hammer.taken(url) > n for url, n in u.items()),
                    90,
                    message="a write taken through each registry with the broker up",
                )
                assert alive(), logs()
                broker.kill9()  # connections drop at once, requests under way
                down = hammer.total()
                wait_until(
                    lambda d=down: not alive() or hammer.total() >= d + ANSWERS_WHILE_DOWN,
                    120,
                    message="answers while the broker is down",
                )
                assert alive(), f"a registry died with its broker:\n{logs()}"
                broker.start()
            assert alive(), logs()
        assert hammer.refused == [], f"a registry stopped answering: {hammer.refused[:3]}\n{logs()}"
        assert hammer.odd_bodies == [], hammer.odd_bodies[:3]
        assert any(status != 200 for _, status in hammer.answers), "no request met the stopped broker"
        # The follower forwarded writes that the primary took.
        assert all(hammer.answers[(r.url, 200)] > 0 for r in registries), hammer.answers

        wait_until(writes_everywhere, 90, interval=0.2, message="writes through both once the broker is back")
        # Every version through the follower and the primary alike (the hammer may not have
        # got every one of them in while the broker was up).
        for n in range(4):
            resp = httpx.post(
                f"{registries[n % 2].url}/subjects/{SUBJECT}/versions", json={"schema": schema(n)}, timeout=60
            )
            assert resp.status_code == 200, resp.text
        versions = [httpx.get(f"{r.url}/subjects/{SUBJECT}/versions", timeout=10).json() for r in registries]
        assert versions[0] == [1, 2, 3, 4], versions
        wait_until(
            lambda: (
                httpx.get(f"{registries[1].url}/subjects/{SUBJECT}/versions", timeout=10).json()
                == [1, 2, 3, 4]
            ),
            30,
            message="the second registry's view",
        )
        assert alive(), logs()
    finally:
        for r in registries:
            if r.proc.poll() is None:
                r.stop()
        broker.stop()
