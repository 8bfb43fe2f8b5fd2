"""Failover and scale-out of a distributed Connect cluster, against a plain consumer group.

    python benchmarks/failover.py [--session-timeout-ms 10000] [--connectors 4] [--tasks 3]

A broker process and three ``connect-distributed`` worker processes run
``--connectors`` tick sources of ``--tasks`` tasks each, with Kafka's defaults but
``scheduled.rebalance.max.delay.ms=0`` (lost work is reassigned at once).

- join: a fourth worker is started; timed from its spawn until it runs its share and
  every task is RUNNING (its process start-up and group join are printed apart). Tasks
  that moved and tasks that were started are counted from the tasks' own start log:
  only the moved ones should restart.
- failover (follower, then leader): a worker is killed with SIGKILL; timed until every
  connector and task is RUNNING on the workers left, as their REST API reports.
- baseline: the same kill with a plain two-member confluent-kafka consumer group on the
  same broker with the same session timeout, timed until the survivor owns every
  partition. It is what the broker's failure detection alone costs.

Target (issue #5): failover <= session.timeout.ms + 2 s; only moved tasks restart.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient, NewTopic

from benchmarks._common import ROOT, broker_process
from benchmarks._worker import wait_for
from sluiceway.embedded import DistributedWorkerProcess

_GENERATION = re.compile(r"generation (\d+) as (?:leader|follower): .*\(leader (\S+)\)")

_CHILD_CONSUMER = """
import sys
from confluent_kafka import Consumer
c = Consumer({"bootstrap.servers": sys.argv[1], "group.id": sys.argv[2],
              "session.timeout.ms": int(sys.argv[3]), "heartbeat.interval.ms": int(sys.argv[4])})
c.subscribe([sys.argv[5]])
while True:
    c.poll(0.1)
