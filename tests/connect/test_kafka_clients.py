"""Java client security keys as librdkafka takes them (connect.api.kafka_clients)."""

from __future__ import annotations

from pathlib import Path

import pytest

from connect.api.kafka_clients import ClientSecurityError, jaas_credentials, librdkafka_security

JKS_HEAD = bytes.fromhex("feedfeed00000002") + b"\0" * 64


def test_jaas_plain_and_scram_become_username_and_password() -> None:
    assert jaas_credentials(
        'org.apache.kafka.common.security.scram.ScramLoginModule required username="bob" password="p w;x";'
    ) == {"sasl.username": "bob", "sasl.password": "p w;x"}


def test_tls_keys_apply_only_to_tls_connections(tmp_path: Path) -> None:
    jks = tmp_path / "trust.jks"
    jks.write_bytes(JKS_HEAD)
    java = {"ssl.truststore.location": str(jks), "ssl.truststore.password": "changeit", "acks": "all"}
    # PLAINTEXT (the default) and SASL_PLAINTEXT clients ignore them, as Kafka's do.
    assert librdkafka_security(java) == {"acks": "all"}
    assert librdkafka_security({**java, "security.protocol": "SASL_PLAINTEXT"}) == {
        "acks": "all",
        "security.protocol": "SASL_PLAINTEXT",
    }
    with pytest.raises(ClientSecurityError, match="JKS store"):
        librdkafka_security({**java, "security.protocol": "SASL_SSL"})


def test_a_pem_truststore_and_java_only_keys(tmp_path: Path) -> None:
    pem = tmp_path / "ca.pem"
    pem.write_text("-----BEGIN CERTIFICATE-----\nMII\n-----END CERTIFICATE-----\n")
    out = librdkafka_security(
        {
            "security.protocol": "SSL",
            "ssl.truststore.location": str(pem),
            "ssl.truststore.type": "PEM",
            "ssl.endpoint.identification.algorithm": "",
            "sasl.mechanism": "PLAIN",
        }
    )
    assert out == {
        "security.protocol": "SSL",
        "ssl.ca.location": str(pem),
        "ssl.endpoint.identification.algorithm": "none",
        "sasl.mechanisms": "PLAIN",
    }
