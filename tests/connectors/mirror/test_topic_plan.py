"""MirrorSourceConnector's pure decisions: topic selection, what to create, round-robin
spread, task partition strings, and which topic configs are copied."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connect.api import ConnectException, TopicPartition
from connectors.mirror.filters import (
    CONFIG_PROPERTIES_EXCLUDE_DEFAULT as PROPS_EXCLUDE,
)
from connectors.mirror.filters import (
    TOPICS_EXCLUDE_DEFAULT as TOPICS_EXCLUDE,
)
from connectors.mirror.filters import ConfigPropertyFilter, TopicFilter, split_list
from connectors.mirror.policy import DefaultReplicationPolicy, IdentityReplicationPolicy
from connectors.mirror.topic_plan import (
    PartitionPlan,
    TopicAcl,
    TopicConfigValue,
    acls_for_target,
    config_for_new_topic,
    config_ops,
    counts_of,
    decode_partitions,
    encode_partitions,
    expand,
    plan_partitions,
    replicable_partitions,
    round_robin,
    should_replicate_topic,
    target_topics_of,
)


def default_policy() -> DefaultReplicationPolicy:
    policy = DefaultReplicationPolicy()
    policy.configure({})
    return policy


def identity_policy(alias: str = "A") -> IdentityReplicationPolicy:
    policy = IdentityReplicationPolicy()
    policy.configure({"source.cluster.alias": alias})
    return policy


ALL = TopicFilter([".*"], split_list(TOPICS_EXCLUDE))


def replicate(
    topic: str, topic_filter: TopicFilter = ALL, heartbeats: bool = True, target: str = "B"
) -> bool:
    return should_replicate_topic(topic, topic_filter, default_policy(), target, heartbeats)


# -- which topics -----------------------------------------------------------------------


def test_plain_topics_are_replicated() -> None:
    assert replicate("orders")
    assert replicate("C.orders")  # from a third cluster: on to B


def test_cycles_are_not_replicated() -> None:
    assert not replicate("B.orders")  # came from B: not back to B
    assert not replicate("C.B.orders")  # came from B through C
    assert replicate("B.orders", target="C")


def test_internal_topics_are_not_replicated_even_if_the_filter_takes_them() -> None:
    everything = TopicFilter([".*"], [])
    for topic in ("__consumer_offsets", "mm2-offset-syncs.B.internal", "A.checkpoints.internal", ".hidden"):
        assert not replicate(topic, everything), topic


def test_the_filter_decides_except_for_heartbeats() -> None:
    only_orders = TopicFilter(["orders.*"], [])
    assert replicate("orders-1", only_orders)
    assert not replicate("payments", only_orders)
    assert replicate("heartbeats", only_orders)
    assert replicate("C.heartbeats", only_orders)
    assert not replicate("heartbeats", only_orders, heartbeats=False)
    assert not replicate("B.heartbeats", only_orders)  # a heartbeat from B itself: a cycle


def test_identity_policy_replicates_without_prefix_and_cannot_see_cycles() -> None:
    # Every topic "comes from" the configured source alias, so no name looks like a cycle
    # (Kafka's IdentityReplicationPolicy: cycles are the user's to avoid).
    policy = identity_policy("A")
    assert should_replicate_topic("B.orders", ALL, policy, "B", True)
    assert should_replicate_topic("orders", ALL, policy, "B", True)
    assert not should_replicate_topic("orders", ALL, identity_policy("B"), "B", True)


def test_target_topics_are_those_from_the_source_except_its_checkpoints() -> None:
    policy = default_policy()
    topics = ["A.orders", "A.checkpoints.internal", "orders", "C.A.x", "A.heartbeats"]
    assert target_topics_of(topics, policy, "A", "A.checkpoints.internal") == ["A.orders", "A.heartbeats"]


# -- what to create ---------------------------------------------------------------------


def remote(topic: str) -> str:
    return f"A.{topic}"


def test_plan_creates_missing_topics_and_grows_smaller_ones() -> None:
    plan = plan_partitions({"x": 3, "y": 2, "z": 1, "w": 1}, {"A.y": 1, "A.z": 1, "A.w": 4}, remote)
    assert plan.new_topics == {"A.x": ("x", 3)}
    assert plan.grown == {"A.y": 2}  # z has its partition; w has more and is left alone
    assert plan
    assert not PartitionPlan()


@given(
    st.dictionaries(st.text("abc", min_size=1, max_size=3), st.integers(1, 8)),
    st.dictionaries(st.text("abc", min_size=1, max_size=3), st.integers(1, 8)),
)
def test_after_the_plan_every_source_partition_has_its_remote_partition(
    source: dict[str, int], target_of_source: dict[str, int]
) -> None:
    target = {remote(t): n for t, n in target_of_source.items()}
    plan = plan_partitions(source, target, remote)
    after = dict(target)
    for name, (src, n) in plan.new_topics.items():
        assert name not in target and remote(src) == name and source[src] == n
        after[name] = n
    for name, n in plan.grown.items():
        assert target[name] < n
        after[name] = n
    for topic, n in source.items():
        assert after[remote(topic)] >= n
    assert replicable_partitions(expand(source), after, remote) == expand(source)


def test_only_partitions_that_exist_on_the_target_are_assignable() -> None:
    source = expand({"x": 3, "y": 1})
    assert replicable_partitions(source, {"A.x": 2}, remote) == [
        TopicPartition("x", 0),
        TopicPartition("x", 1),
    ]


@given(st.lists(st.tuples(st.sampled_from("abc"), st.integers(0, 5)), unique=True))
def test_counts_and_expand(partitions: list[tuple[str, int]]) -> None:
    tps = [TopicPartition(t, p) for t, p in partitions]
    counts = counts_of(tps)
    for t, p in tps:
        assert counts[t] > p
    assert set(tps) <= set(expand(counts))


# -- round robin and task strings -------------------------------------------------------


def test_round_robin_is_kafkas_spread() -> None:
    tps = [TopicPartition("t0", p) for p in range(8)] + [TopicPartition("t1", p) for p in range(2)]
    tasks = round_robin(tps, 3)
    assert tasks[0] == [
        TopicPartition("t0", 0),
        TopicPartition("t0", 3),
        TopicPartition("t0", 6),
        TopicPartition("t1", 1),
    ]
    assert tasks[1] == [TopicPartition("t0", 1), TopicPartition("t0", 4), TopicPartition("t0", 7)]
    assert round_robin(tps[:2], 5) == [[tps[0]], [tps[1]]]  # no more tasks than partitions
    assert round_robin([], 3) == []
    with pytest.raises(ConnectException, match=r"tasks\.max"):
        round_robin(tps, 0)


@given(st.lists(st.integers(0, 50), max_size=60), st.integers(1, 10))
def test_round_robin_assigns_every_partition_once_and_evenly(numbers: list[int], max_tasks: int) -> None:
    tps = [TopicPartition("t", n) for n in numbers]
    tasks = round_robin(tps, max_tasks)
    assert sorted(tp for task in tasks for tp in task) == sorted(tps)
    sizes = [len(t) for t in tasks]
    assert not sizes or max(sizes) - min(sizes) <= 1


@given(
    st.lists(
        st.tuples(st.text(st.characters(blacklist_characters=","), min_size=1), st.integers(0, 2**31 - 1))
    )
)
def test_partition_strings_round_trip(items: list[tuple[str, int]]) -> None:
    tps = [TopicPartition(t.strip() or "x", p) for t, p in items]
    tps = [tp for tp in tps if tp.topic == tp.topic.strip()]
    assert decode_partitions(encode_partitions(tps)) == tps


def test_partition_strings_take_the_number_after_the_last_dash() -> None:
    assert encode_partitions([TopicPartition("my-topic", 2)]) == "my-topic-2"
    assert decode_partitions("my-topic-2, x-10") == [TopicPartition("my-topic", 2), TopicPartition("x", 10)]
    assert decode_partitions("") == []
    for bad in ("nodash", "topic-", "-3", "topic-x"):
        with pytest.raises(ConnectException, match=r"task\.assigned\.partitions"):
            decode_partitions(bad)


# -- configs ----------------------------------------------------------------------------

ENTRIES = [
    TopicConfigValue("retention.ms", "1000"),
    TopicConfigValue("cleanup.policy", "delete", is_default=True),
    TopicConfigValue("min.insync.replicas", "2"),  # excluded by default
    TopicConfigValue("segment.bytes", "1024", read_only=True),
    TopicConfigValue("sasl.secret", "x", sensitive=True),
    TopicConfigValue("log.dirs", "/d", static_broker=True),
    TopicConfigValue("max.message.bytes", "2048"),
]


def test_new_topics_get_the_non_default_copyable_configs() -> None:
    target = ConfigPropertyFilter(split_list(PROPS_EXCLUDE), "target")
    assert config_for_new_topic(ENTRIES, target) == {"retention.ms": "1000", "max.message.bytes": "2048"}
    source = ConfigPropertyFilter(split_list(PROPS_EXCLUDE), "source")
    assert config_for_new_topic(ENTRIES, source) == {
        "retention.ms": "1000",
        "cleanup.policy": "delete",
        "max.message.bytes": "2048",
    }


def test_config_sync_sets_non_defaults_and_deletes_source_defaults() -> None:
    target = ConfigPropertyFilter(split_list(PROPS_EXCLUDE), "target")
    assert config_ops(ENTRIES, target) == {
        "retention.ms": "1000",
        "cleanup.policy": None,
        "max.message.bytes": "2048",
    }
    source = ConfigPropertyFilter(split_list(PROPS_EXCLUDE), "source")
    assert config_ops(ENTRIES, source)["cleanup.policy"] == "delete"
    custom = ConfigPropertyFilter(["retention\\.ms"], "target")
    ops = config_ops(ENTRIES, custom)
    assert "retention.ms" not in ops and ops["min.insync.replicas"] == "2"


# -- ACLs -------------------------------------------------------------------------------


def test_acls_follow_kafkas_rules() -> None:
    acls = [
        TopicAcl("orders", "User:alice", "*", "READ", "ALLOW"),
        TopicAcl("orders", "User:bob", "*", "WRITE", "ALLOW"),  # only MM2 writes remote topics
        TopicAcl("orders", "User:carol", "*", "ALL", "ALLOW"),  # narrowed to READ
        TopicAcl("orders", "User:dave", "*", "WRITE", "DENY"),  # denials are kept
        TopicAcl("secret", "User:alice", "*", "READ", "ALLOW"),  # not replicated
    ]
    out = acls_for_target(acls, lambda t: t == "orders", remote)
    assert out == [
        TopicAcl("A.orders", "User:alice", "*", "READ", "ALLOW"),
        TopicAcl("A.orders", "User:carol", "*", "READ", "ALLOW"),
        TopicAcl("A.orders", "User:dave", "*", "WRITE", "DENY"),
    ]
