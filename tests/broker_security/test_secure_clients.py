"""confluent-kafka and kcat against the broker's SSL, SASL_SSL and SASL_PLAINTEXT listeners."""

from __future__ import annotations

import subprocess
import uuid
from typing import Any

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.broker_security.conftest import SecureBroker

CASES = [
    ("SSL", None),
    ("SASL_SSL", "PLAIN"),
    ("SASL_SSL", "SCRAM-SHA-256"),
    ("SASL_SSL", "SCRAM-SHA-512"),
    ("INTERNAL", "PLAIN"),
    ("INTERNAL", "SCRAM-SHA-256"),
]


def consume(conf: dict[str, Any], topic: str, count: int) -> list[bytes]:
    c = Consumer({**conf, "group.id": f"g-{uuid.uuid4().hex}", "enable.auto.commit": False})
    c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    out: list[bytes] = []
    try:
        for _ in range(200):
            msg = c.poll(0.2)
            if msg is None or msg.error():
                continue
            out.append(msg.value())
            if len(out) == count:
                break
    finally:
        c.close()
    return out


@pytest.mark.parametrize(("listener", "mechanism"), CASES)
def test_produce_consume_admin(secure: SecureBroker, listener: str, mechanism: str | None) -> None:
    conf = secure.client(listener, mechanism)
    if listener == "INTERNAL":
        conf["security.protocol"] = "SASL_PLAINTEXT"
    topic = f"t-{listener}-{mechanism}-{uuid.uuid4().hex[:6]}".lower()
    admin = AdminClient(conf)
    admin.create_topics([NewTopic(topic, 1)])[topic].result(30)
    # Metadata advertises the endpoint of the listener the client came in on.
    md = admin.list_topics(timeout=30)
    assert [f"{b.host}:{b.port}" for b in md.brokers.values()] == [secure.address(listener)]
    assert topic in md.topics
    p = Producer(conf)
    for i in range(5):
        p.produce(topic, f"v{i}".encode())
    assert p.flush(30) == 0
    assert consume(conf, topic, 5) == [f"v{i}".encode() for i in range(5)]


def test_ssl_with_client_certificate(secure: SecureBroker) -> None:
    from cryptography.hazmat.primitives import serialization

    from tests.certificates import TestCA

    key_path, cert_path = secure.directory / "client.key", secure.directory / "client.pem"
    conf = secure.client("SSL")
    # Without a certificate of a trusted CA the handshake fails: ssl.client.auth=requested
    # still verifies the certificates it gets.
    other = TestCA("another CA")
    key, cert = other.issue(common_name="mallory", server=False, client=True)
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    errors: list[KafkaError] = []
    p = Producer(
        {
            **conf,
            "ssl.certificate.location": str(cert_path),
            "ssl.key.location": str(key_path),
            "error_cb": errors.append,
            "message.timeout.ms": 3000,
        }
    )
    p.produce("untrusted", b"x")
    assert p.flush(10) == 0
    assert errors, "an untrusted client certificate was accepted"


def test_wrong_password_is_refused_and_writes_nothing(secure: SecureBroker) -> None:
    topic = f"wrong-{uuid.uuid4().hex[:6]}"
    for mechanism in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"):
        errors: list[KafkaError] = []
        conf = secure.client("SASL_SSL", mechanism, **{"sasl.password": "nope", "error_cb": errors.append})
        p = Producer({**conf, "message.timeout.ms": 5000})
        p.produce(topic, b"secret")
        p.flush(10)
        assert any(
            e.code() in (KafkaError._AUTHENTICATION, KafkaError.SASL_AUTHENTICATION_FAILED) for e in errors
        ), errors
        text = " ".join(e.str() for e in errors)
        if mechanism == "PLAIN":
            assert "Authentication failed: Invalid username or password" in text
    # Nothing was written (nor the topic auto-created) by the refused clients.
    md = AdminClient(secure.client("PLAINTEXT")).list_topics(timeout=30)
    assert topic not in md.topics


def test_unknown_scram_user_is_refused(secure: SecureBroker) -> None:
    errors: list[KafkaError] = []
    conf = secure.client(
        "SASL_SSL", "SCRAM-SHA-256", **{"sasl.username": "nobody", "error_cb": errors.append}
    )
    p = Producer({**conf, "message.timeout.ms": 3000})
    p.produce("nobody-topic", b"x")
    p.flush(10)
    assert any("invalid credentials with SASL mechanism SCRAM-SHA-256" in e.str() for e in errors), errors


def test_scram_credentials_are_described(secure: SecureBroker) -> None:
    admin = AdminClient(secure.client("SASL_SSL", "SCRAM-SHA-256"))
    futures = admin.describe_user_scram_credentials(["bob", "carol"])
    assert isinstance(futures, dict)
    described = {user: f.result(30) for user, f in futures.items()}
    assert described["bob"].scram_credential_infos[0].iterations == 4096
    assert str(described["carol"].scram_credential_infos[0].mechanism).endswith("SCRAM_SHA_512")
    everyone = admin.describe_user_scram_credentials().result(30)  # type: ignore[union-attr]
    assert {"bob", "carol"} <= set(everyone)
    with pytest.raises(KafkaException, match="does not exist"):
        admin.describe_user_scram_credentials(["nobody"])["nobody"].result(30)  # type: ignore[index]


def test_kcat_scram_sha_256(secure: SecureBroker) -> None:
    topic = f"kcat-{uuid.uuid4().hex[:6]}"
    user, password = "bob", "bob-secret"
    common = [
        "kcat",
        "-b",
        secure.address("SASL_SSL"),
        "-X",
        "security.protocol=SASL_SSL",
        "-X",
        "sasl.mechanisms=SCRAM-SHA-256",
        "-X",
        f"sasl.username={user}",
        "-X",
        f"sasl.password={password}",
        "-X",
        f"ssl.ca.location={secure.ca_pem}",
    ]
    subprocess.run([*common, "-P", "-t", topic], input=b"one\ntwo\n", check=True, timeout=60)
    out = subprocess.run(
        [*common, "-C", "-t", topic, "-o", "beginning", "-c", "2", "-e"],
        capture_output=True,
        check=True,
        timeout=60,
    )
    assert out.stdout.split() == [b"one", b"two"]
