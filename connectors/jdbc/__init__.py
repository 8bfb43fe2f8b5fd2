"""JDBC-style source connectors, importing only ``connect.api`` and database drivers:

- ``JdbcSourceConnector`` (``connectors.jdbc.query``): query-based change capture on
  any database SQLAlchemy reaches (Confluent's JDBC source keys and semantics);
- ``PostgresCdcSourceConnector`` (``connectors.jdbc.cdc``): PostgreSQL logical
  replication (pgoutput) in Debezium's event format;
- ``MySqlConnector`` and ``MariaDbConnector`` (``connectors.jdbc.mysql``): MySQL/MariaDB
  row-based binlog capture in Debezium's event format;
- ``JdbcSinkConnector`` and ``DebeziumJdbcSinkConnector`` (``connectors.jdbc.sink``):
  Confluent's and Debezium's JDBC sinks.
"""

from connectors.jdbc.cdc import PostgresCdcSourceConnector, PostgresCdcSourceTask
from connectors.jdbc.mysql.connector import MariaDbConnector, MySqlConnector
from connectors.jdbc.mysql.task import MariaDbSourceTask, MySqlSourceTask
from connectors.jdbc.query import JdbcSourceConnector, JdbcSourceTask
from connectors.jdbc.sink import (
    DebeziumJdbcSinkConnector,
    DebeziumJdbcSinkTask,
    JdbcSinkConnector,
    JdbcSinkTask,
)

__all__ = [
    "DebeziumJdbcSinkConnector",
    "DebeziumJdbcSinkTask",
    "JdbcSinkConnector",
    "JdbcSinkTask",
    "JdbcSourceConnector",
    "JdbcSourceTask",
    "MariaDbConnector",
    "MariaDbSourceTask",
    "MySqlConnector",
    "MySqlSourceTask",
    "PostgresCdcSourceConnector",
    "PostgresCdcSourceTask",
]
