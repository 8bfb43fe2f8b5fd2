"""JDBC-style source connectors, importing only ``connect.api`` and database drivers:

- ``JdbcSourceConnector`` (``connectors.jdbc.query``): query-based change capture on
  any database SQLAlchemy reaches (Confluent's JDBC source keys and semantics);
- ``PostgresCdcSourceConnector`` (``connectors.jdbc.cdc``): PostgreSQL logical
  replication (pgoutput) in Debezium's event format;
- ``MySqlConnector`` and ``MariaDbConnector`` (``connectors.jdbc.mysql``): MySQL/MariaDB
  row-based binlog capture in Debezium's event format.
"""

from connectors.jdbc.cdc import PostgresCdcSourceConnector, PostgresCdcSourceTask
from connectors.jdbc.mysql.connector import MariaDbConnector, MySqlConnector
from connectors.jdbc.mysql.task import MariaDbSourceTask, MySqlSourceTask
from connectors.jdbc.query import JdbcSourceConnector, JdbcSourceTask

__all__ = [
    "JdbcSourceConnector",
    "JdbcSourceTask",
    "MariaDbConnector",
    "MariaDbSourceTask",
    "MySqlConnector",
    "MySqlSourceTask",
    "PostgresCdcSourceConnector",
    "PostgresCdcSourceTask",
]
