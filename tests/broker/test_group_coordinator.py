"""The group coordinator's state machine, driven directly (real logs on disk, real event loop)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from kio.schema.errors import ErrorCode

from broker.config import load_config
from broker.group.coordinator import GroupCoordinator, JoinResult, State
from broker.group.records import (
    GroupKey,
    GroupValue,
    MemberValue,
    OffsetKey,
    OffsetValue,
    decode_group_value,
    decode_key,
    decode_offset_value,
    encode_group_key,
    encode_group_value,
    encode_offset_key,
    encode_offset_value,
    java_string_hash,
    partition_for,
)
from broker.logs import LogManager

PROTOCOLS = [("range", b"meta-range"), ("roundrobin", b"meta-rr")]


def run(
    tmp_path: Path,
    scenario: Callable[[GroupCoordinator], Awaitable[Any]],
    clock_ms: Callable[[], int] | None = None,
    **overrides: str,
) -> Any:
    cfg = load_config(
        {
            "log.dirs": str(tmp_path / "logs"),
            "group.initial.rebalance.delay.ms": "0",
            "group.min.session.timeout.ms": "100",
            "offsets.topic.num.partitions": "3",
            **overrides,
        }
    )

    async def main() -> Any:
        logs = LogManager(cfg)
        logs.open()
        coord = GroupCoordinator(cfg, logs, clock_ms)
        coord.load()
        try:
            return await scenario(coord)
        finally:
            coord.shutdown()
            logs.close()

    return asyncio.run(main())


async def join(
    coord: GroupCoordinator,
    group: str,
    member_id: str = "",
    *,
    instance: str | None = None,
    session: int = 2000,
    rebalance: int = 2000,
    protocols: list[tuple[str, bytes]] = PROTOCOLS,
    protocol_type: str = "consumer",
) -> JoinResult:
    return await coord.join(
        group,
        member_id,
        instance,
        "client",
        "127.0.0.1",
        protocol_type,
        protocols,
        session,
        rebalance,
        require_known_member_id=True,
    )


async def join_new(coord: GroupCoordinator, group: str, **kw: Any) -> JoinResult:
    """A new dynamic member: MEMBER_ID_REQUIRED, then the real join with that id."""
    first = await join(coord, group, **kw)
    assert first.error == ErrorCode.member_id_required and first.member_id
    return await join(coord, group, first.member_id, **kw)


def test_first_member_becomes_leader_of_generation_1(tmp_path: Path) -> None:
    async def scenario(coord: GroupCoordinator) -> None:
        r = await join_new(coord, "g")
        assert r.error == ErrorCode.none
        assert r.generation == 1 and r.leader == r.member_id
        assert r.protocol_name == "range"
        assert r.members == [(r.member_id, None, b"meta-range")]
        assert coord.groups["g"].state == State.COMPLETING
        s = await coord.sync("g", 1, r.member_id, None, "consumer", "range", [(r.member_id, b"assignment-1")])
        assert s.error == ErrorCode.none and s.assignment == b"assignment-1"
        assert coord.groups["g"].state == State.STABLE

    run(tmp_path, scenario)


def test_second_member_triggers_rebalance_and_both_join_next_generation(tmp_path: Path) -> None:
    async def scenario(coord: GroupCoordinator) -> None:
        a = await join_new(coord, "g")
        await coord.sync("g", 1, a.member_id, None, None, None, [(a.member_id, b"a-all")])
        b_task = asyncio.create_task(join_new(coord, "g"))
        await asyncio.sleep(0.05)
        assert coord.groups["g"].state == State.PREPARING
        # The existing member learns of the rebalance through its heartbeat, then rejoins.
        assert coord.heartbeat("g", 1, a.member_id, None) == ErrorCode.rebalance_in_progress
        a2, b = await asyncio.gather(join(coord, "g", a.member_id), b_task)
        assert a2.generation == b.generation == 2
        assert a2.leader == b.leader == a.member_id  # the leader keeps its role
        assert {m[0] for m in a2.members} == {a.member_id, b.member_id}
        assert b.members == []  # only the leader sees the member list
        # Followers wait in SyncGroup until the leader hands in assignments.
        follower = asyncio.create_task(coord.sync("g", 2, b.member_id, None, None, None, []))
        await asyncio.sleep(0.05)
        assert not follower.done()
        leader = await coord.sync(
            "g", 2, a.member_id, None, None, None, [(a.member_id, b"a-half"), (b.member_id, b"b-half")]
        )
        assert leader.assignment == b"a-half"
        assert (await follower).assignment == b"b-half"
        assert coord.heartbeat("g", 2, b.member_id, None) == ErrorCode.none
        assert coord.heartbeat("g", 1, b.member_id, None) == ErrorCode.illegal_generation
        assert coord.heartbeat("g", 2, "stranger", None) == ErrorCode.unknown_member_id

    run(tmp_path, scenario)


def test_silent_member_expires_after_session_timeout(tmp_path: Path) -> None:
    async def scenario(coord: GroupCoordinator) -> None:
        a = await join_new(coord, "g", session=300, rebalance=1000)
        await coord.sync("g", 1, a.member_id, None, None, None, [])
        b = await asyncio.gather(
            join_new(coord, "g", session=300, rebalance=1000),
            join(coord, "g", a.member_id, session=300, rebalance=1000),
        )
        for r in b:
            assert r.generation == 2
        await asyncio.gather(
            coord.sync("g", 2, b[1].member_id, None, None, None, []),
            coord.sync("g", 2, b[0].member_id, None, None, None, []),
        )
        # Only a heartbeats; b goes silent.
        for _ in range(8):
            await asyncio.sleep(0.1)
            err = coord.heartbeat("g", 2, a.member_id, None)
        assert err == ErrorCode.rebalance_in_progress
        assert b[0].member_id not in coord.groups["g"].members
        a3 = await join(coord, "g", a.member_id, session=300, rebalance=1000)
        assert a3.generation == 3 and [m[0] for m in a3.members] == [a.member_id]

    run(tmp_path, scenario)


def test_member_that_does_not_rejoin_is_dropped_at_the_rebalance_timeout(tmp_path: Path) -> None:
    async def scenario(coord: GroupCoordinator) -> None:
        a = await join_new(coord, "g", session=5000, rebalance=400)
        await coord.sync("g", 1, a.member_id, None, None, None, [])
        loop = asyncio.get_running_loop()
        started = loop.time()
        b = await join_new(coord, "g", session=5000, rebalance=400)  # a never rejoins
        waited = loop.time() - started
        assert 0.3 < waited < 3
        assert b.generation == 2 and b.leader == b.member_id
        assert list(coord.groups["g"].members) == [b.member_id]

    run(tmp_path, scenario)


def test_leave_triggers_rebalance_and_last_leave_empties_the_group(tmp_path: Path) -> None:
    async def scenario(coord: GroupCoordinator) -> None:
        a = await join_new(coord, "g")
        await coord.sync("g", 1, a.member_id, None, None, None, [])
        b_task = asyncio.create_task(join_new(coord, "g"))
        await asyncio.sleep(0.05)
        a2 = await join(coord, "g", a.member_id)
        b = await b_task
        await asyncio.gather(
            coord.sync("g", 2, a2.member_id, None, None, None, []),
            coord.sync("g", 2, b.member_id, None, None, None, []),
        )
        _err, per_member = coord.leave("g", [(b.member_id, None)])
        assert per_member == [ErrorCode.none]
        assert coord.groups["g"].state == State.PREPARING
        a3 = await join(coord, "g", a.member_id)
        assert a3.generation == 3
        coord.leave("g", [(a.member_id, None)])
        group = coord.groups["g"]
        assert group.state == State.PREPARING or group.state == State.EMPTY
        await asyncio.sleep(0.05)
        assert group.state == State.EMPTY and not group.members
        assert coord.leave("g", [("ghost", None)])[1] == [ErrorCode.unknown_member_id]

    run(tmp_path, scenario)


def test_static_member_restart_takes_its_place_without_rebalance(tmp_path: Path) -> None:
    async def scenario(coord: GroupCoordinator) -> None:
        a = await join(coord, "g", instance="worker-1")
        assert a.error == ErrorCode.none  # static members need no MEMBER_ID_REQUIRED round trip
        await coord.sync("g", 1, a.member_id, "worker-1", None, None, [(a.member_id, b"mine")])
        again = await join(coord, "g", instance="worker-1")
        assert again.error == ErrorCode.none
        assert again.member_id != a.member_id
        assert again.generation == 1  # no rebalance
        assert again.skip_assignment  # the leader must not compute a new assignment
        s = await coord.sync("g", 1, again.member_id, "worker-1", None, None, [])
        assert s.assignment == b"mine"
        # The old incarnation is fenced.
        assert coord.heartbeat("g", 1, a.member_id, "worker-1") == ErrorCode.fenced_instance_id
        assert coord.commit_offsets("g", 1, a.member_id, "worker-1", [])[0] == ErrorCode.fenced_instance_id

    run(tmp_path, scenario)


def test_protocol_checks(tmp_path: Path) -> None:
    async def scenario(coord: GroupCoordinator) -> None:
        a = await join_new(coord, "g")
        assert a.protocol_name == "range"
        await coord.sync("g", 1, a.member_id, None, None, None, [])
        other_type = await join(coord, "g", protocol_type="connect")
        assert other_type.error == ErrorCode.inconsistent_group_protocol
        no_common = await join(coord, "g", protocols=[("sticky", b"")])
        assert no_common.error == ErrorCode.inconsistent_group_protocol
        assert (await join(coord, "g", session=10)).error == ErrorCode.invalid_session_timeout
        assert (await join(coord, "")).error == ErrorCode.invalid_group_id
        assert (await join(coord, "unknown", "some-member")).error == ErrorCode.unknown_member_id
        wrong = await coord.sync("g", 1, a.member_id, None, "consumer", "roundrobin", [])
        assert wrong.error == ErrorCode.inconsistent_group_protocol

    run(tmp_path, scenario)


def test_protocol_is_chosen_by_vote(tmp_path: Path) -> None:
    async def scenario(coord: GroupCoordinator) -> None:
        first = await join(coord, "g")
        tasks = [asyncio.create_task(join(coord, "g", first.member_id))]
        for prefs in ([("roundrobin", b""), ("range", b"")], [("roundrobin", b""), ("range", b"")]):
            r = await join(coord, "g", protocols=prefs)
            tasks.append(asyncio.create_task(join(coord, "g", r.member_id, protocols=prefs)))
        results = await asyncio.gather(*tasks)
        assert {r.generation for r in results} == {max(r.generation for r in results)}
        assert {r.protocol_name for r in results} == {"roundrobin"}

    run(tmp_path, scenario, **{"group.initial.rebalance.delay.ms": "200"})


def test_initial_delay_gathers_a_starting_fleet_into_one_generation(tmp_path: Path) -> None:
    async def scenario(coord: GroupCoordinator) -> None:
        ids = [(await join(coord, "g")).member_id for _ in range(3)]

        async def late(member_id: str, delay: float) -> JoinResult:
            await asyncio.sleep(delay)
            return await join(coord, "g", member_id)

        results = await asyncio.gather(*(late(m, 0.1 * i) for i, m in enumerate(ids)))
        assert {r.generation for r in results} == {1}
        assert sum(1 for r in results if r.members) == 1  # one leader
        assert len(next(r for r in results if r.members).members) == 3

    run(tmp_path, scenario, **{"group.initial.rebalance.delay.ms": "300"})


def test_offset_commit_rules(tmp_path: Path) -> None:
    async def scenario(coord: GroupCoordinator) -> None:
        coord.logs.create_topic("t", 2)
        # A group without members takes commits from anyone (assign() users).
        err, per = coord.commit_offsets(
            "simple", -1, "", None, [("t", 0, 5, -1, "meta"), ("nope", 0, 1, -1, None)]
        )
        assert err == ErrorCode.none and per == [ErrorCode.none, ErrorCode.unknown_topic_or_partition]
        assert coord.fetch_offsets("simple", [("t", 0), ("t", 1)])[("t", 0)].offset == 5  # type: ignore[union-attr]
        assert coord.fetch_offsets("simple", [("t", 1)])[("t", 1)] is None
        too_big = coord.commit_offsets("simple", -1, "", None, [("t", 1, 1, -1, "x" * 5000)])[1]
        assert too_big == [ErrorCode.offset_metadata_too_large]

        a = await join_new(coord, "g")
        # Between JoinGroup and SyncGroup commits are refused.
        assert (
            coord.commit_offsets("g", 1, a.member_id, None, [("t", 0, 1, -1, None)])[0]
            == ErrorCode.rebalance_in_progress
        )
        await coord.sync("g", 1, a.member_id, None, None, None, [])
        assert coord.commit_offsets("g", 1, a.member_id, None, [("t", 0, 7, 0, None)])[0] == ErrorCode.none
        assert (
            coord.commit_offsets("g", 0, a.member_id, None, [("t", 0, 8, 0, None)])[0]
            == ErrorCode.illegal_generation
        )
        assert (
            coord.commit_offsets("g", 1, "other", None, [("t", 0, 8, 0, None)])[0]
            == ErrorCode.unknown_member_id
        )
        assert (
            coord.commit_offsets("g", -1, "", None, [("t", 0, 8, 0, None)])[0] == ErrorCode.unknown_member_id
        )
        assert coord.fetch_offsets("g", None)[("t", 0)].offset == 7  # type: ignore[union-attr]

    run(tmp_path, scenario)


def test_offsets_and_groups_survive_restart(tmp_path: Path) -> None:
    state: dict[str, Any] = {}

    async def first(coord: GroupCoordinator) -> None:
        coord.logs.create_topic("t", 3)
        a = await join(coord, "g", instance="static-a", session=60000)
        await coord.sync("g", 1, a.member_id, "static-a", None, None, [(a.member_id, b"assigned")])
        assert (
            coord.commit_offsets("g", 1, a.member_id, None, [("t", p, 10 + p, 0, f"m{p}") for p in range(3)])[
                1
            ]
            == [ErrorCode.none] * 3
        )
        coord.commit_offsets("simple", -1, "", None, [("t", 0, 42, -1, None)])
        coord.commit_offsets("simple", -1, "", None, [("t", 0, 43, -1, None)])  # the later commit wins
        state["member"] = a.member_id

    async def second(coord: GroupCoordinator) -> None:
        g = coord.groups["g"]
        assert g.state == State.STABLE and g.generation == 1 and g.protocol_name == "range"
        assert list(g.members) == [state["member"]]
        assert g.members[state["member"]].assignment == b"assigned"
        assert {tp: (e.offset, e.metadata) for tp, e in g.offsets.items()} == {
            ("t", p): (10 + p, f"m{p}") for p in range(3)
        }
        assert coord.fetch_offsets("simple", [("t", 0)])[("t", 0)].offset == 43  # type: ignore[union-attr]
        # The restored member keeps working without a rebalance.
        assert coord.heartbeat("g", 1, state["member"], "static-a") == ErrorCode.none

    run(tmp_path, first)
    run(tmp_path, second)


def test_delete_group_and_deleted_topic_offsets(tmp_path: Path) -> None:
    async def scenario(coord: GroupCoordinator) -> None:
        coord.logs.create_topic("t", 1)
        coord.logs.create_topic("u", 1)
        coord.commit_offsets("g", -1, "", None, [("t", 0, 1, -1, None), ("u", 0, 2, -1, None)])
        coord.forget_topic("u")
        assert set(coord.fetch_offsets("g", None)) == {("t", 0)}
        a = await join_new(coord, "busy")
        await coord.sync("busy", 1, a.member_id, None, None, None, [])
        assert coord.delete_group("busy") == ErrorCode.non_empty_group
        assert coord.delete_group("nope") == ErrorCode.group_id_not_found
        assert coord.delete_group("g") == ErrorCode.none
        assert "g" not in coord.groups

    async def after(coord: GroupCoordinator) -> None:
        assert "g" not in coord.groups  # the deletion was persisted (tombstones)

    run(tmp_path, scenario)
    run(tmp_path, after)


def test_member_that_never_syncs_is_dropped(tmp_path: Path) -> None:
    async def scenario(coord: GroupCoordinator) -> None:
        a = await join_new(coord, "g", rebalance=300)
        await coord.sync("g", 1, a.member_id, None, None, None, [])
        b_task = asyncio.create_task(join_new(coord, "g", rebalance=300))
        await asyncio.sleep(0.02)
        a2 = await join(coord, "g", a.member_id, rebalance=300)
        b = await b_task
        assert a2.generation == b.generation == 2
        # Only the follower syncs; the leader never does.
        s = await coord.sync("g", 2, b.member_id, None, None, None, [])
        assert s.error == ErrorCode.rebalance_in_progress
        assert a.member_id not in coord.groups["g"].members

    run(tmp_path, scenario)


def test_offsets_of_groups_without_members_expire_after_retention(tmp_path: Path) -> None:
    now = [1_800_000_000_000]

    async def scenario(coord: GroupCoordinator) -> None:
        coord.logs.create_topic("t", 1)
        coord.commit_offsets("idle", -1, "", None, [("t", 0, 5, -1, None)])
        a = await join_new(coord, "busy", session=60_000)
        await coord.sync("busy", 1, a.member_id, None, None, None, [])
        coord.commit_offsets("busy", 1, a.member_id, None, [("t", 0, 9, -1, None)])
        now[0] += 10 * 60_000  # offsets.retention.minutes=5 has passed
        assert coord.expire_offsets() == 1
        assert coord.fetch_offsets("idle", [("t", 0)])[("t", 0)] is None
        assert coord.fetch_offsets("busy", [("t", 0)])[("t", 0)] is not None  # a live group keeps its offsets

    async def after(coord: GroupCoordinator) -> None:
        assert coord.fetch_offsets("idle", [("t", 0)])[("t", 0)] is None  # the expiry was written down

    run(tmp_path, scenario, lambda: now[0], **{"offsets.retention.minutes": "5"})
    run(tmp_path, after, lambda: now[0])


class TestRecordFormats:
    def test_offset_records_round_trip(self) -> None:
        k = OffsetKey("group-é", "topic.1", 7)
        assert decode_key(encode_offset_key(k)) == k
        v = OffsetValue(123456789012, 3, "meta", 1700000000000)
        assert decode_offset_value(encode_offset_value(v)) == v
        # Kafka's layout: int16 version 1, then strings with int16 lengths, then int32 partition.
        assert encode_offset_key(OffsetKey("g", "t", 1)) == b"\x00\x01\x00\x01g\x00\x01t\x00\x00\x00\x01"

    def test_group_records_round_trip(self) -> None:
        v = GroupValue(
            "consumer",
            5,
            "range",
            "m1",
            1700000000000,
            (
                MemberValue("m1", "inst", "client", "/1.2.3.4", 30000, 10000, b"sub", b"assign"),
                MemberValue("m2", None, "client2", "/1.2.3.5", 30000, 10000, b"", b""),
            ),
        )
        assert decode_key(encode_group_key(GroupKey("g"))) == GroupKey("g")
        assert decode_group_value(encode_group_value(v)) == v

    def test_partition_for_matches_javas_string_hash(self) -> None:
        # Values of "...".hashCode() printed by a JVM (Java 17).
        assert java_string_hash("") == 0
        assert java_string_hash("a") == 97
        assert java_string_hash("hello") == 99162322
        assert java_string_hash("connect-cluster") == 1440343063
        assert java_string_hash("grüße-€") == 426799350
        assert java_string_hash("polygenelubricants") == -(2**31)
        assert partition_for("connect-cluster", 50) == 1440343063 % 50
        assert partition_for("polygenelubricants", 50) == 0  # Utils.abs(Integer.MIN_VALUE) is 0
