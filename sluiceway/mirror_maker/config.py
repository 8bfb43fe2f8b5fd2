"""MirrorMaker 2's dedicated mode configuration: an ``mm2.properties`` file into herders.

Pure: the file's values (and where each key was defined, for errors) in; out come the
replication flows and, for each herder (an ordered pair of clusters ``source->target``),
the config of a distributed Connect worker against the target cluster and the configs
of the three connectors it runs. The mapping follows Kafka's ``MirrorMakerConfig``:

- herders: every ordered pair of distinct clusters whose ``src->tgt.enabled`` is true or
  whose heartbeats are on (``emit.heartbeats.enabled``, default true, overridable per
  pair), so by default every pair: a pair that does not replicate still emits heartbeats
  into its target, which is how the reverse flow's health is watched;
- a cluster's settings are the ``<alias>.*`` keys; its Kafka client keys
  (``bootstrap.servers``, ``security.protocol``, ``ssl.*``, ``sasl.*``, here or at the top
  level) are copied into each ``producer.``/``consumer.``/``admin.`` role unless set there;
- the worker: the target cluster's settings, the top-level ``offset.storage*``,
  ``config.storage*``, ``status.storage*``, converter, ``task*``, ``worker*`` and
  ``replication.policy*`` keys, then defaults (``client.id`` ``src->tgt``, ``group.id``
  ``<src>-mm2``, internal topics ``mm2-{configs,offsets,status}.<src>.internal``,
  ByteArrayConverter for keys, values and headers);
- a connector: the top-level keys any of the three connectors defines, the source
  cluster's settings as ``source.cluster.*`` (client roles as ``source.<role>.*``), the
  target's as ``target.cluster.*``/``target.<role>.*``, the aliases, then the pair's own
  ``src->tgt.*`` keys, and ``enabled=false`` unless the pair says otherwise (the
  heartbeat connector runs regardless; the other two do nothing when disabled).

Beyond Kafka, which ignores them silently, a flow key naming a cluster that is not in
``clusters``, a cluster without bootstrap servers, and a flag that is neither true nor
false are errors naming the file, line and key.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from connect.api.errors import ConnectException

SOURCE_CONNECTOR = "org.apache.kafka.connect.mirror.MirrorSourceConnector"
CHECKPOINT_CONNECTOR = "org.apache.kafka.connect.mirror.MirrorCheckpointConnector"
HEARTBEAT_CONNECTOR = "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector"
# Kafka's order (MirrorMaker.CONNECTOR_CLASSES); a connector's name is its simple class name.
CONNECTOR_CLASSES: tuple[str, ...] = (SOURCE_CONNECTOR, HEARTBEAT_CONNECTOR, CHECKPOINT_CONNECTOR)

BYTE_ARRAY_CONVERTER = "org.apache.kafka.connect.converters.ByteArrayConverter"
ENABLE_INTERNAL_REST = "dedicated.mode.enable.internal.rest"
EMIT_HEARTBEATS_ENABLED = "emit.heartbeats.enabled"
# The REST listener of a herder when internal REST is off: reachable from this host only.
# Kafka's dedicated mode has no REST server at all then; Sluiceway's worker always has one
# (a follower hands task configs to the leader over it), so it listens where only this
# process's own herders need it.
LOCAL_LISTENER = "http://127.0.0.1:0"

# Keys of Kafka's ConnectorConfig and of the three connectors' ConfigDefs: top-level keys
# among these (or a client security key) apply to every flow's connectors.
_CONNECTOR_KEYS = frozenset(
    {
        # ConnectorConfig
        "name",
        "connector.class",
        "tasks.max",
        "tasks.max.enforce",
        "key.converter",
        "value.converter",
        "header.converter",
        "transforms",
        "predicates",
        "config.action.reload",
        "errors.retry.timeout",
        "errors.retry.delay.max.ms",
        "errors.tolerance",
        "errors.log.enable",
        "errors.log.include.messages",
        # MirrorConnectorConfig
        "enabled",
        "source.cluster.alias",
        "target.cluster.alias",
        "admin.timeout.ms",
        "replication.policy.class",
        "replication.policy.separator",
        "replication.policy.internal.topic.separator.enabled",
        "forwarding.admin.class",
        "metric.reporters",
        # MirrorSourceConfig
        "topics",
        "topics.exclude",
        "config.properties.exclude",
        "topic.filter.class",
        "config.property.filter.class",
        "consumer.poll.timeout.ms",
        "refresh.topics.enabled",
        "refresh.topics.interval.seconds",
        "sync.topic.configs.enabled",
        "sync.topic.configs.interval.seconds",
        "sync.topic.acls.enabled",
        "sync.topic.acls.interval.seconds",
        "replication.factor",
        "offset-syncs.topic.replication.factor",
        "offset.lag.max",
        "offset-syncs.topic.location",
        "emit.offset-syncs.enabled",
        "heartbeats.replication.enabled",
        # MirrorCheckpointConfig
        "groups",
        "groups.exclude",
        "group.filter.class",
        "refresh.groups.enabled",
        "refresh.groups.interval.seconds",
        "emit.checkpoints.enabled",
        "emit.checkpoints.interval.seconds",
        "sync.group.offsets.enabled",
        "sync.group.offsets.interval.seconds",
        "checkpoints.topic.replication.factor",
        # MirrorHeartbeatConfig
        "emit.heartbeats.enabled",
        "emit.heartbeats.interval.seconds",
        "heartbeats.topic.replication.factor",
    }
)
# Top-level key prefixes the worker takes (Kafka: "accept common top-level configs").
_WORKER_PREFIXES = (
    "offset.storage",
    "config.storage",
    "status.storage",
    "key.converter",
    "value.converter",
    "header.converter",
    "task",
    "worker",
    "replication.policy",
)
_CLIENT_ROLES = ("producer.", "consumer.", "admin.")
_ROLE_KEY = re.compile(r"^(consumer|producer|admin)")


class MirrorMakerConfigError(ConnectException):
    """An mm2.properties that cannot be run; the message names the file, line and key."""


def is_client_key(key: str) -> bool:
    """Whether ``key`` is one of Kafka's common client keys (MirrorClientConfig's
    CLIENT_CONFIG_DEF: bootstrap servers and the TLS/SASL security settings)."""
    return key in ("bootstrap.servers", "security.protocol") or key.startswith(("ssl.", "sasl."))


@dataclass(frozen=True, order=True)
class Flow:
    """An ordered pair of clusters (Kafka's SourceAndTarget), written ``source->target``."""

    source: str
    target: str

    def __str__(self) -> str:
        return f"{self.source}->{self.target}"


@dataclass(frozen=True)
class Herder:
    """One distributed worker against ``flow.target`` and the connectors it runs there."""

    flow: Flow
    enabled: bool  # src->tgt.enabled: replication (and checkpoints) on, not heartbeats only
    worker: dict[str, str]
    connectors: dict[str, dict[str, str]]  # name (Kafka's: the simple class name) -> config


def flow_key(key: str, clusters: Sequence[str]) -> tuple[str, str, str] | None:
    """(source, target, key) of a ``SOURCE->TARGET.key`` key, None for any other key. The
    target is the longest cluster alias the rest starts with (an alias may hold dots), else
    what comes before the first dot."""
    source, arrow, rest = key.partition("->")
    if not arrow:
        return None
    matches = [a for a in clusters if rest.startswith(a + ".")]
    target = max(matches, key=len) if matches else rest.split(".", 1)[0]
    return source, target, rest[len(target) + 1 :]


def connector_name(connector_class: str) -> str:
    return connector_class.rsplit(".", 1)[-1]


def _with_prefix(values: Mapping[str, str], prefix: str) -> dict[str, str]:
    """Keys that start with ``prefix`` (or are it), whole (Kafka's stringsWithPrefix)."""
    return {k: v for k, v in values.items() if k.startswith(prefix)}


def _stripped(values: Mapping[str, str], prefix: str) -> dict[str, str]:
    """Keys longer than ``prefix`` that start with it, without it."""
    return {k[len(prefix) :]: v for k, v in values.items() if k.startswith(prefix) and len(k) > len(prefix)}


def _boolean(value: str) -> bool | None:
    v = value.strip().lower()
    return True if v == "true" else False if v == "false" else None


@dataclass(frozen=True)
class MirrorMakerConfig:
    """A checked mm2.properties. ``where(key)`` says where a key was defined ("file:line"),
    for messages that come later (the runner's)."""

    values: Mapping[str, str]
    clusters: tuple[str, ...]
    where: Callable[[str], str] = field(default=lambda key: "mm2.properties", compare=False)

    @property
    def enable_internal_rest(self) -> bool:
        return _boolean(self.values.get(ENABLE_INTERNAL_REST, "false")) is True

    # -- flows --------------------------------------------------------------------------

    def _flag(self, key: str, default: bool) -> bool:
        raw = self.values.get(key)
        return default if raw is None else _boolean(raw) is True

    def flow_enabled(self, flow: Flow) -> bool:
        return self._flag(f"{flow}.enabled", False)

    def flows(self) -> list[Flow]:
        """Every ordered pair that gets a herder: replicated, or emitting heartbeats."""
        heartbeats = self._flag(EMIT_HEARTBEATS_ENABLED, True)
        out = []
        for source in self.clusters:
            for target in self.clusters:
                if source == target:
                    continue
                flow = Flow(source, target)
                if self.flow_enabled(flow) or self._flag(f"{flow}.{EMIT_HEARTBEATS_ENABLED}", heartbeats):
                    out.append(flow)
        return out

    def herders(
        self, targets: Sequence[str] | None = None, classes: Sequence[str] = CONNECTOR_CLASSES
    ) -> list[Herder]:
        """The herders this node runs: those whose target is one of ``targets`` (all when
        None or empty, as Kafka's ``--clusters``). ``classes`` are the connector classes,
        Kafka's names unless a caller runs other ones."""
        wanted = set(targets or self.clusters)
        unknown = sorted(wanted - set(self.clusters))
        if unknown:
            raise MirrorMakerConfigError(
                f"--clusters {' '.join(unknown)}: not among the clusters of {self.where('clusters')} "
                f"({', '.join(self.clusters)})"
            )
        flows = [f for f in self.flows() if f.target in wanted]
        if not flows:
            raise MirrorMakerConfigError(
                f"{self.where('clusters')}: no source->target replication flows"
                + (f" into {', '.join(sorted(wanted))}" if targets else "")
                + " (set A->B.enabled = true, or leave emit.heartbeats.enabled on)"
            )
        return [
            Herder(
                flow,
                self.flow_enabled(flow),
                self.worker_config(flow),
                {connector_name(c): self.connector_config(flow, c) for c in classes},
            )
            for flow in flows
        ]

    # -- configs ------------------------------------------------------------------------

    def cluster_props(self, alias: str) -> dict[str, str]:
        """A cluster's settings (``<alias>.*``), its client keys (and the top-level ones it
        does not set) copied into each client role."""
        props = _stripped(self.values, f"{alias}.")
        for key, value in list(props.items()):
            if is_client_key(key):
                for role in _CLIENT_ROLES:
                    props.setdefault(role + key, value)
        for key, value in self.values.items():
            if is_client_key(key):
                for role in _CLIENT_ROLES:
                    props.setdefault(role + key, value)
                props.setdefault(key, value)
        return props

    def worker_config(self, flow: Flow) -> dict[str, str]:
        props = self.cluster_props(flow.target)
        for prefix in _WORKER_PREFIXES:
            props.update(_with_prefix(self.values, prefix))
        props.update(_with_prefix(self.values, "config.providers"))
        props.setdefault("client.id", str(flow))
        props.setdefault("group.id", f"{flow.source}-mm2")
        props.setdefault("offset.storage.topic", f"mm2-offsets.{flow.source}.internal")
        props.setdefault("status.storage.topic", f"mm2-status.{flow.source}.internal")
        props.setdefault("config.storage.topic", f"mm2-configs.{flow.source}.internal")
        for converter in ("key.converter", "value.converter", "header.converter"):
            props.setdefault(converter, BYTE_ARRAY_CONVERTER)
        props["listeners"] = self._listener()
        if self.enable_internal_rest:
            props.update(_with_prefix(self.values, "rest.advertised.host.name"))
        return props

    def _listener(self) -> str:
        """The herder's REST listener: local and ephemeral unless internal REST is on; then
        the top-level ``listeners``' scheme and host on an ephemeral port (the URL each
        herder advertises to its group carries the port, so the herders of several nodes
        find each other's leader)."""
        if not self.enable_internal_rest:
            return LOCAL_LISTENER
        first = self.values.get("listeners", "http://:0").split(",")[0].strip()
        m = re.match(r"^(https?)://(\[[^\]]*\]|[^:/]*)", first)
        return f"{m.group(1)}://{m.group(2)}:0" if m else "http://:0"

    def connector_config(self, flow: Flow, connector_class: str) -> dict[str, str]:
        # The connectors define the security keys, not bootstrap.servers (a cluster's own).
        props = {
            k: v
            for k, v in self.values.items()
            if k in _CONNECTOR_KEYS or (is_client_key(k) and k != "bootstrap.servers")
        }
        props.update(_with_prefix(self.values, "config.providers"))
        props.update(_with_prefix(self.values, "replication.policy"))
        for alias, cluster_prefix, client_prefix in (
            (flow.source, "source.cluster.", "source."),
            (flow.target, "target.cluster.", "target."),
        ):
            for key, value in self.cluster_props(alias).items():
                props[(client_prefix if _ROLE_KEY.match(key) else cluster_prefix) + key] = value
        props.setdefault("name", connector_name(connector_class))
        props.setdefault("connector.class", connector_class)
        props.setdefault("source.cluster.alias", flow.source)
        props.setdefault("target.cluster.alias", flow.target)
        props.update(_stripped(self.values, f"{flow}."))
        props.setdefault("enabled", "false")
        return props


def parse(values: Mapping[str, str], where: Callable[[str], str] | None = None) -> MirrorMakerConfig:
    """Check an mm2.properties' values; ``where(key)`` is "file:line" of a key (a
    ``PropertiesFile.where``). Every problem found is reported at once."""
    at = where or (lambda key: "mm2.properties")
    problems: list[str] = []
    raw_clusters = values.get("clusters")
    clusters: list[str] = []
    if raw_clusters is None or not raw_clusters.strip():
        problems.append(
            f"{at('clusters')}: clusters: missing: list the cluster aliases, e.g. clusters = A, B"
        )
    else:
        for alias in (a.strip() for a in raw_clusters.split(",")):
            if not alias:
                problems.append(f"{at('clusters')}: clusters: an empty alias in {raw_clusters.strip()!r}")
            elif "->" in alias or alias.endswith("."):
                problems.append(
                    f"{at('clusters')}: clusters: alias {alias!r} cannot contain '->' or end in '.'"
                )
            elif alias not in clusters:
                clusters.append(alias)
    for key in sorted(values):
        parts = flow_key(key, clusters)
        if parts is None:
            continue
        source, target, name = parts
        for alias in dict.fromkeys((source, target)):
            if alias not in clusters and clusters:
                problems.append(
                    f"{at(key)}: {key}: cluster {alias!r} is not one of the clusters ({', '.join(clusters)})"
                )
        if source == target:
            problems.append(f"{at(key)}: {key}: a flow needs two different clusters")
        if not name:
            problems.append(f"{at(key)}: {key}: a flow key is written SOURCE->TARGET.key")
    for key, value in values.items():
        parts = flow_key(key, clusters)
        flag = parts[2] if parts else key
        if flag in ("enabled", EMIT_HEARTBEATS_ENABLED, ENABLE_INTERNAL_REST) and _boolean(value) is None:
            problems.append(f"{at(key)}: {key}: {value.strip()!r} is neither true nor false")
    config = MirrorMakerConfig(dict(values), tuple(clusters), at)
    if clusters and not problems:
        # Only the clusters a herder connects to need bootstrap servers.
        used = {alias for flow in config.flows() for alias in (flow.source, flow.target)}
        for alias in clusters:
            if alias in used and not config.cluster_props(alias).get("bootstrap.servers", "").strip():
                problems.append(
                    f"{at('clusters')}: {alias}.bootstrap.servers: missing: cluster {alias} "
                    f"(in clusters) needs its brokers, e.g. {alias}.bootstrap.servers = host:9092"
                )
    if problems:
        raise MirrorMakerConfigError("\n".join(problems))
    return config
