"""Query-based JDBC source: Confluent's ``JdbcSourceConnector`` keys and semantics, over SQLAlchemy.

Copies tables (or one custom query) of PostgreSQL, MySQL/MariaDB, SQLite or any
database SQLAlchemy reaches into topics, by periodic queries:

- ``connector``: ``JdbcSourceConnector``, which lists the tables, spreads them over
  the tasks, and (``monitor``) watches for new and dropped tables;
- ``task``: ``JdbcSourceTask``, which queries its tables in turn, one ``querier`` each;
- ``config``: every key, with Confluent's names and defaults;
- ``criteria``: the queries of each mode, the offsets, and what the timestamp modes
  can miss (late commits beyond ``timestamp.delay.interval.ms``);
- ``types``/``rows``: column types to Connect schemas, rows to key and value Structs;
- ``urls``: JDBC URLs to SQLAlchemy URLs; ``database``: connections with retries;
  ``dialects``: what differs per database; ``tables``: table names, filters, grouping.
"""

from connectors.jdbc.query.connector import JdbcSourceConnector
from connectors.jdbc.query.task import JdbcSourceTask

__all__ = ["JdbcSourceConnector", "JdbcSourceTask"]
