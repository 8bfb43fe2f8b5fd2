"""Tests of connect.herder.assignor: the eager and the incremental cooperative assignors.

The scenarios replay Kafka's ``IncrementalCooperativeAssignorTest`` (2 connectors with 4
tasks each, ``scheduled.rebalance.max.delay.ms`` = 300000, a leader named ``worker1``):
each round the members report what they run, the leader assigns, and every member stops
what was revoked and starts what was assigned, as a herder does. A hypothesis test then
plays random histories of joins, departures, returning workers and config changes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connect.herder.assignor import (
    IncrementalCooperativeAssignor,
    config_mismatch_assignments,
    eager_assign,
    max_config_offset,
)
from connect.herder.protocol import CONFIG_MISMATCH, NO_ERROR, Allocation, ConnectAssignment, WorkerMetadata
from connect.runtime.status import ConnectorTaskId

MAX_DELAY = 300_000
OFFSET = 10


def tasks_of(connector: str, count: int) -> list[ConnectorTaskId]:
    return [ConnectorTaskId(connector, i) for i in range(count)]


class Cluster:
    """Members, what each runs, the configs, a clock, and the leader's assignor.

    ``rebalance`` runs one round and checks what must hold after every round; the leader
    keeps its assignor while it stays, and a new leader starts a fresh one, as a new
    leader process would.
    """

    def __init__(self, max_delay_ms: int = MAX_DELAY, connectors: Mapping[str, int] | None = None) -> None:
        self.max_delay_ms = max_delay_ms
        self.running: dict[str, Allocation] = {}
        self.task_counts: dict[str, int] = dict(connectors or {})
        self.now = 0
        self.generation = 0
        self.leader: str | None = None
        self.assignor = IncrementalCooperativeAssignor(max_delay_ms)
        self.last: dict[str, ConnectAssignment] = {}

    # -- membership and configs ---------------------------------------------------------------

    def join(self, member: str, running: Allocation | None = None) -> None:
        assert member not in self.running
        self.running[member] = running or Allocation()

    def leave(self, member: str) -> Allocation:
        return self.running.pop(member)

    @property
    def connectors(self) -> list[str]:
        return sorted(self.task_counts)

    @property
    def tasks(self) -> list[ConnectorTaskId]:
        return [t for c in self.connectors for t in tasks_of(c, self.task_counts[c])]

    # -- rounds ---------------------------------------------------------------------------------

    def rebalance(self, **kwargs: int) -> dict[str, ConnectAssignment]:
        if self.leader not in self.running:
            self.leader = min(self.running)
            self.assignor = IncrementalCooperativeAssignor(self.max_delay_ms)
        self.generation += 1
        before = dict(self.running)
        members = {m: WorkerMetadata(f"http://{m}:8083/", OFFSET, a) for m, a in before.items()}
        result = self.assignor.assign(
            self.leader,
            f"http://{self.leader}:8083/",
            OFFSET,
            members,
            self.connectors,
            self.tasks,
            self.generation,
            self.now,
            **kwargs,
        )
        self.check_round(before, result)
        for member, a in result.items():
            held = before[member]
            self.running[member] = Allocation(
                (held.connectors - a.revoked().connectors) | a.assigned().connectors,
                (held.tasks - a.revoked().tasks) | a.assigned().tasks,
            )
        assert self.assignor.allocations == self.running
        no_second_holder(self.running.values())
        self.last = result
        return result

    def check_round(self, before: Mapping[str, Allocation], result: Mapping[str, ConnectAssignment]) -> None:
        assert set(result) == set(before)
        delays = {a.delay_ms for a in result.values()}
        assert len(delays) == 1 and min(delays) >= 0
        configured = Allocation.of(self.connectors, self.tasks)
        duplicated = held_twice(before.values())
        n = len(before)
        for member, a in result.items():
            held, revoked, assigned = before[member], a.revoked(), a.assigned()
            assert (a.error, a.leader, a.config_offset) == (NO_ERROR, self.leader, OFFSET)
            # Only what the member runs is revoked, and nothing it keeps is given again.
            assert revoked.connectors <= held.connectors and revoked.tasks <= held.tasks
            assert not assigned.connectors & (held.connectors - revoked.connectors)
            assert not assigned.tasks & (held.tasks - revoked.tasks)
            assert assigned.connectors <= configured.connectors and assigned.tasks <= configured.tasks
            # Configured work that runs once moves only for balance: from a member above the
            # fair share, never below it, and not while a rebalance is scheduled.
            for kind in ("connectors", "tasks"):
                total = len(getattr(configured, kind))
                settled = getattr(held, kind) & getattr(configured, kind) - getattr(duplicated, kind)
                moved = getattr(revoked, kind) & settled
                if moved:
                    assert a.delay_ms == 0, f"{member} lost {kind} {moved} during a delay"
                    assert len(settled) > total // n, f"{member} lost {kind} {moved} without a surplus"
                    assert len(settled) - len(moved) >= total // n, f"{member} gave up too many {kind}"

    def settle(self, rounds: int = 40) -> None:
        """Follow-up rebalances until one changes nothing, waiting out scheduled delays."""
        for _ in range(rounds):
            result = self.rebalance()
            delay = next(iter(result.values())).delay_ms
            if delay:
                self.now += delay
            elif all(a.assigned().is_empty and a.revoked().is_empty for a in result.values()):
                return
        raise AssertionError(f"no stable assignment after {rounds} rounds: {self.running}")

    def counts(self, member: str) -> tuple[int, int]:
        return len(self.running[member].connectors), len(self.running[member].tasks)


def held_twice(allocations: Iterable[Allocation]) -> Allocation:
    allocations = list(allocations)
    connectors = Counter(c for a in allocations for c in a.connectors)
    tasks = Counter(t for a in allocations for t in a.tasks)
    return Allocation.of([c for c, n in connectors.items() if n > 1], [t for t, n in tasks.items() if n > 1])


def no_second_holder(allocations: Iterable[Allocation]) -> None:
    twice = held_twice(allocations)
    assert twice.is_empty, f"held by more than one member after a round: {twice}"


def totals(result: Mapping[str, ConnectAssignment], *members: str) -> tuple[int, int, int, int]:
    """Kafka's ``assertAssignment``: connectors and tasks assigned, then revoked, in total."""
    chosen = [result[m] for m in members] if members else list(result.values())
    return (
        sum(len(a.connectors) for a in chosen),
        sum(len(a.tasks) for a in chosen),
        sum(len(a.revoked_connectors) for a in chosen),
        sum(len(a.revoked_tasks) for a in chosen),
    )


