"""python-schema-registry-client, a registry client we did not write, drives the registry
through a whole Avro life cycle: register (twice: one id), fetch by id and by subject,
check compatibility both ways, change a subject's level, register under it, delete a
version and the subject. ``run_avro_scenario`` is the scenario; ``tests/docker/
test_schema_registry_confluent.py`` runs the same one against Confluent's own registry.

Its top-level package is also named ``schema_registry``, as ours is, so it cannot be
imported here: ``make install`` puts it apart (``<venv>/judges``) and
``run_python_schema_registry_client`` runs the scenario in a process of its own with only
that directory on the path (see ``tests/schema_registry/support.py``)."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from broker.server import EmbeddedBroker
from schema_registry.server import RegistryServer
from tests.certificates import TestCA
from tests.schema_registry.support import run_python_schema_registry_client, running_registry
from tests.schema_registry.test_security import start_https_registry, write_users

V1 = {"type": "record", "name": "Account", "namespace": "bank", "fields": [{"name": "id", "type": "string"}]}
# FULL-compatible with V1: a new field with a default reads old data and is ignored by old readers.
V2 = {**V1, "fields": [*V1["fields"], {"name": "owner", "type": "string", "default": ""}]}
# Not BACKWARD-compatible with V1: a new field without a default cannot read old data.
BAD = {**V1, "fields": [*V1["fields"], {"name": "branch", "type": "string"}]}

_SCRIPT = """
import json, sys
import httpx
from schema_registry.client import SchemaRegistryClient, schema

url, user = sys.argv[1:3]
auth = httpx.BasicAuth(*user.split(":", 1)) if user else None
client = SchemaRegistryClient(url=url, auth=auth)
v1, v2, bad = (schema.AvroSchema(s) for s in json.loads(sys.argv[3]))
subject = "accounts-value"
seen = {}
seen["id"] = client.register(subject, v1)
seen["again"] = client.register(subject, v1)
seen["by_id"] = client.get_by_id(seen["id"]).raw_schema
latest = client.get_schema(subject)
seen["latest"] = [latest.version, latest.schema_id]
seen["compatible"] = client.test_compatibility(subject, v2)
seen["incompatible"] = client.test_compatibility(subject, bad)
seen["verbose"] = client.test_compatibility(subject, bad, verbose=True)
seen["updated"] = client.update_compatibility("FULL", subject)
seen["level"] = client.get_compatibility(subject)
seen["v2"] = client.register(subject, v2)
seen["versions"] = client.get_versions(subject)
seen["checked"] = client.check_version(subject, v2).version
seen["deleted_version"] = client.delete_version(subject, 2)
seen["deleted_subject"] = client.delete_subject(subject)
seen["subjects"] = client.get_subjects()
print(json.dumps(seen))
"""


def run_avro_scenario(url: str, cwd: Path, user_info: str = "") -> None:
    """The scenario against the registry at ``url``, with its assertions."""
    script = textwrap.dedent(_SCRIPT) + "\n"
    result = run_python_schema_registry_client(
        f"import sys; sys.argv[1:] = {[url, user_info, json.dumps([V1, V2, BAD])]!r}\n" + script,
        cwd,
    )
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    assert seen["again"] == seen["id"]
    assert seen["by_id"] == V1
    assert seen["latest"] == [1, seen["id"]]
    assert (seen["compatible"], seen["incompatible"]) == (True, False)
    assert seen["verbose"]["is_compatible"] is False and seen["verbose"]["messages"]
    assert (seen["updated"], seen["level"]) == (True, "FULL")
    assert seen["v2"] != seen["id"]
    assert seen["versions"] == [1, 2] and seen["checked"] == 2
    assert seen["deleted_version"] == 2 and seen["deleted_subject"] == [1]
    assert "accounts-value" not in seen["subjects"]


@pytest.fixture
def registry(shared_broker: EmbeddedBroker) -> Iterator[RegistryServer]:
    with running_registry(shared_broker.bootstrap) as server:
        yield server


def test_python_schema_registry_client_drives_the_registry(registry: RegistryServer, tmp_path: Path) -> None:
    run_avro_scenario(registry.url, tmp_path)


def test_python_schema_registry_client_over_https_with_basic_auth(
    shared_broker: EmbeddedBroker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ca = TestCA()
    server = start_https_registry(
        shared_broker.bootstrap,
        {
            "ssl.keystore.location": str(ca.pkcs12_keystore(tmp_path, "registry", "store-pass")),
            "ssl.keystore.password": "store-pass",
            "ssl.keystore.type": "PKCS12",
            "authentication.method": "BASIC",
            "authentication.realm": "SchemaRegistry-Props",
            "java.security.auth.login.config": str(write_users(tmp_path)),
        },
    )
    try:
        # The client reads its ca_location only together with a client certificate; without
        # one it trusts SSL_CERT_FILE (which its process inherits).
        monkeypatch.setenv("SSL_CERT_FILE", str(ca.write_pem(tmp_path / "ca.pem")))
        run_avro_scenario(server.url, tmp_path, user_info="alice:alice-secret")
    finally:
        server.stop()
