"""JDBC sinks: Confluent's ``JdbcSinkConnector`` and Debezium's ``JdbcSinkConnector`` keys and
semantics over one writer, into PostgreSQL, MySQL/MariaDB, SQLite (SQLAlchemy).

- ``connector``/``task``: the two connectors and their tasks (retries, exactly-once resume);
- ``config``: both key sets, read into one ``SinkSettings``;
- ``records``: what a record asks (write, delete, nothing; Debezium envelopes) and its columns;
- ``types``: Connect schemas to column types, values to bound parameters;
- ``statements``: INSERT / upsert / UPDATE / DELETE per database; ``tables``: create, evolve;
- ``binding``: a plan bound to its table (statement, converters, parameters per record);
- ``writer``: batches into ``executemany`` in one transaction, bad records isolated,
  exactly-once offsets.
"""

from connectors.jdbc.sink.connector import DebeziumJdbcSinkConnector, JdbcSinkConnector
from connectors.jdbc.sink.task import DebeziumJdbcSinkTask, JdbcSinkTask

__all__ = ["DebeziumJdbcSinkConnector", "DebeziumJdbcSinkTask", "JdbcSinkConnector", "JdbcSinkTask"]