def delay_of(result: Mapping[str, ConnectAssignment]) -> int:
    return next(iter(result.values())).delay_ms


def two_connectors(max_delay_ms: int = MAX_DELAY) -> Cluster:
    return Cluster(max_delay_ms, {"connector1": 4, "connector2": 4})


# -- a worker joins --------------------------------------------------------------------------------


def test_a_joining_worker_gets_a_fair_share_after_the_surplus_is_revoked() -> None:
    c = two_connectors()
    c.join("worker1")
    assert totals(c.rebalance()) == (2, 8, 0, 0)

    c.join("worker2")
    r = c.rebalance()
    assert totals(r, "worker1") == (0, 0, 1, 4)  # only the surplus moves...
    assert totals(r, "worker2") == (0, 0, 0, 0)  # ...once the follow-up rebalance hands it out
    assert delay_of(r) == 0

    r = c.rebalance()
    assert totals(r, "worker1") == (0, 0, 0, 0)
    assert totals(r, "worker2") == (1, 4, 0, 0)
    assert c.counts("worker1") == c.counts("worker2") == (1, 4)

    assert totals(c.rebalance()) == (0, 0, 0, 0)


def test_workers_joining_one_after_another_end_balanced() -> None:
    c = two_connectors()
    c.join("worker1")
    c.rebalance()
    c.join("worker2")
    assert totals(c.rebalance()) == (0, 0, 1, 4)
    c.join("worker3")  # joins while the revoked work is still unassigned
    r = c.rebalance()
    # Kafka's testTaskAssignmentWhenWorkerJoinAfterRevocation: the revoked connector and
    # tasks are handed out, and one more task is revoked: but revoking twice in a row is
    # spaced out by the backoff (KAFKA-12495), so this round asks for a 40 ms wait instead.
    assert totals(r) == (1, 4, 0, 0)
    assert delay_of(r) == 40
    c.now += 40
    assert totals(c.rebalance()) == (0, 0, 0, 1)
    c.join("worker4")
    c.settle()
    assert sorted(c.counts(m) for m in c.running) == [(0, 2), (0, 2), (1, 2), (1, 2)]


