"""The distributed herder: one worker of a Connect cluster.

Workers join a group (``group.id``) through the broker's group protocol; the leader
assigns connectors and tasks to the members, and every worker runs what it was
given. Everything they share lives in Kafka: connector and task configs, target
states, restart requests and session keys in the config topic; statuses in the
status topic; source offsets in the offsets topic. So any worker can die and the
others carry on, and any worker answers any REST request:

- reads come from this worker's view of the topics;
- writes of configs (create, update, delete, stop, task configs, restarts, offsets)
  are done by the leader: another worker raises ``RequestTargetException`` and the
  REST layer forwards the request to the leader's advertised URL (two hops at
  most, then 409, as Kafka);
- pause and resume are written by whichever worker received them.

The herder loop runs on the event loop: it (re)joins the group when the membership
says so, applies the assignment (stopping what was revoked, starting what was
assigned), and reacts to config records read from the config topic. Connector and
task code, and the blocking store and worker calls, run in threads. Heartbeats are
the membership's own task, so busy tasks never make a worker miss them.

Rebalancing is incremental and cooperative (``connect.protocol=sessioned`` or
``compatible``, KIP-415) unless every worker speaks only ``eager``: running work stays
where it is, only what must move is revoked, and the work of a departed worker waits
``scheduled.rebalance.max.delay.ms`` for it to come back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Mapping
from typing import Any

import httpx
import orjson

from connect.api.errors import AlreadyExistsException, ConnectException, NotFoundException
from connect.herder.assignor import (
    IncrementalCooperativeAssignor,
    config_mismatch_assignments,
    eager_assign,
)
from connect.herder.base import (
    NOT_STOPPED,
    RequestTargetException,
    bad_request,
    conflict,
    not_found,
    task_not_found,
)
from connect.herder.kafka_connection import GroupError
from connect.herder.membership import GroupMember, RebalanceNeeded
from connect.herder.offsets import OffsetsEndpoints
from connect.herder.protocol import (
    CONFIG_MISMATCH,
    NO_ERROR,
    Allocation,
    ConnectAssignment,
    ConnectProtocolCompatibility,
    WorkerMetadata,
    decode_assignment,
    decode_metadata,
    encode_assignment,
    encode_metadata,
)
from connect.herder.request_signing import SessionKey, generate_key, sign, verify
from connect.herder.zombie_fencing import ZombieFencing
from connect.rest.tls import worker_client_context
from connect.runtime.config import DistributedConfig
from connect.runtime.metrics import RebalanceMetrics
from connect.runtime.plugins import Plugins
from connect.runtime.status import ConnectorTaskId, State, Status, TargetState
from connect.runtime.worker import Worker
from connect.storage.configs import ClusterConfigState
from connect.storage.kafka_configs import KafkaConfigBackingStore
from connect.storage.kafka_status import KafkaStatusBackingStore

log = logging.getLogger(__name__)

_RETRY_BACKOFF_S = 0.25
_FORWARD_TIMEOUT_S = 30.0


class DistributedHerder(OffsetsEndpoints):
    def __init__(
        self,
        worker: Worker,
        plugins: Plugins,
        config: DistributedConfig,
        configs: KafkaConfigBackingStore,
        statuses: KafkaStatusBackingStore,
        member: GroupMember,
        url: str,
    ) -> None:
        super().__init__(worker, plugins)
        self.config = config
        self.configs = configs
        self.statuses = statuses
        self.member = member
        self.url = url
        self.protocol = ConnectProtocolCompatibility.from_config(config.connect_protocol)
        self.assignor = IncrementalCooperativeAssignor(config.scheduled_rebalance_max_delay_ms)
        self._lock = asyncio.Lock()  # serializes this worker's config writes and their checks
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wakeup = asyncio.Event()
        self._stopping = False
        self._task: asyncio.Task[None] | None = None

        # Group state.
        self.generation = -1
        self.rebalance_metrics = RebalanceMetrics()
        self.member_id = ""
        self.leader_id = ""
        self.leader_url: str | None = None
        self.assignment: ConnectAssignment | None = None
        self.chosen: ConnectProtocolCompatibility = self.protocol
        self.allocation = Allocation(frozenset(), frozenset())  # what this worker runs
        self._rejoin_at: float | None = None  # a scheduled rebalance (lost work waiting)
        self._session_key: SessionKey | None = None
        self._last_synced_generation = -1

        # What the config topic told us since the loop last looked (filled from the reader thread).
        self._changed_connectors: set[str] = set()
        self._removed_connectors: set[str] = set()
        self._changed_tasks: set[str] = set()
        self._changed_targets: set[str] = set()
        self._restarts: list[tuple[str, bool, bool]] = []
        self._reconfigure: set[str] = set()  # connectors whose task configs should be regenerated
        self._known: dict[str, int] = {}  # connector -> task count, as last seen
        # The (connector config, task config) each task here was started with: task-config
        # records restart only the tasks whose configs they actually change.
        self._started_with: dict[ConnectorTaskId, tuple[dict[str, str], dict[str, str]]] = {}
        self._http: httpx.AsyncClient | None = None
        self.fencing = ZombieFencing(self)

    # -- lifecycle ----------------------------------------------------------------------

    @property
    def is_leader(self) -> bool:
        return bool(self.member_id) and self.member_id == self.leader_id

    @property
    def rebalance_pending(self) -> bool:
        """Whether this worker is joining, asked to rejoin, or holding a scheduled rebalance."""
        return (
            self.assignment is None
            or not self.ready
            or self.member.rejoin_needed
            or self._rejoin_at is not None
        )

    def configured_work(self) -> Allocation:
        """What the cluster should run, as this worker's config snapshot has it."""
        connectors, tasks = _configured_work(self.configs.snapshot())
        return Allocation(frozenset(connectors), frozenset(tasks))

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        # Trusts the leader's https listener and shows this worker's certificate if asked.
        self._http = httpx.AsyncClient(timeout=_FORWARD_TIMEOUT_S, verify=worker_client_context(self.config))
        self.configs.set_listener(_ConfigEvents(self))
        stored = self.configs.session_key()  # the listener only hears keys published from now on
        if stored is not None:
            self._session_key = SessionKey(stored.key, stored.algorithm, stored.created_ms)
        await self.blocking(self.worker.start)
        self.kafka_cluster_id = await self.blocking(self._cluster_id, f"connect-{self.config.group_id}-admin")
        self._task = asyncio.create_task(self._run(), name="distributed-herder")

    async def stop(self) -> None:
        self.ready = False
        self._stopping = True
        self._wakeup.set()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        self._cancel_background()
        # Stop the work first (offsets are committed), then leave so the others take it over.
        await self.blocking(self.worker.stop)
        try:
            await asyncio.wait_for(self.member.close(), 10)
        except Exception as exc:
            log.warning("leaving the group failed: %s", exc)
        if self._http is not None:
            await self._http.aclose()

    def _notify(self) -> None:
        """Wake the herder loop (any thread)."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._wakeup.set)

    # -- the herder loop ----------------------------------------------------------------

    async def _run(self) -> None:
        while not self._stopping:
            try:
                if self.assignment is None or self.member.rejoin_needed or self._rebalance_due():
                    await self._rebalance()
                    continue
                await self._process_config_events()
                if self.is_leader:
                    await self.claim_write_privileges()  # again, if a failed write gave them up
                    await self._maybe_rotate_session_key()
                await self._wait_for_work()
            except asyncio.CancelledError:
                raise
            except (GroupError, ConnectException, OSError) as exc:
                log.error("herder: %s; retrying", exc)
                await asyncio.sleep(1.0)
            except Exception:
                log.exception("herder loop failed; retrying")
                await asyncio.sleep(1.0)

    def _rebalance_due(self) -> bool:
        return self._rejoin_at is not None and time.monotonic() >= self._rejoin_at

    async def _wait_for_work(self) -> None:
        timeout = 1.0
        if self._rejoin_at is not None:
            timeout = max(0.0, min(timeout, self._rejoin_at - time.monotonic()))
        waiter = asyncio.ensure_future(self._wakeup.wait())
        rejoin = asyncio.ensure_future(self.member.wait_rejoin_needed(timeout))
        try:
            await asyncio.wait({waiter, rejoin}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
            rejoin.cancel()
        self._wakeup.clear()

    # -- rebalancing --------------------------------------------------------------------

    async def _rebalance(self) -> None:
        self._rejoin_at = None
        self.rebalance_metrics.started()
        if self.protocol is ConnectProtocolCompatibility.EAGER and self.allocation.connectors | {
            t.connector for t in self.allocation.tasks
        }:
            # Eager: everything is revoked before joining (stop the world).
            await self._stop_work(self.allocation)
            self.allocation = Allocation(frozenset(), frozenset())
        snapshot = self.configs.snapshot()
        meta = WorkerMetadata(self.url, snapshot.offset, self.allocation)
        offered = [(p.value, encode_metadata(meta, p)) for p in self.protocol.protocols_offered()]
        result = await self.member.join(offered)
        self.generation = result.generation
        self.member_id = result.member_id
        self.leader_id = result.leader_id
        self.chosen = ConnectProtocolCompatibility(result.protocol)
        self.statuses.set_generation(result.generation)
        assignments: dict[str, bytes] | None = None
        if result.is_leader and not result.skip_assignment:
            assignments = await self._leader_assignments(result.members, result.generation)
        try:
            data = await self.member.sync(assignments)
        except RebalanceNeeded as exc:
            log.info("rebalance again: %s", exc)
            return
        self._last_synced_generation = result.generation
        _, assignment = decode_assignment(data)
        await self._apply(assignment)
        self.rebalance_metrics.completed_at_generation(result.generation, self.leader_url or self.leader_id)

    async def _leader_assignments(self, raw: Mapping[str, bytes], generation: int) -> dict[str, bytes]:
        members = {mid: decode_metadata(meta)[1] for mid, meta in raw.items()}
        wanted = max((m.config_offset for m in members.values()), default=-1)
        snapshot = self.configs.snapshot()
        if snapshot.offset < wanted:
            await self.blocking(self.configs.refresh, self.config.worker_sync_timeout_ms / 1000)
            snapshot = self.configs.snapshot()
        leader_url = members[self.member_id].url if self.member_id in members else self.url
        version = self.chosen.version
        if snapshot.offset < wanted:
            log.warning(
                "the leader's configs (offset %d) are behind a member's (%d): every member resyncs",
                snapshot.offset,
                wanted,
            )
            # Everyone (the leader too) reads the configs up to the highest offset seen, then rejoins.
            failed = config_mismatch_assignments(self.member_id, leader_url, wanted, members)
            return {mid: encode_assignment(a, version) for mid, a in failed.items()}
        connectors, tasks = _configured_work(snapshot)
        if self.chosen is ConnectProtocolCompatibility.EAGER:
            planned = eager_assign(self.member_id, leader_url, snapshot.offset, members, connectors, tasks)
        else:
            planned = self.assignor.assign(
                self.member_id,
                leader_url,
                snapshot.offset,
                members,
                connectors,
                tasks,
                generation,
                time.monotonic_ns() // 1_000_000,  # only compared with itself: immune to clock jumps
                last_completed_generation=self._last_synced_generation,
            )
        return {mid: encode_assignment(a, version) for mid, a in planned.items()}

    async def _apply(self, assignment: ConnectAssignment) -> None:
        if assignment.error == CONFIG_MISMATCH:
            log.info("configs out of sync with the leader; reading the config topic before rejoining")
            await self._catch_up(assignment.config_offset)
            self.member.request_rejoin()
            return
        if assignment.error != NO_ERROR:
            log.error("unknown assignment error %d; rejoining", assignment.error)
            self.member.request_rejoin()
            return
        if not await self._catch_up(assignment.config_offset):
            self.member.request_rejoin()
            return
        self.assignment = assignment
        self.leader_url = assignment.leader_url
        if self.configs.uses_transactions:
            # The leader alone writes the config topic: its transactional producer fences
            # any earlier leader's (Kafka's claimWritePrivileges).
            if self.is_leader:
                try:
                    await self.claim_write_privileges()
                except ConnectException as exc:
                    log.error("could not claim write privileges for the config topic: %s", exc)
            else:
                await self.blocking(self.configs.relinquish_write_privileges)
        revoked = assignment.revoked()
        assigned = assignment.assigned()
        before = self.allocation
        if self.chosen is ConnectProtocolCompatibility.EAGER:
            # An eager assignment is the whole allocation: whatever is not in it stops.
            revoked = Allocation(before.connectors - assigned.connectors, before.tasks - assigned.tasks)
        if revoked.connectors or revoked.tasks:
            log.info(
                "generation %d: stopping %d connectors and %d tasks that moved away",
                self.generation,
                len(revoked.connectors),
                len(revoked.tasks),
            )
            await self._stop_work(revoked)
        current = Allocation(before.connectors - revoked.connectors, before.tasks - revoked.tasks)
        self.allocation = Allocation(current.connectors | assigned.connectors, current.tasks | assigned.tasks)
        log.info(
            "generation %d as %s: running %d connectors and %d tasks (leader %s)",
            self.generation,
            "leader" if self.is_leader else "follower",
            len(self.allocation.connectors),
            len(self.allocation.tasks),
            assignment.leader_url,
        )
        snapshot = self.configs.snapshot()
        self._known = _task_counts(snapshot)
        new_tasks = sorted(self.allocation.tasks - current.tasks)
        for name in sorted(self.allocation.connectors - current.connectors):
            await self._start_connector(name, snapshot)
        for task in new_tasks:
            await self._start_task(task, snapshot)
        if self.chosen is not ConnectProtocolCompatibility.EAGER and (
            assignment.revoked_connectors or assignment.revoked_tasks
        ):
            # Revocations are followed by a rebalance that hands the revoked work out.
            self.member.request_rejoin()
        if assignment.delay_ms > 0:
            self._rejoin_at = time.monotonic() + assignment.delay_ms / 1000
            log.info(
                "a rebalance is scheduled in %d ms (work of a departed worker waits)", assignment.delay_ms
            )
        self.ready = True

    async def _catch_up(self, offset: int) -> bool:
        if self.configs.snapshot().offset >= offset:
            return True
        timeout = self.config.worker_sync_timeout_ms / 1000
        await self.blocking(self.configs.refresh, timeout)
        if self.configs.snapshot().offset >= offset:
            return True
        log.warning(
            "could not read the config topic up to offset %d within %.1f s; leaving the group for %d ms",
            offset,
            timeout,
            self.config.worker_unsync_backoff_ms,
        )
        await self.member.leave()
        await asyncio.sleep(min(self.config.worker_unsync_backoff_ms / 1000, 30.0))
        return False

    async def _stop_work(self, work: Allocation) -> None:
        await self.blocking(self.worker.stop_and_await_tasks, sorted(work.tasks))
        for task in work.tasks:
            self._started_with.pop(task, None)
        for name in sorted(work.connectors):
            await self.blocking(self.worker.stop_connector, name)

    # -- starting work ------------------------------------------------------------------

    async def _start_connector(
        self, name: str, snapshot: ClusterConfigState, republish: bool = False
    ) -> None:
        """Start a connector assigned here, then have it generate its task configs.
        ``republish`` writes them even when unchanged: after a connector config change the
        tasks must restart to see it, and they restart when their configs are written."""
        config = snapshot.connector_configs.get(name)
        if config is None:
            return
        target = snapshot.target_state(name)
        if target == TargetState.STOPPED:
            self.statuses.on_status(name, None, Status(State.STOPPED, self.worker_id))
            return
        started = await self.blocking(
            self.worker.start_connector, name, dict(config), target, self._request_reconfiguration
        )
        if started and target == TargetState.STARTED:
            await self._reconfigure_connector(name, republish)

    async def _start_task(self, task: ConnectorTaskId, snapshot: ClusterConfigState) -> None:
        connector_config = snapshot.connector_configs.get(task.connector)
        task_config = snapshot.task_config(task)
        if connector_config is None or task_config is None:
            return
        self._started_with[task] = (dict(connector_config), dict(task_config))
        fence = verify_task = None
        if self.worker.exactly_once_enabled and self.connector_type(connector_config) == "source":
            fence, verify_task = self.fencing.preflight(task), self.fencing.verifier(task)
        await self.blocking(
            self.worker.start_task,
            task,
            dict(connector_config),
            dict(task_config),
            snapshot.target_state(task.connector),
            fence,
            verify_task,
        )

    def _request_reconfiguration(self, name: str) -> None:
        """A connector asked for new task configs (any thread)."""
        if self._loop is None:
            return
        self._loop.call_soon_threadsafe(self._reconfigure.add, name)
        self._notify()

    async def _reconfigure_connector(self, name: str, republish: bool = False) -> None:
        """Ask a connector running here for its task configs; publish them if they changed
        (or ``republish``)."""
        snapshot = self.configs.snapshot()
        config = snapshot.connector_configs.get(name)
        if config is None or snapshot.target_state(name) != TargetState.STARTED:
            return
        if name not in self.allocation.connectors:
            return
        new = await self.blocking(self.worker.connector_task_configs, name, dict(config))
        if not self.worker.connector_running(name):
            return
        old = [dict(snapshot.task_config(t) or {}) for t in snapshot.tasks(name)]
        if new == old and name not in snapshot.inconsistent and not republish:
            return
        if self.is_leader:
            await self.blocking(self.configs.put_task_configs, name, new)
        else:
            self._spawn(self._forward_task_configs(name, new))

    async def _forward_task_configs(self, name: str, configs: list[dict[str, str]]) -> None:
        """A follower hands new task configs to the leader (KIP-507 signed request)."""
        body = orjson.dumps(configs)
        for attempt in range(10):
            if self._stopping:
                return
            key, leader = self._session_key, self.leader_url
            if key is None or leader is None or self._http is None:
                await asyncio.sleep(_RETRY_BACKOFF_S * (attempt + 1))
                continue
            headers = {"content-type": "application/json"}
            headers.update(sign(key, self.config.inter_worker_signature_algorithm, body))
            try:
                r = await self._http.put(
                    f"{leader.rstrip('/')}/connectors/{name}/tasks?forward=true",
                    content=body,
                    headers=headers,
                )
            except httpx.HTTPError as exc:
                log.warning("forwarding task configs of %s to the leader failed: %s", name, exc)
                await asyncio.sleep(_RETRY_BACKOFF_S * (attempt + 1))
                continue
            if r.status_code < 300:
                return
            log.warning("the leader refused task configs of %s: %d %s", name, r.status_code, r.text)
            await asyncio.sleep(_RETRY_BACKOFF_S * (attempt + 1))
        log.error("could not hand the task configs of %s to the leader", name)

    # -- config topic events ------------------------------------------------------------

    async def _process_config_events(self) -> None:
        changed, self._changed_connectors = self._changed_connectors, set()
        removed, self._removed_connectors = self._removed_connectors, set()
        tasks, self._changed_tasks = self._changed_tasks, set()
        targets, self._changed_targets = self._changed_targets, set()
        restarts, self._restarts = self._restarts, []
        reconfigure, self._reconfigure = self._reconfigure, set()
        snapshot = self.configs.snapshot()
        known, self._known = self._known, _task_counts(snapshot)
        # The leader rebalances when connectors or their task counts change: that is new
        # or departed work to hand out (changed task configs alone restart in place).
        rebalance = bool(removed) or known != self._known

        for name in sorted(removed):
            mine = Allocation(
                frozenset(c for c in self.allocation.connectors if c == name),
                frozenset(t for t in self.allocation.tasks if t.connector == name),
            )
            if mine.connectors or mine.tasks:
                await self._stop_work(mine)
                self.allocation = Allocation(
                    self.allocation.connectors - mine.connectors, self.allocation.tasks - mine.tasks
                )

        for name in sorted(changed - removed):
            if snapshot.contains(name) and name in self.allocation.connectors and name in known:
                # A new config: the connector restarts with it, then regenerates its tasks.
                await self.blocking(self.worker.stop_connector, name)
                await self._start_connector(name, snapshot, republish=True)

        for name in sorted(targets - removed):
            await self._apply_target_state(name, snapshot)

        for name in sorted(tasks - removed):
            await self._apply_task_configs(name, snapshot)

        for name, include_tasks, only_failed in restarts:
            await self._restart_owned(name, include_tasks, only_failed, snapshot)

        for name in sorted(reconfigure):
            await self._reconfigure_connector(name)

        if rebalance and self.is_leader:
            log.info("connectors or task counts changed: rebalancing")
            self.member.request_rejoin()

    async def _apply_target_state(self, name: str, snapshot: ClusterConfigState) -> None:
        target = snapshot.target_state(name)
        mine_connector = name in self.allocation.connectors
        mine_tasks = [t for t in self.allocation.tasks if t.connector == name]
        if target == TargetState.STOPPED:
            await self.blocking(self.worker.stop_and_await_tasks, mine_tasks)
            for task in mine_tasks:
                self._started_with.pop(task, None)
            if mine_connector:
                await self.blocking(self.worker.stop_connector, name)
                self.statuses.on_status(name, None, Status(State.STOPPED, self.worker_id))
            return
        if mine_connector:
            if not self.worker.connector_running(name) and name not in self.worker.connectors:
                await self._start_connector(name, snapshot)  # was STOPPED
            else:
                await self.blocking(self.worker.set_connector_target, name, target)
                if target == TargetState.STARTED:
                    await self._reconfigure_connector(name)
        for t in mine_tasks:
            self.worker.set_task_target(t, target)

    async def _apply_task_configs(self, name: str, snapshot: ClusterConfigState) -> None:
        """Restart the tasks running here whose configs changed (tasks that no longer exist
        are revoked by the rebalance the leader starts). A task started by a rebalance that
        read these records already runs them: it is left alone."""
        configured = set(snapshot.tasks(name))
        connector_config = dict(snapshot.connector_configs.get(name) or {})
        for task in sorted(t for t in self.allocation.tasks if t.connector == name and t in configured):
            wanted = (connector_config, dict(snapshot.task_config(task) or {}))
            if self._started_with.get(task) == wanted and task in self.worker.tasks:
                continue
            await self.blocking(self.worker.stop_and_await_tasks, [task])
            await self._start_task(task, snapshot)

    async def _restart_owned(
        self, name: str, include_tasks: bool, only_failed: bool, snapshot: ClusterConfigState
    ) -> None:
        if name in self.allocation.connectors:
            status = self.statuses.connector(name)
            if not only_failed or (status is not None and status.state == State.FAILED):
                self.statuses.on_status(name, None, Status(State.RESTARTING, self.worker_id))
                await self.blocking(self.worker.stop_connector, name)
                await self._start_connector(name, snapshot)
        if not include_tasks:
            return
        for task in sorted(t for t in self.allocation.tasks if t.connector == name):
            status = self.statuses.task(task)
            if only_failed and (status is None or status.state != State.FAILED):
                continue
            self.statuses.on_status(name, task.task, Status(State.RESTARTING, self.worker_id))
            await self.blocking(self.worker.stop_and_await_tasks, [task])
            await self._start_task(task, snapshot)

    # -- exactly-once sources (KIP-618) ---------------------------------------------------

    async def claim_write_privileges(self) -> None:
        if self.configs.uses_transactions and self.is_leader:
            await self.blocking(self.configs.claim_write_privileges)

    async def fence_zombies(self, name: str, headers: Mapping[str, str], body: bytes) -> None:
        """``PUT /connectors/{name}/fence``: a worker's signed request for a round of zombie
        fencing before its exactly-once tasks start (leader only)."""
        problem = verify(self._session_key, self.config.inter_worker_verification_algorithms, headers, body)
        if problem is not None:
            from connect.herder.base import RequestError

            raise RequestError(403, problem)
        await self.fencing.fence(name)

    # -- session keys -------------------------------------------------------------------

    def on_session_key(self, key: SessionKey) -> None:
        self._session_key = key

    async def _maybe_rotate_session_key(self) -> None:
        key = self._session_key
        ttl = self.config.inter_worker_key_ttl_ms
        now = int(time.time() * 1000)
        if key is not None and (ttl <= 0 or now - key.created_ms < ttl):
            return
        algorithm = self.config.inter_worker_key_generation_algorithm
        fresh = generate_key(algorithm, self.config.inter_worker_key_size)
        await self.blocking(self.configs.put_session_key, fresh, algorithm, now)
        self._session_key = SessionKey(fresh, algorithm, now)
        log.info("published a new session key")

    # -- queries ------------------------------------------------------------------------

    async def connectors(self) -> list[str]:
        return self.configs.snapshot().connectors()

    async def connector_config(self, name: str) -> dict[str, str]:
        config = self.configs.snapshot().connector_configs.get(name)
        if config is None:
            raise not_found(name)
        return dict(config)

    async def task_configs(self, name: str) -> list[dict[str, str]]:
        snapshot = self.configs.snapshot()
        if not snapshot.contains(name):
            raise not_found(name)
        return [dict(snapshot.task_config(t) or {}) for t in snapshot.tasks(name)]

    def task_ids(self, name: str) -> list[ConnectorTaskId]:
        return self.configs.snapshot().tasks(name)

    def target_state(self, name: str) -> TargetState:
        return self.configs.snapshot().target_state(name)

    def connector_status_raw(self, name: str) -> Status | None:
        return self.statuses.connector(name)

    def task_status_raw(self, task: ConnectorTaskId) -> Status | None:
        return self.statuses.task(task)

    def active_topics(self, name: str) -> list[str]:
        return self.statuses.topics(name)

    async def reset_active_topics(self, name: str) -> None:
        await self.blocking(self.statuses.reset_topics, name)

    # -- writes -------------------------------------------------------------------------

    def _require_leader(self) -> None:
        if self.is_leader:
            return
        if self.leader_url is None or self.assignment is None:
            raise conflict()
        raise RequestTargetException("Only the leader can handle this request", self.leader_url)

    async def put_connector_config(
        self, name: str, config: dict[str, str], allow_replace: bool, initial_state: TargetState | None = None
    ) -> bool:
        await self.validated(name, config)
        self._require_leader()
        async with self._lock:
            snapshot = self.configs.snapshot()
            exists = snapshot.contains(name)
            if exists and not allow_replace:
                raise AlreadyExistsException(f"Connector {name} already exists")
            target = None if exists else (initial_state or TargetState.STARTED)
            await self.blocking(self.configs.put_connector_config, name, config, target)
            log.info("%s connector %s", "updated" if exists else "created", name)
            return not exists

    async def delete_connector(self, name: str) -> None:
        self._require_leader()
        async with self._lock:
            if not self.configs.snapshot().contains(name):
                raise not_found(name)
            await self.blocking(self.configs.remove_connector_config, name)
            await self.blocking(self.statuses.delete, name)
            log.info("deleted connector %s", name)

    async def set_target_state(self, name: str, state: TargetState) -> None:
        snapshot = self.configs.snapshot()
        if not snapshot.contains(name):
            raise NotFoundException(f"Unknown connector {name}")
        if state == TargetState.STOPPED:
            # Stopping drops the task configs too, and that write is the leader's.
            self._require_leader()
            async with self._lock:
                await self.blocking(self.configs.put_task_configs, name, [])
                await self.blocking(self.configs.put_target_state, name, state)
            return
        # Pause and resume are written by whichever worker received them, as in Kafka.
        await self.blocking(self.configs.put_target_state, name, state)

    async def restart_connector(
        self, name: str, include_tasks: bool, only_failed: bool
    ) -> dict[str, Any] | None:
        self._require_leader()
        snapshot = self.configs.snapshot()
        if not snapshot.contains(name):
            raise not_found(name)
        if not include_tasks and not only_failed:
            # A plain connector restart is done by the worker that runs it.
            owner = await self._owner_url(name)
            if owner != self.url:
                raise RequestTargetException(f"Connector {name} runs on {owner}", owner)
            if name not in self.allocation.connectors:
                raise conflict()
            async with self._lock:
                await self.blocking(self.worker.stop_connector, name)
                await self._start_connector(name, snapshot)
            return None
        connector_status = self.statuses.connector(name)
        restart_connector = not only_failed or (
            connector_status is not None and connector_status.state == State.FAILED
        )
        status = await self.connector_status(name)
        if restart_connector:
            status["connector"]["state"] = State.RESTARTING.value
        if include_tasks:
            for entry in status["tasks"]:
                if not only_failed or entry["state"] == State.FAILED.value:
                    entry["state"] = State.RESTARTING.value
        await self.blocking(self.configs.put_restart_request, name, include_tasks, only_failed)
        return status

    async def restart_task(self, task: ConnectorTaskId) -> None:
        snapshot = self.configs.snapshot()
        if not snapshot.contains(task.connector):
            raise not_found(task.connector)
        if task not in snapshot.tasks(task.connector):
            raise task_not_found(task)
        if task not in self.allocation.tasks:
            owner = self._task_owner_url(task)
            if owner is None or owner == self.url:
                raise conflict()
            raise RequestTargetException(f"Task {task} runs on {owner}", owner)
        await self.blocking(self.worker.stop_and_await_tasks, [task])
        await self._start_task(task, snapshot)

    async def _owner_url(self, name: str) -> str:
        status = self.statuses.connector(name)
        if name in self.allocation.connectors:
            return self.url
        if status is None or not status.worker_id:
            raise conflict()
        return _url_of(status.worker_id, self.url)

    def _task_owner_url(self, task: ConnectorTaskId) -> str | None:
        status = self.statuses.task(task)
        if status is None or not status.worker_id:
            return None
        return _url_of(status.worker_id, self.url)

    # -- internal endpoint: task configs from followers --------------------------------

    async def put_task_configs(
        self, name: str, configs: list[dict[str, str]], headers: Mapping[str, str], body: bytes
    ) -> None:
        """``PUT /connectors/{name}/tasks``: a follower's signed task configs (leader only)."""
        problem = verify(self._session_key, self.config.inter_worker_verification_algorithms, headers, body)
        if problem is not None:
            from connect.herder.base import RequestError

            raise RequestError(403, problem)
        self._require_leader()
        if not self.configs.snapshot().contains(name):
            raise not_found(name)
        async with self._lock:
            await self.blocking(self.configs.put_task_configs, name, configs)

    # -- offsets: source offsets live in the offsets topic --------------------------------

    async def _await_tasks_stopped(self, name: str, timeout: float = 10.0) -> None:
        """A connector is STOPPED once its config says so; its tasks on other workers stop a
        moment later. Offsets change only once no task of it runs anywhere (their last
        commit would undo the change)."""
        deadline = time.monotonic() + timeout
        live = (State.RUNNING, State.PAUSED, State.RESTARTING)
        while True:
            running = [t for t, st in self.statuses.tasks(name).items() if st.state in live]
            if not running and not self.worker.task_ids(name):
                return
            if time.monotonic() >= deadline:
                return  # _require_stopped's message says what to do
            await asyncio.sleep(0.1)

    def _require_stopped(self, name: str) -> None:
        # The config decides (Kafka's rule): STOPPED, and no task configs left.
        running = [
            t for t, st in self.statuses.tasks(name).items() if st.state in (State.RUNNING, State.PAUSED)
        ]
        if self.target_state(name) != TargetState.STOPPED or self.task_ids(name) or running:
            raise bad_request(NOT_STOPPED.format(name=name))

    async def connector_offsets(self, name: str) -> list[dict[str, Any]]:
        config = await self.connector_config(name)
        store = await self.blocking(self.worker.offsets_for, name, config)  # may read a topic first
        await self.blocking(store.refresh, 10.0)
        return await super().connector_offsets(name)

    async def alter_offsets(self, name: str, offsets: list[dict[str, Any]]) -> str:
        self._require_leader()
        if self.target_state(name) == TargetState.STOPPED:
            await self._await_tasks_stopped(name)
            await self._fence_before_offsets_change(name)
        return await super().alter_offsets(name, offsets)

    async def reset_offsets(self, name: str) -> str:
        self._require_leader()
        if self.target_state(name) == TargetState.STOPPED:
            await self._await_tasks_stopped(name)
            await self._fence_before_offsets_change(name)
        return await super().reset_offsets(name)

    async def _fence_before_offsets_change(self, name: str) -> None:
        """Kafka fences an exactly-once source's zombies before its offsets change: a task of
        the last generation still alive somewhere could otherwise commit over the change."""
        config = self.configs.snapshot().connector_configs.get(name)
        if (
            self.worker.exactly_once_enabled
            and config is not None
            and self.connector_type(config) == "source"
        ):
            await self.fencing.fence(name)


