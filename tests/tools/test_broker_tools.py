"""Kafka's tools end to end: ``sluiceway topics | console-producer | console-consumer |
consumer-groups | configs`` run as the user runs them, in subprocesses
(``python -m sluiceway.cli ...``), against a real broker this module starts on an
ephemeral port.

Commands are written as a user types them (split with shlex); every effect a tool
claims is also checked through an independent client (confluent-kafka's AdminClient),
not only through the tools' own output.
"""

from __future__ import annotations

import re
import shlex
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import ConsumerGroupTopicPartitions
from confluent_kafka.admin import AdminClient

from broker.server import EmbeddedBroker
from tests.support import ROOT, embedded_broker, free_port, unique, wait_until

# A bound so that a stuck command fails its test instead of hanging it; never asserted on.
RUN_TIMEOUT_S = 120


def argv(command: str) -> list[str]:
    return [sys.executable, "-m", "sluiceway.cli", *shlex.split(command)]


def tool(command: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """``sluiceway <command>``: its exit code, stdout and stderr."""
    return subprocess.run(
        argv(command), input=stdin, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, cwd=ROOT
    )


def ok(command: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    result = tool(command, stdin)
    assert result.returncode == 0, f"{command} exited {result.returncode}:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedBroker]:
    with embedded_broker(tmp_path_factory.mktemp("broker-tools")) as eb:
        yield eb


@pytest.fixture
def admin(kafka: EmbeddedBroker) -> AdminClient:
    return AdminClient({"bootstrap.servers": kafka.bootstrap})


def table(stdout: str) -> list[dict[str, str]]:
    """The rows of one of consumer-groups' tables, by column name (no cell holds a blank)."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    header = lines[0].split()
    return [dict(zip(header, line.split(), strict=True)) for line in lines[1:]]


def by_partition(rows: list[dict[str, str]]) -> dict[int, dict[str, str]]:
    return {int(r["PARTITION"]): r for r in rows}


def committed(admin: AdminClient, group: str, topic: str) -> dict[int, int]:
    result = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(30)
    return {tp.partition: tp.offset for tp in result.topic_partitions if tp.topic == topic}


def partition_count(admin: AdminClient, topic: str) -> int:
    return len(admin.list_topics(topic, timeout=30).topics[topic].partitions)


def test_the_classic_walkthrough(kafka: EmbeddedBroker, admin: AdminClient) -> None:
    b = f"--bootstrap-server {kafka.bootstrap}"
    topic, group = unique("orders"), unique("billing")

    # Create a 3-partition topic with one override.
    created = ok(f"topics {b} --create --topic {topic} --partitions 3 --replication-factor 1 "
                 "--config retention.ms=86400000")  # fmt: skip
    assert created.stdout == f"Created topic {topic}.\n"
    assert partition_count(admin, topic) == 3
    assert tool(f"topics {b} --create --topic {topic} --partitions 3").returncode == 1
    ok(f"topics {b} --create --topic {topic} --partitions 3 --if-not-exists")
    assert topic in ok(f"topics {b} --list").stdout.splitlines()

    # Describe it: Kafka's layout, tabs and all.
    lines = ok(f"topics {b} --describe --topic {topic}").stdout.splitlines()
    assert re.fullmatch(
        rf"Topic: {topic}\tTopicId: [A-Za-z0-9_-]{{22}}\tPartitionCount: 3\tReplicationFactor: 1"
        r"\tConfigs: retention\.ms=86400000",
        lines[0],
    ), lines[0]
    assert len(lines) == 4
    for partition, line in enumerate(lines[1:]):
        pattern = rf"\tTopic: {topic}\tPartition: {partition}\tLeader: (\d+)\tReplicas: (\d+)\tIsr: (\d+)"
        m = re.fullmatch(pattern, line)
        assert m is not None, line
        assert m.group(1) == m.group(2) == m.group(3)

    # Produce keyed lines, then read each back once, in a group, with its key.
    sent = [f"key-{i % 10},value-{i}" for i in range(30)]
    produced = ok(f"console-producer {b} --topic {topic} --property parse.key=true "
                  "--property key.separator=,", stdin="\n".join(sent) + "\n")  # fmt: skip
    assert produced.stderr == ""
    consumed = ok(f"console-consumer {b} --topic {topic} --from-beginning --group {group} --max-messages 30 "
                  "--property print.key=true --property print.partition=true --timeout-ms 30000")  # fmt: skip
    assert "Processed a total of 30 messages" in consumed.stderr
    records = [line.split("\t") for line in consumed.stdout.splitlines()]
    assert sorted(f"{key},{value}" for _, key, value in records) == sorted(sent)
    per_partition = Counter(int(p.removeprefix("Partition:")) for p, _, _ in records)
    assert set(per_partition) == {0, 1, 2}  # ten keys spread over every partition
    assert committed(admin, group, topic) == dict(per_partition)

    # The group's lag: nothing left, then five more records to read.
    described = ok(f"consumer-groups {b} --describe --group {group}")
    assert f"Consumer group '{group}' has no active members." in described.stderr
    assert described.stdout.startswith("\nGROUP ")
    rows = by_partition(table(described.stdout))
    assert sorted(rows) == [0, 1, 2]
    for p, row in rows.items():
        count = str(per_partition[p])
        assert (row["GROUP"], row["TOPIC"]) == (group, topic)
        assert (row["CURRENT-OFFSET"], row["LOG-END-OFFSET"], row["LAG"]) == (count, count, "0")
        assert (row["CONSUMER-ID"], row["HOST"], row["CLIENT-ID"]) == ("-", "-", "-")
    ok(f"console-producer {b} --topic {topic}", stdin="".join(f"more-{i}\n" for i in range(5)))
    rows = by_partition(table(ok(f"consumer-groups {b} --describe --group {group}").stdout))
    end = {p: int(row["LOG-END-OFFSET"]) for p, row in rows.items()}
    assert sum(end.values()) == 35
    for p, row in rows.items():
        assert int(row["CURRENT-OFFSET"]) == per_partition[p]
        assert int(row["LAG"]) == end[p] - per_partition[p]

    # Reset to earliest: the dry run only prints the plan, --execute resets.
    before = committed(admin, group, topic)
    plan = ok(f"consumer-groups {b} --reset-offsets --group {group} --topic {topic} --to-earliest --dry-run")
    assert [(r["GROUP"], r["TOPIC"], r["PARTITION"], r["NEW-OFFSET"]) for r in table(plan.stdout)] == [
        (group, topic, str(p), "0") for p in range(3)
    ]
    assert committed(admin, group, topic) == before
    ok(f"consumer-groups {b} --reset-offsets --group {group} --topic {topic} --to-earliest --execute")
    assert committed(admin, group, topic) == {0: 0, 1: 0, 2: 0}
    rows = by_partition(table(ok(f"consumer-groups {b} --describe --group {group}").stdout))
    assert {p: (r["CURRENT-OFFSET"], r["LAG"]) for p, r in rows.items()} == {
        p: ("0", str(end[p])) for p in end
    }

    # To the end, then two back (clamped at the log start where a partition holds fewer).
    ok(f"consumer-groups {b} --reset-offsets --group {group} --all-topics --to-latest --execute")
    assert committed(admin, group, topic) == end
    shifted = ok(
        f"consumer-groups {b} --reset-offsets --group {group} --topic {topic} --shift-by -2 --execute"
    )
    expected = {p: max(end[p] - 2, 0) for p in end}
    assert {int(r["PARTITION"]): int(r["NEW-OFFSET"]) for r in table(shifted.stdout)} == expected
    assert committed(admin, group, topic) == expected
    if any(end[p] < 2 for p in end):
        assert "is lower than earliest offset" in shifted.stderr
    # The group now reads exactly the records after the new offsets.
    behind = sum(end.values()) - sum(expected.values())
    again = ok(
        f"console-consumer {b} --topic {topic} --group {group} --max-messages {behind} --timeout-ms 30000"
    )
    assert len(again.stdout.splitlines()) == behind
    assert committed(admin, group, topic) == end

    # Topic configs: add (a list value in brackets), describe, delete.
    altered = ok(f"configs {b} --entity-type topics --entity-name {topic} --alter "
                 "--add-config 'retention.ms=3600000,cleanup.policy=[compact,delete]'")  # fmt: skip
    assert altered.stdout == f"Completed updating config for topic {topic}.\n"
    lines = ok(f"configs {b} --entity-type topics --entity-name {topic} --describe").stdout.splitlines()
    assert lines[0] == f"Dynamic configs for topic {topic} are:"
    assert lines[1].startswith(
        "  cleanup.policy=compact,delete sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:"
    )
    assert lines[2].startswith("  retention.ms=3600000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:")
    assert len(lines) == 3
    ok(f"configs {b} --topic {topic} --alter --delete-config retention.ms")
    lines = ok(f"configs {b} --topic {topic} --describe").stdout.splitlines()
    assert [line.split()[0] for line in lines[1:]] == ["cleanup.policy=compact,delete"]
    missing = tool(f"configs {b} --topic {topic} --alter --delete-config retention.ms")
    assert missing.returncode == 1 and "Invalid config(s): retention.ms" in missing.stderr

    # More partitions; fewer is refused by the broker.
    ok(f"topics {b} --alter --topic {topic} --partitions 5")
    assert partition_count(admin, topic) == 5
    lines = ok(f"topics {b} --describe --topic {topic}").stdout.splitlines()
    assert "\tPartitionCount: 5\t" in lines[0] and len(lines) == 6
    shrink = tool(f"topics {b} --alter --topic {topic} --partitions 2")
    assert shrink.returncode == 1 and shrink.stderr.startswith("Error while executing topic command : ")
    assert partition_count(admin, topic) == 5

    # Delete the group, then the topic.
    deleted = ok(f"consumer-groups {b} --delete --group {group}")
    assert deleted.stdout == f"Deletion of requested consumer groups ('{group}') was successful.\n"
    assert group not in ok(f"consumer-groups {b} --list").stdout.splitlines()
    assert committed(admin, group, topic) == {}
    ok(f"topics {b} --delete --topic {topic}")
    wait_until(lambda: topic not in admin.list_topics(timeout=30).topics, message="the topic deleted")
    gone = tool(f"topics {b} --describe --topic {topic}")
    assert (gone.returncode, gone.stderr) == (1, f"Topic '{topic}' does not exist as expected\n")
    ok(f"topics {b} --delete --topic {topic} --if-exists")


def test_topic_names_are_regular_expressions_except_for_create(
    kafka: EmbeddedBroker, admin: AdminClient
) -> None:
    b = f"--bootstrap-server {kafka.bootstrap}"
    prefix = unique("rx")
    for suffix in ("a", "b", "c"):
        ok(f"topics {b} --create --topic {prefix}-{suffix} --partitions 1")
    listed = ok(f"topics {b} --list --topic '{prefix}-(a|b)'").stdout.splitlines()
    assert listed == [f"{prefix}-a", f"{prefix}-b"]
    described = ok(f"topics {b} --describe --topic '{prefix}-.*'").stdout
    assert [line.split("\t")[0] for line in described.splitlines() if not line.startswith("\t")] == [
        f"Topic: {prefix}-{s}" for s in "abc"
    ]
    ok(f"topics {b} --delete --topic '{prefix}-a,{prefix}-c'")  # a comma means "or", as in Kafka
    wait_until(
        lambda: {t for t in admin.list_topics(timeout=30).topics if t.startswith(prefix)} == {f"{prefix}-b"},
        message="two of the three topics deleted",
    )


def test_headers_keys_and_nulls_round_trip(kafka: EmbeddedBroker) -> None:
    b = f"--bootstrap-server {kafka.bootstrap}"
    topic = unique("headers")
    ok(f"topics {b} --create --topic {topic} --partitions 1")
    ok(f"console-producer {b} --topic {topic} --property parse.headers=true --property parse.key=true "
       "--property null.marker=NULL", stdin="h1:a,h2:b\tk1\tv1\nh3:NULL\tNULL\tv2\n")  # fmt: skip
    out = ok(f"console-consumer {b} --topic {topic} --partition 0 --offset earliest --max-messages 2 "
             "--property print.headers=true --property print.key=true --property print.offset=true "
             "--property 'key.separator=|'")  # fmt: skip
    assert out.stdout == "Offset:0|h1:a,h2:b|k1|v1\nOffset:1|h3:null|null|v2\n"
    # From an offset of one partition, without a group.
    out = ok(f"console-consumer {b} --topic {topic} --partition 0 --offset 1 --max-messages 1")
    assert out.stdout == "v2\n"


def test_a_group_with_members_is_described_and_protected(
    kafka: EmbeddedBroker, admin: AdminClient, tmp_path: Path
) -> None:
    b = f"--bootstrap-server {kafka.bootstrap}"
    topic, group = unique("live"), unique("live-group")
    ok(f"topics {b} --create --topic {topic} --partitions 2")
    # A consumer that stays in the group until it is told to stop (or after a minute without records).
    stderr = tmp_path / "consumer.err"
    with open(stderr, "w") as err:
        consumer = subprocess.Popen(
            argv(f"console-consumer {b} --topic {topic} --group {group} --from-beginning --timeout-ms 60000"),
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            cwd=ROOT,
        )
    try:

        def stable() -> bool:
            out = tool(f"consumer-groups {b} --describe --group {group} --state").stdout
            return bool(out.strip()) and table(out)[0]["STATE"] == "Stable"

        wait_until(stable, timeout=60, message="the console consumer in its group")
        state = table(ok(f"consumer-groups {b} --describe --group {group} --state").stdout)[0]
        assert (state["GROUP"], state["ASSIGNMENT-STRATEGY"], state["#MEMBERS"]) == (group, "range", "1")

        members = table(ok(f"consumer-groups {b} --describe --group {group} --members").stdout)
        assert len(members) == 1
        assert (members[0]["CLIENT-ID"], members[0]["#PARTITIONS"]) == ("console-consumer", "2")

        rows = by_partition(table(ok(f"consumer-groups {b} --describe --group {group}").stdout))
        assert sorted(rows) == [0, 1]
        assert {r["CONSUMER-ID"] for r in rows.values()} == {members[0]["CONSUMER-ID"]}

        refused = tool(
            f"consumer-groups {b} --reset-offsets --group {group} --all-topics --to-earliest --execute"
        )
        assert refused.returncode == 1
        assert f"Assignments can only be reset if the group '{group}' is inactive, " in refused.stderr
        assert "but the current state is Stable." in refused.stderr
        busy = tool(f"consumer-groups {b} --delete --group {group}")
        assert busy.returncode == 1 and f"* Group '{group}' could not be deleted due to: " in busy.stderr

        ok(f"console-producer {b} --topic {topic}", stdin="one\ntwo\n")
        assert consumer.stdout is not None
        assert sorted([consumer.stdout.readline(), consumer.stdout.readline()]) == ["one\n", "two\n"]
    finally:
        consumer.send_signal(signal.SIGTERM)
        code = consumer.wait(RUN_TIMEOUT_S)
    assert code == 128 + signal.SIGTERM
    assert "Processed a total of 2 messages" in stderr.read_text()
    assert sum(committed(admin, group, topic).values()) == 2  # what it printed, committed on the way out


def test_unknown_topics_and_groups_are_errors(kafka: EmbeddedBroker) -> None:
    b = f"--bootstrap-server {kafka.bootstrap}"
    missing = unique("missing")
    described = tool(f"topics {b} --describe --topic {missing}")
    assert (described.returncode, described.stderr) == (1, f"Topic '{missing}' does not exist as expected\n")
    assert tool(f"topics {b} --describe --topic {missing} --if-exists").returncode == 0
    deleted = tool(f"topics {b} --delete --topic {missing}")
    assert deleted.returncode == 1 and "does not exist as expected" in deleted.stderr
    configs = tool(f"configs {b} --topic {missing} --describe")
    assert configs.returncode == 1
    assert configs.stderr == f"The topic '{missing}' doesn't exist and doesn't have dynamic config.\n"
    consumed = tool(f"console-consumer {b} --topic {missing} --from-beginning --timeout-ms 1000")
    assert (consumed.returncode, consumed.stderr) == (1, f"Error: Topic '{missing}' does not exist\n")
    reset = tool(f"consumer-groups {b} --reset-offsets --group {unique('g')} --topic {missing} --to-earliest")
    assert reset.returncode == 1 and f"Topic '{missing}' does not exist" in reset.stderr
    nobody = unique("nobody")
    group = tool(f"consumer-groups {b} --describe --group {nobody}")
    assert group.returncode == 1 and f"Error: Consumer group '{nobody}' does not exist." in group.stderr


def test_an_unreachable_broker_is_named() -> None:
    address = f"127.0.0.1:{free_port()}"  # nothing listens there
    for command in (
        "topics --list",
        "consumer-groups --list",
        "configs --entity-type topics --describe",
        "console-consumer --topic t",
    ):
        name, _, rest = command.partition(" ")
        result = tool(f"{name} --bootstrap-server {address} {rest}")
        assert result.returncode == 1, result
        assert f"Could not reach the Kafka cluster at {address}" in result.stderr
        assert "Connection refused" in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr  # one line, no traceback
    produced = tool(f"console-producer --bootstrap-server {address} --topic t", stdin="a\n")
    assert produced.returncode == 1 and f"Could not reach the Kafka cluster at {address}" in produced.stderr


def test_a_malformed_key_line_stops_the_producer(kafka: EmbeddedBroker) -> None:
    b = f"--bootstrap-server {kafka.bootstrap}"
    topic = unique("keys")
    ok(f"topics {b} --create --topic {topic} --partitions 1")
    result = tool(f"console-producer {b} --topic {topic} --property parse.key=true",
                  stdin="k1\tgood\nno separator here\nk3\tnever sent\n")  # fmt: skip
    assert result.returncode == 1
    assert result.stderr == "Error: No key separator found on line number 2: 'no separator here'\n"
    # The line before the bad one was delivered, the one after it was not.
    out = ok(
        f"console-consumer {b} --topic {topic} --from-beginning --property print.key=true --timeout-ms 2000"
    )
    assert out.stdout == "k1\tgood\n"


@pytest.mark.parametrize(
    "command",
    [
        "topics {b}",
        "topics {b} --list --describe",
        "topics {b} --create",
        "topics {b} --list --partitions 3",
        "topics --list",
        "console-consumer {b} --topic t --offset 3",
        "console-consumer {b} --topic t --partition 0 --offset -1",
        "console-producer {b}",
        "consumer-groups {b} --reset-offsets --group g --topic t",
        "consumer-groups {b} --reset-offsets --group g --to-earliest",
        "consumer-groups {b} --reset-offsets --group g --all-topics --to-earliest --to-latest",
        "consumer-groups {b} --describe",
        "configs {b} --alter --topic t",
        "configs {b} --describe",
    ],
)
def test_invalid_arguments_exit_2(kafka: EmbeddedBroker, command: str) -> None:
    result = tool(command.format(b=f"--bootstrap-server {kafka.bootstrap}"))
    assert result.returncode == 2, result.stderr
    assert "usage:" in result.stderr


def test_client_properties_files_written_for_kafkas_scripts(kafka: EmbeddedBroker, tmp_path: Path) -> None:
    """Java-only keys are dropped with a warning; librdkafka keys apply (client.id shows in the group)."""
    b = f"--bootstrap-server {kafka.bootstrap}"
    topic, group = unique("cfg"), unique("cfg-group")
    ok(f"topics {b} --create --topic {topic} --partitions 1")
    admin_file = tmp_path / "admin.properties"
    admin_file.write_text("# from a Kafka install\nrequest.timeout.ms=20000\ndefault.api.timeout.ms=30000\n")
    assert topic in ok(f"topics {b} --command-config {admin_file} --list").stdout.splitlines()
    consumer_file = tmp_path / "consumer.properties"
    consumer_file.write_text(
        f"group.id={group}\nclient.id=nightly-report\n"
        "key.deserializer=org.apache.kafka.common.serialization.StringDeserializer\n"
    )
    ok(f"console-producer {b} --topic {topic}", stdin="x\n")
    out = ok(f"console-consumer {b} --topic {topic} --from-beginning --max-messages 1 "
             f"--consumer.config {consumer_file}")  # fmt: skip
    assert out.stdout == "x\n"
    assert (
        "WARN: key.deserializer is a Java client setting without a librdkafka equivalent; ignored"
        in out.stderr
    )
    rows = table(ok(f"consumer-groups {b} --describe --group {group}").stdout)
    assert [(r["TOPIC"], r["CURRENT-OFFSET"]) for r in rows] == [(topic, "1")]
    clash = tool(f"console-consumer {b} --topic {topic} --group other --consumer.config {consumer_file}")
    assert clash.returncode == 1 and "do not match" in clash.stderr
    absent = tmp_path / "absent.properties"
    unreadable = tool(f"topics {b} --command-config {absent} --list")
    assert unreadable.returncode == 1 and str(absent) in unreadable.stderr


def test_group_states_and_time_based_resets(kafka: EmbeddedBroker, admin: AdminClient) -> None:
    b = f"--bootstrap-server {kafka.bootstrap}"
    topic, group = unique("timed"), unique("timed-group")
    ok(f"topics {b} --create --topic {topic} --partitions 1")
    ok(f"console-producer {b} --topic {topic}", stdin="a\nb\nc\n")
    # A group that never had a member gets its offsets from a reset (Kafka allows "Dead" groups).
    ok(f"consumer-groups {b} --reset-offsets --group {group} --topic {topic}:0 --to-offset 2 --execute")
    assert committed(admin, group, topic) == {0: 2}
    assert {"GROUP": group, "STATE": "Empty"} in table(ok(f"consumer-groups {b} --list --state").stdout)
    stable_only = table(ok(f"consumer-groups {b} --list --state Stable").stdout)
    assert group not in [r["GROUP"] for r in stable_only]
    # The records were written just now: a day ago is before all of them, the year 2999 after all.
    day_ago = ok(
        f"consumer-groups {b} --reset-offsets --group {group} --all-topics --by-duration P1D --dry-run"
    )
    assert [r["NEW-OFFSET"] for r in table(day_ago.stdout)] == ["0"]
    future = ok(f"consumer-groups {b} --reset-offsets --group {group} --all-topics "
                "--to-datetime 2999-01-01T00:00:00.000 --dry-run")  # fmt: skip
    assert [r["NEW-OFFSET"] for r in table(future.stdout)] == ["3"]
    assert "Falling back to latest known offset" in future.stderr
    assert committed(admin, group, topic) == {0: 2}  # dry runs, all of them
    bad = tool(f"consumer-groups {b} --reset-offsets --group {group} --all-topics --to-datetime yesterday")
    assert bad.returncode == 1 and "Error parsing timestamp 'yesterday'" in bad.stderr
