"""A Schema Registry for a test: in this process, on a free port, with a topic of its own
(so tests sharing a broker share no state)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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


# python-schema-registry-client, a second registry client we did not write, is a judge. Its
# top-level package is also named ``schema_registry``, so `make install` puts it apart, in
# <venv>/judges, and it runs in a process of its own with only that directory on the path.
JUDGES = Path(sys.prefix) / "judges"


def run_python_schema_registry_client(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``script`` run where ``import schema_registry`` is python-schema-registry-client."""
    if not (JUDGES / "schema_registry" / "client").is_dir():
        raise AssertionError(
            f"python-schema-registry-client is not in {JUDGES}: `make install` puts it there "
            f"(pip install --target {JUDGES} 'python-schema-registry-client>=2.6,<3')"
        )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(JUDGES)
    return subprocess.run(
        [sys.executable, "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )
