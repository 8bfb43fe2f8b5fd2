"""kcat (librdkafka) against the real broker: metadata, produce, consume, groups, codecs.

kcat is a required test tool (``make test`` installs it): if it is missing these tests fail,
they do not skip. Every invocation has a timeout. Topics are created and group offsets read
back with confluent-kafka's AdminClient, another client this project did not write.
"""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.support import unique

KCAT_TIMEOUT_S = 30
SEP = "|"
FORMAT = SEP.join(["%p", "%o", "%k", "%s", "%h"]) + "\\n"


def kcat_run(
    bootstrap: str, *args: str, stdin: str | None = None, timeout: float = KCAT_TIMEOUT_S
) -> subprocess.CompletedProcess[str]:
    """Runs kcat against the broker; fails the test on a non-zero exit."""
    exe = shutil.which("kcat")
    assert exe is not None, "kcat is not on PATH (make test installs it)"
    proc = subprocess.run(
        [exe, "-b", bootstrap, *args], input=stdin, capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, f"kcat {' '.join(args)} exited {proc.returncode}:\n{proc.stderr}"
    return proc


def kcat(bootstrap: str, *args: str, stdin: str | None = None, timeout: float = KCAT_TIMEOUT_S) -> str:
    """Runs kcat against the broker; returns its stdout."""
    return kcat_run(bootstrap, *args, stdin=stdin, timeout=timeout).stdout


def consume_all(bootstrap: str, topic: str, *extra: str) -> list[tuple[int, int, str, str, str]]:
    """``kcat -C -o beginning -e``: every record of the topic as (partition, offset, key, value, headers)."""
    out = kcat(bootstrap, "-C", "-t", topic, "-o", "beginning", "-e", "-q", "-f", FORMAT, *extra)
    return parse(out)


def parse(out: str) -> list[tuple[int, int, str, str, str]]:
    rows = []
    for line in out.splitlines():
        p, o, k, v, h = line.split(SEP)
        rows.append((int(p), int(o), k, v, h))
    return rows


def admin(bootstrap: str) -> AdminClient:
    return AdminClient({"bootstrap.servers": bootstrap})


def create_topic(bootstrap: str, name: str, partitions: int) -> None:
    client = admin(bootstrap)  # referenced until the futures resolve: a collected client cancels them
    futures = client.create_topics([NewTopic(name, partitions, 1)], operation_timeout=10, request_timeout=10)
    futures[name].result(timeout=15)


def committed(bootstrap: str, group: str) -> dict[tuple[str, int], int]:
    client = admin(bootstrap)
    futures = client.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)], request_timeout=10)
    result = futures[group].result(timeout=15)
    return {(tp.topic, tp.partition): tp.offset for tp in result.topic_partitions}


# -- metadata ---------------------------------------------------------------------------------


def test_kcat_is_installed() -> None:
    exe = shutil.which("kcat")
    assert exe is not None, "kcat must be installed for the compatibility tests"
    proc = subprocess.run([exe, "-V"], capture_output=True, text=True, timeout=10)
    assert proc.returncode == 0
    assert "kcat" in proc.stdout


def test_metadata_listing(shared_broker: Any, topic: str) -> None:
    bootstrap = shared_broker.bootstrap
    create_topic(bootstrap, topic, 3)

    text = kcat(bootstrap, "-L")
    assert f"broker 0 at {bootstrap}" in text
    assert f'topic "{topic}" with 3 partitions:' in text
    section = text.split(f'topic "{topic}" with 3 partitions:')[1].splitlines()[1:4]
    assert [line.strip() for line in section] == [
        f"partition {p}, leader 0, replicas: 0, isrs: 0" for p in range(3)
    ]

    meta = json.loads(kcat(bootstrap, "-L", "-J", "-t", topic))
    assert meta["brokers"] == [{"id": 0, "name": bootstrap}]
    assert meta["controllerid"] == 0
    (t,) = meta["topics"]
    assert t["topic"] == topic
    assert "error" not in t
    assert [p["partition"] for p in t["partitions"]] == [0, 1, 2]
    assert all(
        p["leader"] == 0 and p["replicas"] == [{"id": 0}] and p["isrs"] == [{"id": 0}]
        for p in t["partitions"]
    )

    everything = json.loads(kcat(bootstrap, "-L", "-J"))
    assert topic in {x["topic"] for x in everything["topics"]}


