"""The group leader's assignors: who runs which connectors and tasks (pure, no I/O).

Two strategies, as in Kafka Connect:

- :func:`eager_assign` (``connect.protocol=eager``, Kafka's ``EagerAssignor``): every
  worker stops everything before it rejoins, and the leader deals all connectors and then
  all tasks round robin over the members sorted by member id.
- :class:`IncrementalCooperativeAssignor` (``compatible``/``sessioned``, KIP-415, Kafka's
  ``IncrementalCooperativeAssignor``): work stays where it runs; the leader revokes only
  what must stop or move, and hands out what nobody runs. A revoking round is followed by
  a rebalance (the members that stopped something rejoin) that assigns what was revoked.

The leader calls these after JoinGroup, with each member's decoded metadata, and the
connectors and tasks of its config snapshot at ``config_offset``; the caller makes sure
that snapshot is at least as new as every member's (:func:`max_config_offset`), or sends
:func:`config_mismatch_assignments` instead. Time comes in as ``now_ms``.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from connect.herder.protocol import (
    CONFIG_MISMATCH,
    NO_ERROR,
    Allocation,
    ConnectAssignment,
    WorkerMetadata,
)
from connect.runtime.status import ConnectorTaskId

T = TypeVar("T", str, ConnectorTaskId)

# Kafka's backoff between consecutive revoking rebalances (KAFKA-12495):
# ExponentialBackoff(initial 1 ms, multiplier 40, max scheduled.rebalance.max.delay.ms, no jitter).
_BACKOFF_MULTIPLIER = 40


def max_config_offset(members: Mapping[str, WorkerMetadata]) -> int:
    """The newest config offset any member has read: the leader must have read this far."""
    return max(meta.config_offset for meta in members.values())


def config_mismatch_assignments(
    leader: str, leader_url: str, config_offset: int, members: Iterable[str]
) -> dict[str, ConnectAssignment]:
    """What every member gets when the leader is behind a member's configs: CONFIG_MISMATCH
    with nothing assigned or revoked, so each reads the config topic and rejoins."""
    failed = ConnectAssignment(CONFIG_MISMATCH, leader, leader_url, config_offset, (), ())
    return {member: failed for member in members}


def eager_assign(
    leader: str,
    leader_url: str,
    config_offset: int,
    members: Mapping[str, WorkerMetadata],
    connectors: Sequence[str],
    tasks: Sequence[ConnectorTaskId],
) -> dict[str, ConnectAssignment]:
    """Kafka's ``EagerAssignor``: the whole allocation of every member, round robin.

    Members are sorted by member id; connectors (sorted) are dealt first, then tasks
    (sorted by connector, then task number) continue the same rotation, so that with
    one-task connectors connectors and tasks do not pile up on alternate workers.
    Each assignment lists everything that member should run.
    """
    if not members:
        raise ValueError("cannot assign to a group without members")
    order = sorted(members)
    connector_lists: dict[str, list[str]] = {m: [] for m in order}
    task_lists: dict[str, list[ConnectorTaskId]] = {m: [] for m in order}
    rotation = itertools.cycle(order)
    for connector in sorted(set(connectors)):
        connector_lists[next(rotation)].append(connector)
    for task in sorted(set(tasks)):
        task_lists[next(rotation)].append(task)
    return {
        m: ConnectAssignment(
            NO_ERROR, leader, leader_url, config_offset, tuple(connector_lists[m]), tuple(task_lists[m])
        )
        for m in order
    }


@dataclass
class _Load:
    """One member's connectors and tasks while an assignment is being computed."""

    connectors: list[str] = field(default_factory=list)
    tasks: list[ConnectorTaskId] = field(default_factory=list)

    @property
    def is_empty(self) -> bool:
        return not self.connectors and not self.tasks


@dataclass
class _Work:
    """A set of connectors and tasks (mutable, for the set algebra of a round)."""

    connectors: set[str] = field(default_factory=set)
    tasks: set[ConnectorTaskId] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.connectors or self.tasks)

    def minus(self, *others: _Work) -> _Work:
        connectors, tasks = set(self.connectors), set(self.tasks)
        for other in others:
            connectors -= other.connectors
            tasks -= other.tasks
        return _Work(connectors, tasks)

    def union(self, other: _Work) -> _Work:
        return _Work(self.connectors | other.connectors, self.tasks | other.tasks)


