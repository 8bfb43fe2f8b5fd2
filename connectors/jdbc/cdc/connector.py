"""PostgresCdcSourceConnector: Debezium's PostgreSQL connector (pgoutput), one task.

The connector itself only validates the configuration and hands it to its single task:
one replication slot is one ordered stream, which one reader consumes (Debezium's
PostgreSQL connector runs one task whatever ``tasks.max`` says).
"""

from __future__ import annotations

from collections.abc import Mapping

from connect.api import ExactlyOnceSupport, Task
from connectors.jdbc.cdc.config import PostgresCdcConfig
from connectors.jdbc.cdc.task import VERSION, PostgresCdcSourceTask
from connectors.jdbc.debezium.connector import SingleTaskConnector

__all__ = ["PostgresCdcSourceConnector"]


class PostgresCdcSourceConnector(SingleTaskConnector):
    """Captures row changes of a PostgreSQL database through logical replication (pgoutput)
    and writes them as Debezium change events to ``<topic.prefix>.<schema>.<table>``.

    Needs ``wal_level=logical`` on the server and a user with the REPLICATION attribute
    (and the right to create the publication, unless ``publication.autocreate.mode=disabled``).
    """

    Config = PostgresCdcConfig
    aliases = ("io.debezium.connector.postgresql.PostgresConnector",)

    def version(self) -> str:
        return VERSION

    def task_class(self) -> type[Task]:
        return PostgresCdcSourceTask

    def exactly_once_support(self, props: Mapping[str, str]) -> ExactlyOnceSupport:
        # Events carry their LSN in the offset, and a restarted task skips what the slot
        # replays up to the committed one (Debezium declares the same). An initial snapshot
        # cut short is taken again from the start.
        return ExactlyOnceSupport.SUPPORTED