def test_consecutive_revoking_rebalances_back_off_exponentially() -> None:
    c = Cluster(MAX_DELAY, {"c": 24})
    c.join("w1")
    c.rebalance()
    c.join("w2")
    assert totals(c.rebalance()) == (0, 0, 0, 12)
    c.join("w3")
    r = c.rebalance()  # would revoke again: delayed by 1 ms x 40
    assert totals(r) == (0, 12, 0, 0) and delay_of(r) == 40
    c.join("w4")
    c.now += 40
    r = c.rebalance()  # the wait is over: revoke down to the fair share
    assert totals(r)[3] == 6 and delay_of(r) == 0
    c.join("w5")
    r = c.rebalance()  # revoking right after a revoking round again: 1 ms x 40^2
    assert totals(r)[3] == 0 and delay_of(r) == 1600
    c.now += 1600
    c.settle()
    assert sorted(c.counts(m)[1] for m in c.running) == [4, 5, 5, 5, 5]


def test_without_a_delay_consecutive_revocations_happen_at_once() -> None:
    c = Cluster(0, {"c": 12})
    c.join("w1")
    c.rebalance()
    c.join("w2")
    assert totals(c.rebalance()) == (0, 0, 0, 6)
    c.join("w3")
    r = c.rebalance()
    assert totals(r) == (0, 6, 0, 2) and delay_of(r) == 0


# -- a worker leaves -------------------------------------------------------------------------------


def test_work_of_a_departed_worker_waits_for_the_delay_then_moves() -> None:
    c = two_connectors()
    c.join("worker1")
    c.join("worker2")
    assert totals(c.rebalance()) == (2, 8, 0, 0)

    c.leave("worker2")
    r = c.rebalance()
    assert totals(r) == (0, 0, 0, 0)
    assert delay_of(r) == MAX_DELAY

    c.now += MAX_DELAY // 2  # an incidental rebalance: still waiting, for the rest of the delay
    r = c.rebalance()
    assert totals(r) == (0, 0, 0, 0)
    assert delay_of(r) == MAX_DELAY // 2

    c.now += MAX_DELAY // 2 + 1
    r = c.rebalance()
    assert totals(r) == (1, 4, 0, 0)
    assert delay_of(r) == 0
    assert c.counts("worker1") == (2, 8)


def test_a_worker_restarting_within_the_delay_gets_its_work_back() -> None:
    c = two_connectors()
    c.join("worker1")
    c.join("worker2")
    c.rebalance()
    lost = c.leave("worker2")
    assert delay_of(c.rebalance()) == MAX_DELAY
    c.now += MAX_DELAY // 2
    c.rebalance()

    c.now += MAX_DELAY // 4
    c.join("worker2-restarted")  # a new member id, running nothing yet
    r = c.rebalance()
    assert totals(r) == (0, 0, 0, 0)
    assert delay_of(r) == MAX_DELAY // 4

    c.now += MAX_DELAY // 4
    r = c.rebalance()
    assert totals(r, "worker2-restarted") == (1, 4, 0, 0)
    assert totals(r, "worker1") == (0, 0, 0, 0)
    assert c.running["worker2-restarted"] == lost
    assert delay_of(r) == 0


