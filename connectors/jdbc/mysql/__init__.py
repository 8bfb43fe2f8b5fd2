"""Log-based change data capture for MySQL and MariaDB in Debezium's event format.

``MySqlConnector`` (alias ``io.debezium.connector.mysql.MySqlConnector``) and
``MariaDbConnector`` (``io.debezium.connector.mariadb.MariaDbConnector``) take a consistent
snapshot of the captured tables, then stream their changes from the row-based binlog
(python-mysql-replication), writing Debezium change events to ``<topic.prefix>.<db>.<table>``.
Modules:

- ``config``: the settings (Debezium's keys and defaults); ``values``: column values to Connect values;
- ``schema``, ``ddl``: the table model and DDL parsing; ``history``: the schema history topic;
  ``schema_changes``: schema change events;
- ``events``: the source block, table models and records; ``stream``: binlog events to records;
- ``offsets``: offsets, positions and the start-up plan;
- ``server``, ``snapshot``, ``faults``: the I/O and its errors;
- ``connector``, ``task``: the plugin classes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from connectors.jdbc.mysql.connector import MariaDbConnector, MySqlConnector
    from connectors.jdbc.mysql.task import MariaDbSourceTask, MySqlSourceTask

__all__ = ["MariaDbConnector", "MariaDbSourceTask", "MySqlConnector", "MySqlSourceTask"]


def __getattr__(name: str) -> Any:
    # Imported on first use, so that the pure modules (schema, ddl, values) load without
    # the drivers and the Kafka client the task needs.
    if name in ("MySqlConnector", "MariaDbConnector"):
        from connectors.jdbc.mysql import connector

        return getattr(connector, name)
    if name in ("MySqlSourceTask", "MariaDbSourceTask"):
        from connectors.jdbc.mysql import task

        return getattr(task, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
