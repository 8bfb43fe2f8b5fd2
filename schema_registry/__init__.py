"""A Confluent-compatible Schema Registry: Confluent's REST API with its state in the
compacted ``_schemas`` topic, in Confluent's record format.

The registry reaches the broker only as a Kafka client, so it runs against Sluiceway's
broker and Apache Kafka alike, and imports nothing from ``connect``.

- ``errors``: Confluent's error codes and messages;
- ``records``: the ``_schemas`` topic's keys and values;
- ``state``: what the records say (subjects, versions, ids, configs, modes), pure;
- ``schemas``: parsing a schema of each type and its canonical text;
- ``compatibility``: the compatibility levels and their rules, pure;
- ``store``: the topic, read to its end at start and tailed, written through;
- ``service``: the operations of the REST API on top of the store;
- ``rest``: the HTTP API (FastAPI); ``server``: configuration and ``sluiceway schema-registry``.
"""