def test_a_worker_rejoining_with_its_work_still_running_keeps_it_at_once() -> None:
    c = two_connectors()
    c.join("worker1")
    c.join("worker2")
    c.rebalance()
    held = c.leave("worker2")
    assert delay_of(c.rebalance()) == MAX_DELAY
    c.now += 1000
    c.join("worker2-again", held)  # e.g. it missed heartbeats but never stopped its tasks
    r = c.rebalance()
    assert totals(r) == (0, 0, 0, 0)
    assert delay_of(r) == 0  # nothing is lost any more: no rebalance is scheduled
    assert c.running["worker2-again"] == held
    c.now += MAX_DELAY
    assert totals(c.rebalance()) == (0, 0, 0, 0)


def test_with_no_delay_lost_work_is_reassigned_at_once() -> None:
    c = two_connectors(max_delay_ms=0)
    c.join("worker1")
    c.join("worker2")
    c.rebalance()
    c.leave("worker2")
    r = c.rebalance()
    assert totals(r) == (1, 4, 0, 0)
    assert delay_of(r) == 0
    assert c.counts("worker1") == (2, 8)


def test_work_of_a_departed_leader_is_reassigned_at_once_by_the_new_leader() -> None:
    c = two_connectors()
    for m in ("worker1", "worker2", "worker3"):
        c.join(m)
    c.rebalance()
    c.leave("worker1")  # the leader: worker2 leads with a fresh assignor that knows no history
    r = c.rebalance()
    assert c.leader == "worker2"
    assert totals(r) == (1, 3, 0, 0)
    assert delay_of(r) == 0
    c.settle()
    assert sorted(c.counts(m) for m in c.running) == [(1, 4), (1, 4)]


def test_lost_work_is_reassigned_at_once_when_no_member_left() -> None:
    # The previous assignment never reached the members (e.g. SyncGroup failed), so they
    # report nothing: nobody departed, so there is nobody to wait for.
    c = two_connectors()
    c.join("worker1")
    c.join("worker2")
    c.rebalance()
    c.running = {m: Allocation() for m in c.running}
    r = c.rebalance()
    assert totals(r) == (2, 8, 0, 0)
    assert delay_of(r) == 0


def test_a_generation_the_leader_did_not_complete_makes_it_forget_the_previous_assignment() -> None:
    def replay(**kwargs: int) -> int:
        c = two_connectors()
        c.join("worker1")
        c.join("worker2")
        c.rebalance()  # generation 1: computed, but say it never reached the members
        c.running = {"worker1": Allocation()}  # and worker2 has gone
        return delay_of(c.rebalance(**kwargs))

    assert replay() == MAX_DELAY  # generation 1 is taken as completed: worker2's work is lost
    assert replay(last_completed_generation=0) == 0  # it is not: all is new work


# -- configs change ----------------------------------------------------------------------------


def test_a_deleted_connector_is_revoked_with_its_tasks() -> None:
    c = two_connectors()
    c.join("worker1")
    c.join("worker2")
    c.rebalance()
    owner = next(m for m, a in c.running.items() if "connector1" in a.connectors)
    del c.task_counts["connector1"]
    r = c.rebalance()
    stopped = Allocation.of(["connector1"], tasks_of("connector1", 4))
    assert (
        Allocation.of(
            [x for a in r.values() for x in a.revoked_connectors],
            [t for a in r.values() for t in a.revoked_tasks],
        )
        == stopped
    )
    assert "connector1" in r[owner].revoked_connectors
    c.settle()
    assert all(not a.connectors & {"connector1"} for a in c.running.values())
    assert sorted(c.counts(m) for m in c.running) == [(0, 2), (1, 2)]


def test_fewer_tasks_revokes_the_surplus_tasks_and_more_tasks_are_assigned() -> None:
    c = Cluster(MAX_DELAY, {"c": 4})
    c.join("w1")
    c.join("w2")
    c.rebalance()
    c.task_counts["c"] = 2
    r = c.rebalance()
    assert sorted(t for a in r.values() for t in a.revoked_tasks) == tasks_of("c", 4)[2:]
    c.settle()
    c.task_counts["c"] = 6
    r = c.rebalance()
    assert sorted(t for a in r.values() for t in a.tasks) == tasks_of("c", 6)[2:]
    assert totals(r)[3] == 0
    c.settle()
    assert sorted(c.counts(m)[1] for m in c.running) == [3, 3]


