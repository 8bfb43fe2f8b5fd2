"""An Elasticsearch contract server and a worker (with its broker) for the sink's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sluiceway.embedded import EmbeddedConnect
from tests.contract_servers.elasticsearch import ElasticsearchContractServer


@pytest.fixture
def es() -> Iterator[ElasticsearchContractServer]:
    with ElasticsearchContractServer() as server:
        yield server


@pytest.fixture(scope="module")
def connect(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedConnect]:
    with EmbeddedConnect(tmp_path_factory.mktemp("es-worker")) as c:
        yield c
