"""Tests of connect.runtime.topic_creation (KIP-158 ``topic.creation.*`` of source connectors).

Kafka's rules: groups are tried in ``topic.creation.groups`` order; a topic belongs to the first
group whose ``include`` regexes match its whole name and whose ``exclude`` regexes do not (exclude
wins); every other topic belongs to ``default``, which must define ``replication.factor`` and
``partitions`` and ignores include/exclude. A group without ``partitions`` or
``replication.factor`` takes the default group's; ``-1`` means the broker's default.
"""

from __future__ import annotations

import pytest

from connect.api.errors import ConnectException
from connect.runtime.topic_creation import DEFAULT, TopicCreation, TopicSettings

P = "topic.creation."


def default(partitions: str = "3", replication_factor: str = "-1", **extra: str) -> dict[str, str]:
    config = {f"{P}default.partitions": partitions, f"{P}default.replication.factor": replication_factor}
    config.update({f"{P}default.{k}": v for k, v in extra.items()})
    return config


def make(config: dict[str, str], groups: list[str] | None = None) -> TopicCreation:
    tc = TopicCreation.from_config(config, groups or [])
    assert tc is not None
    return tc


def test_no_default_group_means_no_topic_creation() -> None:
    assert TopicCreation.from_config({}, []) is None
    assert TopicCreation.from_config({"topic": "x", f"{P}groups": "g"}, ["g"]) is None
    # Other keys of groups alone do not turn it on.
    assert TopicCreation.from_config({f"{P}g.include": ".*", f"{P}g.partitions": "5"}, ["g"]) is None


def test_default_group_only() -> None:
    tc = make(default("6", "1"))
    s = tc.settings_for("anything")
    assert s == TopicSettings(DEFAULT, 6, 1, {})
    assert s.group == "default"


def test_default_group_topic_configs() -> None:
    tc = make(default("1", "1", **{"cleanup.policy": "compact", "retention.ms": "1000"}))
    assert tc.settings_for("t").configs == {"cleanup.policy": "compact", "retention.ms": "1000"}


def test_default_group_ignores_include_and_exclude() -> None:
    config = default("2", "1") | {f"{P}default.include": "never-matches", f"{P}default.exclude": ".*"}
    tc = make(config)
    s = tc.settings_for("orders")
    assert (s.group, s.partitions, s.replication_factor) == ("default", 2, 1)
    assert s.configs == {}, "include/exclude are not topic configs"


def test_groups_are_tried_in_order_and_the_first_match_wins() -> None:
    config = default("3", "-1") | {
        f"{P}compacted.include": "state-.*",
        f"{P}compacted.partitions": "1",
        f"{P}compacted.cleanup.policy": "compact",
        f"{P}everything.include": ".*",
        f"{P}everything.partitions": "12",
        f"{P}everything.retention.ms": "100",
    }
    tc = make(config, ["compacted", "everything"])
    assert tc.settings_for("state-users") == TopicSettings("compacted", 1, -1, {"cleanup.policy": "compact"})
    assert tc.settings_for("events") == TopicSettings("everything", 12, -1, {"retention.ms": "100"})
    swapped = make(config, ["everything", "compacted"])
    assert swapped.settings_for("state-users").group == "everything"


def test_include_patterns_are_a_list_of_whole_name_regexes() -> None:
    config = default() | {f"{P}g.include": "orders.*, status ,audit"}
    tc = make(config, ["g"])
    assert tc.settings_for("orders").group == "g"
    assert tc.settings_for("orders-eu").group == "g"
    assert tc.settings_for("status").group == "g"
    assert tc.settings_for("audit").group == "g"
    assert tc.settings_for("statuses").group == "default"  # "status" must match the whole name
    assert tc.settings_for("my-orders").group == "default"
    assert tc.settings_for("audit-log").group == "default"


def test_exclude_wins_over_include() -> None:
    config = default() | {
        f"{P}g.include": "orders.*",
        f"{P}g.exclude": "orders-internal, .*-tmp",
        f"{P}g.partitions": "9",
    }
    tc = make(config, ["g"])
    assert tc.settings_for("orders-eu").group == "g"
    assert tc.settings_for("orders-internal").group == "default"
    assert tc.settings_for("orders-x-tmp").group == "default"