def test_work_running_on_two_members_is_revoked_from_both_then_assigned_once() -> None:
    c = Cluster(MAX_DELAY, {"c": 2})
    dup = Allocation.of(["c"], [ConnectorTaskId("c", 0)])
    c.join("w1", dup)
    c.join("w2", Allocation.of(["c"], tasks_of("c", 2)))
    r = c.rebalance()
    assert r["w1"].revoked() == dup
    assert r["w2"].revoked() == dup
    assert c.running == {"w1": Allocation(), "w2": Allocation.of((), [ConnectorTaskId("c", 1)])}
    r = c.rebalance()
    assert totals(r) == (1, 1, 0, 0)
    assert sorted(c.counts(m) for m in c.running) == [(0, 1), (1, 1)]


def test_new_connectors_go_to_the_least_loaded_members_without_moving_anything() -> None:
    c = Cluster(MAX_DELAY, {"a": 3})
    for m in ("w1", "w2", "w3"):
        c.join(m)
    c.rebalance()
    before = dict(c.running)
    c.task_counts["b"] = 3
    r = c.rebalance()
    assert totals(r) == (1, 3, 0, 0)
    for m, a in before.items():
        assert a.connectors <= c.running[m].connectors and a.tasks <= c.running[m].tasks
    assert sorted(c.counts(m) for m in c.running) == [(0, 2), (1, 2), (1, 2)]


# -- the assignments themselves ----------------------------------------------------------------


def test_assignments_carry_the_leader_and_the_config_offset() -> None:
    assignor = IncrementalCooperativeAssignor(MAX_DELAY)
    members = {"w1": WorkerMetadata("http://w1/", 3), "w2": WorkerMetadata("http://w2/", 3)}
    result = assignor.assign("w1", "http://w1/", 3, members, ["c"], [], generation=1, now_ms=0)
    assert result["w1"] == ConnectAssignment(NO_ERROR, "w1", "http://w1/", 3, ("c",), ())
    assert result["w2"] == ConnectAssignment(NO_ERROR, "w1", "http://w1/", 3, (), ())
    assert assignor.allocations == {"w1": Allocation.of(["c"]), "w2": Allocation()}


def test_no_members_is_an_error() -> None:
    with pytest.raises(ValueError):
        IncrementalCooperativeAssignor(0).assign("l", "u", 0, {}, [], [], 1, 0)
    with pytest.raises(ValueError):
        eager_assign("l", "u", 0, {}, [], [])


def test_config_mismatch_helpers() -> None:
    members = {"w1": WorkerMetadata("u1", 4), "w2": WorkerMetadata("u2", 9)}
    assert max_config_offset(members) == 9
    result = config_mismatch_assignments("w1", "u1", 9, members)
    assert set(result) == {"w1", "w2"}
    for a in result.values():
        assert a.error == CONFIG_MISMATCH and a.failed
        assert a.assigned().is_empty and a.revoked().is_empty


# -- random histories --------------------------------------------------------------------------

