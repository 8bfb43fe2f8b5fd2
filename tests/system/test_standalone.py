"""Standalone workers as separate processes: kill -9 mid-stream, start-up errors, Kafka's configs."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.support import ROOT, BrokerProcess, StandaloneWorkerProcess, free_port, wait_until, write_props

pytestmark = pytest.mark.slow


def worker_props(tmp: Path, bootstrap: str, rest_port: int, **extra: str) -> Path:
    return write_props(
        tmp / "worker.properties",
        {
            "bootstrap.servers": bootstrap,
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            "offset.storage.file.filename": str(tmp / "offsets.json"),
            "offset.flush.interval.ms": "200",
            "listeners": f"http://127.0.0.1:{rest_port}",
            **extra,
        },
    )


def run_standalone(*files: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "connect.standalone", *map(str, files)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def line_count(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def test_kill_9_mid_stream_loses_no_line(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "broker").start()
    rest = free_port()
    source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
    n = 200_000
    source.write_text("".join(f"line-{i:06d}\n" for i in range(n)))
    files = [
        # The killed worker's sink consumer holds the partition until its session times out:
        # librdkafka's 45 s default would make each restart wait that long.
        worker_props(tmp_path, broker.bootstrap, rest, **{"consumer.session.timeout.ms": "6000"}),
        write_props(
            tmp_path / "source.properties",
            {
                "name": "src",
                "connector.class": "FileStreamSource",
                "file": str(source),
                "topic": "lines",
                "batch.size": "500",
            },
        ),
        write_props(
            tmp_path / "sink.properties",
            {"name": "sink", "connector.class": "FileStreamSink", "file": str(sink), "topics": "lines"},
        ),
    ]
    try:
        for round_ in range(2):
            w = StandaloneWorkerProcess(*files).start()
            # Kill while lines are still flowing.
            target = (round_ + 1) * 20_000
            wait_until(lambda t=target: line_count(sink) > t, 60, message="lines flowing")
            w.kill9()
            assert line_count(sink) < n, "the pipeline finished before it could be interrupted"
        w = StandaloneWorkerProcess(*files).start()
        wait_until(
            lambda: line_count(sink) >= n and _all_present(sink, n),
            120,
            interval=0.5,
            message="every line in the sink",
        )
        assert w.stop() == 0
        got = sink.read_text().splitlines()
        assert set(got) == {f"line-{i:06d}" for i in range(n)}  # none lost; some may repeat (at least once)
        # Order is kept: the first appearance of each line follows the file's order.
        first = list(dict.fromkeys(got))
        assert first == [f"line-{i:06d}" for i in range(n)]
    finally:
        broker.stop()


def _all_present(sink: Path, n: int) -> bool:
    return len(set(sink.read_text().splitlines())) == n


def test_kafka_sample_configs_with_java_class_names(tmp_path: Path) -> None:
    """Kafka's own config/connect-*.properties, with only paths and addresses changed."""
    broker = BrokerProcess(tmp_path / "broker").start()
    rest = free_port()
    (tmp_path / "test.txt").write_text("foo\nbar\n")

    def adapted(name: str, changes: dict[str, str]) -> Path:
        text = (ROOT / "config" / name).read_text()
        lines = []
        for line in text.splitlines():
            key = line.split("=", 1)[0]
            lines.append(f"{key}={changes.pop(key)}" if key in changes else line)
        lines += [f"{k}={v}" for k, v in changes.items()]
        out = tmp_path / name
        out.write_text("\n".join(lines) + "\n")
        return out

    worker = adapted(
        "connect-standalone.properties",
        {
            "bootstrap.servers": broker.bootstrap,
            "offset.storage.file.filename": str(tmp_path / "connect.offsets"),
            "listeners": f"http://127.0.0.1:{rest}",
        },
    )
    source = adapted(
        "connect-file-source.properties",
        {
            "file": str(tmp_path / "test.txt"),
            "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
        },
    )
    sink = adapted(
        "connect-file-sink.properties",
        {
            "file": str(tmp_path / "test.sink.txt"),
            "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
            "transforms": "mark",
            "transforms.mark.type": "org.apache.kafka.connect.transforms.RegexRouter",
            "transforms.mark.regex": "connect-(.*)",
            "transforms.mark.replacement": "routed-$1",
        },
    )
    w = StandaloneWorkerProcess(worker, source, sink).start()
    try:
        out = tmp_path / "test.sink.txt"
        wait_until(lambda: line_count(out) == 2, 60, message="both lines in the sink")
        # JsonConverter with schemas: the sink sees the string payloads.
        assert out.read_text().splitlines() == ["foo", "bar"]
        status = httpx.get(f"http://127.0.0.1:{rest}/connectors?expand=status", timeout=10).json()
        assert status["local-file-source"]["status"]["connector"]["state"] == "RUNNING"
        assert status["local-file-sink"]["status"]["tasks"][0]["state"] == "RUNNING"
        topics = httpx.get(f"http://127.0.0.1:{rest}/connectors/local-file-source/topics", timeout=10).json()
        assert topics == {"local-file-source": {"topics": ["connect-test"]}}
        assert w.stop() == 0
    finally:
        if w.proc is not None and w.proc.poll() is None:
            w.proc.kill()
        broker.stop()


