"""Transactional offsets in the group coordinator, on real logs: invisible until their
transaction commits, dropped on abort, checked against the group's generation, and
rebuilt from ``__consumer_offsets`` (transactional batches and their markers) on restart.
Markers are written as the transaction coordinator writes them (``PartitionLog.append_marker``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kio.schema.errors import ErrorCode

from broker.config import load_config
from broker.group.coordinator import OFFSETS_TOPIC, GroupCoordinator
from broker.logs import LogManager
from tests.broker.test_group_coordinator import join, join_new


def run(tmp_path: Path, scenario: Callable[[GroupCoordinator], Awaitable[Any]]) -> Any:
    cfg = load_config(
        {
            "log.dirs": str(tmp_path / "logs"),
            "group.initial.rebalance.delay.ms": "0",
            "group.min.session.timeout.ms": "100",
            "offsets.topic.num.partitions": "3",
        }
    )

    async def main() -> Any:
        logs = LogManager(cfg)
        logs.open()
        coord = GroupCoordinator(cfg, logs)
        coord.load()
        try:
            return await scenario(coord)
        finally:
            coord.shutdown()
            logs.close()

    return asyncio.run(main())


def end_txn(coord: GroupCoordinator, pid: int, epoch: int, commit: bool, groups: list[str]) -> None:
    """What the transaction coordinator does at EndTxn: a marker in each group's offsets
    partition, then ``complete_transaction``."""
    for p in sorted({coord.offsets_partition(g) for g in groups}):
        plog = coord.logs.get(OFFSETS_TOPIC, p)
        assert plog is not None
        plog.append_marker(pid, epoch, commit, 0)
    coord.complete_transaction(pid, epoch, commit)


def visible(coord: GroupCoordinator, group: str, tp: tuple[str, int]) -> int | None:
    entry = coord.fetch_offsets(group, [tp])[tp]
    return None if entry is None else entry.offset


def txn_commit(coord: GroupCoordinator, group: str, pid: int, offset: int, **kw: Any) -> Any:
    return coord.commit_txn_offsets(
        group,
        pid,
        kw.get("epoch", 0),
        kw.get("generation", -1),
        kw.get("member", ""),
        kw.get("instance"),
        [("t", 0, offset, -1, "txn")],
    )


def test_visible_only_after_commit_and_never_after_abort(tmp_path: Path) -> None:
    async def scenario(coord: GroupCoordinator) -> None:
        coord.logs.create_topic("t", 1)
        coord.commit_offsets("g", -1, "", None, [("t", 0, 5, -1, None)])
        assert txn_commit(coord, "g", 7, 10) == (ErrorCode.none, [ErrorCode.none])
        assert visible(coord, "g", ("t", 0)) == 5 and coord.has_pending_txn_offset("g", ("t", 0))
        end_txn(coord, 7, 0, False, ["g"])
        assert visible(coord, "g", ("t", 0)) == 5 and not coord.has_pending_txn_offset("g", ("t", 0))
        txn_commit(coord, "g", 7, 20, epoch=1)
        end_txn(coord, 7, 1, True, ["g"])
        assert visible(coord, "g", ("t", 0)) == 20
        # A group that only a transaction committed to exists afterwards, as in Kafka.
        txn_commit(coord, "fresh", 8, 3)
        assert visible(coord, "fresh", ("t", 0)) is None
        end_txn(coord, 8, 0, True, ["fresh"])
        assert visible(coord, "fresh", ("t", 0)) == 3

    run(tmp_path, scenario)


def test_a_plain_commit_after_the_txn_offset_wins(tmp_path: Path) -> None:
    async def scenario(coord: GroupCoordinator) -> None:
        coord.logs.create_topic("t", 1)
        txn_commit(coord, "g", 7, 10)
        coord.commit_offsets("g", -1, "", None, [("t", 0, 4, -1, None)])
        end_txn(coord, 7, 0, True, ["g"])
        assert visible(coord, "g", ("t", 0)) == 4

    async def after(coord: GroupCoordinator) -> None:
        assert visible(coord, "g", ("t", 0)) == 4

    run(tmp_path, scenario)
    run(tmp_path, after)


def test_generation_member_and_epoch_checks(tmp_path: Path) -> None:
    async def scenario(coord: GroupCoordinator) -> None:
        coord.logs.create_topic("t", 1)
        a = await join_new(coord, "g", session=10_000)
        await coord.sync("g", 1, a.member_id, None, None, None, [])
        assert txn_commit(coord, "g", 7, 1, generation=1, member=a.member_id)[0] == ErrorCode.none
        assert (
            txn_commit(coord, "g", 7, 1, generation=0, member=a.member_id)[0] == ErrorCode.illegal_generation
        )
        assert txn_commit(coord, "g", 7, 1, generation=1, member="ghost")[0] == ErrorCode.unknown_member_id
        s = await join(coord, "s", instance="static-1", session=10_000)
        await coord.sync("s", 1, s.member_id, "static-1", None, None, [])
        fenced = txn_commit(coord, "s", 7, 1, generation=1, member="old-id", instance="static-1")
        assert fenced[0] == ErrorCode.fenced_instance_id
        # A fenced transaction ends with a marker of the bumped epoch (3): from then on the
        # offsets partition itself refuses the older epoch.
        end_txn(coord, 7, 3, False, ["g"])
        assert txn_commit(coord, "g", 7, 1, epoch=2)[0] == ErrorCode.invalid_producer_epoch
        assert txn_commit(coord, "", 7, 1)[0] == ErrorCode.invalid_group_id
        assert txn_commit(coord, "g", 7, 1, generation=1, member=a.member_id, epoch=3)[0] == ErrorCode.none

    run(tmp_path, scenario)


def test_restart_applies_committed_drops_aborted_keeps_open(tmp_path: Path) -> None:
    async def first(coord: GroupCoordinator) -> None:
        coord.logs.create_topic("t", 1)
        for group, pid, offset in (("a", 1, 11), ("b", 2, 22), ("c", 3, 33)):
            coord.commit_offsets(group, -1, "", None, [("t", 0, 1, -1, None)])
            txn_commit(coord, group, pid, offset)
        end_txn(coord, 1, 0, True, ["a"])
        end_txn(coord, 2, 0, False, ["b"])
        # Producer 3's transaction has no marker yet: the broker "dies" here.

    async def second(coord: GroupCoordinator) -> None:
        assert visible(coord, "a", ("t", 0)) == 11
        assert visible(coord, "b", ("t", 0)) == 1
        assert visible(coord, "c", ("t", 0)) == 1 and coord.has_pending_txn_offset("c", ("t", 0))
        # The transaction coordinator, recovered, completes it.
        end_txn(coord, 3, 0, True, ["c"])
        assert visible(coord, "c", ("t", 0)) == 33

    async def third(coord: GroupCoordinator) -> None:
        assert [visible(coord, g, ("t", 0)) for g in "abc"] == [11, 1, 33]
        assert not coord.txn_offsets

    run(tmp_path, first)
    run(tmp_path, second)
    run(tmp_path, third)


def test_a_marker_completes_only_its_own_partition_on_replay(tmp_path: Path) -> None:
    """One transaction spanning two groups on two offsets partitions, the broker killed
    after the first marker: the second group's offsets stay pending, not committed."""
    groups: list[str] = []

    async def first(coord: GroupCoordinator) -> None:
        coord.logs.create_topic("t", 1)
        by_partition: dict[int, str] = {}
        n = 0
        while len(by_partition) < 2:
            by_partition.setdefault(coord.offsets_partition(f"g{n}"), f"g{n}")
            n += 1
        groups.extend(by_partition.values())
        for g in groups:
            txn_commit(coord, g, 9, 50)
        plog = coord.logs.get(OFFSETS_TOPIC, coord.offsets_partition(groups[0]))
        assert plog is not None
        plog.append_marker(9, 0, True, 0)

    async def second(coord: GroupCoordinator) -> None:
        assert visible(coord, groups[0], ("t", 0)) == 50
        assert visible(coord, groups[1], ("t", 0)) is None
        assert coord.has_pending_txn_offset(groups[1], ("t", 0))

    run(tmp_path, first)
    run(tmp_path, second)


