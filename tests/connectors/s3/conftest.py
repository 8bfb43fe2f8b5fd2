"""moto's S3 server (in process, on an ephemeral port), a fault proxy in front of it, and a
worker with its broker, for the S3 sink's tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from sluiceway.embedded import EmbeddedConnect
from tests.contract_servers.s3 import MotoS3Server, S3FaultProxy
from tests.support import unique


@pytest.fixture(scope="module")
def s3_server() -> Iterator[MotoS3Server]:
    with MotoS3Server() as server:
        yield server


@pytest.fixture
def proxy(s3_server: MotoS3Server) -> Iterator[S3FaultProxy]:
    with S3FaultProxy(s3_server.url) as p:
        yield p


@pytest.fixture
def bucket(s3_server: MotoS3Server) -> str:
    name = unique("lake").lower()
    s3_server.client().create_bucket(Bucket=name)
    return name


@pytest.fixture
def s3(s3_server: MotoS3Server) -> Any:
    return s3_server.client()


@pytest.fixture(scope="module")
def connect(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedConnect]:
    with EmbeddedConnect(tmp_path_factory.mktemp("s3-worker")) as c:
        yield c
