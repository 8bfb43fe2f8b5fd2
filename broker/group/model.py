"""A group as the coordinator holds it: members, their protocols and assignments, the
generation, and the committed offsets (Kafka's ``GroupMetadata``). Plain data."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from kio.schema.errors import ErrorCode


class State:
    EMPTY = "Empty"
    PREPARING = "PreparingRebalance"
    COMPLETING = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


@dataclass(slots=True)
class JoinResult:
    error: ErrorCode
    member_id: str = ""
    generation: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    members: list[tuple[str, str | None, bytes]] = field(default_factory=list)
    skip_assignment: bool = False


@dataclass(slots=True)
class SyncResult:
    error: ErrorCode
    assignment: bytes = b""
    protocol_type: str | None = None
    protocol_name: str | None = None


@dataclass(slots=True)
class Member:
    member_id: str
    instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    assignment: bytes = b""
    join_future: asyncio.Future[JoinResult] | None = None
    sync_future: asyncio.Future[SyncResult] | None = None
    last_heartbeat_ms: int = 0
    timer: asyncio.TimerHandle | None = None

    def metadata_for(self, protocol: str | None) -> bytes:
        for name, meta in self.protocols:
            if name == protocol:
                return meta
        return b""

    @property
    def awaiting(self) -> bool:
        """Blocked in JoinGroup or SyncGroup: such members cannot heartbeat."""
        return (self.join_future is not None and not self.join_future.done()) or (
            self.sync_future is not None and not self.sync_future.done()
        )


@dataclass(slots=True)
class OffsetEntry:
    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int
    # Where its record lies in ``__consumer_offsets``: of two commits of a partition, the one
    # written later is current (decides whether a committed transaction's offset applies).
    record_offset: int = -1


@dataclass(slots=True)
class Group:
    group_id: str
    state: str = State.EMPTY
    generation: int = 0
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str | None = None
    members: dict[str, Member] = field(default_factory=dict)
    static_members: dict[str, str] = field(default_factory=dict)  # instance id -> member id
    pending_members: dict[str, asyncio.TimerHandle] = field(default_factory=dict)
    offsets: dict[tuple[str, int], OffsetEntry] = field(default_factory=dict)
    state_timestamp: int = -1
    join_timer: asyncio.TimerHandle | None = None
    sync_timer: asyncio.TimerHandle | None = None
    initial_join_deadline_ms: int = -1
    initial_join_members: int = 0

    def candidate_protocols(self) -> set[str]:
        common: set[str] | None = None
        for m in self.members.values():
            names = {n for n, _ in m.protocols}
            common = names if common is None else common & names
        return common or set()

    def supports(self, protocol_type: str, protocols: list[tuple[str, bytes]]) -> bool:
        if not self.members:
            return bool(protocol_type) and bool(protocols)
        if protocol_type != self.protocol_type:
            return False
        return bool(self.candidate_protocols() & {n for n, _ in protocols})

    def select_protocol(self) -> str:
        candidates = self.candidate_protocols()
        votes: dict[str, int] = {}
        for m in self.members.values():
            choice = next(n for n, _ in m.protocols if n in candidates)
            votes[choice] = votes.get(choice, 0) + 1
        # Highest vote count; ties go to the protocol listed first by the first member.
        order = [n for n, _ in next(iter(self.members.values())).protocols]
        return max(votes, key=lambda n: (votes[n], -order.index(n) if n in order else -len(order)))

    @property
    def max_rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def all_joined(self) -> bool:
        return not self.pending_members and all(
            m.join_future is not None and not m.join_future.done() for m in self.members.values()
        )
