"""Shared by the REST security tests: one broker for every worker, a CA, TLS clients."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest

from connect.runtime.config import StandaloneConfig
from connect.runtime.embedded_broker import start_embedded_broker
from sluiceway.embedded import free_port
from tests.certificates import TestCA

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"


@pytest.fixture(scope="package")
def bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A broker the workers of these tests share (each worker has its own offsets file)."""
    address = f"127.0.0.1:{free_port()}"
    config = StandaloneConfig.parse(
        {
            "bootstrap.servers": address,
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            "offset.storage.file.filename": "/dev/null",
            "embedded.broker.enable": "true",
            "embedded.broker.log.dirs": str(tmp_path_factory.mktemp("broker")),
        }
    )
    handle = start_embedded_broker(config)
    try:
        yield address
    finally:
        handle.stop()


@pytest.fixture(scope="package")
def ca() -> TestCA:
    return TestCA()


@pytest.fixture(scope="package")
def ca_pem(ca: TestCA, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ca.write_pem(tmp_path_factory.mktemp("ca") / "ca.pem")


def trusting(ca_pem: Path, client_cert: tuple[Path, Path] | None = None) -> ssl.SSLContext:
    """A client context that trusts the test CA (and shows ``client_cert`` if given)."""
    ctx = ssl.create_default_context(cafile=str(ca_pem))
    if client_cert is not None:
        ctx.load_cert_chain(*client_cert)
    return ctx


def source_config(tmp_path: Path, topic: str) -> dict[str, str]:
    data = tmp_path / f"{topic}.txt"
    data.write_text("one\ntwo\n")
    return {"connector.class": FILE_SOURCE, "file": str(data), "topic": topic, "tasks.max": "1"}
