"""Sluiceway's embedded broker: a durable, single-node, Kafka-wire-compatible broker.

Run it with ``sluiceway broker`` (or ``connect-broker``) and a Kafka
``server.properties``; embed it with ``broker.server.EmbeddedBroker``. Clients
reach it only over the Kafka protocol. Non-goals: replication, multi-node
clusters, transactions, KRaft (Apache Kafka's job).
"""
