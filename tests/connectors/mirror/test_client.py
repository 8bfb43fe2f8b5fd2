"""The failover client (Kafka's RemoteClusterUtils/MirrorClient) against a real broker."""

from __future__ import annotations

from pathlib import Path

from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # re-exported untyped

from connect.api import TopicPartition
from connectors.mirror import client
from connectors.mirror.formats import Checkpoint
from tests.connectors.mirror.checkpoint_support import produce
from tests.support import embedded_broker


def test_heartbeats_tell_upstream_clusters_and_hops(tmp_path: Path) -> None:
    with embedded_broker(tmp_path) as b:
        admin = AdminClient({"bootstrap.servers": b.bootstrap})
        # B's own heartbeats, C's (C -> B), and A's through C (A -> C -> B).
        names = [
            "heartbeats",
            "C.heartbeats",
            "C.A.heartbeats",
            "A.checkpoints.internal",
            "A.orders",
            "orders",
        ]
        for future in admin.create_topics([NewTopic(n, 1, 1) for n in names]).values():
            future.result(30)
        config = {"bootstrap.servers": b.bootstrap}
        assert client.heartbeat_topics(config) == {"heartbeats", "C.heartbeats", "C.A.heartbeats"}
        assert client.checkpoint_topics(config) == {"A.checkpoints.internal"}
        assert client.upstream_clusters(config) == {"A", "C"}
        assert client.replication_hops(config, "C") == 1
        assert client.replication_hops(config, "A") == 2
        assert client.replication_hops(config, "D") == -1
        with client.MirrorClient(config) as mirror:
            # As Kafka's: replicated heartbeats count as remote topics, internal ones do not.
            assert mirror.remote_topics() == {"A.orders", "C.heartbeats", "C.A.heartbeats"}
            assert mirror.remote_topics("A") == {"A.orders"}


def test_translate_offsets_reads_the_last_checkpoint_of_each_partition(tmp_path: Path) -> None:
    with embedded_broker(tmp_path) as b:
        marks = [
            Checkpoint("app", "A.orders", 0, 10, 110, ""),
            Checkpoint("other", "A.orders", 0, 30, 130, ""),
            Checkpoint("app", "A.orders", 1, 4, 1, "m"),
            Checkpoint("app", "A.orders", 0, 25, 121, ""),
        ]
        records = [(0, c.key(), c.value()) for c in marks]
        records.insert(2, (0, b"garbage", b"\x00"))  # skipped, as Kafka's client skips it
        admin = AdminClient({"bootstrap.servers": b.bootstrap})
        admin.create_topics([NewTopic("A.checkpoints.internal", 1, 1)])["A.checkpoints.internal"].result(30)
        produce(b.bootstrap, "A.checkpoints.internal", records)
        # consumer.-prefixed settings override the plain ones for the client's consumer.
        config = {"bootstrap.servers": "127.0.0.1:9", "consumer.bootstrap.servers": b.bootstrap}
        assert client.translate_offsets(config, "A", "app", 10.0) == {
            TopicPartition("A.orders", 0): 121,
            TopicPartition("A.orders", 1): 1,
        }
        assert client.translate_offsets(config, "A", "nobody", 10.0) == {}
        # No C.checkpoints.internal: nothing to translate.
        assert client.translate_offsets(config, "C", "app", 10.0) == {}
