from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from broker.server import EmbeddedBroker
from tests.support import embedded_broker, unique


@pytest.fixture(scope="session")
def shared_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedBroker]:
    """One real in-process broker for tests that only need isolation by topic and group names."""
    with embedded_broker(tmp_path_factory.mktemp("shared-broker")) as eb:
        yield eb


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[EmbeddedBroker]:
    """A fresh in-process broker with its own log directory."""
    with embedded_broker(tmp_path / "logs") as eb:
        yield eb


@pytest.fixture
def topic() -> str:
    return unique("topic")


@pytest.fixture
def group() -> str:
    return unique("group")
