from __future__ import annotations

import os

# Broker responses built with a field name no version of their entity has fail here, not
# silently in production (broker/protocol/build.py); brokers started as processes inherit it.
os.environ["SLUICEWAY_STRICT_ENTITIES"] = "1"

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from broker.server import EmbeddedBroker
from tests.support import embedded_broker, unique


@pytest.fixture(autouse=True)
def _root_logging_restored() -> Iterator[None]:
    """Undo what a CLI ``main()`` run in-process does to the root logger.

    ``configure_logging`` points the root logger at the ``sys.stderr`` of the moment, which
    inside a test is pytest's capture file; once that closes, every later log record of the
    run fails to print ("Logging error ... I/O operation on closed file") and diagnostics of
    unrelated failures are lost with them.
    """
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


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


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One real local Spark session for the whole run (a JVM takes seconds to start).

    It is the session a Spark sink task running in this process uses too
    (``spark_sink.session.shared_session``), so in-process workers and tests share it.
    """
    from spark_sink.session import shared_session

    session = shared_session(
        "local[2]",
        "sluiceway-tests",
        # Small tests: two shuffle partitions instead of 200 keep each query quick.
        {
            "spark.sql.shuffle.partitions": "2",
            "spark.default.parallelism": "2",
            # Catalog tables the tests create live in the run's temp dir, not the checkout.
            "spark.sql.warehouse.dir": str(tmp_path_factory.mktemp("spark-warehouse")),
        },
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