class _ConfigEvents:
    """The config store's listener: records what changed and wakes the herder loop.

    Called on the store's reader thread, so it only hands facts to the loop."""

    def __init__(self, herder: DistributedHerder) -> None:
        self.herder = herder

    def _post(self, fn: Any, *args: Any) -> None:
        loop = self.herder._loop
        if loop is not None:
            loop.call_soon_threadsafe(fn, *args)
            loop.call_soon_threadsafe(self.herder._wakeup.set)

    def on_connector_config(self, name: str) -> None:
        self._post(self.herder._changed_connectors.add, name)

    def on_connector_removed(self, name: str) -> None:
        self._post(self.herder._removed_connectors.add, name)

    def on_task_configs(self, name: str) -> None:
        self._post(self.herder._changed_tasks.add, name)

    def on_target_state(self, name: str) -> None:
        self._post(self.herder._changed_targets.add, name)

    def on_restart_request(self, name: str, include_tasks: bool, only_failed: bool) -> None:
        self._post(self.herder._restarts.append, (name, include_tasks, only_failed))

    def on_session_key(self, key: bytes, algorithm: str, created_ms: int) -> None:
        self._post(self.herder.on_session_key, SessionKey(key, algorithm, created_ms))


def _configured_work(snapshot: ClusterConfigState) -> tuple[list[str], list[ConnectorTaskId]]:
    """What the leader assigns: every connector, and the tasks of consistent connectors."""
    connectors = snapshot.connectors()
    tasks = [t for c in connectors if c not in snapshot.inconsistent for t in snapshot.tasks(c)]
    return connectors, tasks


def _task_counts(snapshot: ClusterConfigState) -> dict[str, int]:
    return {c: len(snapshot.tasks(c)) for c in snapshot.connectors()}


def _url_of(worker_id: str, like: str) -> str:
    """A worker's REST URL from its id (host:port), with this worker's scheme."""
    scheme = like.split("://", 1)[0] if "://" in like else "http"
    return f"{scheme}://{worker_id}/"
