"""The worker group membership client against the real broker (in-process, real sockets).

Most tests run a ``Worker``: the loop a distributed herder runs (join, the leader
assigns, sync, wait until a rebalance is needed, again), and wait until the group
has converged: one generation, one leader that saw every member's metadata, and
every member holding the assignment the leader made for it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest
from kio.schema.errors import ErrorCode

from broker.config import load_config
from broker.protocol import build, encode_response, peek_request_header
from broker.protocol.codec import response_class
from broker.protocol.versions import ApiKey
from broker.server import EmbeddedBroker
from connect.herder.kafka_connection import GroupError, choose_versions, parse_bootstrap
from connect.herder.membership import Coordinator, GroupMember, RebalanceNeeded, coordinator_in
from tests.support import TEST_OVERRIDES, unique

T = TypeVar("T")

CONNECT_PROTOCOLS = ("sessioned", "compatible", "default")


def new_member(bootstrap: str, group: str, **overrides: Any) -> GroupMember:
    """Timeouts scaled down so rebalances take milliseconds and expiries about a second."""
    settings: dict[str, Any] = {
        "session_timeout_ms": 1000,
        "heartbeat_interval_ms": 100,
        "rebalance_timeout_ms": 5000,
        "request_timeout_ms": 5000,
        "retry_backoff_ms": 20,
        **overrides,
    }
    return GroupMember(bootstrap, group, **settings)


def offer(url: str, names: Sequence[str] = CONNECT_PROTOCOLS) -> list[tuple[str, bytes]]:
    """Protocols with metadata that says who sent it and for which protocol."""
    return [(name, f"{url}/{name}".encode()) for name in names]


def assignment_for(member_id: str, generation: int) -> bytes:
    return f"{member_id}@{generation}".encode()


@dataclass(frozen=True)
class Synced:
    generation: int
    member_id: str
    leader_id: str
    protocol: str
    seen: dict[str, bytes]  # the leader's view of the members (empty for followers)
    assignment: bytes


@dataclass
class Worker:
    """A herder's membership loop around one GroupMember."""

    member: GroupMember
    protocols: list[tuple[str, bytes]]
    synced: list[Synced] = field(default_factory=list)
    rejoin_reasons: list[str] = field(default_factory=list)
    settled: bool = False  # between a successful sync and the next rebalance
    task: asyncio.Task[None] | None = None

    def start(self) -> Worker:
        self.task = asyncio.create_task(self._run())
        return self

    async def _run(self) -> None:
        while True:
            joined = await self.member.join(self.protocols)
            assignments = (
                {m: assignment_for(m, joined.generation) for m in joined.members}
                if joined.is_leader
                else None
            )
            try:
                mine = await self.member.sync(assignments)
            except RebalanceNeeded:
                continue
            self.synced.append(
                Synced(
                    joined.generation,
                    joined.member_id,
                    joined.leader_id,
                    joined.protocol,
                    joined.members,
                    mine,
                )
            )
            self.settled = True
            await self.member.wait_rejoin_needed()
            self.settled = False
            self.rejoin_reasons.append(self.member.rejoin_reason or "")

    async def halt(self) -> None:
        """Stop the loop (not the member)."""
        if self.task is not None:
            self.task.cancel()
            await asyncio.wait([self.task])
            if not self.task.cancelled() and self.task.exception() is not None:
                raise self.task.exception()  # type: ignore[misc]

    async def stop(self) -> None:
        await self.halt()
        await self.member.close()

    @property
    def current(self) -> Synced | None:
        if not self.settled or self.member.rejoin_needed:
            return None
        return self.synced[-1]


def converged(workers: Sequence[Worker]) -> int | None:
    """The generation the workers agree on, or None while they do not (yet)."""
    states = [w.current for w in workers]
    if any(s is None for s in states):
        return None
    done = [s for s in states if s is not None]
    if len({s.generation for s in done}) != 1:
        return None
    leaders = [s for s in done if s.member_id == s.leader_id]
    if len(leaders) != 1 or any(s.leader_id != leaders[0].member_id for s in done):
        return None
    if set(leaders[0].seen) != {s.member_id for s in done}:
        return None
    if any(s.assignment != assignment_for(s.member_id, s.generation) for s in done):
        return None
    return done[0].generation


async def eventually(probe: Callable[[], T | None], what: str, timeout: float = 15.0) -> T:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = probe()
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        await asyncio.sleep(0.02)


