"""The registry's own listener secured as Confluent's is: https (a test CA's certificates),
HTTP basic authentication through a JAAS entry and a Jetty password file, and mutual TLS.
Judged by Confluent's client (``ssl.ca.location``, ``basic.auth.user.info``), raw HTTP for
the 401's header and body, and our AvroConverter round-tripping a record through it."""

from __future__ import annotations

import hashlib
import json
import ssl
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient, SchemaRegistryError

from broker.server import EmbeddedBroker
from connect.api import Schema as ConnectSchema
from connect.api import SchemaBuilder, Struct
from connect.converters.avro import AvroConverter
from connect.runtime.config import WorkerConfig
from connect.runtime.embedded_registry import start_embedded_registry
from connect.runtime.plugins import Plugins
from schema_registry.auth import AuthConfig, read_password_file
from schema_registry.config_error import ConfigError
from schema_registry.server import RegistryConfig, RegistryServer
from schema_registry.tls import TlsConfig
from tests.certificates import TestCA
from tests.support import free_port

PAYMENT = {
    "type": "record",
    "name": "Payment",
    "namespace": "bank",
    "fields": [{"name": "id", "type": "string"}],
}
UNAUTHORIZED = {"error_code": 401, "message": "Unauthorized"}


def write_users(directory: Path) -> Path:
    """A JAAS file whose SchemaRegistry-Props entry names a Jetty password file."""
    users = directory / "password.properties"
    md5 = hashlib.md5(b"hashed-secret", usedforsecurity=False).hexdigest()
    users.write_text(
        "# user: password,role...\n"
        "alice: alice-secret,admin\n"
        f"carol: MD5:{md5},developer\n"
        "bob = bob-secret,viewer\n"
    )
    jaas = directory / "jaas.conf"
    jaas.write_text(
        "// the registry's realm\n"
        "SchemaRegistry-Props {\n"
        "  org.eclipse.jetty.jaas.spi.PropertyFileLoginModule required\n"
        f'  file="{users}"\n'
        '  debug="false";\n'
        "};\n"
    )
    return jaas


def start_https_registry(bootstrap: str, settings: dict[str, str]) -> RegistryServer:
    """A started registry on an https listener with these ``ssl.*``/``authentication.*`` keys."""
    values = {
        "listeners": f"https://127.0.0.1:{free_port()}",
        "kafkastore.bootstrap.servers": bootstrap,
        "kafkastore.topic": f"_schemas-{uuid.uuid4().hex[:8]}",
        # A group of its own: joining one that other registries are in waits for a rebalance.
        "schema.registry.group.id": f"schema-registry-{uuid.uuid4().hex[:8]}",
        **settings,
    }
    return RegistryServer(RegistryConfig.parse(values, environ={})).start()


@pytest.fixture(scope="module")
def ca() -> TestCA:
    return TestCA()


@pytest.fixture(scope="module")
def secured(
    shared_broker: EmbeddedBroker, ca: TestCA, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[RegistryServer, Path]]:
    """An https registry asking for users with the role admin or developer; and the CA file."""
    directory = tmp_path_factory.mktemp("secured-registry")
    server = start_https_registry(
        shared_broker.bootstrap,
        {
            "ssl.keystore.location": str(ca.pkcs12_keystore(directory, "registry", "store-pass")),
            "ssl.keystore.password": "store-pass",
            "ssl.keystore.type": "PKCS12",
            "authentication.method": "BASIC",
            "authentication.realm": "SchemaRegistry-Props",
            "authentication.roles": "admin,developer",
            "java.security.auth.login.config": str(write_users(directory)),
        },
    )
    yield server, ca.write_pem(directory / "ca.pem")
    server.stop()


def client(registry: RegistryServer, ca_file: Path, user_info: str | None) -> SchemaRegistryClient:
    conf: dict[str, Any] = {"url": registry.url, "ssl.ca.location": str(ca_file)}
    if user_info is not None:
        conf["basic.auth.user.info"] = user_info
    return SchemaRegistryClient(conf)