# -- produce and consume ----------------------------------------------------------------------


def test_keyed_produce_and_ordered_consume(shared_broker: Any, topic: str) -> None:
    bootstrap = shared_broker.bootstrap
    create_topic(bootstrap, topic, 1)
    lines = [(f"key-{i % 4}", f"value {i}") for i in range(25)]
    kcat(
        bootstrap,
        "-P",
        "-t",
        topic,
        "-K:",
        "-H",
        "source=kcat",
        "-H",
        "n=1",
        stdin="".join(f"{k}:{v}\n" for k, v in lines),
    )

    rows = consume_all(bootstrap, topic)
    assert rows == [(0, i, k, v, "source=kcat,n=1") for i, (k, v) in enumerate(lines)]

    # A start offset and a count.
    out = kcat(bootstrap, "-C", "-t", topic, "-o", "10", "-c", "3", "-q", "-f", FORMAT)
    assert [(o, k, v) for _, o, k, v, _ in parse(out)] == [(i, *lines[i]) for i in (10, 11, 12)]
    # A negative offset counts back from the end.
    out = kcat(bootstrap, "-C", "-t", topic, "-o", "-2", "-e", "-q", "-f", FORMAT)
    assert [(o, v) for _, o, _, v, _ in parse(out)] == [(23, "value 23"), (24, "value 24")]

    # ListOffsets through kcat's offset query: -2 is the beginning, -1 the end.
    assert kcat(bootstrap, "-Q", "-t", f"{topic}:0:-2").split() == [topic, "[0]", "offset", "0"]
    assert kcat(bootstrap, "-Q", "-t", f"{topic}:0:-1").split() == [topic, "[0]", "offset", "25"]

    # Appending continues the offsets.
    kcat(bootstrap, "-P", "-t", topic, "-K:", stdin="late:arrival\n")
    rows = consume_all(bootstrap, topic)
    assert len(rows) == 26
    assert rows[-1][:4] == (0, 25, "late", "arrival")


def test_keyed_produce_to_many_partitions(shared_broker: Any, topic: str) -> None:
    bootstrap = shared_broker.bootstrap
    create_topic(bootstrap, topic, 3)
    lines = [(f"user-{i % 9}", f"event-{i}") for i in range(60)]
    kcat(bootstrap, "-P", "-t", topic, "-K:", stdin="".join(f"{k}:{v}\n" for k, v in lines))

    rows = consume_all(bootstrap, topic)
    assert sorted(v for *_, v, _ in rows) == sorted(v for _, v in lines)
    by_partition: dict[int, list[int]] = defaultdict(list)
    partitions_of_key: dict[str, set[int]] = defaultdict(set)
    for p, o, k, v, _ in rows:
        by_partition[p].append(o)
        partitions_of_key[k].add(p)
        assert lines[int(v.split("-")[1])][0] == k  # the key travelled with its value
    for offsets in by_partition.values():
        assert offsets == list(range(len(offsets)))
    assert all(len(parts) == 1 for parts in partitions_of_key.values())
    assert len(by_partition) > 1
    # Per key the values are in production order.
    for key in partitions_of_key:
        assert [v for _, _, k, v, _ in rows if k == key] == [v for k, v in lines if k == key]


# -- consumer groups -----------------------------------------------------------------------------