def run(scenario: Coroutine[Any, Any, None]) -> None:
    asyncio.run(asyncio.wait_for(scenario, 60))


async def stop_all(workers: Sequence[Worker]) -> None:
    for w in workers:
        await w.stop()


# -- pure helpers ------------------------------------------------------------------------


def test_choose_versions_takes_the_highest_common_version() -> None:
    ours = {11: (0, 1, 2, 3, 4, 5, 6, 7, 8, 9), 12: (0, 1, 2, 3, 4), 13: (0, 1)}
    theirs = {11: (2, 7), 12: (5, 6), 18: (0, 3)}
    assert choose_versions(ours, theirs) == {11: 7}


def test_parse_bootstrap() -> None:
    assert parse_bootstrap("a:9092, b:19092,[::1]:9093") == [("a", 9092), ("b", 19092), ("::1", 9093)]
    with pytest.raises(ValueError):
        parse_bootstrap("no-port")
    with pytest.raises(ValueError):
        parse_bootstrap(" , ")


def test_coordinator_in_reads_both_find_coordinator_shapes() -> None:
    single = build(response_class(ApiKey.FIND_COORDINATOR, 3), node_id=1, host="b1", port=9092)
    assert coordinator_in(3, single, "g") == (ErrorCode.none, None, Coordinator(1, "b1", 9092))
    batched = build(
        response_class(ApiKey.FIND_COORDINATOR, 4),
        coordinators=[
            {"key": "other", "node_id": 1, "host": "b1", "port": 9092},
            {"key": "g", "node_id": 2, "host": "b2", "port": 9093},
        ],
    )
    assert coordinator_in(4, batched, "g") == (ErrorCode.none, None, Coordinator(2, "b2", 9093))
    loading = build(
        response_class(ApiKey.FIND_COORDINATOR, 6),
        coordinators=[{"key": "g", "node_id": -1, "error_code": ErrorCode.coordinator_load_in_progress}],
    )
    assert coordinator_in(6, loading, "g")[0] == ErrorCode.coordinator_load_in_progress
    assert coordinator_in(6, batched, "absent")[0] == ErrorCode.coordinator_not_available


# -- against the broker ------------------------------------------------------------------


def test_single_member_leads_and_gets_what_it_assigned(
    shared_broker: EmbeddedBroker, caplog: pytest.LogCaptureFixture
) -> None:
    async def scenario() -> None:
        async with new_member(shared_broker.bootstrap, unique("g")) as member:
            assert member.generation == -1 and member.member_id == "" and member.coordinator is None
            joined = await member.join(offer("http://w1:8083"))
            assert joined.is_leader and joined.member_id == member.member_id != ""
            assert joined.generation == member.generation == 1
            assert joined.protocol == "sessioned"
            assert joined.members == {joined.member_id: b"http://w1:8083/sessioned"}
            assert member.coordinator is not None
            assert await member.sync({joined.member_id: b"all of it"}) == b"all of it"
            assert not member.rejoin_needed

    with caplog.at_level(logging.INFO, logger="connect.herder.membership"):
        run(scenario())
    assert "joined generation 1 as leader" in caplog.text


def test_heartbeats_keep_the_member_in_the_group_for_several_session_timeouts(
    shared_broker: EmbeddedBroker,
) -> None:
    async def scenario() -> None:
        async with new_member(shared_broker.bootstrap, unique("g"), session_timeout_ms=600) as member:
            joined = await member.join(offer("http://w1:8083"))
            await member.sync({joined.member_id: b"a"})
            # Without heartbeats the coordinator would drop the member after 0.6 s and the next
            # heartbeat would answer UNKNOWN_MEMBER_ID.
            assert not await member.wait_rejoin_needed(timeout=2.0)
            assert member.generation == joined.generation

    run(scenario())


def test_three_members_form_one_generation_with_one_leader(shared_broker: EmbeddedBroker) -> None:
    async def scenario() -> None:
        group = unique("g")
        workers = [
            Worker(new_member(shared_broker.bootstrap, group), offer(f"http://w{i}:8083")).start()
            for i in range(3)
        ]
        try:
            generation = await eventually(lambda: converged(workers), "three members to converge")
            states = [w.synced[-1] for w in workers]
            assert len({s.member_id for s in states}) == 3
            leader = next(s for s in states if s.member_id == s.leader_id)
            assert leader.seen == {
                s.member_id: f"http://w{i}:8083/sessioned".encode() for i, s in enumerate(states)
            }
            assert all(s.seen == {} for s in states if s is not leader)
            assert {w.member.generation for w in workers} == {generation}
        finally:
            await stop_all(workers)

    run(scenario())


