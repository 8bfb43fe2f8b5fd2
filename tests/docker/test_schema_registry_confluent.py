"""The registry scenario of ``tests/schema_registry/test_third_party_client.py``
(python-schema-registry-client registering, fetching, checking compatibility, changing a
subject's level and deleting Avro schemas) against Confluent's own Schema Registry image on
Apache Kafka: what our registry is held to is what Confluent's does. The twin against ours
is ``test_python_schema_registry_client_drives_the_registry`` there."""

from __future__ import annotations

from pathlib import Path

from tests.docker.conftest import docker_or_skip
from tests.schema_registry.test_third_party_client import run_avro_scenario

CONFLUENT_VERSION = "7.6.0"  # the cp-kafka image the other docker tests use


def test_confluents_schema_registry_passes_the_same_scenario(tmp_path: Path) -> None:
    docker_or_skip()
    from testcontainers.core.container import DockerContainer
    from testcontainers.core.network import Network
    from testcontainers.core.wait_strategies import HttpWaitStrategy
    from testcontainers.kafka import KafkaContainer

    with Network() as network:
        kafka = KafkaContainer(f"confluentinc/cp-kafka:{CONFLUENT_VERSION}")
        # The registry reaches Kafka on its in-network listener (BROKER, plaintext, port 9092).
        with kafka.with_network(network).with_network_aliases("kafka"):
            registry = (
                DockerContainer(f"confluentinc/cp-schema-registry:{CONFLUENT_VERSION}")
                .with_network(network)
                .with_env("SCHEMA_REGISTRY_HOST_NAME", "schema-registry")
                .with_env("SCHEMA_REGISTRY_LISTENERS", "http://0.0.0.0:8081")
                .with_env("SCHEMA_REGISTRY_KAFKASTORE_BOOTSTRAP_SERVERS", "PLAINTEXT://kafka:9092")
                .with_env("SCHEMA_REGISTRY_KAFKASTORE_TOPIC_REPLICATION_FACTOR", "1")
                .with_exposed_ports(8081)
                .waiting_for(HttpWaitStrategy(8081, "/subjects").for_status_code(200))
            )
            with registry:
                url = f"http://{registry.get_container_host_ip()}:{registry.get_exposed_port(8081)}"
                run_avro_scenario(url, tmp_path)
