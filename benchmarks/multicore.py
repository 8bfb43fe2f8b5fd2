"""Four CPU-heavy tasks on one host: a distributed worker as one process, against the same
cluster as ``--processes 2`` (two worker processes, one core each), in the same run.

    python benchmarks/multicore.py [--lines 200000] [--rounds 3] [--processes 2]

Each of four FileStreamSource connectors (one task each) reads its own file through the
five-SMT chain of ``benchmarks/transforms.py`` into its own topic, JSON values without
schemas: Python work per record, bound to one core per interpreter by the GIL. The
broker runs in its own process, as it would beside a cluster. Throughput is all four
topics' records over the time from the first record to the last; medians over
interleaved rounds. The cores the workers and the broker keep busy are printed too, and
the ceiling they set: the broker shares the machine, so N processes reach at most
``cores / (cores busy with one process)`` times one process, whatever the workers do.

Target (issue #22): four tasks on 2 cores with the multi-core mode >= 1.6x one process.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
import psutil

from benchmarks._common import ROOT, broker_process, cpu_count
from benchmarks._worker import close_watermarks, end_offset, free_port, timed
from benchmarks.transforms import CHAIN

JSON = "org.apache.kafka.connect.json.JsonConverter"
TASKS = 4


class Cluster:
    """``connect-distributed --processes N`` on a group and storage topics of its own."""

    def __init__(self, work: Path, bootstrap: str, processes: int) -> None:
        group = f"bench-{uuid.uuid4().hex[:8]}"
        self.port = free_port()
        self.ports = [self.port + i for i in range(processes)]
        props = work / f"{group}.properties"
        props.write_text(
            "\n".join(
                [
                    f"bootstrap.servers={bootstrap}",
                    f"group.id={group}",
                    f"config.storage.topic={group}-configs",
                    f"offset.storage.topic={group}-offsets",
                    f"status.storage.topic={group}-status",
                    "config.storage.replication.factor=1",
                    "offset.storage.replication.factor=1",
                    "status.storage.replication.factor=1",
                    "key.converter=org.apache.kafka.connect.storage.StringConverter",
                    "value.converter=org.apache.kafka.connect.storage.StringConverter",
                    "offset.flush.interval.ms=10000",
                    "scheduled.rebalance.max.delay.ms=0",
                    f"listeners=http://127.0.0.1:{self.port}",
                ]
            )
            + "\n"
        )
        self.log = open(work / f"{group}.log", "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "connect.distributed",
                str(props),
                "--processes",
                str(processes),
                "--log-level",
                "WARNING",
            ],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=self.log,
        )
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.time() + 90
        while time.time() < deadline:
            if all(self._healthy(p) for p in self.ports):
                return
            time.sleep(0.2)
        raise RuntimeError("workers did not start")

    @staticmethod
    def _healthy(port: int) -> bool:
        try:
            return httpx.get(f"http://127.0.0.1:{port}/connectors", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def request(self, method: str, path: str, body: object = None) -> httpx.Response:
        deadline = time.time() + 60
        while True:
            r = httpx.request(method, self.url + path, json=body, timeout=60)
            if r.status_code < 300:
                return r
            if r.status_code != 409 or time.time() > deadline:  # 409: a rebalance under way
                raise RuntimeError(f"{method} {path}: {r.status_code} {r.text}")
            time.sleep(0.5)

    def tasks(self, names: list[str]) -> list[tuple[str, str]]:
        """(state, worker id) of every task of these connectors."""
        return [
            (task["state"], task["worker_id"])
            for name in names
            for task in httpx.get(f"{self.url}/connectors/{name}/status", timeout=10).json().get("tasks", [])
        ]

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(120)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def _cpu_seconds(*procs: psutil.Process) -> float:
    """User and system CPU seconds of these processes and their children so far."""
    total = 0.0
    for proc in procs:
        for p in [proc, *proc.children(recursive=True)]:
            try:
                t = p.cpu_times()
            except psutil.NoSuchProcess:
                continue
            total += t.user + t.system
    return total


def run(
    work: Path, bootstrap: str, content: bytes, n: int, processes: int, broker: psutil.Process
) -> tuple[float, int, float, float]:
    """Seconds from the first record to the last, how many workers ran the tasks, and the
    cores the workers and the broker kept busy meanwhile (CPU seconds per second)."""
    cluster = Cluster(work, bootstrap, processes)
    try:
        run_id = uuid.uuid4().hex[:6]
        files = [work / f"input-{run_id}-{i}.txt" for i in range(TASKS)]
        topics = [f"mc-{run_id}-{i}" for i in range(TASKS)]
        names = [f"src-{run_id}-{i}" for i in range(TASKS)]
        # The sources start on empty files, which are filled once every task runs, so the
        # timing is the work, not the rebalances that spread the connectors as they come.
        for src in files:
            src.write_bytes(b"")
        for name, topic, src in zip(names, topics, files, strict=True):
            config = {
                "connector.class": "FileStreamSource",
                "file": str(src),
                "topic": topic + "-raw",
                "batch.size": "2000",
                "value.converter": JSON,
                "value.converter.schemas.enable": "false",
                **CHAIN,
            }
            cluster.request("PUT", f"/connectors/{name}/config", {**config, "name": name})
        deadline = time.time() + 120
        while not (len(tasks := cluster.tasks(names)) == TASKS and all(s == "RUNNING" for s, _ in tasks)):
            if time.time() > deadline:
                raise RuntimeError(f"tasks not all running: {tasks}")
            time.sleep(0.2)
        time.sleep(1)  # the last rebalance settles
        workers = psutil.Process(cluster.proc.pid)
        cpu_workers, cpu_broker, started = _cpu_seconds(workers), _cpu_seconds(broker), time.perf_counter()
        for src in files:
            src.write_bytes(content)
        outs = [t + "-clean" for t in topics]
        _, seconds = timed(
            lambda: any(end_offset(bootstrap, t) > 0 for t in outs),
            lambda: all(end_offset(bootstrap, t) >= n for t in outs),
            600,
        )
        wall = time.perf_counter() - started
        return (
            seconds,
            len({worker for _, worker in cluster.tasks(names)}),
            (_cpu_seconds(workers) - cpu_workers) / wall,
            (_cpu_seconds(broker) - cpu_broker) / wall,
        )
    finally:
        cluster.stop()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=200_000, help="lines per task's file")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--processes", type=int, default=2)
    args = ap.parse_args()
    n = args.lines
    single, multi = [], []
    spread = 0
    cores: dict[int, list[tuple[float, float]]] = {1: [], args.processes: []}
    with tempfile.TemporaryDirectory(prefix="sluiceway-multicore-") as tmp:
        work = Path(tmp)
        content = "".join(f"{j:07d} {'x' * 91}\n" for j in range(n)).encode()
        with broker_process() as (bootstrap, broker):
            proc = psutil.Process(broker.pid)
            try:
                for _ in range(args.rounds):
                    seconds, _, on_workers, on_broker = run(work, bootstrap, content, n, 1, proc)
                    single.append(seconds)
                    cores[1].append((on_workers, on_broker))
                    seconds, spread, on_workers, on_broker = run(
                        work, bootstrap, content, n, args.processes, proc
                    )
                    multi.append(seconds)
                    cores[args.processes].append((on_workers, on_broker))
            finally:
                close_watermarks()
    total = TASKS * n
    one, many = statistics.median(single), statistics.median(multi)
    print(f"{TASKS} file sources x {n:,} lines, 5-SMT chain, JSON values; {cpu_count()} cores")
    print(f"median of {args.rounds} interleaved rounds")
    print(f"one worker process:            {total / one:>10,.0f} records/s ({one:.2f} s)")
    print(
        f"--processes {args.processes} ({spread} workers):  {total / many:>10,.0f} records/s ({many:.2f} s)"
    )
    for k, label in ((1, "one worker process"), (args.processes, f"--processes {args.processes}")):
        w = statistics.median(c[0] for c in cores[k])
        b = statistics.median(c[1] for c in cores[k])
        print(f"cores busy, {label}: workers {w:.2f}, broker {b:.2f}, together {w + b:.2f}")
    # The broker shares the machine's cores: with one process it takes b1 beside the worker's
    # w1, and its share grows with throughput, so N processes can reach at most about
    # cores / (w1 + b1) times one process, whatever the workers do.
    w1 = statistics.median(c[0] for c in cores[1])
    b1 = statistics.median(c[1] for c in cores[1])
    print(
        f"ceiling on these {cpu_count()} cores with the broker beside the workers: "
        f"{cpu_count() / (w1 + b1):.2f}x"
    )
    ratios = ", ".join(f"{s / m:.2f}" for s, m in zip(single, multi, strict=True))
    print(f"ratio --processes {args.processes} / one: {one / many:.2f}x  (target >= 1.6; rounds: {ratios})")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
