"""JDBC-style source connectors, importing only ``connect.api`` and database drivers:

- ``JdbcSourceConnector`` (``connectors.jdbc.query``): query-based change capture on
  any database SQLAlchemy reaches (Confluent's JDBC source keys and semantics);
- ``PostgresCdcSourceConnector`` (``connectors.jdbc.cdc``): PostgreSQL logical
  replication (pgoutput) in Debezium's event format.
"""

from connectors.jdbc.cdc import PostgresCdcSourceConnector, PostgresCdcSourceTask
from connectors.jdbc.query import JdbcSourceConnector, JdbcSourceTask

__all__ = ["JdbcSourceConnector", "JdbcSourceTask", "PostgresCdcSourceConnector", "PostgresCdcSourceTask"]
