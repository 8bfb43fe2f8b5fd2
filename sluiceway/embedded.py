"""Test a plugin against a real broker and a real worker, in your test process.

``EmbeddedConnect`` starts Sluiceway's broker and a standalone worker (REST API
included) on ephemeral ports, on a background thread, and stops both afterwards. It
is Kafka's ``EmbeddedConnectCluster`` for Python plugin authors::

    import pytest
    from sluiceway.embedded import EmbeddedConnect

    @pytest.fixture
    def connect(tmp_path):
        with EmbeddedConnect(tmp_path) as c:
            yield c

    def test_my_source(connect):
        connect.create_connector("src", {"connector.class": "mypkg.MySourceConnector", "topic": "out"})
        connect.wait_for_running("src", tasks=1)
        assert connect.consume("out", 10)  # ten records arrived

Nothing is faked: records go through the Kafka protocol, offsets to the offset
file, statuses to the worker's status store.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Coroutine, Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import httpx
import orjson
from confluent_kafka import OFFSET_BEGINNING, Consumer, Message, Producer, TopicPartition

from connect.runtime.config import StandaloneConfig
from connect.standalone import StandaloneRuntime, start

T = TypeVar("T")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _ConnectClient:
    """REST and Kafka shortcuts shared by the single worker and the cluster."""

    bootstrap: str

    def _http(self) -> httpx.Client:
        raise NotImplementedError

    # -- REST shortcuts -------------------------------------------------------------

    def request(self, method: str, path: str, body: Any = None) -> httpx.Response:
        content = orjson.dumps(body) if body is not None else None
        return self._http().request(
            method, path, content=content, headers={"content-type": "application/json"}
        )

    def create_connector(self, name: str, config: Mapping[str, str]) -> dict[str, Any]:
        r = self.request("PUT", f"/connectors/{name}/config", {**config, "name": name})
        if r.status_code not in (200, 201):
            raise AssertionError(f"creating {name} failed: {r.status_code} {r.text}")
        return r.json()  # type: ignore[no-any-return]

    def status(self, name: str) -> dict[str, Any]:
        return self.request("GET", f"/connectors/{name}/status").json()  # type: ignore[no-any-return]

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 30, what: str = "a condition") -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return
            time.sleep(0.05)
        raise AssertionError(f"timed out after {timeout} s waiting for {what}")

    def wait_for_state(
        self,
        name: str,
        state: str,
        tasks: int | None = None,
        task_state: str | None = None,
        timeout: float = 30,
    ) -> dict[str, Any]:
        """Wait until the connector is in ``state`` with ``tasks`` tasks (all in ``task_state``,
        default the same state)."""
        wanted_task = task_state or state
        last: dict[str, Any] = {}

        def done() -> bool:
            nonlocal last
            r = self.request("GET", f"/connectors/{name}/status")
            if r.status_code != 200:
                return False
            last = r.json()
            if last["connector"]["state"] != state:
                return False
            if tasks is not None and len(last["tasks"]) != tasks:
                return False
            return all(t["state"] == wanted_task for t in last["tasks"])

        try:
            self.wait_for(done, timeout, f"{name} to be {state}")
        except AssertionError:
            raise AssertionError(
                f"{name} did not reach {state} ({tasks} tasks): last status {last}"
            ) from None
        return last

    def wait_for_running(self, name: str, tasks: int = 1, timeout: float = 30) -> dict[str, Any]:
        return self.wait_for_state(name, "RUNNING", tasks, timeout=timeout)

    # -- Kafka shortcuts --------------------------------------------------------------

    def produce(
        self,
        topic: str,
        records: Iterable[tuple[bytes | str | None, bytes | str | None]],
        headers: list[tuple[str, str | bytes | None]] | None = None,
    ) -> None:
        p = Producer({"bootstrap.servers": self.bootstrap, "linger.ms": 2})
        for key, value in records:
            p.produce(topic, key=key, value=value, headers=headers)
        if p.flush(30):
            raise AssertionError("records were not delivered")

    def consume(self, topic: str, count: int, timeout: float = 30, partitions: int = 1) -> list[Message]:
        """Read ``count`` records from the start of ``topic`` (fails if fewer arrive in time)."""
        c = Consumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": f"test-{uuid.uuid4().hex}",
                "enable.auto.commit": False,
            }
        )
        c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
        out: list[Message] = []
        deadline = time.monotonic() + timeout
        try:
            while len(out) < count and time.monotonic() < deadline:
                for m in c.consume(count - len(out), 0.2):
                    if m.error() is None:
                        out.append(m)
        finally:
            c.close()
        if len(out) < count:
            raise AssertionError(f"only {len(out)} of {count} records arrived on {topic}")
        return out


class EmbeddedConnect(_ConnectClient):
    def __init__(
        self,
        work_dir: str | Path,
        worker_config: Mapping[str, str] | None = None,
        bootstrap_servers: str | None = None,
        http_options: Mapping[str, Any] | None = None,
    ) -> None:
        """A worker (and, unless ``bootstrap_servers`` names an existing cluster, a broker).
        ``http_options`` go to the ``httpx.Client`` of the REST shortcuts (``verify``,
        ``cert``, ``auth``... for a worker with https or authentication)."""
        self.work_dir = Path(work_dir)
        self.work_dir.mkdir(parents=True, exist_ok=True)
        embedded = bootstrap_servers is None
        self.bootstrap = bootstrap_servers or f"127.0.0.1:{free_port()}"
        self.config_values: dict[str, str] = {
            "bootstrap.servers": self.bootstrap,
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            "offset.storage.file.filename": str(self.work_dir / "connect.offsets"),
            "offset.flush.interval.ms": "500",
            "listeners": "http://127.0.0.1:0",
            "task.shutdown.graceful.timeout.ms": "10000",
            "embedded.broker.enable": "true" if embedded else "false",
            "embedded.broker.log.dirs": str(self.work_dir / "broker"),
            **(worker_config or {}),
        }
        self.http_options = dict(http_options or {})
        self.runtime: StandaloneRuntime | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self.http: httpx.Client | None = None

    # -- lifecycle ----------------------------------------------------------------------

    def start(self) -> EmbeddedConnect:
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                self.runtime = loop.run_until_complete(start(StandaloneConfig.parse(self.config_values)))
            except BaseException as exc:
                failure.append(exc)
                ready.set()
                loop.close()
                return
            ready.set()
            try:
                loop.run_until_complete(self.runtime.stopped.wait())
            finally:
                loop.close()

        self._thread = threading.Thread(target=run, name="embedded-connect", daemon=True)
        self._thread.start()
        ready.wait(120)
        if failure:
            raise failure[0]
        if self.runtime is None:
            raise TimeoutError("the worker did not start within 120 s")
        self.http = httpx.Client(base_url=self.url, timeout=120, **self.http_options)
        return self

    def stop(self) -> None:
        if self.http is not None:
            self.http.close()
        if (
            self.runtime is not None
            and self._loop is not None
            and self._thread is not None
            and self._thread.is_alive()
        ):
            asyncio.run_coroutine_threadsafe(self.runtime.stop(), self._loop).result(120)
            self._thread.join(30)

    def __enter__(self) -> EmbeddedConnect:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self.runtime is not None
        return self.runtime.url

    def call(self, coro: Coroutine[Any, Any, T], timeout: float = 120) -> T:
        """Run a coroutine on the worker's event loop (e.g. a herder method) and wait."""
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def _http(self) -> httpx.Client:
        assert self.http is not None, "the worker is not started"
        return self.http


