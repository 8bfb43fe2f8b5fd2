"""The replication stream waits for its socket even when the process has 1,024 descriptors
open or more: ``select.select`` refused those ("filedescriptor out of range in select()")
and the CDC task failed in a worker, or a test process, with many connections
(``tests/connectors/jdbc/test_cdc_avro.py`` failed so in a full CI run)."""

from __future__ import annotations

import os
import resource
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from connect.api import SecretStr
from connectors.jdbc.cdc.replication import ReplicationStream
from tests.connectors.jdbc.test_cdc_support import CdcDatabase, cdc_db  # noqa: F401 (fixture)

_SELECT_LIMIT = 1024  # FD_SETSIZE


@dataclass(frozen=True)
class _Settings:
    hostname: str
    port: int
    user: str
    dbname: str
    password: SecretStr | None = None
    sslmode: str = "disable"


@pytest.fixture
def descriptors_past_select() -> Iterator[None]:
    """Hold descriptors open so the next ones the process opens are numbered past 1,024."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = _SELECT_LIMIT + 256
    if soft < wanted:
        if hard != resource.RLIM_INFINITY and hard < wanted:
            pytest.skip(f"the hard limit on open files ({hard}) keeps descriptors under {_SELECT_LIMIT}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    held: list[int] = []
    base = os.open(os.devnull, os.O_RDONLY)
    held.append(base)
    try:
        while held[-1] < _SELECT_LIMIT + 8:
            held.append(os.dup(base))
        yield
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_stream_on_a_descriptor_past_1024_waits_and_reads(
    cdc_db: CdcDatabase,  # noqa: F811 (the fixture)
    descriptors_past_select: None,
) -> None:
    cdc_db.run("CREATE TABLE t (id int PRIMARY KEY)", "CREATE PUBLICATION pub FOR TABLE t")
    server = cdc_db.server
    settings = _Settings(server.host, server.port, server.USER, cdc_db.name)
    stream = ReplicationStream(settings, f"slot_{uuid.uuid4().hex[:12]}", "pub", 1.0)
    stream.open()
    try:
        assert stream._conn.fileno() > _SELECT_LIMIT  # the case select.select refused
        stream.create_slot(export_snapshot=False)
        stream.start()
        stream.read(0.3)  # nothing to read yet: it waits (select.select raised here)
        cdc_db.run("INSERT INTO t VALUES (1)")
        payloads = []
        deadline = time.monotonic() + 15
        while not any(p[:1] == b"I" for p in payloads) and time.monotonic() < deadline:
            msg = stream.read(0.5)
            if msg is not None:
                payloads.append(bytes(msg.payload))
        assert any(p[:1] == b"I" for p in payloads), payloads  # pgoutput's Insert message
    finally:
        stream.close()