def test_a_group_without_include_matches_nothing() -> None:
    config = default() | {f"{P}g.partitions": "9", f"{P}g.exclude": "x"}
    tc = make(config, ["g"])
    assert tc.settings_for("anything").group == "default"


def test_groups_fall_back_to_the_default_partitions_and_replication_factor() -> None:
    config = default("4", "2", **{"cleanup.policy": "compact"}) | {
        f"{P}only-partitions.include": "p.*",
        f"{P}only-partitions.partitions": "10",
        f"{P}only-rf.include": "r.*",
        f"{P}only-rf.replication.factor": "1",
        f"{P}neither.include": "n.*",
    }
    tc = make(config, ["only-partitions", "only-rf", "neither"])
    assert tc.settings_for("p1") == TopicSettings("only-partitions", 10, 2, {})
    assert tc.settings_for("r1") == TopicSettings("only-rf", 4, 1, {})
    # Other topic configs of the default group are not inherited (the broker's defaults apply).
    assert tc.settings_for("n1") == TopicSettings("neither", 4, 2, {})


def test_minus_one_means_the_brokers_default() -> None:
    tc = make(default("-1", "-1"))
    s = tc.settings_for("t")
    assert (s.partitions, s.replication_factor) == (-1, -1)


def test_default_listed_in_groups_is_not_a_second_group() -> None:
    config = default("2", "1") | {f"{P}g.include": "g.*"}
    tc = make(config, ["default", "g"])
    assert [g.name for g in tc.groups] == ["g"]
    assert tc.settings_for("g1").group == "g"
    assert tc.settings_for("other").group == "default"


def test_groups_not_listed_are_ignored() -> None:
    config = default("2", "1") | {f"{P}unlisted.include": ".*", f"{P}unlisted.partitions": "50"}
    tc = make(config, [])
    assert tc.settings_for("x") == TopicSettings("default", 2, 1, {})


def test_values_are_trimmed() -> None:
    tc = make(default(" 5 ", " 1 "))
    s = tc.settings_for("t")
    assert (s.partitions, s.replication_factor) == (5, 1)


def test_settings_configs_are_a_copy() -> None:
    tc = make(default(**{"retention.ms": "1"}))
    first = tc.settings_for("t")
    assert isinstance(first.configs, dict)
    first.configs["cleanup.policy"] = "compact"  # a caller changing its settings...
    assert tc.settings_for("t").configs == {"retention.ms": "1"}  # ...does not change the group


# -- errors ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "key"),
    [
        ({f"{P}default.partitions": "3"}, f"{P}default.replication.factor"),
        ({f"{P}default.replication.factor": "1"}, f"{P}default.partitions"),
        ({f"{P}default.replication.factor": "1", f"{P}default.partitions": " "}, f"{P}default.partitions"),
    ],
)
def test_default_group_needs_both_settings(config: dict[str, str], key: str) -> None:
    with pytest.raises(ConnectException) as info:
        TopicCreation.from_config(config, [])
    assert key in str(info.value)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        (f"{P}default.partitions", "0"),
        (f"{P}default.partitions", "-2"),
        (f"{P}default.partitions", "many"),
        (f"{P}default.partitions", "1.5"),
        (f"{P}default.replication.factor", "0"),
        (f"{P}default.replication.factor", "-3"),
        (f"{P}default.replication.factor", "three"),
    ],
)
def test_invalid_numbers(key: str, value: str) -> None:
    config = default("1", "1") | {key: value}
    with pytest.raises(ConnectException) as info:
        TopicCreation.from_config(config, [])
    assert key in str(info.value)
    assert value in str(info.value)


def test_invalid_numbers_in_a_group() -> None:
    config = default() | {f"{P}g.include": ".*", f"{P}g.partitions": "0"}
    with pytest.raises(ConnectException, match=r"topic\.creation\.g\.partitions"):
        TopicCreation.from_config(config, ["g"])


@pytest.mark.parametrize("key", ["include", "exclude"])
def test_invalid_regexes(key: str) -> None:
    config = default() | {f"{P}g.include": "ok.*", f"{P}g.{key}": "fine, bad("}
    with pytest.raises(ConnectException) as info:
        TopicCreation.from_config(config, ["g"])
    assert f"{P}g.{key}" in str(info.value)
    assert "bad(" in str(info.value)
