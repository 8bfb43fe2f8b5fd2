"""A standalone worker process for connector benchmarks, and the topic helpers they share."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx
from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from benchmarks._common import ROOT


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Worker:
    """A standalone worker process with its REST API on a free port."""

    def __init__(self, work: Path, bootstrap: str, settings: dict[str, str] | None = None) -> None:
        """``settings`` are worker keys added to (or replacing) the defaults below."""
        self.port = free_port()
        values = {
            "bootstrap.servers": bootstrap,
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            "offset.storage.file.filename": str(work / "offsets.json"),
            "offset.flush.interval.ms": "10000",
            "listeners": f"http://127.0.0.1:{self.port}",
            **(settings or {}),
        }
        props = work / "worker.properties"
        props.write_text("".join(f"{k}={v}\n" for k, v in values.items()))
        self.log_path = work / "worker.log"
        self.log = open(self.log_path, "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "connect.standalone", str(props), "--log-level", "WARNING"],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=self.log,
        )
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                if httpx.get(self.url + "/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"worker did not start; see {self.log_path}")

    def create(self, name: str, config: dict[str, str]) -> None:
        r = httpx.put(f"{self.url}/connectors/{name}/config", json={**config, "name": name}, timeout=60)
        if r.status_code not in (200, 201):
            raise RuntimeError(f"creating {name}: {r.status_code} {r.text}")

    def status(self, name: str) -> str:
        try:
            return httpx.get(f"{self.url}/connectors/{name}/status", timeout=10).text
        except httpx.HTTPError as exc:
            return str(exc)

    def delete(self, name: str) -> None:
        httpx.delete(f"{self.url}/connectors/{name}", timeout=60)

    def rss_mb(self) -> float:
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return float("nan")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


_watermarks: dict[str, Consumer] = {}


def end_offset(bootstrap: str, topic: str) -> int:
    """The topic's end offset (one long-lived client, so watching costs little CPU)."""
    c = _watermarks.get(bootstrap)
    if c is None:
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-watermarks"})
        _watermarks[bootstrap] = c
    try:
        return int(c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10, cached=False)[1])
    except KafkaException as exc:
        if exc.args[0].code() == KafkaError._UNKNOWN_PARTITION:
            # A topic its connector has not created yet. The client would keep believing
            # that; the next call asks with a fresh one.
            _watermarks.pop(bootstrap).close()
            return 0
        raise


def close_watermarks() -> None:
    """Close the watching clients (before the broker goes, or they log its absence)."""
    while _watermarks:
        _watermarks.popitem()[1].close()


def timed(start_condition, end_condition, timeout: float, interval: float = 0.02) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """(seconds until the first record showed, seconds from then until the last)."""
    begin = time.perf_counter()
    first = None
    deadline = begin + timeout
    while time.perf_counter() < deadline:
        now = time.perf_counter()
        if first is None and start_condition():
            first = now
        if first is not None and end_condition():
            return first - begin, time.perf_counter() - first
        time.sleep(interval)
    raise TimeoutError("benchmark step did not finish in time")


def wait_for(predicate, timeout: float, interval: float = 0.05) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise TimeoutError("benchmark step did not finish in time")


def create_topic(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(topic, 1, 1)]).values():
        f.result(30)
