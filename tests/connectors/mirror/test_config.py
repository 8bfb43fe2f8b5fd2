"""The three connectors' configs have Kafka's keys and defaults, accept the deprecated
3.x keys, report bad values against their key, and client settings are layered per
cluster and role as Kafka's MirrorConnectorConfig does, then translated for librdkafka."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from connect.api import ConfigValidationError
from connect.api.errors import ConnectException
from connectors.mirror.config import (
    MirrorCheckpointConfig,
    MirrorConnectorConfig,
    MirrorHeartbeatConfig,
    MirrorSourceConfig,
    client_config,
    offset_syncs_cluster,
)
from connectors.mirror.policy import IdentityReplicationPolicy

BASE = {"source.cluster.alias": "A", "target.cluster.alias": "B"}


def issues(model: type[MirrorConnectorConfig], props: dict[str, Any]) -> dict[str, str]:
    return {i.key: i.message for i in model.issues(props)}


def test_source_defaults_are_kafkas() -> None:
    c = MirrorSourceConfig.parse({"source.cluster.alias": "A"})
    assert c.enabled is True
    assert c.source_cluster_alias == "A"
    assert c.target_cluster_alias == "target"
    assert c.admin_timeout_ms == 60000
    assert c.replication_policy_class == "org.apache.kafka.connect.mirror.DefaultReplicationPolicy"
    assert c.replication_policy_separator == "."
    assert c.replication_policy_internal_topic_separator_enabled is True
    assert c.offset_syncs_topic_location == "source"
    assert c.offset_syncs_topic_replication_factor == 3
    assert c.emit_offset_syncs_enabled is True
    assert c.topics == [".*"]
    assert c.topics_exclude == [r".*[\-\.]internal", r".*\.replica", "__.*"]
    assert c.config_properties_exclude == [
        r"follower\.replication\.throttled\.replicas",
        r"leader\.replication\.throttled\.replicas",
        r"message\.timestamp\.difference\.max\.ms",
        r"message\.timestamp\.type",
        r"unclean\.leader\.election\.enable",
        r"min\.insync\.replicas",
    ]
    assert c.use_defaults_from == "target"
    assert c.consumer_poll_timeout_ms == 1000
    assert (c.refresh_topics_enabled, c.refresh_topics_interval_seconds) == (True, 600)
    assert (c.sync_topic_configs_enabled, c.sync_topic_configs_interval_seconds) == (True, 600)
    assert (c.sync_topic_acls_enabled, c.sync_topic_acls_interval_seconds) == (True, 600)
    assert c.use_incremental_alter_configs == "requested"
    assert c.replication_factor == 2
    assert c.offset_lag_max == 100
    assert c.heartbeats_replication_enabled is True
    assert c.add_source_alias_to_metrics is False
    assert c.refresh_topics_interval() == 600.0
    assert c.sync_topic_configs_interval() == 600.0
    assert c.sync_topic_acls_interval() == 600.0


def test_checkpoint_and_heartbeat_defaults_are_kafkas() -> None:
    c = MirrorCheckpointConfig.parse(BASE)
    assert c.groups == [".*"]
    assert c.groups_exclude == ["console-consumer-.*", "connect-.*", "__.*"]
    assert (c.refresh_groups_enabled, c.refresh_groups_interval_seconds) == (True, 600)
    assert (c.emit_checkpoints_enabled, c.emit_checkpoints_interval_seconds) == (True, 60)
    assert (c.sync_group_offsets_enabled, c.sync_group_offsets_interval_seconds) == (False, 60)
    assert c.checkpoints_topic_replication_factor == 3
    assert c.consumer_poll_timeout_ms == 1000
    assert c.emit_checkpoints_interval() == 60.0
    assert c.sync_group_offsets_interval() is None
    assert c.refresh_groups_interval() == 600.0
    h = MirrorHeartbeatConfig.parse(BASE)
    assert (h.emit_heartbeats_enabled, h.emit_heartbeats_interval_seconds) == (True, 1)
    assert h.heartbeats_topic_replication_factor == 3
    assert h.emit_heartbeats_interval() == 1.0
    assert h.heartbeats_topic() == "heartbeats"
    assert (
        MirrorHeartbeatConfig.parse({**BASE, "emit.heartbeats.enabled": "false"}).emit_heartbeats_interval()
        is None
    )


def test_source_cluster_alias_is_required_as_in_kafka() -> None:
    for model in (MirrorSourceConfig, MirrorCheckpointConfig, MirrorHeartbeatConfig):
        assert issues(model, {}) == {
            "source.cluster.alias": 'Missing required configuration "source.cluster.alias" '
            "which has no default value."
        }


def test_values_are_parsed_from_strings() -> None:
    c = MirrorSourceConfig.parse(
        {
            **BASE,
            "topics": "orders.*, payments",
            "topics.exclude": "",
            "refresh.topics.enabled": "FALSE",
            "refresh.topics.interval.seconds": "1",
            "replication.factor": "1",
            "offset-syncs.topic.replication.factor": "1",
            "offset.lag.max": "0",
            "offset-syncs.topic.location": "target",
            "use.defaults.from": "source",
        }
    )
    assert c.topics == ["orders.*", "payments"]
    assert c.topics_exclude == []
    assert c.refresh_topics_interval() is None
    assert (c.replication_factor, c.offset_syncs_topic_replication_factor, c.offset_lag_max) == (1, 1, 0)
    assert offset_syncs_cluster(c) == "target"
    f = c.topic_filter()
    assert f.should_replicate_topic("orders1") and f.should_replicate_topic("payments")
    assert not f.should_replicate_topic("payments2")
    assert f.should_replicate_topic("orders.internal")  # the exclude list was emptied
    assert c.config_property_filter().should_replicate_source_default("retention.ms")


def test_bad_values_are_reported_against_their_key() -> None:
    found = issues(
        MirrorSourceConfig,
        {
            **BASE,
            "offset-syncs.topic.location": "elsewhere",
            "offset-syncs.topic.replication.factor": "40000",
            "replication.factor": "two",
            "refresh.topics.enabled": "yes",
            "use.incremental.alter.configs": "always",
            "topics": "ok, (unclosed",
            "topics.exclude": "[z-a]",
            "config.properties.exclude": "*bad",
            "replication.policy.class": "NoSuchPolicy",
            "replication.policy.separator": "",
        },
    )
    assert set(found) == {
        "offset-syncs.topic.location",
        "offset-syncs.topic.replication.factor",
        "replication.factor",
        "refresh.topics.enabled",
        "use.incremental.alter.configs",
        "topics",
        "topics.exclude",
        "config.properties.exclude",
        "replication.policy.class",
        "replication.policy.separator",
    }
    assert (
        "Invalid value elsewhere for configuration offset-syncs.topic.location"
        in found["offset-syncs.topic.location"]
    )
    assert "invalid regular expression 'ok|(unclosed'" in found["topics"]
    assert "unknown replication policy" in found["replication.policy.class"]
    assert set(issues(MirrorSourceConfig, {**BASE, "replication.policy.separator": " "})) == {
        "replication.policy.separator"
    }
    with pytest.raises(ConfigValidationError, match=r"offset-syncs\.topic\.location"):
        MirrorSourceConfig.parse({**BASE, "offset-syncs.topic.location": "elsewhere"})


def test_deprecated_3x_keys_are_accepted() -> None:
    c = MirrorSourceConfig.parse(
        {
            **BASE,
            "topics.blacklist": "secret.*",
            "config.properties.blacklist": "retention\\.ms",
            "use.incremental.alter.configs": "never",
            "add.source.alias.to.metrics": "true",
            "sync.topic.acls.enabled": "false",
        }
    )
    assert c.topics_exclude == ["secret.*"]
    assert c.config_properties_exclude == ["retention\\.ms"]
    assert c.use_incremental_alter_configs == "never"
    assert c.add_source_alias_to_metrics is True
    assert c.sync_topic_acls_interval() is None
    assert not c.topic_filter().should_replicate_topic("secret1")
    assert not c.config_property_filter().should_replicate_config_property("retention.ms")
    # The new key wins when both are given, as Kafka's translateDeprecatedConfigs.
    both = MirrorSourceConfig.parse({**BASE, "topics.blacklist": "a", "topics.exclude": "b"})
    assert both.topics_exclude == ["b"]
    g = MirrorCheckpointConfig.parse({**BASE, "groups.blacklist": "tmp-.*"})
    assert g.groups_exclude == ["tmp-.*"]
    assert not g.group_filter().should_replicate_group("tmp-1")
    assert g.group_filter().should_replicate_group("console-consumer-1")
    assert issues(MirrorSourceConfig, {**BASE, "topics.blacklist": "(("}).keys() == {"topics.blacklist"}


def test_checkpoint_connector_reads_the_topic_filter_keys() -> None:
    c = MirrorCheckpointConfig.parse({**BASE, "topics": "orders", "topics.blacklist": "x"})
    f = c.topic_filter()
    assert f.should_replicate_topic("orders") and not f.should_replicate_topic("other")
    default = MirrorCheckpointConfig.parse(BASE).topic_filter()
    assert default.should_replicate_topic("orders") and not default.should_replicate_topic(
        "__consumer_offsets"
    )


def test_checkpoint_connector_needs_checkpoints_and_offset_syncs() -> None:
    found = issues(
        MirrorCheckpointConfig,
        {**BASE, "emit.checkpoints.enabled": "false", "emit.offset-syncs.enabled": "false"},
    )
    assert found == {
        "emit.checkpoints.enabled": "MirrorCheckpointConnector can't run with emit.checkpoints.enabled "
        "set to false",
        "emit.offset-syncs.enabled": "MirrorCheckpointConnector can't run without offset syncs "
        "(emit.offset-syncs.enabled=false)",
    }
    # A disabled flow (dedicated mode) is not checked.
    assert (
        issues(MirrorCheckpointConfig, {**BASE, "enabled": "false", "emit.checkpoints.enabled": "false"})
        == {}
    )


@pytest.mark.parametrize(
    ("model", "key", "default"),
    [
        (MirrorSourceConfig, "topic.filter.class", "DefaultTopicFilter"),
        (MirrorCheckpointConfig, "topic.filter.class", "DefaultTopicFilter"),
        (MirrorSourceConfig, "config.property.filter.class", "DefaultConfigPropertyFilter"),
        (MirrorCheckpointConfig, "group.filter.class", "DefaultGroupFilter"),
        (MirrorHeartbeatConfig, "forwarding.admin.class", "ForwardingAdmin"),
    ],
)
def test_java_plugin_classes_other_than_kafkas_defaults_are_refused(
    model: type[MirrorConnectorConfig], key: str, default: str
) -> None:
    message = issues(model, {**BASE, key: "com.example.MyFilter"})[key]
    assert message.startswith(
        f"{key}=com.example.MyFilter is not supported: MirrorMaker here runs only Kafka's default {default}"
    )
    assert issues(model, {**BASE, key: default}) == {}


def test_internal_topic_names_follow_location_and_policy() -> None:
    c = MirrorSourceConfig.parse(BASE)
    assert c.offset_syncs_topic() == "mm2-offset-syncs.B.internal"  # on A, named after the target
    assert c.checkpoints_topic() == "A.checkpoints.internal"
    assert offset_syncs_cluster(c) == "source"
    t = MirrorCheckpointConfig.parse({**BASE, "offset-syncs.topic.location": "target"})
    assert t.offset_syncs_topic() == "mm2-offset-syncs.A.internal"  # on B, named after the source
    assert offset_syncs_cluster(t) == "target"
    sep = MirrorSourceConfig.parse(
        {
            **BASE,
            "replication.policy.separator": "_",
            "replication.policy.internal.topic.separator.enabled": "false",
        }
    )
    assert sep.replication_policy().format_remote_topic("A", "t") == "A_t"
    assert sep.offset_syncs_topic() == "mm2-offset-syncs.B.internal"
    sep_on = MirrorSourceConfig.parse({**BASE, "replication.policy.separator": "_"})
    assert sep_on.checkpoints_topic() == "A_checkpoints_internal"
    ident = MirrorSourceConfig.parse({**BASE, "replication.policy.class": "IdentityReplicationPolicy"})
    policy = ident.replication_policy()
    assert isinstance(policy, IdentityReplicationPolicy)
    assert policy.topic_source("orders") == "A"


# -- client_config ---------------------------------------------------------------------------


def test_client_layering_as_kafka() -> None:
    props = {
        **BASE,
        "name": "mirror",
        "source.cluster.bootstrap.servers": "a1:9092, a2:9092",
        "source.cluster.security.protocol": "SASL_PLAINTEXT",
        "source.cluster.sasl.mechanism": "PLAIN",
        "source.cluster.sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required "
        'username="u" password="p";',
        "source.cluster.acks": "all",  # not a connection key: not passed (as Kafka)
        "source.cluster.alias": "A",
        "target.cluster.bootstrap.servers": "b:9092",
        "producer.linger.ms": "5",
        "producer.acks": "1",
        "source.producer.acks": "all",
        "consumer.fetch.min.bytes": "10",
        "consumer.poll.timeout.ms": "250",  # MirrorMaker's own key, not a client setting
        "admin.timeout.ms": "1000",  # likewise
        "admin.request.timeout.ms": "900",
        "target.admin.request.timeout.ms": "800",
        "producer.override.compression.type": "lz4",  # the worker's own override
        "consumer.auto.offset.reset": "latest",
    }
    assert client_config(props, "source", "producer") == {
        "bootstrap.servers": "a1:9092,a2:9092",
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanisms": "PLAIN",
        "sasl.username": "u",
        "sasl.password": "p",
        "linger.ms": "5",
        "acks": "all",
    }
    assert client_config(props, "target", "producer") == {
        "bootstrap.servers": "b:9092",
        "linger.ms": "5",
        "acks": "1",
    }
    assert client_config(props, "source", "consumer") == {
        "bootstrap.servers": "a1:9092,a2:9092",
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanisms": "PLAIN",
        "sasl.username": "u",
        "sasl.password": "p",
        "fetch.min.bytes": "10",
        "auto.offset.reset": "latest",
        "enable.auto.commit": "false",
        "group.id": "mm2-A->B",
    }
    assert client_config(props, "source", "admin")["request.timeout.ms"] == "900"
    assert client_config(props, "target", "admin") == {
        "bootstrap.servers": "b:9092",
        "request.timeout.ms": "800",
    }


def test_consumers_never_auto_commit_and_start_at_earliest() -> None:
    props = {**BASE, "target.cluster.bootstrap.servers": "b:1", "target.consumer.enable.auto.commit": "true"}
    assert client_config(props, "target", "consumer") == {
        "bootstrap.servers": "b:1",
        "enable.auto.commit": "false",
        "auto.offset.reset": "earliest",
        "group.id": "mm2-A->B",
    }
    props["consumer.group.id"] = "mine"
    assert client_config(props, "target", "consumer")["group.id"] == "mine"


def test_client_id_labels_as_kafka() -> None:
    props = {**BASE, "name": "m1", "source.cluster.bootstrap.servers": "a:1"}
    assert client_config(props, "source", "admin", label="offset-syncs-source-admin")["client.id"] == (
        "A->B|m1|offset-syncs-source-admin"
    )
    props["admin.client.id"] = "ops"
    assert client_config(props, "source", "admin", label="x")["client.id"] == "ops|A->B|m1|x"
    assert client_config(props, "source", "admin")["client.id"] == "ops"


def test_missing_bootstrap_servers_names_the_key() -> None:
    with pytest.raises(ConnectException, match=r"target\.cluster\.bootstrap\.servers is missing"):
        client_config({**BASE, "source.cluster.bootstrap.servers": "a:1"}, "target", "producer")
    with pytest.raises(ConnectException, match=r"source\.cluster\.bootstrap\.servers is missing"):
        client_config({**BASE, "source.cluster.bootstrap.servers": " "}, "source", "consumer")
    # A role-level bootstrap.servers is as good (Kafka takes it too).
    assert client_config({"source.consumer.bootstrap.servers": "x:1"}, "source", "consumer")["group.id"] == (
        "mm2-source->target"
    )


def test_untranslatable_security_settings_name_the_cluster(tmp_path: Path) -> None:
    jks = tmp_path / "trust.jks"
    jks.write_bytes(b"\xfe\xed\xfe\xed" + b"\x00" * 20)
    props = {
        **BASE,
        "target.cluster.bootstrap.servers": "b:1",
        "target.cluster.security.protocol": "SSL",
        "target.cluster.ssl.truststore.location": str(jks),
    }
    with pytest.raises(ConnectException, match=r"target cluster consumer settings .*JKS store"):
        client_config(props, "target", "consumer")
    pem = tmp_path / "ca.pem"
    pem.write_text("-----BEGIN CERTIFICATE-----\n")
    props["target.cluster.ssl.truststore.location"] = str(pem)
    props["target.cluster.ssl.truststore.type"] = "PEM"
    assert client_config(props, "target", "consumer")["ssl.ca.location"] == str(pem)


def test_config_method_uses_the_parsed_props() -> None:
    c = MirrorHeartbeatConfig.parse({**BASE, "name": "hb", "target.cluster.bootstrap.servers": "b:1"})
    assert c.client_config("target", "producer", label="heartbeats") == {
        "bootstrap.servers": "b:1",
        "client.id": "A->B|hb|heartbeats",
    }
    assert c.strings()["source.cluster.alias"] == "A"
