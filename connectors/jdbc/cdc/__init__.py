"""Log-based change data capture for PostgreSQL in Debezium's event format.

``PostgresCdcSourceConnector`` (alias ``io.debezium.connector.postgresql.PostgresConnector``)
takes a consistent snapshot of the captured tables, then streams their changes from a
logical replication slot with PostgreSQL's built-in ``pgoutput`` plugin, writing
Debezium change events (``before``/``after``/``source``/``op``) to
``<topic.prefix>.<schema>.<table>``. Modules:

- ``config``: the settings (Debezium's keys and defaults); ``filters``: include/exclude lists;
- ``pgoutput``: decoding the replication messages; ``values``: text values to Connect values;
- ``catalog``: what pg_catalog says (keys, types); ``table_model``: per-table schemas;
- ``events``: the envelope, source block and heartbeats; ``changes``: messages to events;
- ``offsets``: offsets, positions and the start-up plan; ``lsn_tracker``: what the slot may confirm;
- ``connection``, ``replication``, ``snapshot``, ``publication``, ``slots``, ``faults``: the I/O
  and its errors;
- ``connector``, ``task``: the plugin classes.
"""

from connectors.jdbc.cdc.connector import PostgresCdcSourceConnector
from connectors.jdbc.cdc.task import PostgresCdcSourceTask

__all__ = ["PostgresCdcSourceConnector", "PostgresCdcSourceTask"]