def test_coordinator_picks_the_protocol_every_member_supports(shared_broker: EmbeddedBroker) -> None:
    async def scenario() -> None:
        group = unique("g")
        workers = [
            Worker(new_member(shared_broker.bootstrap, group), offer(f"http://w{i}:8083")) for i in range(2)
        ]
        for w in workers:
            w.start()
        try:
            await eventually(lambda: converged(workers), "two sessioned members to converge")
            assert {w.synced[-1].protocol for w in workers} == {"sessioned"}

            eager = Worker(new_member(shared_broker.bootstrap, group), offer("http://old:8083", ["default"]))
            workers.append(eager.start())
            await eventually(lambda: converged(workers), "the eager member to be admitted")
            assert {w.synced[-1].protocol for w in workers} == {"default"}
            leader = next(s for s in (w.synced[-1] for w in workers) if s.member_id == s.leader_id)
            assert sorted(leader.seen.values()) == [
                b"http://old:8083/default",
                b"http://w0:8083/default",
                b"http://w1:8083/default",
            ]
        finally:
            await stop_all(workers)

    run(scenario())


def test_a_new_member_makes_the_others_rejoin_into_a_new_generation(shared_broker: EmbeddedBroker) -> None:
    async def scenario() -> None:
        group = unique("g")
        workers = [
            Worker(new_member(shared_broker.bootstrap, group), offer(f"http://w{i}:8083")) for i in range(2)
        ]
        for w in workers:
            w.start()
        try:
            first = await eventually(lambda: converged(workers), "two members to converge")
            newcomer = Worker(new_member(shared_broker.bootstrap, group), offer("http://w2:8083"))
            workers.append(newcomer.start())
            second = await eventually(lambda: converged(workers), "three members to converge")
            assert second > first
            for w in workers[:2]:
                assert "the coordinator started a rebalance" in w.rejoin_reasons
                assert w.member.member_id == w.synced[0].member_id  # rejoined under the same id
        finally:
            await stop_all(workers)

    run(scenario())


def test_a_silent_member_is_dropped_after_its_session_timeout(shared_broker: EmbeddedBroker) -> None:
    async def scenario() -> None:
        group = unique("g")
        workers = [
            Worker(new_member(shared_broker.bootstrap, group), offer(f"http://w{i}:8083")) for i in range(3)
        ]
        for w in workers:
            w.start()
        try:
            first = await eventually(lambda: converged(workers), "three members to converge")
            crashed = workers.pop()
            await crashed.halt()
            silenced_at = time.monotonic()
            await crashed.member.close(leave_group=False)  # no LeaveGroup: like a killed worker
            second = await eventually(lambda: converged(workers), "the two survivors to converge")
            assert second > first
            # The coordinator only noticed through the missing heartbeats (1 s session, 0.1 s interval).
            assert time.monotonic() - silenced_at >= 0.8
            leader = next(s for s in (w.synced[-1] for w in workers) if s.member_id == s.leader_id)
            assert crashed.synced[-1].member_id not in leader.seen and len(leader.seen) == 2
        finally:
            await stop_all(workers)

    run(scenario())


def test_leave_makes_the_others_rebalance_without_waiting_for_the_session(
    shared_broker: EmbeddedBroker,
) -> None:
    async def scenario() -> None:
        group = unique("g")
        # A long session: only LeaveGroup can make this rebalance fast.
        workers = [
            Worker(
                new_member(shared_broker.bootstrap, group, session_timeout_ms=20000),
                offer(f"http://w{i}:8083"),
            )
            for i in range(2)
        ]
        for w in workers:
            w.start()
        try:
            first = await eventually(lambda: converged(workers), "two members to converge")
            leaving = workers.pop()
            await leaving.halt()
            left_at = time.monotonic()
            await leaving.member.leave()
            assert leaving.member.member_id == "" and leaving.member.generation == -1
            second = await eventually(lambda: converged(workers), "the remaining member alone", timeout=5)
            assert second > first and time.monotonic() - left_at < 5
            assert len(workers[0].synced[-1].seen) == 1
            await leaving.member.close()
        finally:
            await stop_all(workers)

    run(scenario())


