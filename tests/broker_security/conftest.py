"""A broker with PLAINTEXT, SSL, SASL_SSL and SASL_PLAINTEXT listeners, certificates made
for the run (tests.certificates), PLAIN users from the JAAS config and SCRAM users created
through AlterUserScramCredentials."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import (
    AdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)

from broker.config import load_config
from broker.server import EmbeddedBroker
from tests.certificates import TestCA

PLAIN_JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";'
)
SCRAM_USERS = {"SCRAM-SHA-256": ("bob", "bob-secret"), "SCRAM-SHA-512": ("carol", "carol-secret")}


@dataclass
class SecureBroker:
    broker: EmbeddedBroker
    ca_pem: Path
    data_dir: Path
    directory: Path

    def address(self, listener: str) -> str:
        assert self.broker.server is not None
        ep = self.broker.server.broker.endpoint_for(listener)
        assert ep.name == listener
        return f"{ep.host}:{ep.port}"

    def client(self, listener: str, mechanism: str | None = None, **extra: Any) -> dict[str, Any]:
        """confluent-kafka settings for ``listener`` (and the SASL user of ``mechanism``)."""
        conf: dict[str, Any] = {"bootstrap.servers": self.address(listener), "security.protocol": listener}
        if listener in ("SSL", "SASL_SSL"):
            conf["ssl.ca.location"] = str(self.ca_pem)
        if mechanism == "PLAIN":
            conf.update(
                {"sasl.mechanisms": "PLAIN", "sasl.username": "alice", "sasl.password": "alice-secret"}
            )
        elif mechanism is not None:
            user, password = SCRAM_USERS[mechanism]
            conf.update({"sasl.mechanisms": mechanism, "sasl.username": user, "sasl.password": password})
        conf.update(extra)
        return conf


def broker_settings(tmp: Path, ca: TestCA, data_dir: Path) -> dict[str, str]:
    keystore = ca.pkcs12_keystore(tmp, "broker", "keystore-secret")
    truststore = ca.pkcs12_truststore(tmp, "trust", "trust-secret")
    return {
        "log.dirs": str(data_dir),
        "listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,SASL_SSL://127.0.0.1:0,INTERNAL://127.0.0.1:0",
        "listener.security.protocol.map": "INTERNAL:SASL_PLAINTEXT",
        "inter.broker.listener.name": "PLAINTEXT",
        "ssl.keystore.location": str(keystore),
        "ssl.keystore.password": "keystore-secret",
        "ssl.keystore.type": "PKCS12",
        "ssl.truststore.location": str(truststore),
        "ssl.truststore.password": "trust-secret",
        "ssl.truststore.type": "PKCS12",
        "listener.name.ssl.ssl.client.auth": "requested",
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
        "listener.name.sasl_ssl.plain.sasl.jaas.config": PLAIN_JAAS,
        "listener.name.internal.plain.sasl.jaas.config": PLAIN_JAAS,
        "group.initial.rebalance.delay.ms": "0",
        "offsets.topic.num.partitions": "1",
    }


def create_scram_users(bootstrap: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.alter_user_scram_credentials(
        [
            UserScramCredentialUpsertion(
                user, ScramCredentialInfo(getattr(ScramMechanism, m.replace("-", "_")), 4096), pw.encode()
            )
            for m, (user, pw) in SCRAM_USERS.items()
        ]
    )
    for future in futures.values():
        future.result(30)


@pytest.fixture(scope="module")
def secure(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureBroker]:
    tmp = tmp_path_factory.mktemp("secure-broker")
    ca = TestCA()
    data_dir = tmp / "data"
    settings = broker_settings(tmp, ca, data_dir)
    with EmbeddedBroker(load_config(settings)) as broker:
        sb = SecureBroker(broker, ca.write_pem(tmp / "ca.pem"), data_dir, tmp)
        create_scram_users(sb.address("PLAINTEXT"))
        yield sb