def test_confluents_client_registers_and_reads_over_https_with_basic_auth(
    secured: tuple[RegistryServer, Path],
) -> None:
    registry, ca_file = secured
    assert registry.url.startswith("https://")
    alice = client(registry, ca_file, "alice:alice-secret")
    schema_id = alice.register_schema("secured-value", Schema(json.dumps(PAYMENT), "AVRO"))
    carol = client(registry, ca_file, "carol:hashed-secret")  # an MD5: password
    latest = carol.get_latest_version("secured-value")
    assert latest.schema_id == schema_id and json.loads(latest.schema.schema_str or "{}")["name"] == "Payment"
    assert carol.get_schema(schema_id).schema_type == "AVRO"


def test_bad_or_missing_credentials_get_401_and_the_registry_keeps_serving(
    secured: tuple[RegistryServer, Path],
) -> None:
    registry, ca_file = secured
    for user_info in ("alice:wrong", "nobody:alice-secret", None):
        with pytest.raises(SchemaRegistryError) as refused:
            client(registry, ca_file, user_info).get_subjects()
        assert (refused.value.http_status_code, refused.value.error_code) == (401, 401)
    answer = httpx.get(registry.url + "/subjects", verify=ssl.create_default_context(cafile=str(ca_file)))
    assert answer.status_code == 401
    assert answer.json() == UNAUTHORIZED
    assert answer.headers["www-authenticate"] == 'Basic realm="SchemaRegistry-Props"'
    assert isinstance(client(registry, ca_file, "alice:alice-secret").get_subjects(), list)


def test_a_user_without_an_allowed_role_gets_403(secured: tuple[RegistryServer, Path]) -> None:
    registry, ca_file = secured
    with pytest.raises(SchemaRegistryError) as refused:
        client(registry, ca_file, "bob:bob-secret").get_subjects()
    assert (refused.value.http_status_code, refused.value.error_code) == (403, 403)


def test_plain_http_to_the_https_listener_gets_no_answer(secured: tuple[RegistryServer, Path]) -> None:
    registry, _ = secured
    with pytest.raises(httpx.HTTPError):
        httpx.get(registry.url.replace("https://", "http://") + "/subjects", timeout=5)


def test_the_avro_converter_round_trips_through_the_secured_registry(
    secured: tuple[RegistryServer, Path], ca: TestCA, tmp_path: Path
) -> None:
    registry, ca_file = secured
    configs = {
        "schema.registry.url": registry.url,
        "basic.auth.credentials.source": "USER_INFO",
        "basic.auth.user.info": "alice:alice-secret",
        # Confluent's converter keys for the registry's TLS (the client namespace).
        "schema.registry.ssl.truststore.location": str(ca.pkcs12_truststore(tmp_path, "trust", "pass")),
        "schema.registry.ssl.truststore.password": "pass",
        "schema.registry.ssl.truststore.type": "PKCS12",
    }
    schema = SchemaBuilder.struct().name("bank.Transfer").field("id", ConnectSchema.STRING_SCHEMA).build()
    writer = Plugins().new_converter("io.confluent.connect.avro.AvroConverter", configs, False)
    reader = Plugins().new_converter("io.confluent.connect.avro.AvroConverter", configs, False)
    assert isinstance(writer, AvroConverter) and isinstance(reader, AvroConverter)
    data = writer.from_connect_data("transfers", schema, Struct(schema).put("id", "t-1"))
    assert data is not None and data[0] == 0
    back = reader.to_connect_data("transfers", data)
    assert isinstance(back.value, Struct) and back.value.get("id") == "t-1"
    judge = client(registry, ca_file, "alice:alice-secret")
    assert judge.get_latest_version("transfers-value").schema_id == int.from_bytes(data[1:5], "big")


def test_mutual_tls_required_refuses_a_client_without_a_certificate(
    shared_broker: EmbeddedBroker, ca: TestCA, tmp_path: Path
) -> None:
    server = start_https_registry(
        shared_broker.bootstrap,
        {
            "ssl.keystore.location": str(ca.pkcs12_keystore(tmp_path, "registry", "store-pass")),
            "ssl.keystore.password": "store-pass",
            "ssl.keystore.type": "PKCS12",
            "ssl.truststore.location": str(ca.pkcs12_truststore(tmp_path, "trust", "trust-pass")),
            "ssl.truststore.password": "trust-pass",
            "ssl.truststore.type": "PKCS12",
            "ssl.client.authentication": "REQUIRED",
        },
    )
    try:
        ca_file = ca.write_pem(tmp_path / "ca.pem")
        trusting = ssl.create_default_context(cafile=str(ca_file))
        with pytest.raises(httpx.HTTPError):
            httpx.get(server.url + "/subjects", verify=trusting, timeout=5)
        cert, key = ca.pem_files(tmp_path, "client", server=False, client=True)
        with_cert = SchemaRegistryClient(
            {
                "url": server.url,
                "ssl.ca.location": str(ca_file),
                "ssl.certificate.location": str(cert),
                "ssl.key.location": str(key),
            }
        )
        assert with_cert.get_subjects() == []
    finally:
        server.stop()


