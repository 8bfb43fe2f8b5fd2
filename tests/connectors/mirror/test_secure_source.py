"""MirrorSourceConnector reading a cluster that takes only TLS + SASL clients, configured the
way a Kafka user writes it: Java client keys under ``source.cluster.*``
(``sasl.jaas.config`` with PlainLoginModule, ``sasl.mechanism``, a PEM
``ssl.truststore.location``), translated for librdkafka. The source consumer, the admin
client and the offset-sync producer all reach cluster A over SASL_SSL; cluster B is plain."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Message, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # re-exported untyped

from broker.config import load_config
from broker.server import EmbeddedBroker
from connectors.mirror.formats import OffsetSync
from sluiceway.embedded import EmbeddedConnect
from tests.broker_security.conftest import SecureBroker, broker_settings
from tests.certificates import TestCA
from tests.connectors.mirror.source_support import BYTES, SOURCE_CONNECTOR, Row, read, row, wait_until
from tests.support import embedded_broker, unique

JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'username="alice" password="alice-secret";'
)


@pytest.fixture(scope="module")
def secure_a(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureBroker]:
    tmp = tmp_path_factory.mktemp("mirror-secure-a")
    ca = TestCA()
    with EmbeddedBroker(load_config(broker_settings(tmp, ca, tmp / "data"))) as broker:
        yield SecureBroker(broker, ca.write_pem(tmp / "ca.pem"), tmp / "data", tmp)


def test_replicates_from_a_sasl_ssl_cluster_with_java_client_keys(
    secure_a: SecureBroker, tmp_path: Path
) -> None:
    a = secure_a.client("SASL_SSL", "PLAIN")
    topic = unique("secure")
    admin = AdminClient(a)
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(30)
    producer = Producer(a)
    rows: list[tuple[int, Row]] = [
        (i % 2, (f"k{i}".encode(), f"v{i}".encode(), [("h", b"x")], 1_700_000_000_000 + i)) for i in range(20)
    ]
    for partition, (key, value, headers, ts) in rows:
        producer.produce(topic, value, key, partition, timestamp=ts, headers=headers)
    assert producer.flush(30) == 0

    with embedded_broker(tmp_path / "b") as b:
        worker = EmbeddedConnect(
            tmp_path / "worker",
            {"key.converter": BYTES, "value.converter": BYTES, "header.converter": BYTES},
            bootstrap_servers=b.bootstrap,
        )
        with worker:
            name = unique("mirror-secure")
            worker.create_connector(
                name,
                {
                    "connector.class": SOURCE_CONNECTOR,
                    "source.cluster.alias": "A",
                    "target.cluster.alias": "B",
                    "source.cluster.bootstrap.servers": secure_a.address("SASL_SSL"),
                    "source.cluster.security.protocol": "SASL_SSL",
                    "source.cluster.sasl.mechanism": "PLAIN",
                    "source.cluster.sasl.jaas.config": JAAS,
                    "source.cluster.ssl.truststore.location": str(secure_a.ca_pem),
                    "source.cluster.ssl.truststore.type": "PEM",
                    "target.cluster.bootstrap.servers": b.bootstrap,
                    "topics": topic,
                    "replication.factor": "1",
                    "offset-syncs.topic.replication.factor": "1",
                    "sync.topic.acls.enabled": "false",
                    "tasks.max": "1",
                },
            )
            worker.wait_for_running(name, tasks=1)
            for p in (0, 1):
                expected = [r for q, r in rows if q == p]
                assert [row(m) for m in read(b.bootstrap, f"A.{topic}", p, len(expected))] == expected

            # The offset-sync producer wrote to A over SASL_SSL too.
            def synced() -> list[OffsetSync] | None:
                records = read_partition0(a, "mm2-offset-syncs.B.internal")
                syncs = [OffsetSync.decode(m.key(), m.value()) for m in records]  # type: ignore[arg-type]
                mine = [s for s in syncs if s.topic == topic]
                return mine if {s.partition for s in mine} == {0, 1} else None

            for sync in wait_until(synced, "offset syncs of both partitions on A"):
                assert sync.downstream_offset == sync.upstream_offset  # B's topic was empty


def read_partition0(client: dict[str, Any], topic: str) -> list[Message]:
    """Every record of partition 0 of ``topic`` as of now, with ``client``'s settings."""
    consumer = Consumer({**client, "group.id": unique("read"), "enable.auto.commit": False})
    try:
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        out: list[Message] = []
        while len(out) < high - low:
            batch = consumer.consume(high - low - len(out), 5)
            if not batch:
                break
            out += [m for m in batch if m.error() is None]
        return out
    finally:
        consumer.close()
