"""A Connect cluster of separate processes: a broker and three distributed workers.

Connectors are created through a follower's REST API; workers are killed with
SIGKILL, restarted, rolled; the broker is restarted under them. Every line of every
source file must reach its sink file (at least once: none lost).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from sluiceway.embedded import DistributedWorkerProcess
from tests.support import ROOT, BrokerProcess, wait_until

pytestmark = pytest.mark.slow

PLUGINS = "tests.system.dist_plugins."


def worker(tmp: Path, name: str, bootstrap: str) -> DistributedWorkerProcess:
    return DistributedWorkerProcess(
        tmp,
        name,
        bootstrap,
        cwd=ROOT,
        **{
            "offset.storage.partitions": "5",
            "status.storage.partitions": "3",
            "session.timeout.ms": "6000",
            "heartbeat.interval.ms": "1000",
            "rebalance.timeout.ms": "20000",
            "scheduled.rebalance.max.delay.ms": "0",
            "offset.flush.interval.ms": "500",
            "task.shutdown.graceful.timeout.ms": "5000",
            # A killed worker's sink consumers leave their groups when their sessions end
            # (librdkafka's default is 45 s): as short as the worker's own.
            "consumer.session.timeout.ms": "6000",
            "consumer.heartbeat.interval.ms": "1000",
        },
    )


class Cluster:
    def __init__(self, tmp: Path, workers: int = 3) -> None:
        self.tmp = tmp
        self.broker = BrokerProcess(tmp / "broker").start()
        self.workers = [worker(tmp, f"w{i}", self.broker.bootstrap) for i in range(workers)]

    def start(self) -> Cluster:
        for w in self.workers:
            w.start()
        wait_until(lambda: all(w.healthy() for w in self.workers), 60, message="all workers healthy")
        return self

    def stop(self) -> None:
        for w in self.workers:
            w.stop()
        self.broker.stop()

    def live(self) -> list[DistributedWorkerProcess]:
        return [w for w in self.workers if w.alive()]

    def follower(self) -> DistributedWorkerProcess:
        """A worker that is not the leader (the leader may forward nothing: the test would
        not show that writes are forwarded)."""
        leader = leader_url(self.live())
        return next(w for w in self.live() if w.url != leader)

    def status(self, name: str) -> dict[str, Any]:
        for w in self.live():
            try:
                r = httpx.get(w.url + f"connectors/{name}/status", timeout=5)
            except httpx.HTTPError:
                continue
            if r.status_code == 200:
                return r.json()  # type: ignore[no-any-return]
        return {}

    def running_everywhere(self, names: list[str], tasks_each: int = 1) -> bool:
        live_ids = {w.worker_id for w in self.live()}
        for name in names:
            s = self.status(name)
            if not s or s["connector"]["state"] != "RUNNING" or s["connector"]["worker_id"] not in live_ids:
                return False
            if len(s["tasks"]) != tasks_each:
                return False
            if any(t["state"] != "RUNNING" or t["worker_id"] not in live_ids for t in s["tasks"]):
                return False
        return True


_GENERATION = re.compile(r"generation (\d+) as (?:leader|follower): .*\(leader (\S+)\)")


def leader_url(workers: list[DistributedWorkerProcess]) -> str:
    """The leader of the newest generation any worker logged (Kafka's REST API does not tell)."""
    newest = (-1, "")
    for w in workers:
        for m in _GENERATION.finditer(w.log.read_text()):
            newest = max(newest, (int(m.group(1)), m.group(2)))
    return newest[1]


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    c = Cluster(tmp_path).start()
    try:
        yield c
    finally:
        c.stop()


def lines_of(path: Path) -> set[str]:
    return set(path.read_text().splitlines()) if path.exists() else set()


def create_pipelines(c: Cluster, count: int, lines: int) -> list[tuple[Path, Path]]:
    """``count`` source → topic → sink pipelines, created through a follower's REST API."""
    follower = c.follower()
    pairs = []
    for i in range(count):
        src, out = c.tmp / f"in-{i}.txt", c.tmp / f"out-{i}.txt"
        src.write_text("".join(f"p{i}-line-{n:06d}\n" for n in range(lines)))
        for name, config in (
            (
                f"src-{i}",
                {
                    "connector.class": PLUGINS + "CountingSourceConnector",
                    "file": str(src),
                    "topic": f"topic-{i}",
                    "batch.size": "200",
                    "starts.file": str(c.tmp / "starts.txt"),
                },
            ),
            (
                f"sink-{i}",
                {
                    "connector.class": PLUGINS + "CountingSinkConnector",
                    "file": str(out),
                    "topics": f"topic-{i}",
                    "starts.file": str(c.tmp / "starts.txt"),
                },
            ),
        ):
            r = httpx.put(follower.url + f"connectors/{name}/config", json=config, timeout=30)
            assert r.status_code == 201, r.text
        pairs.append((src, out))
    return pairs


def names(count: int) -> list[str]:
    return [f"{kind}-{i}" for i in range(count) for kind in ("src", "sink")]


def all_delivered(pairs: list[tuple[Path, Path]]) -> bool:
    return all(lines_of(src) <= lines_of(out) for src, out in pairs)


def test_connectors_created_through_a_follower_run_across_the_cluster(cluster: Cluster) -> None:
    pairs = create_pipelines(cluster, 3, 2000)
    wait_until(lambda: cluster.running_everywhere(names(3)), 60, message="every connector and task RUNNING")
    wait_until(lambda: all_delivered(pairs), 60, message="every line in its sink")
    owners = {cluster.status(n)["tasks"][0]["worker_id"] for n in names(3)}
    assert len(owners) == 3, f"6 tasks on 3 workers should use them all, got {owners}"
    # Any worker answers any read.
    for w in cluster.workers:
        assert httpx.get(w.url + "connectors", timeout=5).json() == sorted(names(3))


def test_kill_9_moves_the_work_and_loses_no_line(cluster: Cluster) -> None:
    pairs = create_pipelines(cluster, 3, 100_000)
    wait_until(lambda: cluster.running_everywhere(names(3)), 60, message="every connector and task RUNNING")
    wait_until(lambda: any(len(lines_of(out)) > 5000 for _, out in pairs), 60, message="lines flowing")
    victim = next(w for w in cluster.workers if w.url != leader_url(cluster.live()))
    victim_tasks = [n for n in names(3) if cluster.status(n)["tasks"][0]["worker_id"] == victim.worker_id]
    assert victim_tasks, "the victim ran nothing"
    victim.kill9()
    wait_until(
        lambda: cluster.running_everywhere(names(3)), 60, message="the victim's tasks RUNNING elsewhere"
    )
    for n in victim_tasks:
        assert cluster.status(n)["tasks"][0]["worker_id"] != victim.worker_id
    wait_until(lambda: all_delivered(pairs), 120, message="every line in its sink after the failover")


def test_a_dead_leader_is_replaced_and_the_cluster_takes_writes(cluster: Cluster) -> None:
    pairs = create_pipelines(cluster, 3, 20_000)
    wait_until(lambda: cluster.running_everywhere(names(3)), 60, message="every connector and task RUNNING")
    old_leader = leader_url(cluster.live())
    leader = next(w for w in cluster.workers if w.url == old_leader)
    leader.kill9()
    wait_until(lambda: leader_url(cluster.live()) not in ("", old_leader), 60, message="a new leader elected")
    wait_until(lambda: cluster.running_everywhere(names(3)), 60, message="the old leader's work RUNNING")
    # Writes reach the new leader, forwarded by the follower that got them.
    follower = cluster.follower()
    r = httpx.put(follower.url + "connectors/sink-0/pause", timeout=30)
    assert r.status_code == 202, r.text
    src, out = cluster.tmp / "late.txt", cluster.tmp / "late-out.txt"
    src.write_text("".join(f"late-{n}\n" for n in range(100)))
    r = httpx.put(
        follower.url + "connectors/late-src/config",
        json={"connector.class": PLUGINS + "CountingSourceConnector", "file": str(src), "topic": "late"},
        timeout=30,
    )
    assert r.status_code == 201, r.text
    r = httpx.put(
        follower.url + "connectors/late-sink/config",
        json={"connector.class": PLUGINS + "CountingSinkConnector", "file": str(out), "topics": "late"},
        timeout=30,
    )
    assert r.status_code == 201, r.text
    wait_until(lambda: lines_of(src) <= lines_of(out), 60, message="the new pipeline's lines delivered")
    wait_until(
        lambda: cluster.status("sink-0").get("connector", {}).get("state") == "PAUSED",
        30,
        message="the pause applied",
    )
    r = httpx.put(follower.url + "connectors/sink-0/resume", timeout=30)
    assert r.status_code == 202, r.text
    wait_until(lambda: all_delivered(pairs), 120, message="every line in its sink after the leader died")


def test_a_returning_worker_gets_work_without_restarting_what_stays(cluster: Cluster) -> None:
    create_pipelines(cluster, 3, 1000)
    wait_until(lambda: cluster.running_everywhere(names(3)), 60, message="every connector and task RUNNING")
    leaving = cluster.workers[-1]
    leaving.stop()
    wait_until(lambda: cluster.running_everywhere(names(3)), 60, message="two workers running everything")
    before = {n: cluster.status(n)["tasks"][0]["worker_id"] for n in names(3)}
    starts_before = (cluster.tmp / "starts.txt").read_text().count("\n")
    leaving.start()
    wait_until(leaving.healthy, 60, message="the worker back")
    wait_until(
        lambda: (
            cluster.running_everywhere(names(3))
            and any(cluster.status(n)["tasks"][0]["worker_id"] == leaving.worker_id for n in names(3))
        ),
        60,
        message="work rebalanced back",
    )
    after = {n: cluster.status(n)["tasks"][0]["worker_id"] for n in names(3)}
    moved = [n for n in names(3) if after[n] != before[n]]
    assert moved and all(after[n] == leaving.worker_id for n in moved)
    restarts = (cluster.tmp / "starts.txt").read_text().count("\n") - starts_before
    assert restarts == len(moved), f"{len(moved)} tasks moved but {restarts} tasks started"


def test_rolling_restart_of_every_worker_loses_no_line(cluster: Cluster) -> None:
    pairs = create_pipelines(cluster, 2, 50_000)
    wait_until(lambda: cluster.running_everywhere(names(2)), 60, message="every connector and task RUNNING")
    for w in cluster.workers:
        w.stop()
        wait_until(lambda: cluster.running_everywhere(names(2)), 60, message=f"work off {w.name}")
        w.start()
        wait_until(w.healthy, 60, message=f"{w.name} back")
    wait_until(lambda: cluster.running_everywhere(names(2)), 60, message="every connector and task RUNNING")
    wait_until(lambda: all_delivered(pairs), 120, message="every line in its sink after the rolling restart")


def test_workers_ride_out_a_broker_restart(cluster: Cluster) -> None:
    pairs = create_pipelines(cluster, 2, 1000)
    wait_until(lambda: all_delivered(pairs), 60, message="the first lines delivered")
    cluster.broker.terminate()
    time.sleep(2)
    cluster.broker.start()
    # New lines appended while and after the broker was away still arrive.
    for i, (src, _) in enumerate(pairs):
        with open(src, "a") as f:
            f.write("".join(f"p{i}-late-{n:04d}\n" for n in range(500)))
    wait_until(
        lambda: cluster.running_everywhere(names(2)), 90, message="every connector and task RUNNING again"
    )
    wait_until(lambda: all_delivered(pairs), 90, message="the late lines delivered")