EVENTS = ["join", "leave", "return-running", "create", "delete", "resize", "wait"]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([0, 1000, MAX_DELAY]), st.data())
def test_random_histories_converge_to_one_balanced_owner_per_item(
    max_delay: int, data: st.DataObject
) -> None:
    c = Cluster(max_delay)
    ids = iter(range(1000))
    departed: list[Allocation] = []
    for _ in range(data.draw(st.integers(1, 4), label="initial members")):
        c.join(f"w{next(ids)}")
    for _ in range(data.draw(st.integers(0, 5), label="initial connectors")):
        c.task_counts[f"c{next(ids)}"] = data.draw(st.integers(0, 6))

    for _ in range(data.draw(st.integers(1, 8), label="steps")):
        for event in data.draw(st.lists(st.sampled_from(EVENTS), max_size=3), label="events"):
            if event == "join":
                c.join(f"w{next(ids)}")
            elif event == "leave" and len(c.running) > 1:
                departed.append(c.leave(data.draw(st.sampled_from(sorted(c.running)))))
            elif event == "return-running" and departed:
                # A worker that was dropped from the group comes back under a new member id,
                # still running what it ran (possibly what others now run too).
                c.join(f"w{next(ids)}", departed.pop(data.draw(st.integers(0, len(departed) - 1))))
            elif event == "create":
                c.task_counts[f"c{next(ids)}"] = data.draw(st.integers(0, 6))
            elif event == "delete" and c.task_counts:
                del c.task_counts[data.draw(st.sampled_from(sorted(c.task_counts)))]
            elif event == "resize" and c.task_counts:
                c.task_counts[data.draw(st.sampled_from(sorted(c.task_counts)))] = data.draw(
                    st.integers(0, 6)
                )
            elif event == "wait":
                c.now += data.draw(st.integers(0, 2 * max_delay + 1))
        c.rebalance()

    c.settle()

    holders = Counter(name for a in c.running.values() for name in a.connectors)
    assert holders == Counter(c.connectors), "every configured connector runs exactly once"
    task_holders = Counter(t for a in c.running.values() for t in a.tasks)
    assert task_holders == Counter(c.tasks), "every configured task runs exactly once"
    connector_counts = [len(a.connectors) for a in c.running.values()]
    task_counts = [len(a.tasks) for a in c.running.values()]
    assert max(connector_counts) - min(connector_counts) <= 1
    assert max(task_counts) - min(task_counts) <= 1
    # Stable: one more round changes nothing.
    assert totals(c.rebalance()) == (0, 0, 0, 0)
    assert delay_of(c.last) == 0


# -- eager -------------------------------------------------------------------------------------


def test_eager_deals_connectors_then_tasks_round_robin_by_member_id() -> None:
    members = {m: WorkerMetadata(f"http://{m}/", 5) for m in ("w3", "w1", "w2")}
    tasks = [ConnectorTaskId("b", 0), ConnectorTaskId("a", 1), ConnectorTaskId("a", 0)]
    result = eager_assign("w1", "http://w1/", 5, members, ["d", "b", "a", "c"], tasks)
    a0, a1, b0 = ConnectorTaskId("a", 0), ConnectorTaskId("a", 1), ConnectorTaskId("b", 0)
    assert result == {
        "w1": ConnectAssignment(NO_ERROR, "w1", "http://w1/", 5, ("a", "d"), (b0,)),
        "w2": ConnectAssignment(NO_ERROR, "w1", "http://w1/", 5, ("b",), (a0,)),
        "w3": ConnectAssignment(NO_ERROR, "w1", "http://w1/", 5, ("c",), (a1,)),
    }


def test_eager_ignores_what_members_run() -> None:
    members = {
        "w1": WorkerMetadata("u", 0, Allocation.of(["b"])),
        "w2": WorkerMetadata("u", 0, Allocation.of(["a"])),
    }
    result = eager_assign("w1", "u", 0, members, ["a", "b"], [])
    assert (result["w1"].connectors, result["w2"].connectors) == (("a",), ("b",))


@given(
    st.sets(st.text(min_size=1, max_size=4), min_size=1, max_size=6),
    st.dictionaries(st.text(min_size=1, max_size=4), st.integers(0, 5), max_size=8),
)
def test_eager_assigns_everything_once_and_evenly(member_ids: set[str], connectors: dict[str, int]) -> None:
    members = {m: WorkerMetadata("u", 0) for m in member_ids}
    tasks = [t for name, n in connectors.items() for t in tasks_of(name, n)]
    result = eager_assign(min(member_ids), "u", 0, members, list(connectors), tasks)
    assert set(result) == member_ids
    assert sorted(c for a in result.values() for c in a.connectors) == sorted(connectors)
    assert sorted(t for a in result.values() for t in a.tasks) == sorted(tasks)
    per_member = [len(a.connectors) + len(a.tasks) for a in result.values()]
    connector_counts = [len(a.connectors) for a in result.values()]
    assert max(per_member) - min(per_member) <= 1
    assert max(connector_counts) - min(connector_counts) <= 1
    assert all(not a.revoked_connectors and not a.revoked_tasks and a.delay_ms == 0 for a in result.values())