class IncrementalCooperativeAssignor:
    """KIP-415's leader side, as Kafka's ``IncrementalCooperativeAssignor`` implements it.

    One instance lives as long as the worker and remembers, between the rounds it leads,
    what it assigned (so it can tell *lost* work, whose worker vanished, from *new* work),
    what it revoked, which members were present, and any scheduled rebalance. A new
    leader starts with a blank memory, as in Kafka.

    Each round:

    - work that is configured and runs on exactly one present member stays there;
    - work that is no longer configured (deleted connectors, surplus tasks) and work that
      runs on several members at once is revoked from the members that run it;
    - newly configured work is assigned at once, to the least loaded members;
    - work lost with a departed member is held for ``max_delay_ms`` in case the member
      comes back: a member that rejoins still running it simply keeps it, and when the
      delay runs out the work goes to the members that joined empty meanwhile (the
      returning worker under its new member id) or, if there are none, to the least
      loaded. ``max_delay_ms == 0`` reassigns lost work at once (KAFKA-15693). Lost work is
      reassigned at once also when no member departed (the previous assignment simply did
      not reach everyone);
    - once nothing is held back, members running more connectors (or tasks) than a fair
      share get the surplus revoked, so that after the follow-up rebalance connector
      counts and task counts each differ by at most one between members; the
      connectors and tasks are balanced separately. While lost work is held, nothing is
      revoked for balance;
    - revoking rounds that follow each other are spaced out with an exponential backoff
      (1 ms x 40^n, capped at ``max_delay_ms``, KAFKA-12495): instead of revoking, the
      round returns a delay after which everyone rejoins.

    What :meth:`assign` returns, per member (Kafka's ``ExtendedAssignment`` semantics):
    ``connectors``/``tasks`` are what the member must *start*, on top of what it reported
    running; ``revoked_connectors``/``revoked_tasks`` are what it must *stop* (always work
    it reported running); so it then runs ``(reported - revoked) | assigned``, which is
    :attr:`allocations`. ``delay_ms`` > 0 (the same for every member) asks every member to
    rejoin after that many milliseconds. A member that got revocations must rejoin once it
    has stopped them, so that the revoked work is handed out.

    Deviation from Kafka, on purpose: work that a member runs but that is not configured
    is revoked even if this leader never assigned it (Kafka only revokes what its own
    previous assignment held, so after a leader change such work lingers a round), and
    balancing never revokes from a member what it is being given in the same round (it
    is handed to another member instead).
    """

    def __init__(self, max_delay_ms: int) -> None:
        if max_delay_ms < 0:
            raise ValueError("scheduled.rebalance.max.delay.ms cannot be negative")
        self.max_delay_ms = max_delay_ms
        self._previous_assignment = _Work()
        self._previous_revocation = _Work()
        self._previous_generation = -1
        self._previous_members: frozenset[str] = frozenset()
        self._revoked_in_previous = False
        self._successive_revoking_rebalances = 0
        self._candidate_workers: list[str] = []  # joined empty while lost work was held
        self._scheduled_rebalance: int | None = None  # when held lost work gets reassigned (ms)
        self._delay = 0
        self._allocations: dict[str, Allocation] = {}

    @property
    def delay_ms(self) -> int:
        """The delay the last round asked members to wait before rejoining (0 if none)."""
        return self._delay

    @property
    def allocations(self) -> dict[str, Allocation]:
        """What each member runs once it has applied the last round's assignment; the
        leader uses it to find which worker runs a connector or task."""
        return dict(self._allocations)

    def assign(
        self,
        leader: str,
        leader_url: str,
        config_offset: int,
        members: Mapping[str, WorkerMetadata],
        connectors: Sequence[str],
        tasks: Sequence[ConnectorTaskId],
        generation: int,
        now_ms: int,
        *,
        last_completed_generation: int | None = None,
    ) -> dict[str, ConnectAssignment]:
        """Compute one round; see the class docstring for what the result means.

        ``members`` carry each member's current allocation from its metadata (None =
        nothing). ``connectors``/``tasks`` are the configured ones at ``config_offset``.
        ``generation`` is the group generation being assigned. ``last_completed_generation``
        is the last generation whose assignment this worker itself received; when it is
        not the generation this instance last assigned, its memory of the previous
        assignment is dropped (the assignment may never have reached the members), as in
        Kafka. If omitted, it is taken to be ``generation - 1``.
        """
        if not members:
            raise ValueError("cannot assign to a group without members")
        expected_previous = generation - 1 if last_completed_generation is None else last_completed_generation
        if self._previous_generation != expected_previous:
            self._previous_assignment = _Work()

        running = {m: _running(meta) for m, meta in members.items()}
        configured = _Work(set(connectors), set(tasks))
        active = _Work(
            {c for work in running.values() for c in work.connectors},
            {t for work in running.values() for t in work.tasks},
        )

        # A revocation of the previous round that did not take effect (its member never got
        # it, or failed to stop the work) makes the remembered assignment unreliable.
        revocation = self._previous_revocation
        if revocation.connectors & active.connectors or revocation.tasks & active.tasks:
            self._previous_assignment = active
        self._previous_revocation = _Work()

        previous = self._previous_assignment
        deleted = previous.union(active).minus(configured)
        duplicated = _Work(
            _held_more_than_once(work.connectors for work in running.values()),
            _held_more_than_once(work.tasks for work in running.values()),
        )
        lost = previous.minus(active, deleted)
        created = configured.minus(previous, active)

        # What each member keeps (sorted, so that every choice below is deterministic).
        to_revoke = {m: _Work() for m in running}
        next_loads: dict[str, _Load] = {}
        for member in sorted(running):
            work = running[member]
            stop = _Work(
                work.connectors & (deleted.connectors | duplicated.connectors),
                work.tasks & (deleted.tasks | duplicated.tasks),
            )
            to_revoke[member] = stop
            keep = work.minus(stop)
            next_loads[member] = _Load(sorted(keep.connectors), sorted(keep.tasks))
        kept = {m: _Work(set(load.connectors), set(load.tasks)) for m, load in next_loads.items()}

        reassign = self._handle_lost(lost, next_loads, now_ms)

        if self._delay == 0:
            reassign = reassign.union(
                self._balance_or_back_off(configured, next_loads, kept, to_revoke, now_ms)
            )
        else:
            # Nothing moves for balance while work is held for a departed member.
            self._revoked_in_previous = False

        _spread(sorted(created.connectors) + sorted(reassign.connectors), next_loads, _connectors_of)
        _spread(sorted(created.tasks) + sorted(reassign.tasks), next_loads, _tasks_of)

        after = {m: _Work(set(load.connectors), set(load.tasks)) for m, load in next_loads.items()}
        for work in to_revoke.values():
            self._previous_revocation = self._previous_revocation.union(work)
        # Lost work still held for its worker stays in the remembered assignment, so that
        # the next round still sees it as lost rather than as new.
        everything_next = _Work(
            {c for work in after.values() for c in work.connectors},
            {t for work in after.values() for t in work.tasks},
        )
        self._previous_assignment = everything_next.union(lost)
        self._previous_generation = generation
        self._previous_members = frozenset(running)
        self._allocations = {m: Allocation.of(work.connectors, work.tasks) for m, work in after.items()}

        result: dict[str, ConnectAssignment] = {}
        for member in sorted(running):
            start = after[member].minus(kept[member])
            stop = to_revoke[member]
            result[member] = ConnectAssignment(
                NO_ERROR,
                leader,
                leader_url,
                config_offset,
                tuple(sorted(start.connectors)),
                tuple(sorted(start.tasks)),
                tuple(sorted(stop.connectors)),
                tuple(sorted(stop.tasks)),
                self._delay,
            )
        return result

    def _balance_or_back_off(
        self,
        configured: _Work,
        loads: dict[str, _Load],
        kept: Mapping[str, _Work],
        to_revoke: dict[str, _Work],
        now_ms: int,
    ) -> _Work:
        """Revoke surplus work for balance now, or schedule a rebalance if the previous round
        revoked too (KAFKA-12495); returns work taken back before it started, to be spread."""
        handed_back, revocations = _balance(configured, loads, kept)
        if revocations and self._revoked_in_previous:
            self._successive_revoking_rebalances += 1
            self._delay = self._backoff(self._successive_revoking_rebalances)
            if self._delay:
                self._scheduled_rebalance = now_ms + self._delay
            else:
                _revoke(revocations, loads, to_revoke)
        elif revocations:
            _revoke(revocations, loads, to_revoke)
            self._revoked_in_previous = True
        elif self._revoked_in_previous:
            # The previous round revoked and this one need not: the cluster has settled.
            self._revoked_in_previous = False
            self._successive_revoking_rebalances = 0
        return handed_back

    def _handle_lost(self, lost: _Work, loads: dict[str, _Load], now_ms: int) -> _Work:
        """Decide what happens to lost work; returns what is to be spread like new work.

        Work given straight to candidate members is added to ``loads`` here.
        """
        if not lost and not self._revoked_in_previous:
            self._reset_delay()
            return _Work()
        present = set(loads)
        if self._scheduled_rebalance is None and present >= self._previous_members:
            # Nobody left: the previous assignment just did not reach some members.
            return lost
        if self.max_delay_ms == 0:
            return lost
        if self._scheduled_rebalance is not None and now_ms >= self._scheduled_rebalance:
            candidates = [m for m in self._candidate_workers if m in loads]
            self._reset_delay()
            # The full delay has passed: revoking rebalances may follow each other again.
            self._revoked_in_previous = False
            if not candidates:
                return lost
            rotation = itertools.cycle(candidates)
            for connector in sorted(lost.connectors):
                loads[next(rotation)].connectors.append(connector)
            rotation = itertools.cycle(candidates)
            for task in sorted(lost.tasks):
                loads[next(rotation)].tasks.append(task)
            return _Work()
        for member in sorted(loads):
            if loads[member].is_empty and member not in self._candidate_workers:
                self._candidate_workers.append(member)
        if self._scheduled_rebalance is not None:
            self._delay = min(max(self._scheduled_rebalance - now_ms, 0), self.max_delay_ms)
        else:
            self._delay = self.max_delay_ms
        self._scheduled_rebalance = now_ms + self._delay
        return _Work()

    def _reset_delay(self) -> None:
        self._candidate_workers.clear()
        self._scheduled_rebalance = None
        self._delay = 0

    def _backoff(self, attempts: int) -> int:
        """Kafka's ``ExponentialBackoff(1, 40, max_delay_ms, 0).backoff(attempts)``."""
        initial = min(self.max_delay_ms, 1)
        if self.max_delay_ms <= initial:
            return initial
        exp_max = math.log(self.max_delay_ms / max(initial, 1)) / math.log(_BACKOFF_MULTIPLIER)
        value = int(initial * _BACKOFF_MULTIPLIER ** min(attempts, exp_max))
        return min(value, self.max_delay_ms)


