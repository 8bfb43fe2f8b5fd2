"""Starting, stopping and restarting broker processes: signals, the lock file, config errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewPartitions, NewTopic

from tests.support import ROOT, BrokerProcess, free_port, unique

pytestmark = pytest.mark.slow


def run_cli(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "broker", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )


def test_sigterm_shuts_down_cleanly_and_state_survives(tmp_path: Path) -> None:
    bp = BrokerProcess(tmp_path / "logs").start()
    topic = unique()
    admin = AdminClient({"bootstrap.servers": bp.bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1, config={"cleanup.policy": "compact"})])[topic].result(15)
    admin.create_partitions([NewPartitions(topic, 3)])[topic].result(15)
    p = Producer({"bootstrap.servers": bp.bootstrap, "enable.idempotence": True})
    for i in range(30):
        p.produce(topic, key=f"k{i}".encode(), value=b"v", partition=i % 3)
    assert p.flush(15) == 0
    cluster_id = admin.describe_cluster().result(10).cluster_id

    assert bp.terminate() == 0
    assert "shut down cleanly" in bp.output()
    part0 = tmp_path / "logs" / f"{topic}-0"
    assert any(n.endswith(".snapshot") for n in os.listdir(part0))  # producer state saved on close

    bp.start()
    admin = AdminClient({"bootstrap.servers": bp.bootstrap})
    assert admin.describe_cluster().result(10).cluster_id == cluster_id
    assert len(admin.list_topics(timeout=10).topics[topic].partitions) == 3
    res = ConfigResource(ConfigResource.Type.TOPIC, topic)
    assert admin.describe_configs([res])[res].result(10)["cleanup.policy"].value == "compact"
    c = Consumer({"bootstrap.servers": bp.bootstrap, "group.id": unique("g")})
    hw = [c.get_watermark_offsets(TopicPartition(topic, i), timeout=10) for i in range(3)]
    c.close()
    assert hw == [(0, 10)] * 3
    bp.stop()


def test_sigint_also_shuts_down_cleanly(tmp_path: Path) -> None:
    import signal

    bp = BrokerProcess(tmp_path / "logs").start()
    assert bp.proc is not None
    bp.proc.send_signal(signal.SIGINT)
    assert bp.proc.wait(30) == 0
    assert "shut down cleanly" in bp.output()


def test_second_broker_on_the_same_log_dirs_refuses_to_start(tmp_path: Path) -> None:
    first = BrokerProcess(tmp_path / "logs").start()
    try:
        second = run_cli(
            "--override",
            f"log.dirs={tmp_path / 'logs'}",
            "--override",
            f"listeners=PLAINTEXT://127.0.0.1:{free_port()}",
        )
        assert second.returncode == 1
        assert "another broker is already using log.dirs" in second.stderr
        # The first one is unaffected.
        assert AdminClient({"bootstrap.servers": first.bootstrap}).list_topics(timeout=10).brokers
    finally:
        first.stop()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--override", "num.partitions=abc"], "num.partitions"),
        (["--override", "log.cleanup.policy=shred"], "log.cleanup.policy"),
        (["--override", "listeners=nonsense"], "listeners"),
        (["--override", "novalue"], "expected key=value"),
        (["/no/such/file.properties"], "cannot read"),
    ],
)
def test_configuration_errors_exit_2_naming_the_key(args: list[str], needle: str) -> None:
    result = run_cli(*args)
    assert result.returncode == 2
    assert needle in result.stderr


def test_java_properties_syntax_and_the_umbrella_command(tmp_path: Path) -> None:
    port = free_port()
    conf = tmp_path / "server.properties"
    # Kafka's files use '=', but ':' separators, continuations and escapes are Java syntax too.
    conf.write_text(
        "# a comment\n"
        f"listeners : PLAINTEXT://127.0.0.1:{port}\n"
        f"log.dirs={tmp_path / 'logs'}\n"
        "num.partitions = 4\n"
        "group.initial.rebalance.delay.ms=\\\n    0\n"
        "unknown.key.from.kafka=kept\n"
    )
    sluiceway = Path(sys.executable).parent / "sluiceway"
    proc = subprocess.Popen(
        [str(sluiceway), "broker", str(conf)], cwd=ROOT, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stderr is not None
        lines = []
        for line in proc.stderr:
            lines.append(line)
            if "listening on" in line:
                break
        assert any("ignoring unknown broker config keys: unknown.key.from.kafka" in ln for ln in lines)
        admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{port}"})
        p = Producer({"bootstrap.servers": f"127.0.0.1:{port}"})
        p.produce("auto-created", value=b"x")
        assert p.flush(15) == 0
        assert len(admin.list_topics(timeout=10).topics["auto-created"].partitions) == 4
    finally:
        proc.terminate()
        rest = proc.communicate(timeout=30)[1]
        assert proc.returncode == 0, "".join(lines) + rest
