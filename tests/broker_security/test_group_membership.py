"""A distributed worker's own group client (connect.herder.membership) over TLS and SASL.

Its internal-topic and task clients are librdkafka's; the group membership is our own
Kafka-protocol client, so it must do TLS and SASL itself. Settings are the worker's Java
keys, turned into a TLS context and credentials by the function the worker uses."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest

from connect.api.kafka_clients import ClientSecurityError
from connect.distributed import group_member_security
from connect.herder.kafka_connection import GroupError
from connect.herder.membership import GroupMember
from sluiceway.embedded import EmbeddedConnectCluster
from tests.broker_security.conftest import SCRAM_USERS, SecureBroker
from tests.support import unique


def java_keys(
    secure: SecureBroker, protocol: str, mechanism: str | None, password: str | None = None
) -> dict[str, str]:
    keys = {"security.protocol": protocol}
    if protocol in ("SSL", "SASL_SSL"):
        keys |= {"ssl.truststore.location": str(secure.ca_pem), "ssl.truststore.type": "PEM"}
    if mechanism == "PLAIN":
        user, secret = "alice", "alice-secret"
        module = "org.apache.kafka.common.security.plain.PlainLoginModule"
    elif mechanism is not None:
        user, secret = SCRAM_USERS[mechanism]
        module = "org.apache.kafka.common.security.scram.ScramLoginModule"
    if mechanism is not None:
        keys["sasl.mechanism"] = mechanism
        keys["sasl.jaas.config"] = f'{module} required username="{user}" password="{password or secret}";'
    return keys


def member(secure: SecureBroker, listener: str, keys: dict[str, str], group: str) -> GroupMember:
    tls, sasl = group_member_security(keys)
    return GroupMember(
        secure.address(listener),
        group,
        session_timeout_ms=6000,
        heartbeat_interval_ms=500,
        rebalance_timeout_ms=5000,
        request_timeout_ms=5000,
        retry_backoff_ms=50,
        tls=tls,
        sasl=sasl,
    )


@pytest.mark.parametrize(
    ("listener", "protocol", "mechanism"),
    [
        ("SSL", "SSL", None),
        ("SASL_SSL", "SASL_SSL", "PLAIN"),
        ("SASL_SSL", "SASL_SSL", "SCRAM-SHA-256"),
        ("SASL_SSL", "SASL_SSL", "SCRAM-SHA-512"),
        ("INTERNAL", "SASL_PLAINTEXT", "PLAIN"),
    ],
)
def test_two_members_form_a_group_over(
    secure: SecureBroker, listener: str, protocol: str, mechanism: str | None
) -> None:
    group = unique("secure-group")
    keys = java_keys(secure, protocol, mechanism)

    async def scenario() -> None:
        async with member(secure, listener, keys, group) as a, member(secure, listener, keys, group) as b:
            first = await a.join([("sessioned", b"a")])
            assert first.is_leader
            await a.sync({first.member_id: b"everything"})
            # b's join starts a rebalance; a's heartbeat learns of it and a joins again,
            # as a worker's herder does.
            b_joining = asyncio.ensure_future(b.join([("sessioned", b"b")]))
            assert await a.wait_rejoin_needed(10)
            a_joined, b_joined = await asyncio.gather(a.join([("sessioned", b"a")]), b_joining)
            assert a_joined.generation == b_joined.generation == 2
            assert a_joined.is_leader and set(a_joined.members.values()) == {b"a", b"b"}
            assigned = {a_joined.member_id: b"left", b_joined.member_id: b"right"}
            mine, theirs = await asyncio.gather(a.sync(assigned), b.sync(None))
            assert (mine, theirs) == (b"left", b"right")

    asyncio.run(scenario())


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256"])
def test_a_wrong_password_is_a_group_error_naming_the_user(secure: SecureBroker, mechanism: str) -> None:
    keys = java_keys(secure, "SASL_SSL", mechanism, password="wrong")
    user = "alice" if mechanism == "PLAIN" else SCRAM_USERS[mechanism][0]

    async def scenario() -> None:
        async with member(secure, "SASL_SSL", keys, unique("g")) as m:
            await m.join([("sessioned", b"x")])

    with pytest.raises(GroupError, match=f"SASL {mechanism} authentication as '{user}' failed on 127.0.0.1:"):
        asyncio.run(scenario())


def test_a_broker_certificate_from_an_unknown_ca_is_not_trusted(
    secure: SecureBroker, caplog: pytest.LogCaptureFixture
) -> None:
    keys = {"security.protocol": "SSL"}  # no truststore: the system's CAs, which never signed the test CA

    async def scenario() -> None:
        async with member(secure, "SSL", keys, unique("g")) as m:
            await asyncio.wait_for(m.join([("sessioned", b"x")]), 3)

    with caplog.at_level(logging.DEBUG, logger="connect.herder.membership"), pytest.raises(TimeoutError):
        asyncio.run(scenario())
    assert "CERTIFICATE_VERIFY_FAILED" in caplog.text


def test_a_distributed_cluster_runs_on_a_sasl_ssl_broker(secure: SecureBroker, tmp_path: Path) -> None:
    group = unique("connect-secure")
    source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("one\ntwo\nthree\n")
    worker: dict[str, Any] = {
        **java_keys(secure, "SASL_SSL", "SCRAM-SHA-512"),
        "group.id": group,
        "config.storage.topic": f"{group}-configs",
        "offset.storage.topic": f"{group}-offsets",
        "status.storage.topic": f"{group}-status",
    }
    with EmbeddedConnectCluster(
        tmp_path / "cluster", workers=2, worker_config=worker, bootstrap_servers=secure.address("SASL_SSL")
    ) as cluster:
        cluster.create_connector(
            "secure-src",
            {"connector.class": "FileStreamSource", "file": str(source), "topic": f"{group}-lines"},
        )
        cluster.create_connector(
            "secure-sink",
            {"connector.class": "FileStreamSink", "file": str(sink), "topics": f"{group}-lines"},
        )
        cluster.wait_for_running("secure-src")
        cluster.wait_for_running("secure-sink")
        cluster.wait_for(
            lambda: sink.exists() and sink.read_text().split() == ["one", "two", "three"],
            60,
            "the three lines in the sink file",
        )
        # Both workers are members of one generation, and the leader gave each a share.
        members = [cluster.workers[i].herder.member for i in cluster.live()]
        assert len({m.member_id for m in members}) == 2 and len({m.generation for m in members}) == 1
        owners = {
            s["worker_id"]
            for name in ("secure-src", "secure-sink")
            for s in [cluster.status(name)["connector"], *cluster.status(name)["tasks"]]
        }
        assert owners == {cluster.workers[i].herder.worker.worker_id for i in cluster.live()}


def test_member_security_of_plaintext_is_nothing_and_bad_stores_are_named(tmp_path: Path) -> None:
    assert group_member_security({"security.protocol": "PLAINTEXT", "ssl.truststore.location": "x.jks"}) == (
        None,
        None,
    )
    jks = tmp_path / "trust.jks"
    jks.write_bytes(b"\xfe\xed\xfe\xed" + b"\0" * 64)
    with pytest.raises(ClientSecurityError, match=r"ssl\.truststore\.location=.*trust\.jks is a JKS store"):
        group_member_security({"security.protocol": "SSL", "ssl.truststore.location": str(jks)})
