"""MirrorMaker 2: Kafka's three replication connectors (MirrorSourceConnector,
MirrorCheckpointConnector, MirrorHeartbeatConnector) under Kafka's class names, copying
topics, consumer-group offsets and topic configs between two Kafka-protocol clusters.
Imports only ``connect.api`` from the framework, plus confluent-kafka for the clusters."""

from connectors.mirror.checkpoint_connector import MirrorCheckpointConnector
from connectors.mirror.checkpoint_task import MirrorCheckpointTask
from connectors.mirror.heartbeat import MirrorHeartbeatConnector, MirrorHeartbeatTask
from connectors.mirror.policy import DefaultReplicationPolicy, IdentityReplicationPolicy
from connectors.mirror.source_connector import MirrorSourceConnector
from connectors.mirror.source_task import MirrorSourceTask

__all__ = [
    "DefaultReplicationPolicy",
    "IdentityReplicationPolicy",
    "MirrorCheckpointConnector",
    "MirrorCheckpointTask",
    "MirrorHeartbeatConnector",
    "MirrorHeartbeatTask",
    "MirrorSourceConnector",
    "MirrorSourceTask",
]
