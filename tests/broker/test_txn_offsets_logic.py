"""Pending transactional offsets (broker.group.txn_offsets), checked against a naive model."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st
from kio.schema.errors import ErrorCode

from broker.group.model import Group, Member, OffsetEntry, State
from broker.group.txn_offsets import PendingTxnOffsets, apply_committed, check_txn_commit

GROUPS = ["g1", "g2"]
TPS = [("a", 0), ("a", 1), ("b", 0)]


@dataclass(frozen=True)
class Stage:
    pid: int
    group: str
    tps: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Plain:
    group: str
    tp: tuple[str, int]


@dataclass(frozen=True)
class End:
    pid: int
    committed: bool


@dataclass(frozen=True)
class ForgetTopic:
    topic: str


@dataclass(frozen=True)
class ForgetGroup:
    group: str


ops = st.lists(
    st.one_of(
        st.builds(
            Stage,
            st.integers(1, 3),
            st.sampled_from(GROUPS),
            st.lists(st.sampled_from(TPS), min_size=1, max_size=3).map(tuple),
        ),
        st.builds(Plain, st.sampled_from(GROUPS), st.sampled_from(TPS)),
        st.builds(End, st.integers(1, 3), st.booleans()),
        st.builds(ForgetTopic, st.sampled_from(["a", "b"])),
        st.builds(ForgetGroup, st.sampled_from(GROUPS)),
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(ops)
def test_table_matches_a_list_of_pending_records(operations: list[object]) -> None:
    """Every operation is a record appended to the log (its position is the step number); the
    model keeps pending records as a flat list and applies a commit record by record."""
    table = PendingTxnOffsets()
    committed: dict[str, dict[tuple[str, int], OffsetEntry]] = {g: {} for g in GROUPS}
    model_pending: list[tuple[int, str, tuple[str, int], int]] = []  # pid, group, tp, position
    model_committed: dict[tuple[str, tuple[str, int]], int] = {}  # (group, tp) -> position
    for pos, op in enumerate(operations):
        match op:
            case Stage(pid, group, tps):
                table.stage(pid, group, [(tp, OffsetEntry(pos, -1, "", 0, pos)) for tp in tps])
                # A later offset of the same transaction for a partition replaces the earlier one.
                model_pending = [
                    p for p in model_pending if not (p[0] == pid and p[1] == group and p[2] in tps)
                ]
                model_pending += [(pid, group, tp, pos) for tp in dict.fromkeys(tps)]
            case Plain(group, tp):
                committed[group][tp] = OffsetEntry(pos, -1, "", 0, pos)
                model_committed[(group, tp)] = pos
            case End(pid, was_committed):
                for group_id, offsets in table.complete(pid).items():
                    if was_committed:
                        apply_committed(committed[group_id], offsets.items())
                for p_pid, group, tp, p_pos in model_pending:
                    if p_pid == pid and was_committed and model_committed.get((group, tp), -1) < p_pos:
                        model_committed[(group, tp)] = p_pos
                model_pending = [p for p in model_pending if p[0] != pid]
            case ForgetTopic(topic):
                table.forget_topic(topic)
                model_pending = [p for p in model_pending if p[2][0] != topic]
            case ForgetGroup(group):
                table.forget_group(group)
                model_pending = [p for p in model_pending if p[1] != group]
        for group in GROUPS:
            assert table.has_pending(group) == any(p[1] == group for p in model_pending)
            for tp in TPS:
                assert table.is_pending(group, tp) == any(p[1:3] == (group, tp) for p in model_pending)
        assert table.producers() == sorted({p[0] for p in model_pending})
        assert bool(table) == bool(model_pending)
        assert {(g, tp): e.record_offset for g in GROUPS for tp, e in committed[g].items()} == model_committed


def test_a_later_plain_commit_wins_over_an_earlier_transactional_one() -> None:
    current = {("t", 0): OffsetEntry(50, -1, "", 0, record_offset=20)}
    assert apply_committed(current, [(("t", 0), OffsetEntry(40, -1, "", 0, record_offset=10))]) == []
    assert current[("t", 0)].offset == 50
    assert apply_committed(current, [(("t", 0), OffsetEntry(60, -1, "", 0, record_offset=30))]) == [("t", 0)]
    assert current[("t", 0)].offset == 60


def _group(state: str, generation: int, members: dict[str, str | None]) -> Group:
    g = Group("g", state=state, generation=generation)
    for member_id, instance in members.items():
        g.members[member_id] = Member(member_id, instance, "c", "h", 10_000, 10_000, "consumer", [])
        if instance is not None:
            g.static_members[instance] = member_id
    return g


def test_member_and_generation_checks_follow_kafka() -> None:
    stable = _group(State.STABLE, 3, {"m1": None, "m2": "i2"})
    # Clients before TxnOffsetCommit v3 name neither member nor generation: allowed.
    assert check_txn_commit(stable, -1, "", None) == ErrorCode.none
    assert check_txn_commit(stable, 3, "m1", None) == ErrorCode.none
    assert check_txn_commit(stable, 2, "m1", None) == ErrorCode.illegal_generation
    assert check_txn_commit(stable, 3, "gone", None) == ErrorCode.unknown_member_id
    assert check_txn_commit(stable, -1, "gone", None) == ErrorCode.unknown_member_id
    assert check_txn_commit(stable, 3, "m2", "i2") == ErrorCode.none
    assert check_txn_commit(stable, 3, "m1", "i2") == ErrorCode.fenced_instance_id
    assert check_txn_commit(stable, 3, "m2", "unknown-instance") == ErrorCode.unknown_member_id
    empty = _group(State.EMPTY, 5, {})
    assert check_txn_commit(empty, -1, "whoever", None) == ErrorCode.none
    assert check_txn_commit(empty, 5, "m1", None) == ErrorCode.unknown_member_id
    assert check_txn_commit(_group(State.DEAD, 1, {}), -1, "", None) == ErrorCode.coordinator_not_available