def test_startup_errors_name_file_line_and_key(tmp_path: Path) -> None:
    good = worker_props(tmp_path, "127.0.0.1:1", free_port())
    # A worker file missing a required key and with a bad value.
    bad_worker = tmp_path / "bad-worker.properties"
    bad_worker.write_text(
        "bootstrap.servers=127.0.0.1:1\n# comment\nvalue.converter=x\n"
        "offset.flush.interval.ms=soon\noffset.storage.file.filename=/tmp/x\n"
    )
    r = run_standalone(bad_worker)
    assert r.returncode == 1
    assert f"{bad_worker}:4: offset.flush.interval.ms" in r.stderr
    assert "key.converter" in r.stderr and "Missing required configuration" in r.stderr
    # A syntax error (bad unicode escape) names the file and line.
    broken = tmp_path / "broken.properties"
    broken.write_text("name=x\nfile=\\uZZZZ\n")
    r = run_standalone(good, broken)
    assert r.returncode == 1 and f"{broken}:2" in r.stderr
    # A connector file without a class.
    nameless = write_props(tmp_path / "nameless.properties", {"name": "n"})
    r = run_standalone(good, nameless)
    assert r.returncode == 1 and "connector.class" in r.stderr and str(nameless) in r.stderr


def test_connector_validation_errors_name_file_line_and_key(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "broker").start()
    try:
        worker = worker_props(tmp_path, broker.bootstrap, free_port())
        connector = tmp_path / "sink.properties"
        connector.write_text("name=sink\nconnector.class=FileStreamSink\n# no topics\ntasks.max=zero\n")
        r = run_standalone(worker, connector)
        assert r.returncode == 1
        assert f"{connector}:4: tasks.max" in r.stderr
        assert "Must configure one of topics or topics.regex" in r.stderr
        unknown = write_props(
            tmp_path / "unknown.properties", {"name": "u", "connector.class": "NoSuchConnector"}
        )
        r = run_standalone(worker, unknown)
        assert r.returncode == 1
        assert "NoSuchConnector" in r.stderr and "FileStreamSourceConnector" in r.stderr  # lists what exists
    finally:
        broker.stop()


def test_sigterm_stops_cleanly_and_commits_offsets(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "broker").start()
    try:
        source = tmp_path / "in.txt"
        source.write_text("".join(f"{i}\n" for i in range(1000)))
        rest = free_port()
        files = [
            worker_props(tmp_path, broker.bootstrap, rest, **{"offset.flush.interval.ms": "600000"}),
            write_props(
                tmp_path / "src.properties",
                {"name": "src", "connector.class": "FileStreamSource", "file": str(source), "topic": "t"},
            ),
        ]
        w = StandaloneWorkerProcess(*files).start()
        wait_until(lambda: _task_state(rest) == "RUNNING", 60, message="the task to run")
        # Every line is in Kafka before the worker is told to stop.
        from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

        c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "check"})
        c.assign([TopicPartition("t", 0, OFFSET_BEGINNING)])
        seen = 0
        deadline = time.time() + 60
        while seen < 1000 and time.time() < deadline:
            seen += len([m for m in c.consume(1000, 0.5) if m.error() is None])
        c.close()
        assert seen == 1000
        assert _offsets(rest) == []  # the ten-minute flush interval has not come yet
        assert w.stop() == 0
        # The flush interval is ten minutes: only the shutdown can have written the final offset.
        text = (tmp_path / "offsets.json").read_text()
        assert '"position\\":' + str(source.stat().st_size) in text.replace(" ", "")
    finally:
        broker.stop()


def _task_state(rest: int) -> str | None:
    try:
        r = httpx.get(f"http://127.0.0.1:{rest}/connectors/src/status", timeout=5)
    except httpx.HTTPError:
        return None
    tasks = r.json().get("tasks", []) if r.status_code == 200 else []
    return str(tasks[0]["state"]) if tasks else None


def _offsets(rest: int) -> list[object]:
    try:
        r = httpx.get(f"http://127.0.0.1:{rest}/connectors/src/offsets", timeout=5)
    except httpx.HTTPError:
        return []
    if r.status_code != 200:
        return []
    return list(r.json()["offsets"])