def test_request_rejoin_by_the_leader_starts_a_new_generation(shared_broker: EmbeddedBroker) -> None:
    async def scenario() -> None:
        group = unique("g")
        workers = [
            Worker(
                new_member(shared_broker.bootstrap, group, session_timeout_ms=20000),
                offer(f"http://w{i}:8083"),
            )
            for i in range(2)
        ]
        for w in workers:
            w.start()
        try:
            first = await eventually(lambda: converged(workers), "two members to converge")
            leader = next(w for w in workers if w.synced[-1].member_id == w.synced[-1].leader_id)
            leader.member.request_rejoin("connectors were added")
            assert leader.member.rejoin_needed
            second = await eventually(lambda: converged(workers), "a new generation", timeout=5)
            assert second == first + 1
            assert "connectors were added" in leader.rejoin_reasons
        finally:
            await stop_all(workers)

    run(scenario())


def test_members_find_the_coordinator_again_after_it_restarts(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    brokers: list[EmbeddedBroker] = []

    def start_broker(port: int = 0) -> EmbeddedBroker:
        config = {"listeners": f"PLAINTEXT://127.0.0.1:{port}", "log.dirs": str(logs), **TEST_OVERRIDES}
        eb = EmbeddedBroker(load_config(config)).start()
        brokers.append(eb)
        return eb

    first_broker = start_broker()
    port = int(first_broker.bootstrap.rsplit(":", 1)[1])

    async def scenario() -> None:
        group = unique("g")
        workers = [
            Worker(new_member(first_broker.bootstrap, group), offer(f"http://w{i}:8083")).start()
            for i in range(2)
        ]
        try:
            first = await eventually(lambda: converged(workers), "two members to converge")
            ids = {w.synced[-1].member_id for w in workers}
            await asyncio.to_thread(first_broker.stop)
            await eventually(
                lambda: all(any("no heartbeat acknowledged" in r for r in w.rejoin_reasons) for w in workers),
                "both members to give up on their session",
            )
            await asyncio.to_thread(start_broker, port)
            second = await eventually(lambda: converged(workers), "the group to form again")
            # The restarted coordinator reloaded the group, so both members kept their ids.
            assert second > first
            assert {w.synced[-1].member_id for w in workers} == ids
            assert all(w.member.coordinator == ("127.0.0.1", port) for w in workers)
        finally:
            await stop_all(workers)

    try:
        run(scenario())
    finally:
        for eb in brokers:
            eb.stop()


def test_a_consumer_group_of_the_same_id_is_refused(shared_broker: EmbeddedBroker) -> None:
    async def scenario() -> None:
        group = unique("g")
        async with new_member(shared_broker.bootstrap, group, protocol_type="consumer") as consumer:
            joined = await consumer.join([("range", b"subscription")])
            await consumer.sync({joined.member_id: b"partitions"})
            async with new_member(shared_broker.bootstrap, group) as worker:
                with pytest.raises(GroupError) as refused:
                    await worker.join(offer("http://w0:8083"))
                assert refused.value.error == "INCONSISTENT_GROUP_PROTOCOL"
                assert "INCONSISTENT_GROUP_PROTOCOL" in str(refused.value)

    run(scenario())


def test_a_closed_member_refuses_to_join(shared_broker: EmbeddedBroker) -> None:
    async def scenario() -> None:
        member = new_member(shared_broker.bootstrap, unique("g"))
        await member.close()
        with pytest.raises(GroupError):
            await member.join(offer("http://w0:8083"))

    run(scenario())


def test_a_short_coordinator_outage_costs_no_rebalance(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    brokers: list[EmbeddedBroker] = []

    def start_broker(port: int = 0) -> EmbeddedBroker:
        config = {"listeners": f"PLAINTEXT://127.0.0.1:{port}", "log.dirs": str(logs), **TEST_OVERRIDES}
        eb = EmbeddedBroker(load_config(config)).start()
        brokers.append(eb)
        return eb

    first_broker = start_broker()
    address = first_broker.bootstrap.rsplit(":", 1)
    port = int(address[1])

    async def scenario() -> None:
        member = new_member(first_broker.bootstrap, unique("g"), session_timeout_ms=1500)
        try:
            joined = await member.join(offer("http://w0:8083"))
            await member.sync({joined.member_id: b"a"})
            await asyncio.to_thread(first_broker.stop)
            await eventually(lambda: member.coordinator is None, "the heartbeat to notice the outage")
            await asyncio.to_thread(start_broker, port)
            await eventually(lambda: member.coordinator == ("127.0.0.1", port), "the coordinator to be found")
            # The restarted coordinator still knows the member: heartbeats carry on in the same generation.
            assert not await member.wait_rejoin_needed(timeout=1.6)
            assert member.generation == joined.generation and member.member_id == joined.member_id
        finally:
            await member.close()

    try:
        run(scenario())
    finally:
        for eb in brokers:
            eb.stop()


def older_kafka_api_versions(correlation_id: int) -> bytes:
    """What a broker without ApiVersions v4 (Kafka 2.4 to 3.6) answers a v4 request: a v0 body
    with UNSUPPORTED_VERSION and the versions it does speak."""
    table = {
        ApiKey.API_VERSIONS: (0, 3),
        ApiKey.FIND_COORDINATOR: (0, 4),
        ApiKey.JOIN_GROUP: (0, 9),
        ApiKey.SYNC_GROUP: (0, 5),
        ApiKey.HEARTBEAT: (0, 4),
        ApiKey.LEAVE_GROUP: (0, 5),
    }
    body = build(
        response_class(ApiKey.API_VERSIONS, 0),
        error_code=ErrorCode.unsupported_version,
        api_keys=[{"api_key": k, "min_version": lo, "max_version": hi} for k, (lo, hi) in table.items()],
    )
    return encode_response(correlation_id, body)


def test_api_versions_falls_back_when_the_broker_is_older(shared_broker: EmbeddedBroker) -> None:
    """The bootstrap connection goes through a proxy that answers ApiVersions v4 like an older
    Kafka; the client asks again at v3 and goes on to join through the real coordinator."""

    async def scenario() -> None:
        host, port = shared_broker.bootstrap.rsplit(":", 1)
        refused: list[int] = []

        async def proxy(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
            broker_r, broker_w = await asyncio.open_connection(host, int(port))
            try:
                while True:
                    prefix = await client_r.readexactly(4)
                    frame = await client_r.readexactly(int.from_bytes(prefix, "big"))
                    api_key, version, correlation = peek_request_header(frame)
                    if api_key == ApiKey.API_VERSIONS and version > 3:
                        refused.append(version)
                        client_w.write(older_kafka_api_versions(correlation))
                        continue
                    broker_w.write(prefix + frame)
                    size = await broker_r.readexactly(4)
                    client_w.write(size + await broker_r.readexactly(int.from_bytes(size, "big")))
            except (asyncio.IncompleteReadError, ConnectionError):
                pass
            finally:
                broker_w.close()
                client_w.close()

        server = await asyncio.start_server(proxy, "127.0.0.1", 0)
        proxy_port = server.sockets[0].getsockname()[1]
        try:
            async with new_member(f"127.0.0.1:{proxy_port}", unique("g")) as member:
                joined = await member.join(offer("http://w0:8083"))
                assert joined.is_leader
                assert await member.sync({joined.member_id: b"a"}) == b"a"
            assert refused == [4]
        finally:
            server.close()
            await server.wait_closed()

    run(scenario())


def test_close_abandons_a_held_join_and_leaves(shared_broker: EmbeddedBroker) -> None:
    async def scenario() -> None:
        group = unique("g")
        async with new_member(shared_broker.bootstrap, group) as first:
            joined = await first.join(offer("http://w0:8083"))
            await first.sync({joined.member_id: b"a"})
            second = new_member(shared_broker.bootstrap, group)
            held = asyncio.create_task(second.join(offer("http://w1:8083")))
            # The coordinator holds the newcomer's JoinGroup until ``first`` rejoins (up to 5 s).
            assert await first.wait_rejoin_needed(timeout=5)
            assert not held.done()
            closed_at = time.monotonic()
            await second.close()
            with pytest.raises(GroupError, match="closed"):
                await held
            assert time.monotonic() - closed_at < 1
            rejoined = await first.join(offer("http://w0:8083"))
            assert rejoined.generation > joined.generation
            assert list(rejoined.members) == [first.member_id]

    run(scenario())