GROUPS = ["g0", "g1", "g2", "g3"]
steps = st.lists(
    st.one_of(
        st.tuples(st.just("plain"), st.sampled_from(GROUPS), st.integers(0, 1)),
        st.tuples(st.just("txn"), st.sampled_from(GROUPS), st.integers(0, 1), st.integers(1, 3)),
        st.tuples(st.just("end"), st.integers(1, 3), st.booleans()),
        st.tuples(st.just("delete"), st.sampled_from(GROUPS)),
    ),
    max_size=25,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps)
def test_replay_rebuilds_exactly_the_running_state(tmp_path_factory: Any, ops: list[tuple[Any, ...]]) -> None:
    tmp_path = tmp_path_factory.mktemp("replay")
    snapshot: dict[str, Any] = {}

    def state(coord: GroupCoordinator) -> Any:
        committed = {
            g: {tp: e.offset for tp, e in coord.fetch_offsets(g, None).items() if e is not None}
            for g in GROUPS
        }
        pending = {(g, p) for g in GROUPS for p in (0, 1) if coord.has_pending_txn_offset(g, ("t", p))}
        return committed, pending

    async def running(coord: GroupCoordinator) -> None:
        coord.logs.create_topic("t", 2)
        open_groups: dict[int, set[str]] = {}
        for n, op in enumerate(ops):
            if op[0] == "plain":
                coord.commit_offsets(op[1], -1, "", None, [("t", op[2], n, -1, None)])
            elif op[0] == "txn":
                _, group, partition, pid = op
                coord.commit_txn_offsets(group, pid, 0, -1, "", None, [("t", partition, n, -1, None)])
                open_groups.setdefault(pid, set()).add(group)
            elif op[0] == "end":
                _, pid, commit = op
                end_txn(coord, pid, 0, commit, sorted(open_groups.pop(pid, set())))
            else:
                coord.delete_group(op[1])  # drops its pending offsets too, as Kafka's removeAllOffsets
        snapshot["state"] = state(coord)

    async def restarted(coord: GroupCoordinator) -> None:
        assert state(coord) == snapshot["state"]

    run(tmp_path, running)
    run(tmp_path, restarted)