# -- settings, without a server ---------------------------------------------------------------


def test_the_jaas_file_may_come_from_schema_registry_opts(tmp_path: Path) -> None:
    jaas = write_users(tmp_path)
    auth = AuthConfig.parse(
        {"authentication.method": "basic", "authentication.realm": "SchemaRegistry-Props"},
        {"SCHEMA_REGISTRY_OPTS": f"-Xmx1g -Djava.security.auth.login.config={jaas}"},
    )
    users = read_password_file(auth.password_file)
    assert users.check("alice", "alice-secret") == frozenset({"admin"})
    assert users.check("carol", "hashed-secret") == frozenset({"developer"})
    assert users.check("alice", "alice-secret ") is None and users.check("eve", "x") is None


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"authentication.method": "BEARER"}, "authentication.method=BEARER"),
        ({"authentication.method": "BASIC"}, "authentication.realm"),
        ({"authentication.method": "BASIC", "authentication.realm": "R"}, "java.security.auth.login.config"),
        (
            {"listeners": "https://127.0.0.1:8081", "inter.instance.protocol": "http"},
            "inter.instance.protocol",
        ),
        ({"listeners": "http://127.0.0.1:1,https://127.0.0.1:2"}, "listeners="),
        ({"ssl.client.authentication": "SOMETIMES"}, "ssl.client.authentication=SOMETIMES"),
        ({"ssl.keystore.type": "BKS"}, "ssl.keystore.type=BKS"),
        ({"ssl.enabled.protocols": "TLSv1"}, "ssl.enabled.protocols=TLSv1"),
    ],
)
def test_settings_that_cannot_be_used_are_named(values: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        RegistryConfig.parse({"kafkastore.bootstrap.servers": "127.0.0.1:9092", **values}, environ={})


def test_a_jaas_entry_other_than_one_property_file_module_is_refused(tmp_path: Path) -> None:
    jaas = tmp_path / "jaas.conf"
    jaas.write_text('SchemaRegistry-Props { com.example.LdapLoginModule required url="ldap://x"; };')
    values = {
        "authentication.method": "BASIC",
        "authentication.realm": "SchemaRegistry-Props",
        "java.security.auth.login.config": str(jaas),
    }
    with pytest.raises(ConfigError, match="one PropertyFileLoginModule"):
        AuthConfig.parse(values, {})
    with pytest.raises(ConfigError, match="no entry Other"):
        AuthConfig.parse({**values, "authentication.realm": "Other"}, {})


def test_a_real_jks_store_is_refused_with_the_keytool_command(tmp_path: Path) -> None:
    store = tmp_path / "registry.jks"
    store.write_bytes(bytes.fromhex("feedfeed") + b"\x00" * 32)
    tls = TlsConfig.parse({"ssl.keystore.location": str(store), "ssl.keystore.password": "x"})
    with pytest.raises(ConfigError, match="keytool -importkeystore"):
        tls.server_context()


def test_a_pkcs12_store_typed_jks_is_read_and_a_wrong_password_is_named(ca: TestCA, tmp_path: Path) -> None:
    store = ca.pkcs12_keystore(tmp_path, "registry", "right")
    TlsConfig.parse({"ssl.keystore.location": str(store), "ssl.keystore.password": "right"}).server_context()
    wrong = TlsConfig.parse({"ssl.keystore.location": str(store), "ssl.keystore.password": "wrong"})
    with pytest.raises(ConfigError, match=r"ssl\.keystore\.password is wrong"):
        wrong.server_context()


def test_a_pem_keystore_with_an_encrypted_key(ca: TestCA, tmp_path: Path) -> None:
    cert, key = ca.pem_files(tmp_path, "registry", key_password="key-pass")
    both = tmp_path / "both.pem"
    both.write_bytes(key.read_bytes() + cert.read_bytes())
    values = {"ssl.keystore.location": str(both), "ssl.keystore.type": "PEM"}
    TlsConfig.parse({**values, "ssl.key.password": "key-pass"}).server_context()
    with pytest.raises(ConfigError, match=r"ssl\.key\.password"):
        TlsConfig.parse(values).server_context()


def test_a_workers_embedded_registry_takes_the_tls_and_authentication_keys(
    shared_broker: EmbeddedBroker, ca: TestCA, tmp_path: Path
) -> None:
    prefix = "embedded.schema.registry."
    config = WorkerConfig.model_validate(
        {
            "bootstrap.servers": shared_broker.bootstrap,
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            prefix + "listeners": f"https://127.0.0.1:{free_port()}",
            prefix + "kafkastore.topic": f"_schemas-{uuid.uuid4().hex[:8]}",
            prefix + "schema.registry.group.id": f"schema-registry-{uuid.uuid4().hex[:8]}",
            prefix + "ssl.keystore.location": str(ca.pkcs12_keystore(tmp_path, "registry", "store-pass")),
            prefix + "ssl.keystore.password": "store-pass",
            prefix + "ssl.keystore.type": "PKCS12",
            prefix + "authentication.method": "BASIC",
            prefix + "authentication.realm": "SchemaRegistry-Props",
            prefix + "java.security.auth.login.config": str(write_users(tmp_path)),
        }
    )
    registry = start_embedded_registry(config)
    assert registry is not None
    try:
        trusting = ssl.create_default_context(cafile=str(ca.write_pem(tmp_path / "ca.pem")))
        assert registry.url.startswith("https://")
        assert httpx.get(registry.url + "/subjects", verify=trusting).status_code == 401
        answer = httpx.get(registry.url + "/subjects", verify=trusting, auth=("alice", "alice-secret"))
        assert (answer.status_code, answer.json()) == (200, [])
    finally:
        registry.stop()


def test_a_follower_forwards_writes_to_the_primary_over_https_with_the_callers_credentials(
    shared_broker: EmbeddedBroker, ca: TestCA, tmp_path: Path
) -> None:
    jaas = write_users(tmp_path)
    shared = {
        "kafkastore.topic": f"_schemas-{uuid.uuid4().hex[:8]}",
        "schema.registry.group.id": f"schema-registry-{uuid.uuid4().hex[:8]}",
        "ssl.keystore.location": str(ca.pkcs12_keystore(tmp_path, "registry", "store-pass")),
        "ssl.keystore.password": "store-pass",
        "ssl.keystore.type": "PKCS12",
        # Trusted by the follower's calls to the primary.
        "ssl.truststore.location": str(ca.pkcs12_truststore(tmp_path, "trust", "trust-pass")),
        "ssl.truststore.password": "trust-pass",
        "ssl.truststore.type": "PKCS12",
        "inter.instance.protocol": "https",
        "authentication.method": "BASIC",
        "authentication.realm": "SchemaRegistry-Props",
        "authentication.roles": "admin,developer",
        "java.security.auth.login.config": str(jaas),
    }
    primary = start_https_registry(shared_broker.bootstrap, shared)
    follower = start_https_registry(shared_broker.bootstrap, {**shared, "leader.eligibility": "false"})
    try:
        assert primary.election.is_primary and not follower.election.is_primary
        ca_file = ca.write_pem(tmp_path / "ca.pem")
        schema_id = client(follower, ca_file, "alice:alice-secret").register_schema(
            "forwarded-value", Schema(json.dumps(PAYMENT), "AVRO")
        )
        # The primary wrote it (the follower only forwarded): read back from the primary.
        assert client(primary, ca_file, "carol:hashed-secret").get_schema(schema_id).schema_type == "AVRO"
        with pytest.raises(SchemaRegistryError) as refused:
            client(follower, ca_file, "alice:wrong").register_schema(
                "forwarded-value", Schema(json.dumps(PAYMENT), "AVRO")
            )
        assert refused.value.http_status_code == 401
    finally:
        follower.stop()
        primary.stop()
