"""A Schema Registry for a test: in this process, on a free port, with a topic of its own
(so tests sharing a broker share no state)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from schema_registry.server import RegistryConfig, RegistryServer
from tests.support import free_port


def start_registry(
    bootstrap: str, topic: str | None = None, port: int | None = None, **settings: str
) -> RegistryServer:
    """A started registry on ``bootstrap`` (``settings``: more registry keys)."""
    values = {
        "listeners": f"http://127.0.0.1:{port or free_port()}",
        "kafkastore.bootstrap.servers": bootstrap,
        "kafkastore.topic": topic or f"_schemas-{uuid.uuid4().hex[:8]}",
        **settings,
    }
    return RegistryServer(RegistryConfig.parse(values)).start()


@contextmanager
def running_registry(bootstrap: str, **settings: str) -> Iterator[RegistryServer]:
    server = start_registry(bootstrap, **settings)
    try:
        yield server
    finally:
        server.stop()