"""


# -- the baseline: a consumer group member killed ------------------------------------------


def consumer_group_failover(bootstrap: str, session_ms: int, heartbeat_ms: int) -> float:
    topic, group, partitions = "bench-failover-baseline", "bench-failover-baseline", 6
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(topic, partitions, 1)]).values():
        f.result(30)
    owned: set[int] = set()

    def on_assign(_: Any, tps: list[Any]) -> None:
        owned.clear()
        owned.update(tp.partition for tp in tps)

    survivor = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "session.timeout.ms": session_ms,
            "heartbeat.interval.ms": heartbeat_ms,
        }
    )
    survivor.subscribe([topic], on_assign=on_assign)
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD_CONSUMER, bootstrap, group, str(session_ms), str(heartbeat_ms), topic]
    )
    try:
        deadline = time.monotonic() + 120
        while not (0 < len(owned) < partitions):  # both members in the group
            survivor.poll(0.05)
            if time.monotonic() > deadline:
                raise TimeoutError("the consumer group never split the partitions")
        child.kill()
        child.wait(10)
        killed = time.monotonic()
        while len(owned) < partitions:
            survivor.poll(0.02)
            if time.monotonic() > killed + 120:
                raise TimeoutError("the survivor never took every partition")
        return time.monotonic() - killed
    finally:
        if child.poll() is None:
            child.kill()
        survivor.close()


# -- the Connect cluster ------------------------------------------------------------------


class Fleet:
    def __init__(self, work: Path, bootstrap: str, session_ms: int) -> None:
        self.work = work
        self.bootstrap = bootstrap
        self.session_ms = session_ms
        self.workers: list[DistributedWorkerProcess] = []
        self.http = httpx.Client(timeout=10)

    def spawn(self) -> DistributedWorkerProcess:
        w = DistributedWorkerProcess(
            self.work,
            f"w{len(self.workers)}",
            self.bootstrap,
            cwd=ROOT,
            **{
                "group.id": "bench-failover",
                "session.timeout.ms": str(self.session_ms),
                "scheduled.rebalance.max.delay.ms": "0",
            },
        ).start()
        self.workers.append(w)
        return w

    def live(self) -> list[DistributedWorkerProcess]:
        return [w for w in self.workers if w.alive()]

    def statuses(self) -> dict[str, Any]:
        for w in self.live():
            try:
                r = self.http.get(w.url + "connectors", params={"expand": "status"})
            except httpx.HTTPError:
                continue
            if r.status_code == 200:
                return {n: v["status"] for n, v in r.json().items()}
        return {}

    def owners(self) -> dict[str, str]:
        """task id -> worker id, for RUNNING tasks."""
        return {
            f"{name}-{t['id']}": t["worker_id"]
            for name, s in self.statuses().items()
            for t in s["tasks"]
            if t["state"] == "RUNNING"
        }

    def all_running(self, connectors: int, tasks: int) -> bool:
        live = {w.worker_id for w in self.live()}
        s = self.statuses()
        if len(s) != connectors:
            return False
        for status in s.values():
            if status["connector"]["state"] != "RUNNING" or status["connector"]["worker_id"] not in live:
                return False
            if len(status["tasks"]) != tasks or any(
                t["state"] != "RUNNING" or t["worker_id"] not in live for t in status["tasks"]
            ):
                return False
        return True

    def leader(self) -> DistributedWorkerProcess:
        """The leader of the newest generation the live workers logged."""
        newest = (-1, "")
        for w in self.live():
            for m in _GENERATION.finditer(w.log.read_text(errors="replace")):
                newest = max(newest, (int(m.group(1)), m.group(2)))
        return next(w for w in self.live() if w.url == newest[1])

    def stop(self) -> None:
        for w in self.workers:
            w.stop()
        self.http.close()


def starts(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def settle(fleet: Fleet, connectors: int, tasks: int, starts_file: Path, quiet: float = 2.0) -> None:
    """Every task RUNNING on a live worker and no task start for ``quiet`` seconds."""
    wait_for(lambda: fleet.all_running(connectors, tasks), 120)
    seen, since = len(starts(starts_file)), time.monotonic()
    while time.monotonic() - since < quiet:
        time.sleep(0.1)
        now = len(starts(starts_file))
        if now != seen or not fleet.all_running(connectors, tasks):
            seen, since = now, time.monotonic()


def failover(
    fleet: Fleet, victim: DistributedWorkerProcess, connectors: int, tasks: int
) -> tuple[float, int]:
    """Seconds from SIGKILL until everything runs on the others; how many tasks it had."""
    had = sum(1 for w in fleet.owners().values() if w == victim.worker_id)
    victim.kill9()
    killed = time.monotonic()
    wait_for(lambda: fleet.all_running(connectors, tasks), 120, interval=0.02)
    return time.monotonic() - killed, had


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--session-timeout-ms", type=int, default=10_000)
    ap.add_argument("--connectors", type=int, default=4)
    ap.add_argument("--tasks", type=int, default=3)
    args = ap.parse_args()
    session_ms, n_conn, n_tasks = args.session_timeout_ms, args.connectors, args.tasks
    heartbeat_ms = max(session_ms // 3, 1)
    target = session_ms / 1000 + 2.0

    with tempfile.TemporaryDirectory(prefix="sluiceway-failover-") as tmp, broker_process() as (bootstrap, _):
        work = Path(tmp)
        print(f"session.timeout.ms={session_ms}, {n_conn} connectors x {n_tasks} tasks, 3 workers")
        baseline = consumer_group_failover(bootstrap, session_ms, heartbeat_ms)
        print(f"baseline: consumer group member killed -> partitions reassigned in {baseline:.2f} s")

        fleet = Fleet(work, bootstrap, session_ms)
        starts_file = work / "starts.txt"
        try:
            for _ in range(3):
                fleet.spawn()
            wait_for(lambda: all(w.healthy() for w in fleet.workers), 120)
            for i in range(n_conn):
                r = fleet.http.put(
                    fleet.workers[0].url + f"connectors/tick-{i}/config",
                    json={
                        "connector.class": "benchmarks._plugins.TickSourceConnector",
                        "tasks.max": str(n_tasks),
                        "topic": f"tick-{i}",
                        "interval.ms": "100",
                        "starts.file": str(starts_file),
                    },
                    timeout=60,
                )
                r.raise_for_status()
            settle(fleet, n_conn, n_tasks, starts_file)

            # A fourth worker joins.
            before, started_before = fleet.owners(), len(starts(starts_file))
            spawned = time.monotonic()
            fourth = fleet.spawn()
            wait_for(fourth.healthy, 120, interval=0.02)
            healthy = time.monotonic() - spawned
            share = (n_conn * n_tasks) // 4
            wait_for(
                lambda: (
                    fleet.all_running(n_conn, n_tasks)
                    and sum(w == fourth.worker_id for w in fleet.owners().values()) >= share
                ),
                120,
                interval=0.02,
            )
            joined = time.monotonic() - spawned
            settle(fleet, n_conn, n_tasks, starts_file)
            after = fleet.owners()
            moved = sum(1 for t, w in after.items() if before.get(t) != w)
            restarted = len(starts(starts_file)) - started_before
            print(
                f"join:     4th worker running its share ({share} tasks) {joined:.2f} s after spawn "
                f"(healthy after {healthy:.2f} s, share taken {joined - healthy:.2f} s later); "
                f"{moved} tasks moved, {restarted} tasks started"
            )

            leader = fleet.leader()
            victim = next(w for w in fleet.live() if w is not leader)
            took_follower, had_f = failover(fleet, victim, n_conn, n_tasks)
            settle(fleet, n_conn, n_tasks, starts_file)
            took_leader, had_l = failover(fleet, fleet.leader(), n_conn, n_tasks)
        finally:
            fleet.stop()

    print(f"failover: follower killed ({had_f} tasks) -> all RUNNING elsewhere in {took_follower:.2f} s")
    print(f"failover: leader killed ({had_l} tasks) -> all RUNNING elsewhere in {took_leader:.2f} s")
    print()
    print(f"target: failover <= session.timeout.ms + 2 s = {target:.1f} s")
    for what, took in (("follower", took_follower), ("leader", took_leader)):
        print(
            f"  {what:8s} {took:6.2f} s = {took / target:.2f}x target, "
            f"{took / baseline:.2f}x the consumer-group baseline ({baseline:.2f} s)"
        )
    print(f"  join: {restarted} tasks restarted for {moved} moved (target: only the moved ones)")


if __name__ == "__main__":
    main()
