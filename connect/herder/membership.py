"""The worker's membership in its group: Kafka's classic group protocol, spoken from asyncio.

A distributed worker joins the workers' group (``protocol_type="connect"``) through
the group coordinator, exactly as Kafka Connect's ``WorkerGroupMember`` does, so the
same code runs against Sluiceway's broker and Apache Kafka. The herder drives it::

    member = GroupMember("localhost:9092", "connect-cluster")
    while running:
        joined = await member.join([("sessioned", meta2), ("compatible", meta1), ("default", meta0)])
        assignments = assign(joined.members) if joined.is_leader else None
        try:
            mine = await member.sync(assignments)
        except RebalanceNeeded:
            continue  # the group moved on meanwhile: join again
        start(mine)
        await member.wait_rejoin_needed()  # heartbeats run meanwhile
        stop_what_the_protocol_says()
    await member.close()

What happens underneath:

* **Connections** (``connect.herder.kafka_connection``). One connection to a bootstrap
  broker (FindCoordinator only) and one to the coordinator, over TLS when the worker's
  ``security.protocol`` says so. Each starts with ApiVersions, then SASL authentication
  if configured (SaslHandshake v1 and SaslAuthenticate, as Kafka's clients do), and
  every request then uses the highest version both sides speak (within what kio has).
* **Join.** FindCoordinator (retried until a coordinator answers), then JoinGroup,
  which the coordinator holds until the group's join phase completes, so it gets
  ``rebalance_timeout_ms + request_timeout_ms``. MEMBER_ID_REQUIRED is answered by
  joining again with the id handed out; UNKNOWN_MEMBER_ID forgets the id; coordinator
  errors rediscover the coordinator; other retriable errors back off and retry;
  anything else raises ``GroupError``.
* **Sync.** SyncGroup for the generation just joined. If the group moved on
  (REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID) or the coordinator is
  lost, ``RebalanceNeeded`` tells the caller to join again.
* **Heartbeats** run as their own task from a successful sync until the next
  join/leave, every ``heartbeat_interval_ms`` measured from the previous send (a slow
  answer does not push the schedule back). They set ``rejoin_needed`` when the
  coordinator asks for a rebalance or no longer knows this member or generation, or
  when none has been acknowledged for ``session_timeout_ms`` (the coordinator will have
  dropped us). A lost coordinator is rediscovered and heartbeating goes on: if the
  new (or restarted) coordinator still knows the member, no rebalance is needed,
  which is also what Kafka's clients do.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import ssl
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from kio.schema.errors import ErrorCode

from broker.protocol.versions import ApiKey
from connect.herder.kafka_connection import (
    BrokerConnection,
    GroupError,
    Unreachable,
    error_name,
    parse_bootstrap,
)
from connect.herder.sasl_client import SaslCredentials

log = logging.getLogger(__name__)

_GROUP_KEY_TYPE: Final = 0  # FindCoordinator key type of a consumer/connect group (1 = transaction)
_RETRY_BACKOFF_MAX_MS: Final = 1000  # Kafka's retry.backoff.max.ms default

# The coordinator is gone, moved, or not ready yet: find it again.
_COORDINATOR_ERRORS: Final = frozenset(
    {ErrorCode.not_coordinator, ErrorCode.coordinator_not_available, ErrorCode.coordinator_load_in_progress}
)
# The generation this member synced is over: join again.
_REJOIN_ERRORS: Final = frozenset(
    {ErrorCode.rebalance_in_progress, ErrorCode.illegal_generation, ErrorCode.unknown_member_id}
)


class RebalanceNeeded(Exception):
    """The generation just joined is no longer current (or the coordinator was lost during
    SyncGroup): call ``join`` again."""


@dataclass(frozen=True)
class JoinResult:
    """One generation of the group, as JoinGroup answered it.

    ``protocol`` is the sub-protocol the coordinator chose among those every member
    offered. ``members`` maps each member id to the metadata it sent for that protocol,
    in the coordinator's order; only the leader receives it (empty for followers).
    ``skip_assignment`` (JoinGroup v9+, static leaders only) means the coordinator kept
    the current assignments: the leader must not compute new ones and syncs with None.
    """

    generation: int
    member_id: str
    leader_id: str
    protocol: str
    members: dict[str, bytes] = field(default_factory=dict)
    skip_assignment: bool = False

    @property
    def is_leader(self) -> bool:
        return self.member_id == self.leader_id


@dataclass(frozen=True, slots=True)
class Coordinator:
    """The broker coordinating the group."""

    node_id: int
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}:{self.port} (node {self.node_id})"


def coordinator_in(
    version: int, response: Any, group_id: str
) -> tuple[ErrorCode, str | None, Coordinator | None]:
    """(error, message, coordinator) of a FindCoordinator response of ``version`` for ``group_id``.

    v0-3 answer one key at the top level; v4+ (Kafka 3.0+) a list of keys (KIP-699)."""
    if version >= 4:
        entry = next((c for c in response.coordinators if c.key == group_id), None)
        if entry is None:
            return ErrorCode.coordinator_not_available, "the answer does not name the group", None
    else:
        entry = response
    error: ErrorCode = entry.error_code
    message = getattr(entry, "error_message", None)
    if error != ErrorCode.none:
        return error, message, None
    return error, message, Coordinator(int(entry.node_id), entry.host, int(entry.port))


# -- the member ----------------------------------------------------------------------------


class GroupMember:
    """This worker's membership in the group ``group_id`` (see the module docstring).

    One instance per worker, used from one event loop. ``join``/``sync``/``leave`` are
    called one at a time by the herder; heartbeats run on their own task in between.

    A follower's ``request_rejoin`` with unchanged metadata does not start a rebalance:
    the coordinator answers a stable group's follower with the current generation
    (Kafka does the same). The leader's rejoin, changed metadata, or a new member does.

    A static member (``group_instance_id``) does not send LeaveGroup, like Kafka's
    clients: its place is kept for a restart until its session times out.
    """

    def __init__(
        self,
        bootstrap_servers: str,
        group_id: str,
        *,
        protocol_type: str = "connect",
        session_timeout_ms: int = 10000,
        rebalance_timeout_ms: int = 60000,
        heartbeat_interval_ms: int = 3000,
        client_id: str = "connect-worker",
        request_timeout_ms: int = 30000,
        retry_backoff_ms: int = 100,
        group_instance_id: str | None = None,
        tls: ssl.SSLContext | None = None,
        sasl: SaslCredentials | None = None,
    ) -> None:
        """``tls`` (a client context) makes every connection TLS; ``sasl`` authenticates each."""
        if not group_id:
            raise ValueError("group_id must not be empty")
        if not 0 < heartbeat_interval_ms < session_timeout_ms:
            raise ValueError("heartbeat_interval_ms must be positive and below session_timeout_ms")
        self._bootstrap = parse_bootstrap(bootstrap_servers)
        self._group_id = group_id
        self._protocol_type = protocol_type
        self._session_timeout_ms = session_timeout_ms
        self._rebalance_timeout_ms = rebalance_timeout_ms
        self._heartbeat_interval = heartbeat_interval_ms / 1000
        self._client_id = client_id
        self._request_timeout = request_timeout_ms / 1000
        self._retry_backoff = retry_backoff_ms / 1000
        self._instance_id = group_instance_id
        self._tls = tls
        self._sasl = sasl

        self._member_id = ""
        self._generation = -1
        self._protocol: str | None = None
        self._leader_id = ""

        self._bootstrap_index = 0
        self._bootstrap_conn: BrokerConnection | None = None
        self._coordinator: Coordinator | None = None
        self._coordinator_conn: BrokerConnection | None = None
        self._discovery = asyncio.Lock()

        self._rejoin = asyncio.Event()
        self._rejoin_reason: str | None = None
        self._heartbeat_task: asyncio.Task[None] | None = None
        self._heartbeat_stop = asyncio.Event()
        self._heartbeat_sending = False
        self._closed = False

    # -- read-only state ---------------------------------------------------------------

    @property
    def group_id(self) -> str:
        return self._group_id

    @property
    def member_id(self) -> str:
        """The id the coordinator gave this member ("" before the first join or after it forgot us)."""
        return self._member_id

    @property
    def generation(self) -> int:
        """The generation last joined, or -1."""
        return self._generation

    @property
    def coordinator(self) -> tuple[str, int] | None:
        c = self._coordinator
        return (c.host, c.port) if c is not None else None

    @property
    def rejoin_needed(self) -> bool:
        return self._rejoin.is_set()

    @property
    def rejoin_reason(self) -> str | None:
        """Why ``rejoin_needed`` was set (for logs and status), or None."""
        return self._rejoin_reason if self._rejoin.is_set() else None

    async def wait_rejoin_needed(self, timeout: float | None = None) -> bool:
        """Wait until a rejoin is needed; False if ``timeout`` seconds passed first."""
        try:
            await asyncio.wait_for(self._rejoin.wait(), timeout)
        except TimeoutError:
            return False
        return True

    def request_rejoin(self, reason: str = "requested by the worker") -> None:
        """Ask the caller's loop to rejoin (e.g. the leader saw connectors added)."""
        self._need_rejoin(reason)

    # -- JoinGroup ---------------------------------------------------------------------

    async def join(self, protocols: Sequence[tuple[str, bytes]]) -> JoinResult:
        """Join the group offering ``protocols`` ((name, metadata), preferred first) and wait
        for the generation to form. Retries until it does; raises ``GroupError`` when the
        coordinator refuses the member for good."""
        self._check_open()
        if not protocols:
            raise ValueError("join needs at least one protocol")
        await self._stop_heartbeats()
        reason = self._rejoin_reason or "joining the group"
        self._rejoin.clear()
        self._rejoin_reason = None
        timeout = self._rebalance_timeout_ms / 1000 + self._request_timeout
        attempt = 0
        while True:
            self._check_open()
            fields = {
                "group_id": self._group_id,
                "session_timeout": self._session_timeout_ms,
                "rebalance_timeout": self._rebalance_timeout_ms,
                "member_id": self._member_id,
                "group_instance_id": self._instance_id,
                "protocol_type": self._protocol_type,
                "protocols": [{"name": name, "metadata": meta} for name, meta in protocols],
                "reason": reason,
            }
            try:
                conn = await self._coordinator_connection(None)
                response = await conn.request(ApiKey.JOIN_GROUP, fields, self._client_id, timeout)
            except Unreachable as exc:
                self._check_open()
                self._forget_coordinator(f"JoinGroup failed: {exc}", attempt)
                await self._backoff(attempt)
                attempt += 1
                continue
            error: ErrorCode = response.error_code
            if error == ErrorCode.none:
                return self._joined(conn, response)
            if error == ErrorCode.member_id_required:
                # KIP-394: the coordinator hands out our id first, so a lost answer leaves no ghost.
                self._member_id = response.member_id
                continue
            if error == ErrorCode.unknown_member_id and self._member_id:
                log.info(
                    "group %s: coordinator forgot member %s; joining as new", self._group_id, self._member_id
                )
                self._reset_membership()
                continue
            if error in _COORDINATOR_ERRORS:
                self._forget_coordinator(f"JoinGroup answered {error_name(error)}", attempt)
            elif not (error.retriable or error in _REJOIN_ERRORS):
                raise GroupError(
                    f"group {self._group_id}: JoinGroup failed with {error_name(error)}", error_name(error)
                )
            else:
                _log_retry(
                    attempt, "group %s: JoinGroup answered %s; retrying", self._group_id, error_name(error)
                )
            await self._backoff(attempt)
            attempt += 1

    def _joined(self, conn: BrokerConnection, response: Any) -> JoinResult:
        protocol_type = getattr(response, "protocol_type", None)
        if protocol_type is not None and protocol_type != self._protocol_type:
            name = error_name(ErrorCode.inconsistent_group_protocol)
            raise GroupError(
                f"group {self._group_id}: coordinator chose protocol type {protocol_type!r}, "
                f"not {self._protocol_type!r}",
                name,
            )
        self._member_id = response.member_id
        self._generation = int(response.generation_id)
        self._protocol = response.protocol_name or ""
        self._leader_id = response.leader
        members = {m.member_id: bytes(m.metadata) for m in response.members}
        result = JoinResult(
            self._generation,
            self._member_id,
            self._leader_id,
            self._protocol,
            members,
            bool(getattr(response, "skip_assignment", False)),
        )
        if result.is_leader:
            log.info(
                "group %s: joined generation %d as leader (member %s, protocol %s, %d members)",
                self._group_id,
                result.generation,
                result.member_id,
                result.protocol,
                len(members),
            )
        else:
            log.info(
                "group %s: joined generation %d as follower (member %s, protocol %s, leader %s)",
                self._group_id,
                result.generation,
                result.member_id,
                result.protocol,
                result.leader_id,
            )
        log.debug("group %s: JoinGroup v%d via %s", self._group_id, conn.version(ApiKey.JOIN_GROUP), conn)
        return result

    # -- SyncGroup ---------------------------------------------------------------------

    async def sync(self, assignments: Mapping[str, bytes] | None) -> bytes:
        """Hand in the assignments (leader: every member's; followers: None) and return this
        member's. Heartbeats start on success. ``RebalanceNeeded``: join again."""
        self._check_open()
        await self._stop_heartbeats()  # only when sync is called twice for one generation
        if self._generation < 0 or not self._member_id:
            raise RebalanceNeeded("sync called without a joined generation")
        fields = {
            "group_id": self._group_id,
            "generation_id": self._generation,
            "member_id": self._member_id,
            "group_instance_id": self._instance_id,
            "protocol_type": self._protocol_type,
            "protocol_name": self._protocol,
            "assignments": [{"member_id": m, "assignment": a} for m, a in (assignments or {}).items()],
        }
        loop = asyncio.get_running_loop()
        try:
            conn = await self._coordinator_connection(loop.time() + self._request_timeout)
            # Followers wait for the leader's SyncGroup, which the rebalance timeout bounds.
            timeout = self._rebalance_timeout_ms / 1000 + self._request_timeout
            response = await conn.request(ApiKey.SYNC_GROUP, fields, self._client_id, timeout)
        except Unreachable as exc:
            self._check_open()
            self._forget_coordinator(f"SyncGroup failed: {exc}", 0)
            self._need_rejoin(f"SyncGroup of generation {self._generation} failed: {exc}")
            raise RebalanceNeeded(str(exc)) from exc
        error: ErrorCode = response.error_code
        if error != ErrorCode.none:
            name = error_name(error)
            if error in _REJOIN_ERRORS or error in _COORDINATOR_ERRORS or error.retriable:
                if error == ErrorCode.unknown_member_id:
                    self._reset_membership()
                if error in _COORDINATOR_ERRORS:
                    self._forget_coordinator(f"SyncGroup answered {name}", 0)
                self._need_rejoin(f"SyncGroup answered {name}")
                raise RebalanceNeeded(f"group {self._group_id}: SyncGroup answered {name}")
            raise GroupError(f"group {self._group_id}: SyncGroup failed with {name}", name)
        for got, expected in (
            (getattr(response, "protocol_type", None), self._protocol_type),
            (getattr(response, "protocol_name", None), self._protocol),
        ):
            if got is not None and got != expected:
                raise GroupError(
                    f"group {self._group_id}: SyncGroup answered protocol {got!r}, expected {expected!r}",
                    error_name(ErrorCode.inconsistent_group_protocol),
                )
        log.debug("group %s: synced generation %d", self._group_id, self._generation)
        self._start_heartbeats()
        return bytes(response.assignment)

    # -- LeaveGroup / close ------------------------------------------------------------

    async def leave(self, reason: str = "the worker is leaving the group") -> None:
        """Leave the group (best effort, bounded by the request timeout) and stop heartbeats.
        The coordinator then rebalances the others without waiting for our session to expire."""
        await self._stop_heartbeats()
        member_id = self._member_id
        self._reset_membership()
        if not member_id:
            return
        if self._instance_id is not None:
            log.info("group %s: static member %s stops without leaving", self._group_id, self._instance_id)
            return
        coordinator = self._coordinator
        if coordinator is None:
            log.info("group %s: coordinator unknown; member %s is left to expire", self._group_id, member_id)
            return
        fields = {
            "group_id": self._group_id,
            "member_id": member_id,
            "members": [{"member_id": member_id, "group_instance_id": None, "reason": reason}],
        }
        try:
            conn = self._coordinator_conn
            if conn is None or conn.closed:
                conn = await self._open((coordinator.host, coordinator.port), self._request_timeout)
                self._coordinator_conn = conn
            # wait_for also bounds the wait for a JoinGroup another task may hold on this connection.
            response = await asyncio.wait_for(
                conn.request(ApiKey.LEAVE_GROUP, fields, self._client_id, self._request_timeout),
                self._request_timeout,
            )
        except (Unreachable, GroupError, TimeoutError) as exc:
            log.info(
                "group %s: could not leave (%s); member %s is left to expire", self._group_id, exc, member_id
            )
            return
        errors = [response.error_code, *(m.error_code for m in getattr(response, "members", ()))]
        failed = next((e for e in errors if e != ErrorCode.none), None)
        if failed is not None:
            log.info("group %s: LeaveGroup of %s answered %s", self._group_id, member_id, error_name(failed))
        else:
            log.info("group %s: member %s left the group (%s)", self._group_id, member_id, reason)

    async def close(self, *, leave_group: bool = True) -> None:
        """Leave (unless ``leave_group`` is False: the session then expires, as for a crashed
        worker) and close the connections. A ``join``/``sync`` in progress raises GroupError."""
        if self._closed:
            return
        self._closed = True
        conn = self._coordinator_conn
        if conn is not None and conn.busy and not self._heartbeat_sending:
            conn.close()  # a held JoinGroup/SyncGroup would keep LeaveGroup waiting behind it
        try:
            if leave_group:
                await self.leave("the worker is shutting down")
            else:
                await self._stop_heartbeats()
        finally:
            for c in (self._coordinator_conn, self._bootstrap_conn):
                if c is not None:
                    c.close()
            self._coordinator_conn = self._bootstrap_conn = None

    async def __aenter__(self) -> GroupMember:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- heartbeats --------------------------------------------------------------------

    def _start_heartbeats(self) -> None:
        self._heartbeat_stop = asyncio.Event()
        self._heartbeat_task = asyncio.create_task(
            self._heartbeat_loop(self._generation, self._member_id, self._heartbeat_stop),
            name=f"heartbeat-{self._group_id}",
        )

    async def _stop_heartbeats(self) -> None:
        task, self._heartbeat_task = self._heartbeat_task, None
        if task is None or task.done():
            return
        self._heartbeat_stop.set()
        # A heartbeat on the wire finishes (its timeout bounds it) so the connection stays in
        # sync; a heartbeat waiting for its turn or for a coordinator is just cancelled.
        if not self._heartbeat_sending:
            task.cancel()
        await asyncio.wait([task])

    async def _heartbeat_loop(self, generation: int, member_id: str, stop: asyncio.Event) -> None:
        loop = asyncio.get_running_loop()
        session = self._session_timeout_ms / 1000
        last_ack = loop.time()
        next_at = last_ack + self._heartbeat_interval
        expired = False
        fields = {
            "group_id": self._group_id,
            "generation_id": generation,
            "member_id": member_id,
            "group_instance_id": self._instance_id,
        }
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), max(0.0, next_at - loop.time()))
            if stop.is_set():
                return
            sent_at = loop.time()
            next_at = sent_at + self._heartbeat_interval
            # One attempt may include finding the coordinator again, but never outlasts the session.
            deadline = sent_at + min(self._request_timeout, session)
            try:
                error = await self._send_heartbeat(fields, deadline)
            except Unreachable as exc:
                self._forget_coordinator(f"heartbeat failed: {exc}", 1)
                error = None
            except Exception as exc:  # a bug must not silently end heartbeats: make the herder rejoin
                if self._closed:
                    return
                log.exception("group %s: heartbeat failed", self._group_id)
                self._need_rejoin(f"heartbeat failed: {exc!r}")
                return
            if error == ErrorCode.none or error == ErrorCode.rebalance_in_progress:
                last_ack = sent_at  # either way the coordinator renewed our session
                expired = False
                if error == ErrorCode.rebalance_in_progress:
                    self._need_rejoin("the coordinator started a rebalance")
                continue
            if error == ErrorCode.illegal_generation:
                self._need_rejoin(f"generation {generation} is no longer current")
                return
            if error == ErrorCode.unknown_member_id:
                if self._member_id == member_id:
                    self._reset_membership()
                self._need_rejoin(f"the coordinator no longer knows member {member_id}")
                return
            if error == ErrorCode.fenced_instance_id:
                self._need_rejoin(f"another member took over instance id {self._instance_id}")
                return
            if error is not None:
                if error in _COORDINATOR_ERRORS:
                    self._forget_coordinator(f"heartbeat answered {error_name(error)}", 1)
                else:
                    log.warning("group %s: heartbeat answered %s", self._group_id, error_name(error))
            if not expired and loop.time() - last_ack >= session:
                expired = True
                self._need_rejoin(f"no heartbeat acknowledged for the session timeout ({session:g}s)")
            next_at = min(next_at, loop.time() + self._retry_backoff)

    async def _send_heartbeat(self, fields: Mapping[str, Any], deadline: float) -> ErrorCode:
        loop = asyncio.get_running_loop()
        conn = await self._coordinator_connection(deadline)
        self._heartbeat_sending = True
        try:
            response = await conn.request(
                ApiKey.HEARTBEAT, fields, self._client_id, max(0.001, deadline - loop.time())
            )
        finally:
            self._heartbeat_sending = False
        error: ErrorCode = response.error_code
        return error

    # -- coordinator discovery -----------------------------------------------------------

    async def _coordinator_connection(self, deadline: float | None) -> BrokerConnection:
        """The open connection to the coordinator, finding it first if needed. Retries until
        ``deadline`` (loop time; None = until found), then raises ``Unreachable``."""
        loop = asyncio.get_running_loop()
        async with self._discovery:
            attempt = 0
            while True:
                conn = self._coordinator_conn
                if conn is not None and not conn.closed:
                    return conn
                self._check_open()
                try:
                    coordinator = self._coordinator or await self._find_coordinator(deadline)
                    self._coordinator = coordinator
                    self._coordinator_conn = await self._open(
                        (coordinator.host, coordinator.port), self._timeout(deadline)
                    )
                    return self._coordinator_conn
                except Unreachable as exc:
                    self._forget_coordinator(str(exc), attempt)
                    if deadline is not None and loop.time() >= deadline:
                        raise
                await self._backoff(attempt, deadline)
                attempt += 1

    async def _find_coordinator(self, deadline: float | None) -> Coordinator:
        loop = asyncio.get_running_loop()
        attempt = 0
        while True:
            self._check_open()
            try:
                conn = await self._bootstrap_connection(deadline)
                fields = {
                    "key": self._group_id,
                    "key_type": _GROUP_KEY_TYPE,
                    "coordinator_keys": [self._group_id],
                }
                response = await conn.request(
                    ApiKey.FIND_COORDINATOR, fields, self._client_id, self._timeout(deadline)
                )
                error, message, found = coordinator_in(
                    conn.version(ApiKey.FIND_COORDINATOR), response, self._group_id
                )
            except Unreachable as exc:
                self._bootstrap_index += 1  # try the next bootstrap server
                error, message, found = ErrorCode.network_exception, str(exc), None
            if error == ErrorCode.none and found is not None:
                if found != self._coordinator:
                    log.info("group %s: coordinator is %s", self._group_id, found)
                return found
            if not (error.retriable or error == ErrorCode.network_exception):
                name = error_name(error)
                raise GroupError(
                    f"group {self._group_id}: FindCoordinator failed with {name}: {message}", name
                )
            _log_retry(
                attempt, "group %s: no coordinator yet (%s: %s)", self._group_id, error_name(error), message
            )
            if deadline is not None and loop.time() >= deadline:
                raise Unreachable(
                    f"no coordinator for group {self._group_id}: {message or error_name(error)}"
                )
            await self._backoff(attempt, deadline)
            attempt += 1

    async def _bootstrap_connection(self, deadline: float | None) -> BrokerConnection:
        conn = self._bootstrap_conn
        if conn is not None and not conn.closed:
            return conn
        address = self._bootstrap[self._bootstrap_index % len(self._bootstrap)]
        self._bootstrap_conn = await self._open(address, self._timeout(deadline))
        return self._bootstrap_conn

    async def _open(self, address: tuple[str, int], timeout: float) -> BrokerConnection:
        return await BrokerConnection.open(address, self._client_id, timeout, self._tls, self._sasl)

    def _forget_coordinator(self, reason: str, attempt: int) -> None:
        if self._coordinator is not None:
            log.info("group %s: lost coordinator %s: %s", self._group_id, self._coordinator, reason)
        elif attempt % 10 == 0:
            log.debug("group %s: %s", self._group_id, reason)
        self._coordinator = None
        if self._coordinator_conn is not None:
            self._coordinator_conn.close()
            self._coordinator_conn = None

    # -- helpers -------------------------------------------------------------------------

    def _need_rejoin(self, reason: str) -> None:
        if self._rejoin.is_set():
            return
        self._rejoin_reason = reason
        self._rejoin.set()
        log.info("group %s: rebalance needed: %s", self._group_id, reason)

    def _reset_membership(self) -> None:
        self._member_id = ""
        self._generation = -1
        self._protocol = None
        self._leader_id = ""

    def _check_open(self) -> None:
        if self._closed:
            raise GroupError(f"group {self._group_id}: member is closed")

    def _timeout(self, deadline: float | None) -> float:
        if deadline is None:
            return self._request_timeout
        remaining = deadline - asyncio.get_running_loop().time()
        return max(0.001, min(self._request_timeout, remaining))

    async def _backoff(self, attempt: int, deadline: float | None = None) -> None:
        """Exponential backoff from retry_backoff_ms up to 1 s, with 20% jitter so a fleet
        restarting together does not retry in lockstep."""
        delay = min(
            self._retry_backoff * 2 ** min(attempt, 16),
            max(self._retry_backoff, _RETRY_BACKOFF_MAX_MS / 1000),
        )
        delay *= random.uniform(0.8, 1.2)
        if deadline is not None:
            delay = min(delay, max(0.0, deadline - asyncio.get_running_loop().time()))
        await asyncio.sleep(delay)


def _log_retry(attempt: int, message: str, *args: Any) -> None:
    # The first failure and every tenth after it are warnings; the rest would only repeat them.
    log.log(logging.WARNING if attempt % 10 == 0 else logging.DEBUG, message, *args)
