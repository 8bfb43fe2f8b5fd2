"""Settings of MirrorMaker 2's three connectors, with Kafka's keys and defaults
(``MirrorConnectorConfig``, ``MirrorSourceConfig``, ``MirrorCheckpointConfig``,
``MirrorHeartbeatConfig``), and the client settings of each cluster and role.

Keys that Kafka 3.x deprecated and 4.0 removed are still accepted, since users carry them
in their configs: ``topics.blacklist``, ``groups.blacklist`` and
``config.properties.blacklist`` stand for the ``*.exclude`` keys (the new key wins when
both are set), ``use.incremental.alter.configs`` and ``add.source.alias.to.metrics`` are
read and validated.

Class-valued keys take Kafka's class names; plugins written in Java cannot run here, so
another topic/group/config-property filter or forwarding admin is refused with a message
saying what to set instead. ``replication.policy.class`` also takes a Python
``module.Class`` (see ``connectors.mirror.policy``).

Clients (``client_config``): as Kafka's ``MirrorConnectorConfig``, a cluster's
``source.cluster.*`` / ``target.cluster.*`` keys give the connection and security
settings shared by every client of that cluster; ``producer.*``, ``consumer.*``,
``admin.*`` then apply to that role on both clusters, and ``source.consumer.*``,
``target.producer.*``, ... to one role on one cluster. The result is translated for
librdkafka with ``connect.api.kafka_clients.librdkafka_config``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Annotated, Any, Final, Literal

from pydantic import AliasChoices

from connect.api import Boolean, CommaList, ConfigIssue, ConnectorConfig, Field, importance
from connect.api.errors import ConnectException
from connect.api.kafka_clients import ClientSecurityError, librdkafka_config
from connectors.mirror.filters import (
    CONFIG_PROPERTIES_EXCLUDE_DEFAULT,
    GROUPS_EXCLUDE_DEFAULT,
    GROUPS_INCLUDE_DEFAULT,
    TOPICS_EXCLUDE_DEFAULT,
    TOPICS_INCLUDE_DEFAULT,
    ConfigPropertyFilter,
    GroupFilter,
    TopicFilter,
    compile_pattern_list,
    split_list,
)
from connectors.mirror.policy import ReplicationPolicy, policy_class, replication_policy

Cluster = Literal["source", "target"]
Role = Literal["consumer", "producer", "admin"]

_PKG: Final = "org.apache.kafka.connect.mirror."
DEFAULT_REPLICATION_POLICY: Final = _PKG + "DefaultReplicationPolicy"
DEFAULT_TOPIC_FILTER: Final = _PKG + "DefaultTopicFilter"
DEFAULT_GROUP_FILTER: Final = _PKG + "DefaultGroupFilter"
DEFAULT_CONFIG_PROPERTY_FILTER: Final = _PKG + "DefaultConfigPropertyFilter"
FORWARDING_ADMIN: Final = "org.apache.kafka.clients.admin.ForwardingAdmin"

# Java's numeric types, so an out-of-range value is refused as Kafka refuses it.
Short = Annotated[int, Field(ge=-(2**15), le=2**15 - 1)]
Int = Annotated[int, Field(ge=-(2**31), le=2**31 - 1)]
Long = Annotated[int, Field(ge=-(2**63), le=2**63 - 1)]

_low = partial(importance, "LOW")
_high = partial(importance, "HIGH")


def _defaults(value: str) -> Any:
    return partial(split_list, value)


class MirrorConnectorConfig(ConnectorConfig):
    """Keys every MirrorMaker 2 connector has."""

    enabled: Boolean = Field(
        True,
        alias="enabled",
        description="Whether this replication flow (source->target) runs; dedicated mode sets it "
        "to false for flows that are not enabled.",
        json_schema_extra=_low(),
    )
    source_cluster_alias: str = Field(
        alias="source.cluster.alias",
        description="Alias of the source cluster: the prefix of remote topic names and the name of "
        "the checkpoints topic.",
        json_schema_extra=_high(),
    )
    target_cluster_alias: str = Field(
        "target",
        alias="target.cluster.alias",
        description="Alias of the target cluster (metrics, heartbeats, cycle detection).",
        json_schema_extra=_high(),
    )
    admin_timeout_ms: Long = Field(
        60000,
        alias="admin.timeout.ms",
        description="Timeout of administrative operations such as listing new topics.",
        json_schema_extra=_low(kafka_type="LONG"),
    )
    replication_policy_class: str = Field(
        DEFAULT_REPLICATION_POLICY,
        alias="replication.policy.class",
        description="The replication policy naming remote topics: Kafka's DefaultReplicationPolicy or "
        "IdentityReplicationPolicy (class or short name), or a Python module.Class.",
        json_schema_extra=_low(kafka_type="CLASS"),
    )
    replication_policy_separator: str = Field(
        ".",
        alias="replication.policy.separator",
        description="Separator between the source alias and the topic in remote topic names.",
        json_schema_extra=_low(),
    )
    replication_policy_internal_topic_separator_enabled: Boolean = Field(
        True,
        alias="replication.policy.internal.topic.separator.enabled",
        description="Whether replication.policy.separator is also used in the names of the checkpoints "
        "and offset-syncs topics; set to false to keep the '.'-separated names of MirrorMaker "
        "versions that did not customize them.",
        json_schema_extra=_low(),
    )
    forwarding_admin_class: str = Field(
        FORWARDING_ADMIN,
        alias="forwarding.admin.class",
        description="Kafka's hook for managing topics and configs through an external system; only "
        "the default (the cluster's own admin API) is supported.",
        json_schema_extra=_low(kafka_type="CLASS"),
    )
    topic_filter_class: str = Field(
        DEFAULT_TOPIC_FILTER,
        alias="topic.filter.class",
        description="The topic filter; only DefaultTopicFilter (topics, topics.exclude) is supported.",
        json_schema_extra=_low(kafka_type="CLASS"),
    )
    offset_syncs_topic_location: Literal["source", "target"] = Field(
        "source",
        alias="offset-syncs.topic.location",
        description="Which cluster (source or target) holds the offset-syncs topic.",
        json_schema_extra=_low(),
    )
    offset_syncs_topic_replication_factor: Short = Field(
        3,
        alias="offset-syncs.topic.replication.factor",
        description="Replication factor of the offset-syncs topic.",
        json_schema_extra=_low(kafka_type="SHORT"),
    )
    emit_offset_syncs_enabled: Boolean = Field(
        True,
        alias="emit.offset-syncs.enabled",
        description="Whether the source connector records where replicated records landed in the "
        "offset-syncs topic; without them the checkpoint connector can neither emit checkpoints "
        "nor sync group offsets.",
        json_schema_extra=_low(),
    )

    @classmethod
    def problems(cls, props: Mapping[str, Any]) -> list[ConfigIssue]:
        issues: list[ConfigIssue] = []
        policy = props.get("replication.policy.class")
        if policy is not None and str(policy).strip():
            try:
                policy_class(str(policy))
            except ConnectException as exc:
                issues.append(ConfigIssue("replication.policy.class", str(exc)))
        separator = props.get("replication.policy.separator")
        # Kafka trims string values: a blank separator is an empty one.
        if separator is not None and str(separator).strip() == "":
            issues.append(
                ConfigIssue(
                    "replication.policy.separator",
                    "replication.policy.separator must not be empty: it separates the alias from the topic",
                )
            )
        issues += _only_default(props, "forwarding.admin.class", FORWARDING_ADMIN, "")
        issues += _only_default(
            props, "topic.filter.class", DEFAULT_TOPIC_FILTER, "topics and topics.exclude"
        )
        return issues

    # -- derived -----------------------------------------------------------------------------

    def strings(self) -> dict[str, str]:
        """Every key as given, as strings (Kafka's ``originalsStrings``)."""
        return {key: _string(value) for key, value in self.originals().items()}

    def replication_policy(self) -> ReplicationPolicy:
        return replication_policy(self.strings())

    def offset_syncs_topic(self) -> str:
        """``mm2-offset-syncs.<alias>.internal``: on the source it takes the target's alias,
        on the target the source's (Kafka's ``offsetSyncsTopic``)."""
        other = (
            self.target_cluster_alias
            if self.offset_syncs_topic_location == "source"
            else self.source_cluster_alias
        )
        return self.replication_policy().offset_syncs_topic(other)

    def checkpoints_topic(self) -> str:
        return self.replication_policy().checkpoints_topic(self.source_cluster_alias)

    def heartbeats_topic(self) -> str:
        return self.replication_policy().heartbeats_topic()

    def topic_filter(self) -> TopicFilter:
        """``topics`` / ``topics.exclude`` (also read by the checkpoint connector, which
        does not declare them, as in Kafka)."""
        return TopicFilter(
            _list(self.get("topics"), TOPICS_INCLUDE_DEFAULT),
            _list(_first(self.get("topics.exclude"), self.get("topics.blacklist")), TOPICS_EXCLUDE_DEFAULT),
        )

    def client_config(self, cluster: Cluster, role: Role, label: str | None = None) -> dict[str, Any]:
        return client_config(self.strings(), cluster, role, label=label)


class MirrorSourceConfig(MirrorConnectorConfig):
    """``MirrorSourceConnector``: which topics to copy, how remote topics are created and
    kept in line with their sources, and the offset syncs."""

    topics: CommaList = Field(
        default_factory=_defaults(TOPICS_INCLUDE_DEFAULT),
        alias="topics",
        description="Topics to replicate: comma-separated names and regexes.",
        json_schema_extra=_high(kafka_type="LIST"),
    )
    topics_exclude: CommaList = Field(
        default_factory=_defaults(TOPICS_EXCLUDE_DEFAULT),
        alias="topics.exclude",
        validation_alias=AliasChoices("topics.exclude", "topics.blacklist", "topics_exclude"),
        description="Topics not to replicate: comma-separated names and regexes; excludes win over "
        "includes. (topics.blacklist, its deprecated name, is accepted.)",
        json_schema_extra=_high(kafka_type="LIST"),
    )
    config_properties_exclude: CommaList = Field(
        default_factory=_defaults(CONFIG_PROPERTIES_EXCLUDE_DEFAULT),
        alias="config.properties.exclude",
        validation_alias=AliasChoices(
            "config.properties.exclude", "config.properties.blacklist", "config_properties_exclude"
        ),
        description="Topic config properties not to replicate: comma-separated names and regexes. "
        "(config.properties.blacklist, its deprecated name, is accepted.)",
        json_schema_extra=_high(kafka_type="LIST"),
    )
    config_property_filter_class: str = Field(
        DEFAULT_CONFIG_PROPERTY_FILTER,
        alias="config.property.filter.class",
        description="The topic config property filter; only DefaultConfigPropertyFilter "
        "(config.properties.exclude, use.defaults.from) is supported.",
        json_schema_extra=_low(kafka_type="CLASS"),
    )
    use_defaults_from: str = Field(
        "target",
        alias="use.defaults.from",
        description="Whose defaults apply to topic config properties the source topic has only by "
        "default: 'target' leaves them to the target's defaults, 'source' copies the source's values.",
        json_schema_extra=importance("MEDIUM"),
    )
    consumer_poll_timeout_ms: Long = Field(
        1000,
        alias="consumer.poll.timeout.ms",
        description="How long one poll of the source cluster waits for records.",
        json_schema_extra=_low(kafka_type="LONG"),
    )
    refresh_topics_enabled: Boolean = Field(
        True,
        alias="refresh.topics.enabled",
        description="Whether new topics and partitions on the source are looked for periodically.",
        json_schema_extra=_low(),
    )
    refresh_topics_interval_seconds: Long = Field(
        600,
        alias="refresh.topics.interval.seconds",
        description="How often to look for new topics and partitions.",
        json_schema_extra=_low(kafka_type="LONG"),
    )
    sync_topic_configs_enabled: Boolean = Field(
        True,
        alias="sync.topic.configs.enabled",
        description="Whether remote topics' configs are periodically set to match their source topics'.",
        json_schema_extra=_low(),
    )
    sync_topic_configs_interval_seconds: Long = Field(
        600,
        alias="sync.topic.configs.interval.seconds",
        description="How often topic configs are synced.",
        json_schema_extra=_low(kafka_type="LONG"),
    )
    use_incremental_alter_configs: Literal["requested", "required", "never"] = Field(
        "requested",
        alias="use.incremental.alter.configs",
        description="Deprecated (removed in Kafka 4.0): the API syncing topic configs. 'requested' uses "
        "IncrementalAlterConfigs and falls back to AlterConfigs on brokers without it, 'required' "
        "fails instead, 'never' always uses AlterConfigs.",
        json_schema_extra=_low(),
    )
    sync_topic_acls_enabled: Boolean = Field(
        True,
        alias="sync.topic.acls.enabled",
        description="Whether remote topics' ACLs are periodically set to match their source topics'.",
        json_schema_extra=_low(),
    )
    sync_topic_acls_interval_seconds: Long = Field(
        600,
        alias="sync.topic.acls.interval.seconds",
        description="How often topic ACLs are synced.",
        json_schema_extra=_low(kafka_type="LONG"),
    )
    replication_factor: Int = Field(
        2,
        alias="replication.factor",
        description="Replication factor of the remote topics this connector creates.",
        json_schema_extra=_low(kafka_type="INT"),
    )
    offset_lag_max: Long = Field(
        100,
        alias="offset.lag.max",
        description="How far a remote partition may get past its last offset sync before a new sync is "
        "written at once.",
        json_schema_extra=_low(kafka_type="LONG"),
    )
    heartbeats_replication_enabled: Boolean = Field(
        True,
        alias="heartbeats.replication.enabled",
        description="Whether heartbeats topics are replicated even when the topic filter leaves them "
        "out; when false they are replicated only if the filter accepts them.",
        json_schema_extra=_low(),
    )
    add_source_alias_to_metrics: Boolean = Field(
        False,
        alias="add.source.alias.to.metrics",
        description="Deprecated (removed in Kafka 4.0): whether metrics carry the source alias as a tag.",
        json_schema_extra=_low(),
    )

    @classmethod
    def problems(cls, props: Mapping[str, Any]) -> list[ConfigIssue]:
        issues = super().problems(props)
        issues += _regex_problems(props, "topics", "topics.exclude", "topics.blacklist")
        issues += _regex_problems(props, "config.properties.exclude", "config.properties.blacklist")
        issues += _only_default(
            props,
            "config.property.filter.class",
            DEFAULT_CONFIG_PROPERTY_FILTER,
            "config.properties.exclude and use.defaults.from",
        )
        return issues

    def config_property_filter(self) -> ConfigPropertyFilter:
        return ConfigPropertyFilter(self.config_properties_exclude, self.use_defaults_from)

    def refresh_topics_interval(self) -> float | None:
        """Seconds between topic refreshes; None when disabled."""
        return _interval(self.refresh_topics_enabled, self.refresh_topics_interval_seconds)

    def sync_topic_configs_interval(self) -> float | None:
        return _interval(self.sync_topic_configs_enabled, self.sync_topic_configs_interval_seconds)

    def sync_topic_acls_interval(self) -> float | None:
        return _interval(self.sync_topic_acls_enabled, self.sync_topic_acls_interval_seconds)


class MirrorCheckpointConfig(MirrorConnectorConfig):
    """``MirrorCheckpointConnector``: which consumer groups' offsets are translated into
    checkpoints on the target, and whether they are written into the target's groups."""

    consumer_poll_timeout_ms: Long = Field(
        1000,
        alias="consumer.poll.timeout.ms",
        description="How long one poll of the offset-syncs topic waits for records.",
        json_schema_extra=_low(kafka_type="LONG"),
    )
    groups: CommaList = Field(
        default_factory=_defaults(GROUPS_INCLUDE_DEFAULT),
        alias="groups",
        description="Consumer groups to replicate: comma-separated group ids and regexes.",
        json_schema_extra=_high(kafka_type="LIST"),
    )
    groups_exclude: CommaList = Field(
        default_factory=_defaults(GROUPS_EXCLUDE_DEFAULT),
        alias="groups.exclude",
        validation_alias=AliasChoices("groups.exclude", "groups.blacklist", "groups_exclude"),
        description="Consumer groups not to replicate: comma-separated group ids and regexes; "
        "excludes win over includes. (groups.blacklist, its deprecated name, is accepted.)",
        json_schema_extra=_high(kafka_type="LIST"),
    )
    group_filter_class: str = Field(
        DEFAULT_GROUP_FILTER,
        alias="group.filter.class",
        description="The consumer group filter; only DefaultGroupFilter (groups, groups.exclude) is "
        "supported.",
        json_schema_extra=_low(kafka_type="CLASS"),
    )
    refresh_groups_enabled: Boolean = Field(
        True,
        alias="refresh.groups.enabled",
        description="Whether new consumer groups on the source are looked for periodically.",
        json_schema_extra=_low(),
    )
    refresh_groups_interval_seconds: Long = Field(
        600,
        alias="refresh.groups.interval.seconds",
        description="How often to look for new consumer groups.",
        json_schema_extra=_low(kafka_type="LONG"),
    )
    emit_checkpoints_enabled: Boolean = Field(
        True,
        alias="emit.checkpoints.enabled",
        description="Whether consumer group offsets are translated into checkpoints on the target.",
        json_schema_extra=_low(),
    )
    emit_checkpoints_interval_seconds: Long = Field(
        60,
        alias="emit.checkpoints.interval.seconds",
        description="How often checkpoints are emitted.",
        json_schema_extra=_low(kafka_type="LONG"),
    )
    sync_group_offsets_enabled: Boolean = Field(
        False,
        alias="sync.group.offsets.enabled",
        description="Whether translated offsets are periodically committed to the target's consumer "
        "groups, for groups with no active members on the target.",
        json_schema_extra=_low(),
    )
    sync_group_offsets_interval_seconds: Long = Field(
        60,
        alias="sync.group.offsets.interval.seconds",
        description="How often consumer group offsets are synced.",
        json_schema_extra=_low(kafka_type="LONG"),
    )
    checkpoints_topic_replication_factor: Short = Field(
        3,
        alias="checkpoints.topic.replication.factor",
        description="Replication factor of the checkpoints topic.",
        json_schema_extra=_low(kafka_type="SHORT"),
    )

    @classmethod
    def problems(cls, props: Mapping[str, Any]) -> list[ConfigIssue]:
        issues = super().problems(props)
        issues += _regex_problems(props, "groups", "groups.exclude", "groups.blacklist")
        issues += _regex_problems(props, "topics", "topics.exclude", "topics.blacklist")
        issues += _only_default(
            props, "group.filter.class", DEFAULT_GROUP_FILTER, "groups and groups.exclude"
        )
        # Kafka's MirrorCheckpointConfig.validate: pointless to check a disabled flow.
        if _raw(props, "enabled").lower() != "false":
            if _raw(props, "emit.checkpoints.enabled").lower() == "false":
                issues.append(
                    ConfigIssue(
                        "emit.checkpoints.enabled",
                        "MirrorCheckpointConnector can't run with emit.checkpoints.enabled set to false",
                    )
                )
            if _raw(props, "emit.offset-syncs.enabled").lower() == "false":
                issues.append(
                    ConfigIssue(
                        "emit.offset-syncs.enabled",
                        "MirrorCheckpointConnector can't run without offset syncs "
                        "(emit.offset-syncs.enabled=false)",
                    )
                )
        return issues

    def group_filter(self) -> GroupFilter:
        return GroupFilter(self.groups, self.groups_exclude)

    def emit_checkpoints_interval(self) -> float | None:
        return _interval(self.emit_checkpoints_enabled, self.emit_checkpoints_interval_seconds)

    def refresh_groups_interval(self) -> float | None:
        return _interval(self.refresh_groups_enabled, self.refresh_groups_interval_seconds)

    def sync_group_offsets_interval(self) -> float | None:
        return _interval(self.sync_group_offsets_enabled, self.sync_group_offsets_interval_seconds)


class MirrorHeartbeatConfig(MirrorConnectorConfig):
    """``MirrorHeartbeatConnector``: heartbeats into the target's ``heartbeats`` topic."""

    emit_heartbeats_enabled: Boolean = Field(
        True,
        alias="emit.heartbeats.enabled",
        description="Whether heartbeats are emitted to the target cluster.",
        json_schema_extra=_low(),
    )
    emit_heartbeats_interval_seconds: Long = Field(
        1,
        alias="emit.heartbeats.interval.seconds",
        description="How often heartbeats are emitted.",
        json_schema_extra=_low(kafka_type="LONG"),
    )
    heartbeats_topic_replication_factor: Short = Field(
        3,
        alias="heartbeats.topic.replication.factor",
        description="Replication factor of the heartbeats topic.",
        json_schema_extra=_low(kafka_type="SHORT"),
    )

    def emit_heartbeats_interval(self) -> float | None:
        return _interval(self.emit_heartbeats_enabled, self.emit_heartbeats_interval_seconds)


def offset_syncs_cluster(config: MirrorConnectorConfig) -> Cluster:
    """The cluster holding the offset-syncs topic (``offset-syncs.topic.location``)."""
    return config.offset_syncs_topic_location


# -- clients ------------------------------------------------------------------------------------

# MirrorMaker's own keys that share a client role's prefix: never client settings
# (librdkafka refuses keys it does not know, where Java clients only warn).
_OWN_KEYS: Final = frozenset({"consumer.poll.timeout.ms", "admin.timeout.ms"})


def _is_cluster_client_key(key: str) -> bool:
    """The keys of Kafka's ``MirrorClientConfig.CLIENT_CONFIG_DEF``, which are all that
    ``<cluster>.cluster.*`` passes to clients: connection and security settings."""
    return key in ("bootstrap.servers", "security.protocol") or key.startswith(("ssl.", "sasl."))


def client_config(
    props: Mapping[str, Any], cluster: Cluster, role: Role, *, label: str | None = None
) -> dict[str, Any]:
    """Settings of a ``role`` client of the ``cluster`` cluster, for confluent-kafka.

    Layered as Kafka's ``MirrorConnectorConfig``: the connection and security keys of
    ``<cluster>.cluster.*``, then ``<role>.*``, then ``<cluster>.<role>.*``. Consumers
    never auto-commit and start from the earliest offset unless told otherwise; as
    librdkafka needs a ``group.id`` even for assigned partitions, consumers get one that
    never joins or commits (``mm2-<source>-><target>``) unless set. ``label`` names the
    client's purpose and is appended to ``client.id`` as Kafka does
    (``<source>-><target>|<connector>|<label>``). ConnectException names the missing
    ``<cluster>.cluster.bootstrap.servers`` or the setting librdkafka cannot take."""
    settings: dict[str, Any] = {}
    cluster_prefix = f"{cluster}.cluster."
    for key, value in props.items():
        if key.startswith(cluster_prefix) and _is_cluster_client_key(key[len(cluster_prefix) :]):
            settings[key[len(cluster_prefix) :]] = value
    for prefix in (f"{role}.", f"{cluster}.{role}."):
        for key, value in props.items():
            if key.startswith(prefix) and key not in _OWN_KEYS:
                name = key[len(prefix) :]
                # producer.override.* / consumer.override.* are the worker's per-connector
                # client overrides, for the runtime's own clients, not MirrorMaker's.
                if name and not name.startswith("override."):
                    settings[name] = value
    if not str(settings.get("bootstrap.servers") or "").strip():
        raise ConnectException(
            f"{cluster}.cluster.bootstrap.servers is missing: MirrorMaker needs the {cluster} cluster's "
            f"address (host:port, comma-separated) to create its {role} client"
        )
    settings["bootstrap.servers"] = ",".join(split_list(str(settings["bootstrap.servers"])))
    source = str(props.get("source.cluster.alias", "source"))
    target = str(props.get("target.cluster.alias", "target"))
    if role == "consumer":
        settings["enable.auto.commit"] = "false"
        settings.setdefault("auto.offset.reset", "earliest")
        settings.setdefault("group.id", f"mm2-{source}->{target}")
    if label is not None:
        own = f"{source}->{target}|{props.get('name', '')}|{label}"
        user = settings.get("client.id")
        settings["client.id"] = f"{user}|{own}" if user else own
    try:
        return librdkafka_config(settings)
    except ClientSecurityError as exc:
        raise ConnectException(
            f"{cluster} cluster {role} settings ({cluster}.cluster.*, {role}.*, {cluster}.{role}.*): {exc}"
        ) from None


# -- helpers ------------------------------------------------------------------------------------


def _string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return str(value)


def _raw(props: Mapping[str, Any], key: str) -> str:
    value = props.get(key)
    return "" if value is None else _string(value).strip()


def _first(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)


def _list(value: Any, default: str) -> list[str]:
    if value is None:
        return split_list(default)
    if isinstance(value, str):
        return split_list(value)
    return [str(v) for v in value]


def _interval(enabled: bool, seconds: int) -> float | None:
    return float(seconds) if enabled else None


def _only_default(props: Mapping[str, Any], key: str, default: str, instead: str) -> list[ConfigIssue]:
    value = _raw(props, key)
    if not value or value in (default, default.rsplit(".", 1)[1]):
        return []
    hint = f"; use {instead} to choose what is replicated" if instead else ""
    return [
        ConfigIssue(
            key,
            f"{key}={value} is not supported: MirrorMaker here runs only Kafka's default "
            f"{default.rsplit('.', 1)[1]}{hint}",
        )
    ]


def _regex_problems(props: Mapping[str, Any], *keys: str) -> list[ConfigIssue]:
    issues = []
    for key in keys:
        value = props.get(key)
        if value is None:
            continue
        try:
            compile_pattern_list(_list(value, ""), key)
        except ConnectException as exc:
            issues.append(ConfigIssue(key, str(exc)))
    return issues


__all__: Sequence[str] = [
    "MirrorCheckpointConfig",
    "MirrorConnectorConfig",
    "MirrorHeartbeatConfig",
    "MirrorSourceConfig",
    "client_config",
    "offset_syncs_cluster",
]
