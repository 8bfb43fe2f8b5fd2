"""Scenarios against the real thing (Apache Kafka, PostgreSQL images) through testcontainers.

They need a Docker engine; where none runs (CI here) they skip, saying so. Each one has a
twin that runs everywhere against Sluiceway's broker and throwaway servers.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest


def docker_or_skip() -> None:
    try:
        import docker

        docker.from_env().ping()
    except Exception as exc:
        pytest.skip(f"no Docker engine to run containers ({type(exc).__name__}: {exc})")


@pytest.fixture(scope="session")
def kafka_bootstrap() -> Iterator[str]:
    """Apache Kafka (Confluent's cp-kafka image) on a mapped port."""
    docker_or_skip()
    from testcontainers.kafka import KafkaContainer

    with KafkaContainer("confluentinc/cp-kafka:7.6.0") as kafka:
        yield kafka.get_bootstrap_server()