def distributed_worker_defaults(bootstrap: str) -> dict[str, str]:
    """A test cluster's worker config: one group, its three storage topics on a single
    broker, string converters."""
    return {
        "bootstrap.servers": bootstrap,
        "group.id": "connect-cluster",
        "config.storage.topic": "connect-configs",
        "offset.storage.topic": "connect-offsets",
        "status.storage.topic": "connect-status",
        "config.storage.replication.factor": "1",
        "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
    }


class EmbeddedConnectCluster(_ConnectClient):
    """A broker and ``workers`` distributed workers of one Connect cluster, in this process
    (Kafka's ``EmbeddedConnectCluster``)::

        with EmbeddedConnectCluster(tmp_path, workers=3) as cluster:
            cluster.create_connector("src", {...})      # through a worker's REST API
            cluster.stop_worker(1)                      # its work moves to the others
            cluster.start_worker()                      # a new worker joins and takes a share

    Requests go to ``worker`` (an index into ``workers``), the first live worker by default.
    With ``bootstrap_servers`` the workers use those brokers (Apache Kafka, say) instead of
    a broker of their own.
    """

    def __init__(
        self,
        work_dir: str | Path,
        workers: int = 3,
        worker_config: Mapping[str, str] | None = None,
        bootstrap_servers: str | None = None,
        http_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.work_dir = Path(work_dir)
        self.http_options = dict(http_options or {})
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.external_brokers = bootstrap_servers is not None
        self.bootstrap = bootstrap_servers or f"127.0.0.1:{free_port()}"
        self.size = workers
        self.config_values: dict[str, str] = {
            **distributed_worker_defaults(self.bootstrap),
            "offset.storage.partitions": "5",
            "status.storage.partitions": "3",
            "offset.flush.interval.ms": "500",
            "listeners": "http://127.0.0.1:0",
            "session.timeout.ms": "6000",
            "heartbeat.interval.ms": "1000",
            "scheduled.rebalance.max.delay.ms": "0",
            "task.shutdown.graceful.timeout.ms": "10000",
            **(worker_config or {}),
        }
        self.workers: list[Any] = []  # DistributedRuntime, or None for a stopped worker
        self._broker: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._clients: dict[str, httpx.Client] = {}
        self.worker = 0

    # -- lifecycle ----------------------------------------------------------------------

    def start(self) -> EmbeddedConnectCluster:
        from connect.runtime.config import DistributedConfig
        from connect.runtime.embedded_broker import start_embedded_broker

        if not self.external_brokers:
            self._broker = start_embedded_broker(
                DistributedConfig.parse(
                    {
                        **self.config_values,
                        "embedded.broker.enable": "true",
                        "embedded.broker.log.dirs": str(self.work_dir / "broker"),
                    }
                )
            )
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(target=loop.run_forever, name="embedded-cluster", daemon=True)
        self._thread.start()
        for _ in range(self.size):
            self.start_worker()
        self.wait_for(
            lambda: all(self.request("GET", "/health", worker=i).status_code == 200 for i in self.live()),
            60,
            "every worker to join the cluster",
        )
        return self

    def start_worker(self) -> int:
        """Start one more worker; returns its index."""
        from connect.distributed import start as start_distributed
        from connect.runtime.config import DistributedConfig

        config = DistributedConfig.parse(self.config_values)
        runtime = self.call(start_distributed(config))
        self.workers.append(runtime)
        return len(self.workers) - 1

    def stop_worker(self, index: int) -> None:
        """Stop a worker gracefully (it leaves the group; its work moves)."""
        runtime = self.workers[index]
        if runtime is not None:
            self.call(runtime.stop())
            self.workers[index] = None
        client = self._clients.pop(str(index), None)
        if client is not None:
            client.close()

    def stop(self) -> None:
        # All at once: stopped one by one, each but the last would first rebalance its work
        # onto the others (seconds each) only for them to stop too.
        live = [w for w in self.workers if w is not None]
        if live:

            async def stop_all() -> None:
                await asyncio.gather(*(w.stop() for w in live))

            self.call(stop_all())
        self.workers = [None] * len(self.workers)
        for client in self._clients.values():
            client.close()
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(30)
            self._loop.close()
        if self._broker is not None:
            self._broker.stop()

    def __enter__(self) -> EmbeddedConnectCluster:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def call(self, coro: Coroutine[Any, Any, T], timeout: float = 120) -> T:
        """Run a coroutine on the cluster's event loop (a herder method, a worker's start)."""
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    # -- workers ------------------------------------------------------------------------

    def live(self) -> list[int]:
        return [i for i, w in enumerate(self.workers) if w is not None]

    def url(self, index: int) -> str:
        return str(self.workers[index].url)

    def leader(self) -> int:
        """The index of the worker that leads the group now."""
        for i in self.live():
            if self.workers[i].herder.is_leader:
                return i
        raise AssertionError("no worker leads the group")

    def settled(self) -> bool:
        """Whether the cluster is at rest: every live worker in the same generation with no
        rebalance pending, and between them running each configured connector and task once.
        (Statuses alone cannot tell: a task being moved still shows RUNNING until it stops.)"""
        herders = [self.workers[i].herder for i in self.live()]
        if not herders or any(h.rebalance_pending for h in herders):
            return False
        if len({h.generation for h in herders}) != 1:
            return False
        wanted = herders[0].configured_work()
        connectors = [c for h in herders for c in h.allocation.connectors]
        tasks = [t for h in herders for t in h.allocation.tasks]
        return (
            len(connectors) == len(set(connectors))
            and set(connectors) == wanted.connectors
            and len(tasks) == len(set(tasks))
            and set(tasks) == wanted.tasks
        )

    def follower(self) -> int:
        leader = self.leader()
        return next(i for i in self.live() if i != leader)

    def client(self, index: int) -> httpx.Client:
        """An HTTP client for worker ``index``'s REST API."""
        client = self._clients.get(str(index))
        if client is None:
            client = self._clients[str(index)] = httpx.Client(
                base_url=self.url(index), timeout=120, **self.http_options
            )
        return client

    def request(self, method: str, path: str, body: Any = None, worker: int | None = None) -> httpx.Response:
        index = self.worker if worker is None else worker
        if self.workers[index] is None:
            index = self.live()[0]
        content = orjson.dumps(body) if body is not None else None
        return self.client(index).request(
            method, path, content=content, headers={"content-type": "application/json"}
        )


class DistributedWorkerProcess:
    """``python -m connect.distributed`` in a child process, with its own properties file,
    REST port and log: for tests and benchmarks that kill workers (``kill9``) or restart
    them, which an in-process cluster cannot do.

    ``cwd`` is where the child runs (plugins importable from there load by class name).
    """

    def __init__(
        self, work_dir: str | Path, name: str, bootstrap: str, cwd: str | Path | None = None, **config: str
    ) -> None:
        work = Path(work_dir)
        work.mkdir(parents=True, exist_ok=True)
        self.name = name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.props = work / f"{name}.properties"
        self.log = work / f"{name}.log"
        self.cwd = Path(cwd) if cwd is not None else Path.cwd()
        values = {
            **distributed_worker_defaults(bootstrap),
            "listeners": f"http://127.0.0.1:{self.port}",
            **config,
        }
        self.props.write_text("".join(f"{k}={v}\n" for k, v in values.items()))
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def worker_id(self) -> str:
        """The id the worker reports in statuses (its advertised host:port)."""
        return f"127.0.0.1:{self.port}"

    def start(self) -> DistributedWorkerProcess:
        with open(self.log, "ab") as log:  # the child keeps its own descriptor
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "connect.distributed", str(self.props)],
                cwd=self.cwd,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        return self

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def healthy(self) -> bool:
        """The REST API answers /health with 200 (the worker has joined its cluster)."""
        try:
            return httpx.get(self.url + "health", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def kill9(self) -> None:
        """SIGKILL: no leave-group, no task shutdown, no offset flush."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self, timeout: float = 60) -> None:
        """SIGTERM, the graceful shutdown (leave the group, stop tasks, flush offsets)."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
