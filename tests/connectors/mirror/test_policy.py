"""Replication policies name topics as Kafka's DefaultReplicationPolicy and
IdentityReplicationPolicy do, and ``is_cycle`` refuses a topic whose alias chain
contains the target."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connect.api.errors import ConnectException
from connectors.mirror.policy import (
    DefaultReplicationPolicy,
    IdentityReplicationPolicy,
    ReplicationPolicy,
    is_cycle,
    policy_class,
    replication_policy,
)

ALIAS = st.text(alphabet="abcdefgxyzAB_-0123", min_size=1, max_size=5)
NAME = st.text(alphabet="abcdefgxyz_-0123.", min_size=1, max_size=12)


def default(**props: str) -> DefaultReplicationPolicy:
    policy = DefaultReplicationPolicy()
    policy.configure(props)
    return policy


def identity(**props: str) -> IdentityReplicationPolicy:
    policy = IdentityReplicationPolicy()
    policy.configure(props)
    return policy


def test_default_names_remote_topics_with_the_source_alias() -> None:
    p = default()
    assert p.format_remote_topic("A", "orders") == "A.orders"
    assert p.topic_source("A.orders") == "A"
    assert p.upstream_topic("A.orders") == "orders"
    assert p.topic_source("B.A.orders") == "B"
    assert p.upstream_topic("B.A.orders") == "A.orders"
    assert p.original_topic("B.A.orders") == "orders"
    assert p.topic_source("orders") is None
    assert p.upstream_topic("orders") is None
    assert p.original_topic("orders") == "orders"


def test_default_splits_as_java_pattern_split() -> None:
    p = default()
    # Trailing empty parts are dropped: "A." is not a remote topic.
    assert p.topic_source("A.") is None
    assert p.topic_source("A..") is None
    assert p.topic_source(".") is None
    # A leading separator gives the empty alias, as Java's split keeps the leading empty part.
    assert p.topic_source(".x") == ""
    assert p.upstream_topic(".x") == "x"
    assert p.topic_source("A..x") == "A"
    assert p.upstream_topic("A..x") == ".x"
    assert p.topic_source("A.b.") == "A"
    assert p.upstream_topic("A.b.") == "b."


def test_internal_topic_names_default() -> None:
    p = default()
    assert p.heartbeats_topic() == "heartbeats"
    assert p.offset_syncs_topic("B") == "mm2-offset-syncs.B.internal"
    assert p.checkpoints_topic("A") == "A.checkpoints.internal"
    assert p.is_checkpoints_topic("A.checkpoints.internal")
    assert not p.is_checkpoints_topic("A.checkpoints")
    assert p.is_mm2_internal_topic("mm2-offset-syncs.B.internal")
    assert p.is_heartbeats_topic("heartbeats")
    assert p.is_heartbeats_topic("A.heartbeats")
    assert p.is_heartbeats_topic("B.A.heartbeats")
    assert not p.is_heartbeats_topic("A.myheartbeats")


def test_custom_separator_applies_to_internal_topics_unless_disabled() -> None:
    p = default(**{"replication.policy.separator": "__"})
    assert p.format_remote_topic("A", "orders") == "A__orders"
    assert p.topic_source("A__orders") == "A"
    assert p.upstream_topic("A__b__c") == "b__c"
    assert p.original_topic("B__A__c") == "c"
    assert p.topic_source("A.orders") is None
    assert p.offset_syncs_topic("B") == "mm2-offset-syncs__B__internal"
    assert p.checkpoints_topic("A") == "A__checkpoints__internal"
    assert p.is_checkpoints_topic("A__checkpoints__internal")
    assert p.is_mm2_internal_topic("x__internal")
    assert not p.is_mm2_internal_topic("x.yinternal")

    off = default(
        **{
            "replication.policy.separator": "__",
            "replication.policy.internal.topic.separator.enabled": "FALSE",
        }
    )
    assert off.format_remote_topic("A", "orders") == "A__orders"
    assert off.offset_syncs_topic("B") == "mm2-offset-syncs.B.internal"
    assert off.checkpoints_topic("A") == "A.checkpoints.internal"


def test_internal_separator_flag_is_read_only_with_a_separator() -> None:
    # As Kafka's configure(): without replication.policy.separator the flag is not read.
    p = default(**{"replication.policy.internal.topic.separator.enabled": "false"})
    assert p.internal_separator_enabled
    assert p.offset_syncs_topic("B") == "mm2-offset-syncs.B.internal"


def test_empty_separator_is_refused_with_its_key() -> None:
    with pytest.raises(ConnectException, match=r"replication\.policy\.separator"):
        default(**{"replication.policy.separator": ""})


def test_is_internal_topic() -> None:
    p = default()
    for topic in (
        "__consumer_offsets",
        ".hidden",
        "connect-offsets-internal",
        "x.internal",
        "A.checkpoints.internal",
        "mm2-offset-syncs.B.internal",
    ):
        assert p.is_internal_topic(topic), topic
    for topic in ("orders", "A.orders", "internal", "x_internal", "heartbeats"):
        assert not p.is_internal_topic(topic), topic
    custom = default(**{"replication.policy.separator": "_"})
    assert custom.is_internal_topic("x_internal")


def test_identity_keeps_names_but_prefixes_heartbeats() -> None:
    p = identity(**{"source.cluster.alias": "A"})
    assert p.format_remote_topic("A", "orders") == "orders"
    assert p.format_remote_topic("A", "B.orders") == "B.orders"
    assert p.topic_source("orders") == "A"
    assert p.upstream_topic("orders") == "orders"
    assert p.original_topic("orders") == "orders"
    assert p.format_remote_topic("A", "heartbeats") == "A.heartbeats"
    assert p.topic_source("A.heartbeats") == "A"
    assert p.upstream_topic("A.heartbeats") == "heartbeats"
    assert p.original_topic("B.A.heartbeats") == "heartbeats"
    assert p.is_heartbeats_topic("A.heartbeats")
    assert p.topic_source("heartbeats") is None
    # Kafka's check is endsWith("heartbeats").
    assert p.format_remote_topic("A", "myheartbeats") == "A.myheartbeats"


def test_identity_without_alias_has_no_source() -> None:
    p = identity()
    assert p.topic_source("orders") is None
    assert not is_cycle(p, "orders", "B")


def test_factory_by_java_short_and_python_names() -> None:
    for name in (
        "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
        "IdentityReplicationPolicy",
        "connectors.mirror.policy.IdentityReplicationPolicy",
    ):
        p = replication_policy({"replication.policy.class": name, "source.cluster.alias": "X"})
        assert type(p) is IdentityReplicationPolicy
        assert p.topic_source("t") == "X"
    assert type(replication_policy({})) is DefaultReplicationPolicy
    p = replication_policy(
        {
            "replication.policy.class": "org.apache.kafka.connect.mirror.DefaultReplicationPolicy",
            "replication.policy.separator": "-",
        }
    )
    assert p.format_remote_topic("A", "t") == "A-t"
    assert policy_class(" DefaultReplicationPolicy ") is DefaultReplicationPolicy


class Reversed(DefaultReplicationPolicy):
    """A user policy: ``<topic>.<alias>``."""

    def format_remote_topic(self, source_alias: str, topic: str) -> str:
        return f"{topic}.{source_alias}"

    def topic_source(self, topic: str) -> str | None:
        _, sep, tail = topic.rpartition(".")
        return tail if sep else None

    def upstream_topic(self, topic: str) -> str | None:
        head, sep, _ = topic.rpartition(".")
        return head if sep else None


def test_factory_loads_a_python_policy() -> None:
    p = replication_policy({"replication.policy.class": f"{__name__}.Reversed"})
    assert isinstance(p, Reversed)
    assert p.format_remote_topic("A", "t") == "t.A"
    assert is_cycle(p, "t.B.A", "B")
    assert not is_cycle(p, "t.A", "B")


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("NoSuchPolicy", "unknown replication policy"),
        ("no.such.module.Policy", "cannot load"),
        ("connectors.mirror.policy.NoSuch", "cannot load"),
        ("connectors.mirror.policy.is_cycle", "not a subclass"),
        ("collections.OrderedDict", "not a subclass"),
    ],
)
def test_factory_refuses_bad_class_names(name: str, message: str) -> None:
    with pytest.raises(ConnectException, match=f"replication.policy.class={name}.*{message}"):
        replication_policy({"replication.policy.class": name})


def test_is_cycle_default() -> None:
    p = default()
    assert not is_cycle(p, "orders", "B")
    assert is_cycle(p, "B.orders", "B")  # came from B: do not send it back
    assert not is_cycle(p, "A.orders", "B")
    assert is_cycle(p, "A.B.orders", "B")  # B -> A -> (now) B
    assert is_cycle(p, "C.A.B.orders", "B")
    assert not is_cycle(p, "C.A.D.orders", "B")


def test_is_cycle_identity_trusts_only_its_source_alias() -> None:
    p = identity(**{"source.cluster.alias": "A"})
    assert not is_cycle(p, "orders", "B")
    assert is_cycle(p, "orders", "A")
    assert is_cycle(p, "B.heartbeats", "B")
    assert not is_cycle(p, "C.heartbeats", "B")


class Looping(DefaultReplicationPolicy):
    """A broken policy whose upstream chain loops: is_cycle must still end."""

    def topic_source(self, topic: str) -> str | None:
        return "X"

    def upstream_topic(self, topic: str) -> str | None:
        return "b" if topic == "a" else "a"


def test_is_cycle_ends_on_a_looping_policy() -> None:
    assert not is_cycle(Looping(), "a", "B")


@given(st.lists(ALIAS, min_size=0, max_size=6), NAME, ALIAS)
def test_is_cycle_iff_target_in_alias_chain(chain: list[str], name: str, target: str) -> None:
    """Over chains of aliases (``chain[0]`` the newest hop), with a local name free of
    the separator: a cycle exactly when the target is in the chain, and
    ``original_topic`` recovers the name."""
    p = default()
    local = name.replace(".", "_")
    topic = local
    for alias in reversed(chain):
        topic = p.format_remote_topic(alias, topic)
    assert is_cycle(p, topic, target) == (target in chain)
    assert p.original_topic(topic) == local
    if chain:
        assert p.topic_source(topic) == chain[0]
        assert p.upstream_topic(topic) == topic[len(chain[0]) + 1 :]
    else:
        assert p.topic_source(topic) is None


@given(
    st.text(alphabet="abcxyzAB0123", min_size=1, max_size=5), NAME, st.sampled_from([".", "_", "--", "::"])
)
def test_remote_topic_round_trip(alias: str, topic: str, separator: str) -> None:
    """An alias free of separator characters comes back, with the upstream name as it was."""
    p = default(**{"replication.policy.separator": separator})
    remote = p.format_remote_topic(alias, topic)
    if topic.replace(separator, "") == "":
        return  # Java's split drops the empty tail: not a remote topic
    assert p.topic_source(remote) == alias
    assert p.upstream_topic(remote) == topic


def test_abstract_policy_defaults() -> None:
    class Minimal(ReplicationPolicy):
        def format_remote_topic(self, source_alias: str, topic: str) -> str:
            return topic

        def topic_source(self, topic: str) -> str | None:
            return None

        def upstream_topic(self, topic: str) -> str | None:
            return None

    p = Minimal()
    p.configure({"replication.policy.separator": "_"})
    assert p.offset_syncs_topic("B") == "mm2-offset-syncs.B.internal"
    assert p.checkpoints_topic("A") == "A.checkpoints.internal"
    assert p.is_checkpoints_topic("A.checkpoints.internal")
    assert p.is_heartbeats_topic("heartbeats")
    assert not p.is_heartbeats_topic("A.heartbeats")
    assert p.is_internal_topic("x-internal")