def _running(meta: WorkerMetadata) -> _Work:
    allocation = meta.allocation or Allocation()
    return _Work(set(allocation.connectors), set(allocation.tasks))


def _held_more_than_once(holdings: Iterable[set[T]]) -> set[T]:
    counts: Counter[T] = Counter()
    for held in holdings:
        counts.update(held)
    return {item for item, count in counts.items() if count > 1}


def _connectors_of(load: _Load) -> list[str]:
    return load.connectors


def _tasks_of(load: _Load) -> list[ConnectorTaskId]:
    return load.tasks


def _spread(items: Sequence[T], loads: dict[str, _Load], of: Callable[[_Load], list[T]]) -> None:
    """Give each item to the member holding the fewest of its kind (ties: lowest member id),
    which deals round robin when the members are even and fills the emptiest first."""
    for item in items:
        member = min(loads, key=lambda m: (len(of(loads[m])), m))
        of(loads[member]).append(item)


def _balance(
    configured: _Work, loads: dict[str, _Load], kept: Mapping[str, _Work]
) -> tuple[_Work, dict[str, _Work]]:
    """Bring every member down to a fair share of connectors and, separately, of tasks.

    Work over the share that a member is only being given this round is taken off it and
    returned first (to be spread elsewhere now); work over the share that it already runs
    is returned second, as revocations, which the caller may apply or postpone. ``loads``
    is changed only for the work taken off.
    """
    connectors_back, connectors_revoked = _balance_kind(
        len(configured.connectors),
        {m: load.connectors for m, load in loads.items()},
        {m: work.connectors for m, work in kept.items()},
    )
    tasks_back, tasks_revoked = _balance_kind(
        len(configured.tasks),
        {m: load.tasks for m, load in loads.items()},
        {m: work.tasks for m, work in kept.items()},
    )
    revocations = {
        m: _Work(connectors_revoked.get(m, set()), tasks_revoked.get(m, set()))
        for m in sorted(connectors_revoked.keys() | tasks_revoked.keys())
    }
    return _Work(connectors_back, tasks_back), revocations


