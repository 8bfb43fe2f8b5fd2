"""MirrorMaker 2: Kafka's three replication connectors (MirrorSourceConnector,
MirrorCheckpointConnector, MirrorHeartbeatConnector) under Kafka's class names, copying
topics, consumer-group offsets and topic configs between two Kafka-protocol clusters.
Imports only ``connect.api`` from the framework, plus confluent-kafka for the clusters."""

from connectors.mirror.policy import DefaultReplicationPolicy, IdentityReplicationPolicy

__all__ = ["DefaultReplicationPolicy", "IdentityReplicationPolicy"]
