"""The checkpoint connector's and task's pure decisions: groups over tasks, topic renaming."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connect.api import ConnectException
from connectors.mirror.checkpoint_connector import split_groups
from connectors.mirror.checkpoint_task import assigned_groups, rename_topic
from connectors.mirror.policy import replication_policy


@given(st.lists(st.text(min_size=1), unique=True, max_size=30), st.integers(1, 10))
def test_groups_go_to_at_most_max_tasks_in_even_contiguous_runs(groups: list[str], max_tasks: int) -> None:
    runs = split_groups(groups, max_tasks)
    assert len(runs) == min(max_tasks, len(groups))
    assert [g for run in runs for g in run] == groups
    if runs:
        sizes = [len(run) for run in runs]
        assert max(sizes) - min(sizes) <= 1 and min(sizes) >= 1


def test_assigned_groups() -> None:
    assert assigned_groups({"task.assigned.groups": "a, b,,c"}) == ["a", "b", "c"]
    with pytest.raises(ConnectException, match=r"task\.assigned\.groups"):
        assigned_groups({})


def test_topics_are_renamed_for_the_target() -> None:
    policy = replication_policy({})
    assert rename_topic(policy, "orders", "A", "B") == "A.orders"
    assert rename_topic(policy, "C.orders", "A", "B") == "A.C.orders"
    # A topic that came from the target goes back to its own name there.
    assert rename_topic(policy, "B.orders", "A", "B") == "orders"
    assert rename_topic(policy, "B.C.orders", "A", "B") == "orders"


def test_identity_policy_keeps_names() -> None:
    policy = replication_policy(
        {"replication.policy.class": "IdentityReplicationPolicy", "source.cluster.alias": "A"}
    )
    assert rename_topic(policy, "orders", "A", "B") == "orders"