def _balance_kind(
    total: int, holdings: Mapping[str, list[T]], kept: Mapping[str, set[T]]
) -> tuple[set[T], dict[str, set[T]]]:
    taken_back: set[T] = set()
    revoked: dict[str, set[T]] = {}
    for member, surplus in _surplus(total, {m: len(items) for m, items in holdings.items()}).items():
        items = holdings[member]
        # Take back work given this round first: it is not running yet, so nothing stops.
        fresh = [item for item in items if item not in kept[member]][:surplus]
        for item in fresh:
            items.remove(item)
        taken_back.update(fresh)
        running = [item for item in items if item in kept[member]][: surplus - len(fresh)]
        if running:
            revoked[member] = set(running)
    return taken_back, revoked


def _surplus(total: int, counts: Mapping[str, int]) -> dict[str, int]:
    """How many items each member must give up so that, once the rest of ``total`` is spread,
    every member holds ``total // n`` or one more (Kafka's ``loadBalancingRevocations``)."""
    floor, extras = divmod(total, len(counts))
    surplus: dict[str, int] = {}
    for member in sorted(counts):
        count = counts[member]
        if count <= floor:
            continue
        if extras:
            extras -= 1
            ceiling = floor + 1
        else:
            ceiling = floor
        if count > ceiling:
            surplus[member] = count - ceiling
    return surplus


def _revoke(revocations: Mapping[str, _Work], loads: dict[str, _Load], to_revoke: dict[str, _Work]) -> None:
    for member, work in revocations.items():
        load = loads[member]
        load.connectors = [c for c in load.connectors if c not in work.connectors]
        load.tasks = [t for t in load.tasks if t not in work.tasks]
        to_revoke[member] = to_revoke[member].union(work)
