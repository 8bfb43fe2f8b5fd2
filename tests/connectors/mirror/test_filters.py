"""Topic, group and config-property filters decide as Kafka's default filters: Java
regex lists matching whole names, excludes over includes, an empty list matching nothing."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connect.api.errors import ConnectException
from connectors.mirror.filters import (
    CONFIG_PROPERTIES_EXCLUDE_DEFAULT,
    GROUPS_EXCLUDE_DEFAULT,
    GROUPS_INCLUDE_DEFAULT,
    TOPICS_EXCLUDE_DEFAULT,
    TOPICS_INCLUDE_DEFAULT,
    ConfigPropertyFilter,
    GroupFilter,
    TopicFilter,
    split_list,
)


def default_topics() -> TopicFilter:
    return TopicFilter(split_list(TOPICS_INCLUDE_DEFAULT), split_list(TOPICS_EXCLUDE_DEFAULT))


@pytest.mark.parametrize(
    ("topic", "replicated"),
    [
        ("orders", True),
        ("A.orders", True),
        ("heartbeats", True),
        ("__consumer_offsets", False),
        ("__transaction_state", False),
        ("mm2-offset-syncs.B.internal", False),
        ("A.checkpoints.internal", False),
        ("connect-offsets-internal", False),
        ("orders.replica", False),
        ("internal", True),
        ("orders_internal", True),
        ("x.replicas", True),
        ("_single", True),
    ],
)
def test_default_topic_filter(topic: str, replicated: bool) -> None:
    assert default_topics().should_replicate_topic(topic) is replicated


@pytest.mark.parametrize(
    ("group", "replicated"),
    [
        ("app", True),
        ("console-consumer-123", False),
        ("connect-my-sink", False),
        ("__internal", False),
        ("my-connect-group", True),  # the pattern must match the whole name
    ],
)
def test_default_group_filter(group: str, replicated: bool) -> None:
    f = GroupFilter(split_list(GROUPS_INCLUDE_DEFAULT), split_list(GROUPS_EXCLUDE_DEFAULT))
    assert f.should_replicate_group(group) is replicated


def test_whole_name_matching_and_alternation() -> None:
    f = TopicFilter(["orders", "pay.*"], [])
    assert f.should_replicate_topic("orders")
    assert not f.should_replicate_topic("orders2")
    assert not f.should_replicate_topic("my-orders")
    assert f.should_replicate_topic("payments")
    # The joined alternation still matches whole names with a prefix of another item.
    g = TopicFilter(["a", "ab"], [])
    assert g.should_replicate_topic("ab") and g.should_replicate_topic("a")
    assert not g.should_replicate_topic("abc")


def test_empty_lists_match_nothing() -> None:
    assert not TopicFilter([], []).should_replicate_topic("orders")
    assert TopicFilter([".*"], []).should_replicate_topic("")
    assert not GroupFilter([], []).should_replicate_group("g")
    assert ConfigPropertyFilter([]).should_replicate_config_property("min.insync.replicas")


def test_excludes_win() -> None:
    f = TopicFilter(["orders.*"], ["orders-secret"])
    assert f.should_replicate_topic("orders-public")
    assert not f.should_replicate_topic("orders-secret")


def test_java_regex_syntax() -> None:
    f = TopicFilter([r"\Qa.b\E", r"(?<name>x)\k<name>", r"\p{Lower}+"], [])
    assert f.should_replicate_topic("a.b")
    assert not f.should_replicate_topic("a-b")
    assert not TopicFilter([r"\Qa.b\E"], []).should_replicate_topic("axb")
    assert f.should_replicate_topic("xx")
    assert f.should_replicate_topic("abc")
    assert not f.should_replicate_topic("ABC")


def test_invalid_regex_names_the_key() -> None:
    with pytest.raises(ConnectException, match=r"topics\.exclude: invalid regular expression '\('"):
        TopicFilter([".*"], ["("])
    with pytest.raises(ConnectException, match=r"groups: invalid regular expression"):
        GroupFilter(["[a"], [])
    with pytest.raises(ConnectException, match=r"config\.properties\.exclude: invalid"):
        ConfigPropertyFilter(["*"])


@pytest.mark.parametrize(
    ("name", "replicated"),
    [
        ("follower.replication.throttled.replicas", False),
        ("leader.replication.throttled.replicas", False),
        ("message.timestamp.difference.max.ms", False),
        ("message.timestamp.type", False),
        ("unclean.leader.election.enable", False),
        ("min.insync.replicas", False),
        ("min_insync_replicas", True),  # the dots are escaped
        ("retention.ms", True),
        ("cleanup.policy", True),
        ("compression.type", True),
    ],
)
def test_default_config_property_filter(name: str, replicated: bool) -> None:
    f = ConfigPropertyFilter(split_list(CONFIG_PROPERTIES_EXCLUDE_DEFAULT))
    assert f.should_replicate_config_property(name) is replicated


def test_use_defaults_from() -> None:
    assert not ConfigPropertyFilter([]).should_replicate_source_default("retention.ms")
    assert ConfigPropertyFilter([], "source").should_replicate_source_default("retention.ms")
    assert not ConfigPropertyFilter([], "Source").should_replicate_source_default("retention.ms")  # as Kafka
    assert not ConfigPropertyFilter([], "target").should_replicate_source_default("retention.ms")


def test_split_list_as_kafkas_list_type() -> None:
    assert split_list(" a , b,,c ") == ["a", "b", "c"]
    assert split_list("") == []


NAMES = st.text(alphabet="abcxyz.-_0", max_size=8)


@given(st.lists(NAMES, max_size=4), st.lists(NAMES, max_size=4), NAMES)
def test_literal_names_filter_as_sets(include: list[str], exclude: list[str], topic: str) -> None:
    """With escaped literal names the filter is set membership: in include, not in exclude."""
    f = TopicFilter([re.escape(n) for n in include], [re.escape(n) for n in exclude])
    assert f.should_replicate_topic(topic) == (topic in include and topic not in exclude)