def test_group_consumer_commits_and_resumes(shared_broker: Any, topic: str, group: str) -> None:
    bootstrap = shared_broker.bootstrap
    create_topic(bootstrap, topic, 3)
    first = [(f"k{i % 5}", f"first-{i}") for i in range(15)]
    kcat(bootstrap, "-P", "-t", topic, "-K:", stdin="".join(f"{k}:{v}\n" for k, v in first))
    produced = consume_all(bootstrap, topic)
    end: dict[int, int] = defaultdict(int)
    for p, o, *_ in produced:
        end[p] = max(end[p], o + 1)

    group_args = (
        "-X",
        "auto.offset.reset=earliest",
        "-X",
        "session.timeout.ms=6000",
        "-X",
        "heartbeat.interval.ms=500",
        "-q",
        "-f",
        FORMAT,
    )
    out = kcat(bootstrap, "-G", group, topic, "-c", str(len(first)), *group_args)
    rows = parse(out)
    assert sorted(rows) == sorted(produced)

    # kcat commits on close: the group's offsets are the partitions' ends.
    assert committed(bootstrap, group) == {(topic, p): n for p, n in end.items()}

    # The group is known and empty now.
    client = admin(bootstrap)
    listing = client.list_consumer_groups(request_timeout=10).result(timeout=15)
    groups = {g.group_id: g for g in listing.valid}
    assert group in groups
    assert groups[group].state.name == "EMPTY"

    # Same group again: nothing old.
    out = kcat(bootstrap, "-G", group, topic, "-e", *group_args)
    assert parse(out) == []

    second = [(f"k{i % 5}", f"second-{i}") for i in range(6)]
    kcat(bootstrap, "-P", "-t", topic, "-K:", stdin="".join(f"{k}:{v}\n" for k, v in second))
    out = kcat(bootstrap, "-G", group, topic, "-e", *group_args)
    rows = parse(out)
    assert sorted(v for *_, v, _ in rows) == sorted(v for _, v in second)
    assert all(o >= end[p] for p, o, *_ in rows)
    total: dict[int, int] = defaultdict(int, end)
    for p, *_ in rows:
        total[p] += 1
    assert committed(bootstrap, group) == {(topic, p): n for p, n in total.items()}


# -- compression ------------------------------------------------------------------------------------

CODEC_IDS = {"gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def batch_codecs(segment: Path) -> list[int]:
    """The compression codec (attributes & 7) of each record batch in a Kafka log segment."""
    data = segment.read_bytes()
    codecs, pos = [], 0
    while pos + 61 <= len(data):
        (length,) = struct.unpack_from(">i", data, pos + 8)
        (attributes,) = struct.unpack_from(">h", data, pos + 21)
        codecs.append(attributes & 7)
        pos += 12 + length
    return codecs


@pytest.mark.parametrize("codec", sorted(CODEC_IDS))
def test_compressed_produce_round_trip(shared_broker: Any, codec: str) -> None:
    bootstrap = shared_broker.bootstrap
    topic = unique(f"kcat-{codec}")
    create_topic(bootstrap, topic, 1)
    lines = [(f"k{i % 7}", f"{codec} payload {i} " + "abc" * (i % 40)) for i in range(200)]
    produced = kcat_run(
        bootstrap,
        "-P",
        "-t",
        topic,
        "-p",
        "0",
        "-z",
        codec,
        "-K:",
        "-d",
        "msg",
        stdin="".join(f"{k}:{v}\n" for k, v in lines),
    )
    rows = consume_all(bootstrap, topic)
    assert [(p, o, k, v) for p, o, k, v, _ in rows] == [(0, i, k, v) for i, (k, v) in enumerate(lines)]

    # Another client (librdkafka 2.x through confluent-kafka) decodes the same batches.
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique("cf"),
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        got: list[tuple[int | None, str, str]] = []
        for _ in range(100):
            if len(got) >= len(lines):
                break
            for msg in c.consume(num_messages=500, timeout=0.2):
                assert msg.error() is None, msg.error()
                key, value = msg.key(), msg.value()
                assert key is not None and value is not None
                got.append((msg.offset(), key.decode(), value.decode()))
        assert got == [(i, k, v) for i, (k, v) in enumerate(lines)]
    finally:
        c.close()

    # librdkafka decides from the broker's ApiVersions whether it may use the codec, and otherwise
    # silently sends uncompressed batches ("Broker does not support compression type ...").
    # Against Apache Kafka kcat compresses with every codec; its debug log names each batch's codec.
    sent_batches = [line for line in produced.stderr.splitlines() if "Produce MessageSet" in line]
    assert sent_batches, produced.stderr
    refused = [line for line in produced.stderr.splitlines() if "does not support compression" in line]
    assert not refused, refused[0]
    assert all(line.rstrip().endswith(f"{codec})") for line in sent_batches), sent_batches

    # The broker kept kcat's batches as produced: compressed with the codec asked for.
    segment = Path(shared_broker.config.data_dir) / f"{topic}-0" / "00000000000000000000.log"
    codecs = batch_codecs(segment)
    assert codecs, "no record batch in the segment"
    assert set(codecs) == {CODEC_IDS[codec]}
