"""The classic group coordinator.

State machine of a group (Kafka's ``GroupMetadata`` states)::

    Empty ──join──► PreparingRebalance ──all joined / rebalance timeout──► CompletingRebalance
      ▲                    ▲   │                                                │
      │ last member leaves │   └── no member left ──► Empty                    │ leader's SyncGroup
      │                    └──── member joins/leaves/expires, leader rejoins ◄── Stable ◄──┘

* **PreparingRebalance**: JoinGroup replies are held until every known member
  has rejoined (and no member id handed out with MEMBER_ID_REQUIRED is still
  pending), or the largest ``rebalance_timeout_ms`` passes; members that did not
  rejoin are dropped. A group leaving Empty first waits
  ``group.initial.rebalance.delay.ms`` (extended while members keep arriving) so
  a fleet starting together forms one generation. Heartbeats answer
  REBALANCE_IN_PROGRESS, which is how members learn to rejoin.
* **CompletingRebalance**: generation + 1, protocol chosen by member vote, the
  leader (kept if still a member) receives every member's metadata. SyncGroup
  calls wait for the leader's assignments; members that do not sync within the
  rebalance timeout are dropped.
* **Stable**: SyncGroup answers the stored assignment; session timeouts expire
  silent members.

Static members (``group.instance.id``) keep their place across restarts: a
rejoin with an empty member id replaces the old member id (fencing it with
FENCED_INSTANCE_ID) without a rebalance when nothing changed.

Committed offsets and group metadata are written to the compacted
``__consumer_offsets`` topic in Kafka's formats before they are acknowledged, and
read back on start, so groups survive restarts (``broker.group.offsets_log``); the
groups' data is ``broker.group.model``. Offsets committed inside a transaction
(TxnOffsetCommit) stay pending until the transaction coordinator reports its end
(``broker.group.txn_offsets``).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable, Iterable, Sequence

from kio.schema.errors import ErrorCode

from broker.config import BrokerConfig
from broker.group.model import Group, JoinResult, Member, OffsetEntry, State, SyncResult
from broker.group.offsets_log import (
    OFFSETS_TOPIC,
    OffsetsLog,
    Record,
    group_tombstone,
    offset_record,
    offset_tombstone,
)
from broker.group.txn_offsets import PendingTxnOffsets, TopicPartition, apply_committed, check_txn_commit
from broker.logs import LogManager
from broker.storage.log import ProducerFenced, StorageError

log = logging.getLogger(__name__)

__all__ = ["OFFSETS_TOPIC", "GroupCoordinator", "JoinResult", "State", "SyncResult"]


class GroupCoordinator:
    def __init__(
        self, config: BrokerConfig, logs: LogManager, clock_ms: Callable[[], int] | None = None
    ) -> None:
        self.config = config
        self.logs = logs
        self._clock_ms = clock_ms or (lambda: int(time.time() * 1000))
        self.groups: dict[str, Group] = {}
        self.offsets_log = OffsetsLog(config, logs, self._clock_ms)
        self.txn_offsets = PendingTxnOffsets()
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        return self._loop

    # -- the offsets topic (broker.group.offsets_log) -------------------------------------

    def ensure_offsets_topic(self) -> None:
        self.offsets_log.ensure_topic()

    def _write(self, group_id: str, items: list[Record]) -> int:
        return self.offsets_log.write(group_id, items)

    def _persist_group(self, group: Group) -> None:
        self.offsets_log.persist_group(group)

    def load(self) -> None:
        """Rebuild groups and committed offsets from ``__consumer_offsets``."""
        stored = self.offsets_log.read()
        loaded, offsets = stored.groups, stored.offsets
        self.txn_offsets = stored.pending
        pending_groups = {gid for _pid, gid, _offsets in stored.pending.items()}
        for gid in set(loaded) | set(offsets) | pending_groups:
            value = loaded.get(gid)
            group = Group(gid)
            group.offsets = offsets.get(gid, {})
            if value is not None:
                group.protocol_type = value.protocol_type or None
                group.generation = value.generation
                group.protocol_name = value.protocol
                group.leader_id = value.leader
                group.state_timestamp = value.state_timestamp
                now = self._clock_ms()
                for mv in value.members:
                    member = Member(
                        mv.member_id,
                        mv.group_instance_id,
                        mv.client_id,
                        mv.client_host,
                        mv.session_timeout_ms,
                        mv.rebalance_timeout_ms,
                        value.protocol_type,
                        [(value.protocol or "", mv.subscription)],
                        mv.assignment,
                        last_heartbeat_ms=now,
                    )
                    group.members[mv.member_id] = member
                    if mv.group_instance_id:
                        group.static_members[mv.group_instance_id] = mv.member_id
                if group.members:
                    # Members keep their assignment if they heartbeat within their session timeout.
                    group.state = State.STABLE
                    for member in group.members.values():
                        self._schedule_session(group, member)
            if group.members or group.offsets or group.protocol_type or gid in pending_groups:
                self.groups[gid] = group
        log.info(
            "loaded %d groups from %s (%d producers with transactional offsets pending)",
            len(self.groups),
            OFFSETS_TOPIC,
            len(self.txn_offsets.producers()),
        )

    # -- helpers ----------------------------------------------------------------------

    def _set_state(self, group: Group, state: str) -> None:
        group.state = state
        group.state_timestamp = self._clock_ms()

    def _schedule_session(self, group: Group, member: Member) -> None:
        """(Re)arm the member's session timer; it re-checks the heartbeat time when it fires."""
        if member.timer is not None:
            member.timer.cancel()
        member.timer = self.loop.call_later(
            member.session_timeout_ms / 1000, self._session_check, group.group_id, member.member_id
        )

    def _session_check(self, group_id: str, member_id: str) -> None:
        group = self.groups.get(group_id)
        member = group.members.get(member_id) if group else None
        if group is None or member is None:
            return
        now = self._clock_ms()
        remaining = member.last_heartbeat_ms + member.session_timeout_ms - now
        if member.awaiting or remaining > 0:
            # A member blocked in JoinGroup/SyncGroup cannot heartbeat; the rebalance and
            # sync deadlines bound its wait instead.
            delay = member.session_timeout_ms if member.awaiting else remaining
            member.timer = self.loop.call_later(delay / 1000, self._session_check, group_id, member_id)
            return
        log.info(
            "group %s: member %s expired after %d ms without a heartbeat",
            group_id,
            member_id,
            member.session_timeout_ms,
        )
        self._remove_member(group, member, "session timeout")

    def _heard_from(self, member: Member) -> None:
        member.last_heartbeat_ms = self._clock_ms()

    def _new_member_id(self, client_id: str, instance_id: str | None) -> str:
        return f"{instance_id or client_id}-{uuid.uuid4()}"

    def _remove_member(self, group: Group, member: Member, reason: str) -> None:
        if member.timer is not None:
            member.timer.cancel()
        group.members.pop(member.member_id, None)
        if member.instance_id and group.static_members.get(member.instance_id) == member.member_id:
            del group.static_members[member.instance_id]
        if member.join_future is not None and not member.join_future.done():
            member.join_future.set_result(JoinResult(ErrorCode.unknown_member_id, member.member_id))
        if member.sync_future is not None and not member.sync_future.done():
            member.sync_future.set_result(SyncResult(ErrorCode.rebalance_in_progress))
        if group.leader_id == member.member_id:
            group.leader_id = None
        if group.state in (State.STABLE, State.COMPLETING):
            self._prepare_rebalance(group, f"removing member {member.member_id} ({reason})")
        elif group.state == State.PREPARING:
            self._maybe_complete_join(group)

    # -- rebalancing ------------------------------------------------------------------

    def _prepare_rebalance(self, group: Group, reason: str) -> None:
        if group.state == State.COMPLETING:
            for m in group.members.values():
                m.assignment = b""
                if m.sync_future is not None and not m.sync_future.done():
                    m.sync_future.set_result(SyncResult(ErrorCode.rebalance_in_progress))
        if group.sync_timer is not None:
            group.sync_timer.cancel()
            group.sync_timer = None
        was_empty = group.state == State.EMPTY
        self._set_state(group, State.PREPARING)
        log.info(
            "group %s: preparing to rebalance (generation %d): %s", group.group_id, group.generation, reason
        )
        if group.join_timer is not None:
            group.join_timer.cancel()
        timeout_ms = group.max_rebalance_timeout_ms
        delay = self.config.group_initial_rebalance_delay_ms
        if was_empty and delay > 0:
            group.initial_join_deadline_ms = self._clock_ms() + max(timeout_ms, delay)
            group.initial_join_members = len(group.members)
            group.join_timer = self.loop.call_later(
                min(delay, timeout_ms or delay) / 1000, self._initial_delay_expired, group.group_id
            )
        else:
            group.initial_join_deadline_ms = -1
            group.join_timer = self.loop.call_later(timeout_ms / 1000, self._join_deadline, group.group_id)
            self._maybe_complete_join(group)

    def _initial_delay_expired(self, group_id: str) -> None:
        group = self.groups.get(group_id)
        if group is None or group.state != State.PREPARING:
            return
        now = self._clock_ms()
        remaining = group.initial_join_deadline_ms - now
        grew = len(group.members) > group.initial_join_members
        if grew and remaining > 0:
            # Members are still arriving: wait another delay, bounded by the rebalance timeout.
            group.initial_join_members = len(group.members)
            delay = min(self.config.group_initial_rebalance_delay_ms, remaining)
            group.join_timer = self.loop.call_later(delay / 1000, self._initial_delay_expired, group_id)
            return
        group.initial_join_deadline_ms = -1
        group.join_timer = None
        if group.all_joined():
            self._complete_join(group)
        else:
            group.join_timer = self.loop.call_later(
                max(remaining, 0) / 1000 if remaining > 0 else 0, self._join_deadline, group_id
            )

    def _join_deadline(self, group_id: str) -> None:
        group = self.groups.get(group_id)
        if group is None or group.state != State.PREPARING:
            return
        group.join_timer = None
        self._complete_join(group)

    def _maybe_complete_join(self, group: Group) -> None:
        if group.state != State.PREPARING or group.initial_join_deadline_ms >= 0:
            return
        if group.all_joined():
            self._complete_join(group)

    def _complete_join(self, group: Group) -> None:
        if group.join_timer is not None:
            group.join_timer.cancel()
            group.join_timer = None
        for m in list(group.members.values()):
            if m.join_future is None or m.join_future.done():
                log.info("group %s: member %s did not rejoin in time", group.group_id, m.member_id)
                if m.timer is not None:
                    m.timer.cancel()
                del group.members[m.member_id]
                if m.instance_id and group.static_members.get(m.instance_id) == m.member_id:
                    del group.static_members[m.instance_id]
        group.generation += 1
        if not group.members:
            group.protocol_name = None
            group.leader_id = None
            self._set_state(group, State.EMPTY)
            log.info("group %s: empty at generation %d", group.group_id, group.generation)
            self._persist_group(group)
            return
        group.protocol_name = group.select_protocol()
        if group.leader_id not in group.members:
            group.leader_id = next(iter(group.members))
        self._set_state(group, State.COMPLETING)
        log.info(
            "group %s: generation %d with %d members, protocol %s, leader %s",
            group.group_id,
            group.generation,
            len(group.members),
            group.protocol_name,
            group.leader_id,
        )
        everyone = [
            (m.member_id, m.instance_id, m.metadata_for(group.protocol_name)) for m in group.members.values()
        ]
        for m in group.members.values():
            self._heard_from(m)
            self._schedule_session(group, m)
            fut = m.join_future
            m.join_future = None
            if fut is not None and not fut.done():
                fut.set_result(
                    JoinResult(
                        ErrorCode.none,
                        m.member_id,
                        group.generation,
                        group.protocol_type,
                        group.protocol_name,
                        group.leader_id or "",
                        everyone if m.member_id == group.leader_id else [],
                    )
                )
        group.sync_timer = self.loop.call_later(
            group.max_rebalance_timeout_ms / 1000, self._sync_deadline, group.group_id, group.generation
        )

    def _sync_deadline(self, group_id: str, generation: int) -> None:
        group = self.groups.get(group_id)
        if group is None or group.state != State.COMPLETING or group.generation != generation:
            return
        group.sync_timer = None
        missing = [m for m in group.members.values() if m.sync_future is None]
        for m in missing:
            log.info("group %s: member %s did not send SyncGroup in time", group_id, m.member_id)
            if m.timer is not None:
                m.timer.cancel()
            del group.members[m.member_id]
            if m.instance_id and group.static_members.get(m.instance_id) == m.member_id:
                del group.static_members[m.instance_id]
        self._prepare_rebalance(group, "members did not sync in time")

    # -- JoinGroup --------------------------------------------------------------------

    async def join(
        self,
        group_id: str,
        member_id: str,
        instance_id: str | None,
        client_id: str,
        client_host: str,
        protocol_type: str,
        protocols: list[tuple[str, bytes]],
        session_timeout_ms: int,
        rebalance_timeout_ms: int,
        require_known_member_id: bool,
    ) -> JoinResult:
        if not group_id:
            return JoinResult(ErrorCode.invalid_group_id, member_id)
        if not (
            self.config.group_min_session_timeout_ms
            <= session_timeout_ms
            <= self.config.group_max_session_timeout_ms
        ):
            return JoinResult(ErrorCode.invalid_session_timeout, member_id)
        group = self.groups.get(group_id)
        if group is None:
            if member_id:
                return JoinResult(ErrorCode.unknown_member_id, member_id)
            group = self.groups[group_id] = Group(group_id)
        if group.state == State.DEAD:
            return JoinResult(ErrorCode.coordinator_not_available, member_id)
        if not group.supports(protocol_type, protocols):
            return JoinResult(ErrorCode.inconsistent_group_protocol, member_id)
        if (
            group.members
            and len(group.members) >= self.config.group_max_size
            and member_id not in group.members
        ):
            return JoinResult(ErrorCode.group_max_size_reached, member_id)

        if not member_id:
            new_id = self._new_member_id(client_id, instance_id)
            if instance_id:
                return await self._join_static(
                    group,
                    new_id,
                    instance_id,
                    client_id,
                    client_host,
                    protocol_type,
                    protocols,
                    session_timeout_ms,
                    rebalance_timeout_ms,
                )
            if require_known_member_id:
                # KIP-394: hand out an id and have the member come back with it, so a
                # client that times out on its first JoinGroup does not leave a ghost member.
                group.pending_members[new_id] = self.loop.call_later(
                    session_timeout_ms / 1000, self._expire_pending, group_id, new_id
                )
                return JoinResult(ErrorCode.member_id_required, new_id)
            return await self._add_member(
                group,
                new_id,
                None,
                client_id,
                client_host,
                protocol_type,
                protocols,
                session_timeout_ms,
                rebalance_timeout_ms,
            )

        if member_id in group.pending_members:
            group.pending_members.pop(member_id).cancel()
            return await self._add_member(
                group,
                member_id,
                instance_id,
                client_id,
                client_host,
                protocol_type,
                protocols,
                session_timeout_ms,
                rebalance_timeout_ms,
            )
        member = group.members.get(member_id)
        if instance_id:
            known = group.static_members.get(instance_id)
            if known is not None and known != member_id:
                return JoinResult(ErrorCode.fenced_instance_id, member_id)
        if member is None:
            return JoinResult(ErrorCode.unknown_member_id, member_id)
        return await self._rejoin(group, member, protocols, session_timeout_ms, rebalance_timeout_ms)

    def _expire_pending(self, group_id: str, member_id: str) -> None:
        group = self.groups.get(group_id)
        if group is None or group.pending_members.pop(member_id, None) is None:
            return
        if group.state == State.PREPARING:
            self._maybe_complete_join(group)
        elif (
            not group.members
            and not group.pending_members
            and not group.offsets
            and group.state == State.EMPTY
            and group.generation == 0
        ):
            del self.groups[group_id]

    async def _add_member(
        self,
        group: Group,
        member_id: str,
        instance_id: str | None,
        client_id: str,
        client_host: str,
        protocol_type: str,
        protocols: list[tuple[str, bytes]],
        session_timeout_ms: int,
        rebalance_timeout_ms: int,
    ) -> JoinResult:
        member = Member(
            member_id,
            instance_id,
            client_id,
            client_host,
            session_timeout_ms,
            rebalance_timeout_ms,
            protocol_type,
            list(protocols),
        )
        if not group.members:
            group.protocol_type = protocol_type
        group.members[member_id] = member
        if instance_id:
            group.static_members[instance_id] = member_id
        fut: asyncio.Future[JoinResult] = self.loop.create_future()
        member.join_future = fut
        self._heard_from(member)
        if group.state == State.PREPARING:
            self._maybe_complete_join(group)
        else:
            self._prepare_rebalance(group, f"adding new member {member_id}")
        return await fut

    async def _rejoin(
        self,
        group: Group,
        member: Member,
        protocols: list[tuple[str, bytes]],
        session_timeout_ms: int,
        rebalance_timeout_ms: int,
    ) -> JoinResult:
        self._heard_from(member)
        changed = member.protocols != list(protocols)
        if group.state == State.COMPLETING and not changed:
            # The member missed our JoinGroup reply; give it again.
            return self._current_join(group, member)
        if group.state == State.STABLE and not changed and member.member_id != group.leader_id:
            return self._current_join(group, member)
        member.protocols = list(protocols)
        member.session_timeout_ms = session_timeout_ms
        member.rebalance_timeout_ms = rebalance_timeout_ms
        if member.join_future is not None and not member.join_future.done():
            member.join_future.set_result(JoinResult(ErrorCode.unknown_member_id, member.member_id))
        fut: asyncio.Future[JoinResult] = self.loop.create_future()
        member.join_future = fut
        if group.state == State.PREPARING:
            self._maybe_complete_join(group)
        else:
            self._prepare_rebalance(
                group,
                f"member {member.member_id} rejoined" + (" with new metadata" if changed else " as leader"),
            )
        return await fut

    def _current_join(self, group: Group, member: Member) -> JoinResult:
        everyone = (
            [
                (m.member_id, m.instance_id, m.metadata_for(group.protocol_name))
                for m in group.members.values()
            ]
            if member.member_id == group.leader_id
            else []
        )
        return JoinResult(
            ErrorCode.none,
            member.member_id,
            group.generation,
            group.protocol_type,
            group.protocol_name,
            group.leader_id or "",
            everyone,
        )

    async def _join_static(
        self,
        group: Group,
        new_id: str,
        instance_id: str,
        client_id: str,
        client_host: str,
        protocol_type: str,
        protocols: list[tuple[str, bytes]],
        session_timeout_ms: int,
        rebalance_timeout_ms: int,
    ) -> JoinResult:
        old_id = group.static_members.get(instance_id)
        old = group.members.get(old_id) if old_id else None
        if old is None:
            return await self._add_member(
                group,
                new_id,
                instance_id,
                client_id,
                client_host,
                protocol_type,
                protocols,
                session_timeout_ms,
                rebalance_timeout_ms,
            )
        # A known static member restarted: it takes over its old place under a new member id.
        if old.timer is not None:
            old.timer.cancel()
        del group.members[old.member_id]
        old.member_id = new_id
        old.client_id, old.client_host = client_id, client_host
        old.session_timeout_ms, old.rebalance_timeout_ms = session_timeout_ms, rebalance_timeout_ms
        group.members[new_id] = old
        group.static_members[instance_id] = new_id
        if group.leader_id == old_id:
            group.leader_id = new_id
        if old.join_future is not None and not old.join_future.done():
            old.join_future.set_result(JoinResult(ErrorCode.fenced_instance_id, old_id or ""))
        if old.sync_future is not None and not old.sync_future.done():
            old.sync_future.set_result(SyncResult(ErrorCode.fenced_instance_id))
        self._heard_from(old)
        self._schedule_session(group, old)
        changed = old.protocols != list(protocols)
        if group.state == State.STABLE and not changed:
            old.protocols = list(protocols)
            log.info(
                "group %s: static member %s rejoined as %s without a rebalance",
                group.group_id,
                instance_id,
                new_id,
            )
            self._persist_group(group)
            result = self._current_join(group, old)
            # The leader gets its own metadata only: it must not compute a new assignment (KIP-345).
            result.skip_assignment = new_id == group.leader_id
            return result
        old.protocols = list(protocols)
        fut: asyncio.Future[JoinResult] = self.loop.create_future()
        old.join_future = fut
        if group.state == State.PREPARING:
            self._maybe_complete_join(group)
        else:
            self._prepare_rebalance(group, f"static member {instance_id} rejoined")
        return await fut

    # -- SyncGroup --------------------------------------------------------------------

    async def sync(
        self,
        group_id: str,
        generation: int,
        member_id: str,
        instance_id: str | None,
        protocol_type: str | None,
        protocol_name: str | None,
        assignments: Iterable[tuple[str, bytes]],
    ) -> SyncResult:
        group = self.groups.get(group_id)
        if group is None or group.state in (State.EMPTY, State.DEAD):
            return SyncResult(ErrorCode.unknown_member_id)
        if instance_id and group.static_members.get(instance_id) not in (None, member_id):
            return SyncResult(ErrorCode.fenced_instance_id)
        member = group.members.get(member_id)
        if member is None:
            return SyncResult(ErrorCode.unknown_member_id)
        if generation != group.generation:
            return SyncResult(ErrorCode.illegal_generation)
        if (protocol_type and protocol_type != group.protocol_type) or (
            protocol_name and protocol_name != group.protocol_name
        ):
            return SyncResult(ErrorCode.inconsistent_group_protocol)
        self._heard_from(member)
        if group.state == State.PREPARING:
            return SyncResult(ErrorCode.rebalance_in_progress)
        if group.state == State.STABLE:
            return SyncResult(ErrorCode.none, member.assignment, group.protocol_type, group.protocol_name)
        fut: asyncio.Future[SyncResult] = self.loop.create_future()
        member.sync_future = fut
        if member_id == group.leader_id:
            given = dict(assignments)
            for m in group.members.values():
                m.assignment = given.get(m.member_id, b"")
            if group.sync_timer is not None:
                group.sync_timer.cancel()
                group.sync_timer = None
            self._set_state(group, State.STABLE)
            self._persist_group(group)
            for m in group.members.values():
                sf = m.sync_future
                if sf is not None and not sf.done():
                    sf.set_result(
                        SyncResult(ErrorCode.none, m.assignment, group.protocol_type, group.protocol_name)
                    )
                m.sync_future = None
                self._heard_from(m)
        try:
            return await fut
        finally:
            if member.sync_future is fut:
                member.sync_future = None

    # -- Heartbeat / LeaveGroup -------------------------------------------------------

    def heartbeat(self, group_id: str, generation: int, member_id: str, instance_id: str | None) -> ErrorCode:
        group = self.groups.get(group_id)
        if group is None or group.state == State.DEAD:
            return ErrorCode.unknown_member_id
        if instance_id and group.static_members.get(instance_id) not in (None, member_id):
            return ErrorCode.fenced_instance_id
        member = group.members.get(member_id)
        if member is None:
            return ErrorCode.unknown_member_id
        if generation != group.generation:
            return ErrorCode.illegal_generation
        self._heard_from(member)
        if group.state == State.PREPARING:
            return ErrorCode.rebalance_in_progress
        return ErrorCode.none

    def leave(
        self, group_id: str, members: list[tuple[str, str | None]]
    ) -> tuple[ErrorCode, list[ErrorCode]]:
        group = self.groups.get(group_id)
        if group is None:
            return ErrorCode.unknown_member_id, [ErrorCode.unknown_member_id] * len(members)
        errors = []
        for member_id, instance_id in members:
            if instance_id:
                known = group.static_members.get(instance_id)
                if known is None:
                    errors.append(ErrorCode.unknown_member_id)
                    continue
                if member_id and known != member_id:
                    errors.append(ErrorCode.fenced_instance_id)
                    continue
                member_id = known
            if member_id in group.pending_members:
                group.pending_members.pop(member_id).cancel()
                errors.append(ErrorCode.none)
                self._maybe_complete_join(group)
                continue
            member = group.members.get(member_id)
            if member is None:
                errors.append(ErrorCode.unknown_member_id)
                continue
            log.info("group %s: member %s left", group_id, member_id)
            self._remove_member(group, member, "left the group")
            errors.append(ErrorCode.none)
        return ErrorCode.none, errors

    # -- offsets ----------------------------------------------------------------------

    def commit_offsets(
        self,
        group_id: str,
        generation: int,
        member_id: str,
        instance_id: str | None,
        offsets: Sequence[tuple[str, int, int, int, str | None]],
    ) -> tuple[ErrorCode, list[ErrorCode]]:
        """Commit (topic, partition, offset, epoch, metadata) tuples.

        Returns the group-level error and one error per offset.
        """
        if not group_id:
            return ErrorCode.invalid_group_id, []
        group = self.groups.get(group_id)
        if group is None:
            if generation >= 0 or member_id:
                return ErrorCode.unknown_member_id, []
            group = self.groups[group_id] = Group(group_id)  # a "simple" group: assign() users
        if group.state == State.DEAD:
            return ErrorCode.coordinator_not_available, []
        if generation >= 0 or member_id or group.members:
            if instance_id and group.static_members.get(instance_id) not in (None, member_id):
                return ErrorCode.fenced_instance_id, []
            if member_id not in group.members:
                return ErrorCode.unknown_member_id, []
            if generation != group.generation:
                return ErrorCode.illegal_generation, []
            if group.state == State.COMPLETING:
                return ErrorCode.rebalance_in_progress, []
            self._heard_from(group.members[member_id])
        errors, to_write, accepted = self._offsets_to_write(group_id, offsets, check_partitions=True)
        try:
            first = self._write(group_id, to_write)
        except StorageError as exc:
            log.error("cannot store offsets of group %s: %s", group_id, exc)
            return ErrorCode.none, [
                ErrorCode.coordinator_not_available if e == ErrorCode.none else e for e in errors
            ]
        for i, (tp, entry) in enumerate(accepted):
            entry.record_offset = first + i
            group.offsets[tp] = entry
        return ErrorCode.none, errors

    def _offsets_to_write(
        self,
        group_id: str,
        offsets: Iterable[tuple[str, int, int, int, str | None]],
        check_partitions: bool,
    ) -> tuple[list[ErrorCode], list[Record], list[tuple[TopicPartition, OffsetEntry]]]:
        """One error per (topic, partition, offset, epoch, metadata) tuple, and the records
        and entries (stamped now) of those accepted: OFFSET_METADATA_TOO_LARGE past
        offset.metadata.max.bytes, and with ``check_partitions`` UNKNOWN_TOPIC_OR_PARTITION
        for a partition that does not exist."""
        now = self._clock_ms()
        errors: list[ErrorCode] = []
        to_write: list[Record] = []
        accepted: list[tuple[TopicPartition, OffsetEntry]] = []
        for topic, partition, offset, epoch, metadata in offsets:
            if check_partitions:
                info = self.logs.topic(topic)
                if info is None or not 0 <= partition < info.partitions:
                    errors.append(ErrorCode.unknown_topic_or_partition)
                    continue
            meta = metadata or ""
            if len(meta.encode()) > self.config.offset_metadata_max_bytes:
                errors.append(ErrorCode.offset_metadata_too_large)
                continue
            entry = OffsetEntry(offset, epoch, meta, now)
            to_write.append(offset_record(group_id, topic, partition, entry))
            accepted.append(((topic, partition), entry))
            errors.append(ErrorCode.none)
        return errors, to_write, accepted

    def fetch_offsets(
        self, group_id: str, partitions: list[tuple[str, int]] | None
    ) -> dict[tuple[str, int], OffsetEntry | None]:
        group = self.groups.get(group_id)
        stored = group.offsets if group is not None else {}
        if partitions is None:
            return dict(stored)
        return {tp: stored.get(tp) for tp in partitions}

    # -- transactional offsets (broker.group.txn_offsets) ------------------------------

    def offsets_partition(self, group_id: str) -> int:
        """The ``__consumer_offsets`` partition of ``group_id`` (AddOffsetsToTxn adds it)."""
        return self.offsets_log.partition_for(group_id)

    def commit_txn_offsets(
        self,
        group_id: str,
        producer_id: int,
        producer_epoch: int,
        generation: int,
        member_id: str,
        instance_id: str | None,
        offsets: Sequence[tuple[str, int, int, int, str | None]],
    ) -> tuple[ErrorCode, list[ErrorCode]]:
        """TxnOffsetCommit: write (topic, partition, offset, epoch, metadata) tuples into the
        producer's transaction; they stay invisible until ``complete_transaction``.

        Returns a request-level error (then nothing was written) and one error per offset.
        """
        if not group_id:
            return ErrorCode.invalid_group_id, []
        group = self.groups.get(group_id) or Group(group_id)  # Kafka creates an Empty group
        error = check_txn_commit(group, generation, member_id, instance_id)
        if error != ErrorCode.none:
            log.info(
                "group %s: refused transactional offsets of producer %d (generation %d, member %r): %s",
                group_id,
                producer_id,
                generation,
                member_id,
                error.name,
            )
            return error, []
        errors, to_write, accepted = self._offsets_to_write(group_id, offsets, check_partitions=False)
        if not to_write:
            return ErrorCode.none, errors
        try:
            first = self.offsets_log.write_transactional(group_id, to_write, producer_id, producer_epoch)
        except ProducerFenced as exc:
            log.info("group %s: transactional offsets refused: %s", group_id, exc)
            return ErrorCode.invalid_producer_epoch, []
        except StorageError as exc:
            # Kafka answers a failed append to the offsets log with NOT_COORDINATOR: retry elsewhere.
            log.error("cannot store transactional offsets of group %s: %s", group_id, exc)
            return ErrorCode.not_coordinator, []
        for i, (_tp, entry) in enumerate(accepted):
            entry.record_offset = first + i
        self.groups.setdefault(group_id, group)
        self.txn_offsets.stage(producer_id, group_id, accepted)
        return ErrorCode.none, errors

    def complete_transaction(self, producer_id: int, producer_epoch: int, committed: bool) -> None:
        """The transaction coordinator wrote the producer's COMMIT/ABORT marker into every
        ``__consumer_offsets`` partition of its transaction: apply or drop its offsets.

        The epoch is not compared: a transaction fenced by an epoch bump ends with a marker
        of the new epoch, and it still ends the offsets written under the old one."""
        for group_id, offsets in self.txn_offsets.complete(producer_id).items():
            group = self.groups.get(group_id)
            if group is None or group.state == State.DEAD:
                continue
            if committed:
                applied = apply_committed(group.offsets, offsets.items())
                log.debug("group %s: producer %d committed offsets of %s", group_id, producer_id, applied)
            else:
                log.debug("group %s: producer %d aborted offsets of %s", group_id, producer_id, list(offsets))

    def has_pending_txn_offset(self, group_id: str, tp: TopicPartition) -> bool:
        """An open transaction holds an offset for ``tp`` (OffsetFetch's UNSTABLE_OFFSET_COMMIT)."""
        return self.txn_offsets.is_pending(group_id, tp)

    def forget_topic(self, topic: str) -> None:
        """Drop committed offsets of a deleted topic (Kafka does the same)."""
        self.txn_offsets.forget_topic(topic)
        for group in self.groups.values():
            gone = [tp for tp in group.offsets if tp[0] == topic]
            if not gone:
                continue
            for tp in gone:
                del group.offsets[tp]
            try:
                self._write(
                    group.group_id,
                    [offset_tombstone(group.group_id, *tp) for tp in gone],
                )
            except StorageError as exc:
                log.error("cannot remove offsets of deleted topic %s: %s", topic, exc)

    def expire_offsets(self) -> int:
        """offsets.retention.minutes: drop offsets of groups that have had no members that long."""
        horizon = self._clock_ms() - self.config.offsets_retention_minutes * 60_000
        expired = 0
        for group in list(self.groups.values()):
            if group.state != State.EMPTY or not group.offsets:
                continue
            newest = max(e.commit_timestamp for e in group.offsets.values())
            if max(newest, group.state_timestamp) >= horizon:
                continue
            items = [offset_tombstone(group.group_id, *tp) for tp in group.offsets]
            try:
                self._write(group.group_id, items)
            except StorageError:
                continue
            expired += len(group.offsets)
            group.offsets.clear()
            if (
                group.generation == 0
                and not group.members
                and not self.txn_offsets.has_pending(group.group_id)
            ):
                del self.groups[group.group_id]
        return expired

    # -- admin ------------------------------------------------------------------------

    def describe(self, group_id: str) -> Group | None:
        return self.groups.get(group_id)

    def delete_group(self, group_id: str) -> ErrorCode:
        group = self.groups.get(group_id)
        if group is None:
            return ErrorCode.group_id_not_found
        if group.state != State.EMPTY or group.members:
            return ErrorCode.non_empty_group
        items = [offset_tombstone(group_id, *tp) for tp in group.offsets]
        items.append(group_tombstone(group_id))
        try:
            self._write(group_id, items)
        except StorageError:
            return ErrorCode.kafka_storage_error
        for handle in group.pending_members.values():
            handle.cancel()
        group.state = State.DEAD
        del self.groups[group_id]
        self.txn_offsets.forget_group(group_id)
        return ErrorCode.none

    def shutdown(self) -> None:
        for group in self.groups.values():
            for handle in (group.join_timer, group.sync_timer, *group.pending_members.values()):
                if handle is not None:
                    handle.cancel()
            for m in group.members.values():
                if m.timer is not None:
                    m.timer.cancel()
                for fut in (m.join_future, m.sync_future):
                    if fut is not None and not fut.done():
                        fut.cancel()
