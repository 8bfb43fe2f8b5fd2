"""An API v2 contract server and a worker (with its broker) for the Twitter source's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sluiceway.embedded import EmbeddedConnect
from tests.contract_servers.twitter import TwitterContractServer


@pytest.fixture
def twitter() -> Iterator[TwitterContractServer]:
    with TwitterContractServer(keepalive_s=1) as server:
        yield server


@pytest.fixture(scope="module")
def connect(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedConnect]:
    with EmbeddedConnect(tmp_path_factory.mktemp("twitter-worker"), {"offset.flush.interval.ms": "200"}) as c:
        yield c
