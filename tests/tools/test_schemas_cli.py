"""``sluiceway schemas`` against our registry on a real broker: what an operator does from a
shell, with the exit status a script can test."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from broker.server import EmbeddedBroker
from sluiceway.cli import main
from tests.schema_registry.support import running_registry
from tests.support import free_port

V1 = {"type": "record", "name": "Payment", "fields": [{"name": "id", "type": "string"}]}
V2 = {**V1, "fields": [*V1["fields"], {"name": "amount", "type": "double", "default": 0.0}]}
BAD = {**V1, "fields": [*V1["fields"], {"name": "currency", "type": "string"}]}


@pytest.fixture
def url(shared_broker: EmbeddedBroker) -> Iterator[str]:
    with running_registry(shared_broker.bootstrap) as server:
        yield server.url


def schemas(url: str, *args: str) -> int:
    return main(["schemas", "--schema-registry", url, *args])


def test_register_list_show_check_delete(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = {}
    for name, schema in (("v1", V1), ("v2", V2), ("bad", BAD)):
        files[name] = tmp_path / f"{name}.avsc"
        files[name].write_text(json.dumps(schema))
    assert schemas(url, "register", "pay-value", str(files["v1"])) == 0
    assert schemas(url, "register", "pay-value", str(files["v2"])) == 0
    assert "id 1" in capsys.readouterr().out
    assert schemas(url, "list") == 0
    assert "pay-value\tversions 1,2\tlatest id 2" in capsys.readouterr().out
    assert schemas(url, "show", "pay-value", "--version", "1") == 0
    shown = capsys.readouterr().out
    assert shown.startswith("pay-value version 1, id 1, AVRO") and '"name": "Payment"' in shown
    assert schemas(url, "check", "pay-value", str(files["v2"])) == 0
    assert schemas(url, "check", "pay-value", str(files["bad"])) == 1
    assert "READER_FIELD_MISSING_DEFAULT_VALUE" in capsys.readouterr().out
    assert schemas(url, "register", "pay-value", str(files["bad"])) == 1
    assert "incompatible" in capsys.readouterr().err
    assert schemas(url, "config", "pay-value", "--set", "none") == 0
    assert schemas(url, "config", "pay-value") == 0
    assert "pay-value: NONE" in capsys.readouterr().out
    assert schemas(url, "delete", "pay-value", "--version", "1") == 0
    assert schemas(url, "delete", "pay-value", "--permanent") == 1  # live versions first
    assert "was not deleted first" in capsys.readouterr().err
    assert schemas(url, "delete", "pay-value") == 0
    assert schemas(url, "delete", "pay-value", "--permanent") == 0
    capsys.readouterr()
    assert schemas(url, "list", "--deleted") == 0
    assert capsys.readouterr().out.strip() == "no subjects"


def test_an_unreachable_registry_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    assert schemas(f"http://127.0.0.1:{free_port()}", "list") == 1
    assert "cannot reach the Schema Registry at http://127.0.0.1:" in capsys.readouterr().err
