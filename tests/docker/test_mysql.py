"""MySQL CDC against MySQL itself (8.4, the current LTS, with GTIDs on), where the rest of the
suite has MariaDB: the same task scenarios of tests/connectors/jdbc/test_mysql_task.py and
the column types of test_mysql_values.py, run here with this module's ``mariadb_binlog``
(a MySQL container seen through the surface tests/databases.py's MariaDBServer offers),
plus MySQL's own GTIDs (``uuid:n``) where the MariaDB scenario checks MariaDB's.

What differs from MariaDB and is exercised only here: MySQL's binary JSON in row events,
``SHOW BINARY LOG STATUS`` (8.4 has no ``SHOW MASTER STATUS``), GTID sets as offsets, and
caching_sha2_password. The scenarios MariaDB alone can run stay there (MariaDB GTIDs, the
BINLOG MONITOR privilege of the lock-tables snapshot).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pymysql
import pytest

from broker.server import EmbeddedBroker
from connectors.jdbc.mysql.task import MySqlSourceTask
from tests.connectors.jdbc.test_cdc_support import workers
from tests.connectors.jdbc.test_mysql_support import (
    BinlogDatabase,
    Worker,
    binlog_db,
    offset,
)
from tests.connectors.jdbc.test_mysql_task import (  # noqa: F401 - collected here, against MySQL
    changes_of_one_table,
    test_a_bulk_insert_comes_as_one_batch_of_the_same_records,
    test_a_purged_binlog_fails_the_task_unless_when_needed,
    test_a_restarted_task_resumes_inside_a_transaction_without_loss_or_repeats,
    test_alter_table_mid_stream_applies_to_later_rows,
    test_heartbeats_carry_the_position_reached_while_idle,
    test_no_data_and_never_modes_stream_without_reading_rows,
    test_rotation_and_a_server_restart_are_ridden_out,
    test_server_settings_the_connector_needs_are_checked,
    test_snapshot_and_stream_meet_without_loss_or_duplicates_under_concurrent_writes,
)
from tests.connectors.jdbc.test_mysql_values import (  # noqa: F401 - collected here, against MySQL
    test_default_modes_match_debezium_and_both_readers,
    test_other_modes_match_both_readers,
    typed,
)
from tests.databases import mysql_execute
from tests.docker.conftest import docker_or_skip
from tests.support import free_port

pytestmark = pytest.mark.docker
FIXTURES = (binlog_db, workers, typed)  # the scenarios' fixtures, here on MySQL

IMAGE = "mysql:8.4"
SERVER_OPTIONS = [
    "--log-bin=mysql-bin",  # the scenarios expect MariaDB's file names (8.4's default is binlog.N)
    "--server-id=1",
    "--binlog-format=ROW",
    "--binlog-row-image=FULL",
    "--gtid-mode=ON",
    "--enforce-gtid-consistency=ON",
    # MariaDB's default sql_mode, so the shared column values (a zero date among them) insert
    # alike; MySQL's own default adds NO_ZERO_DATE and NO_ZERO_IN_DATE.
    "--sql-mode=STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION",
]


class MySQLContainerServer:
    """MySQL in a container on a fixed port of 127.0.0.1 (so a restart keeps it), root
    without a password from any host."""

    def __init__(self) -> None:
        from testcontainers.core.container import DockerContainer

        self.port = free_port()
        self._container = (
            DockerContainer(IMAGE)
            .with_env("MYSQL_ALLOW_EMPTY_PASSWORD", "yes")
            .with_env("MYSQL_ROOT_HOST", "%")
            .with_command(SERVER_OPTIONS)
        )
        # The host address as well as the port, which with_bind_ports cannot say.
        ports: dict[str, Any] = self._container.ports
        ports["3306/tcp"] = ("127.0.0.1", self.port)

    def url(self, database: str = "test", driver: str = "mysql+pymysql") -> str:
        return f"{driver}://root@127.0.0.1:{self.port}/{database}"

    def start(self) -> MySQLContainerServer:
        self._container.start()
        self._wait()
        self.execute("CREATE DATABASE IF NOT EXISTS test")
        return self

    def _wait(self, timeout: float = 180) -> None:
        # The image's entrypoint first runs a server without networking to initialise the
        # data directory, so the port answering is the real server.
        deadline = time.monotonic() + timeout
        while True:
            try:
                pymysql.connect(host="127.0.0.1", port=self.port, user="root", connect_timeout=5).close()
                return
            except pymysql.err.OperationalError:
                if time.monotonic() > deadline:
                    logs = self._container.get_logs()
                    raise AssertionError(f"MySQL did not start in {timeout} s: {logs!r}"[-3000:]) from None
                time.sleep(1)

    def execute(self, sql: str, database: str | None = None) -> None:
        mysql_execute(self.port, sql, database)

    def restart(self) -> None:
        self._container.get_wrapped_container().restart(timeout=30)
        self._wait()

    def remove(self) -> None:
        self._container.stop()


@pytest.fixture(scope="module")
def mariadb_binlog() -> Iterator[MySQLContainerServer]:
    docker_or_skip()
    server = MySQLContainerServer().start()
    try:
        yield server
    finally:
        server.remove()


_GTID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:\d+$")
_GTID_SET = re.compile(r"^[0-9a-f-]{36}:\d+(-\d+)?(:\d+(-\d+)?)*(,[0-9a-f-]{36}:\d+(-\d+)?(:\d+(-\d+)?)*)*$")


def test_updates_deletes_tombstones_and_mysql_gtids(
    binlog_db: BinlogDatabase,
    shared_broker: EmbeddedBroker,
    workers: list[Worker],
) -> None:
    update = changes_of_one_table(binlog_db, shared_broker, workers, MySqlSourceTask)
    source = update.value.get("source")
    assert source.get("connector") == "mysql"
    assert _GTID.match(source.get("gtid") or ""), source.get("gtid")
    # The offset holds a MySQL GTID set (Debezium's "gtids"), not MariaDB's domain-server-seq.
    assert _GTID_SET.match(offset(update)["gtids"] or ""), offset(update)
    assert offset(update)["event"] == 1
