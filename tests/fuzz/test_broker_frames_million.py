"""A million random and mutated frames against a broker process, while a real client works.

Frames are cheap to make: valid requests of every API and version (``SEEDS``) are
mutated with byte flips, overwrites with huge counts and length lies, truncations,
and random api keys and versions. Mutants that still decode (checked once, here, with
the broker's own decoder) are the bulk of each connection, pipelined, so the broker
reads and handles every one (at most ``NAMES`` distinct new topics, groups or
transactional ids among them, so the run does not spend itself listing what it made);
each connection ends with one hostile frame that makes the broker close it. Meanwhile
a confluent-kafka producer and consumer keep going and must see every record; the
broker must stay up, log no traceback and keep its memory.

The number of frames the broker read is its own count (requests handled, from its
metrics endpoint, plus connections it closed for a bad frame), not what was sent.
``SLUICEWAY_FUZZ_FRAMES`` sets the target (default a million).
"""

from __future__ import annotations

import os
import random
import re
import socket
import struct
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import fields, is_dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from confluent_kafka import Consumer, Producer

from broker.metadata import InvalidTopic, validate_topic_name
from broker.protocol.codec import ProtocolError, decode_request
from tests.fuzz.test_frames import SEED_TOPIC, SEEDS
from tests.support import BrokerProcess, free_port

TARGET = int(os.environ.get("SLUICEWAY_FUZZ_FRAMES", "1000000"))
PER_CONNECTION = 400  # decodable frames pipelined on one connection before its hostile one
POOL = 30_000  # distinct decodable mutants
HUGE = (struct.pack(">i", 2**31 - 1), struct.pack(">i", -2), b"\xff\xff\xff\xff\x0f", b"\x7f\xff")


def _mutant(rng: random.Random, seed: bytes) -> bytes:
    data = bytearray(seed)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(8, len(data)) if len(data) > 8 else 0  # keep api key, version, correlation
        match rng.randrange(4):
            case 0:
                data[i] ^= 1 << rng.randrange(8)
            case 1:
                blob = rng.choice(HUGE)
                data[i : i + len(blob)] = blob
            case 2:
                data[i] = rng.randrange(256)
            case _:
                del data[i : i + rng.randint(1, 4)]
    return bytes(data)


def _hostile(rng: random.Random) -> bytes:
    """One frame (with its size prefix) that the broker should refuse."""
    seed = rng.choice(SEEDS)
    match rng.randrange(5):
        case 0:  # truncated
            body = seed[: rng.randrange(len(seed))]
            return struct.pack(">i", len(body)) + body
        case 1:  # the size prefix lies
            return struct.pack(">i", rng.choice([-1, 2**31 - 1, len(seed) + rng.randint(1, 1000)])) + seed
        case 2:  # random api key and version
            body = struct.pack(">hh", rng.randint(-5, 200), rng.randint(-5, 60)) + seed[4:]
            return struct.pack(">i", len(body)) + body
        case 3:  # random bytes
            body = rng.randbytes(rng.randint(0, 64))
            return struct.pack(">i", len(body)) + body
        case _:  # a mutant, decodable or not
            body = _mutant(rng, seed)
            return struct.pack(">i", len(body)) + body


# A CreateTopics or CreatePartitions mutant asking for thousands of partitions is valid and
# expensive, not malformed: each takes seconds of file system work (on a worker thread,
# tests/broker/test_partition_creation.py) and three open files per partition until the
# descriptor budget refuses more, so a million frames would spend the run creating files.
_MANY_PARTITIONS = 100


def _slow(value: Any, depth: int = 0) -> bool:
    """A request whose timeouts, waits or partition counts would stall its connection's pipeline."""
    if depth > 3 or not is_dataclass(value):
        return False
    for f in fields(value):
        v = getattr(value, f.name)
        if f.name in ("num_partitions", "count") and isinstance(v, int) and v > _MANY_PARTITIONS:
            return True
        if ("timeout" in f.name or "wait" in f.name) and (
            (isinstance(v, timedelta) and v > timedelta(milliseconds=200))
            or (isinstance(v, int) and not isinstance(v, bool) and v > 200)
        ):
            return True
        items = v if isinstance(v, tuple) else (v,)
        if any(_slow(item, depth + 1) for item in items[:4]):
            return True
    return False


# A mutation that spells a new valid name in a request that creates what it names makes
# state, not malformed input: Metadata auto-creates the topic, OffsetCommit makes a simple
# group, and from then on every Metadata of all topics and every ListGroups lists it. With
# every such name kept the pool made ~150 topics and ~300 groups, and those two listings
# took a third of the broker's time. So at most NAMES new names are made; a creating
# mutant naming yet another is drawn again. Names the broker must refuse (an illegal topic
# name, an empty group id) make nothing and stay unlimited, as do names in requests that
# only look things up.
NAMES = 32
_TOPIC_LISTS = ("topics", "topic_data")  # entries whose "name" or "topic" is a topic name
# What each creating API (by Kafka's api key) makes from its names.
_CREATES = {
    3: ("topics",),  # Metadata: auto-creation
    19: ("topics",),  # CreateTopics
    8: ("group_id",),  # OffsetCommit: a simple group
    11: ("group_id",),  # JoinGroup
    22: ("transactional_id",),  # InitProducerId
    24: ("transactional_id",),  # AddPartitionsToTxn (v4+ in a list of transactions)
    25: ("transactional_id", "group_id"),  # AddOffsetsToTxn
    28: ("transactional_id", "group_id"),  # TxnOffsetCommit
}


def _valid_topic(name: str) -> bool:
    try:
        validate_topic_name(name)
    except InvalidTopic:
        return False
    return True


def _made(value: Any, kinds: tuple[str, ...], in_topics: bool = False, depth: int = 0) -> set[str]:
    """The valid names of the kinds a decoded request would create."""
    out: set[str] = set()
    if depth > 4 or not is_dataclass(value):
        return out
    for f in fields(value):
        v = getattr(value, f.name)
        for item in v if isinstance(v, tuple) else (v,):
            if isinstance(item, str):
                topic_name = in_topics and f.name in ("name", "topic") and _valid_topic(item)
                if topic_name or (f.name in kinds and item):
                    out.add(item)
            else:
                out |= _made(item, kinds, "topics" in kinds and f.name in _TOPIC_LISTS, depth + 1)
    return out


def _pool(rng: random.Random) -> list[bytes]:
    """Distinct mutants the broker will decode and handle (framed), none of them long polls."""
    seeds = [decode_request(seed) for seed in SEEDS]
    made = set().union(*(_made(req.body, _CREATES.get(req.api_key, ())) for req in seeds))
    cap = len(made) + NAMES  # the seeds' own names are made anyway
    out: set[bytes] = set()
    while len(out) < POOL:
        frame = _mutant(rng, rng.choice(SEEDS))
        try:
            req = decode_request(frame)
        except ProtocolError:
            continue
        if _slow(req.body):
            continue
        new = _made(req.body, _CREATES.get(req.api_key, ())) - made
        if len(made | new) > cap:
            continue
        made |= new
        out.add(struct.pack(">i", len(frame)) + frame)
    return sorted(out)


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[BrokerProcess, int]]:
    metrics_port = free_port()
    bp = BrokerProcess(
        Path(tmp_path_factory.mktemp("million")),
        socket_request_max_bytes="1048576",
        metrics_listener=f"http://127.0.0.1:{metrics_port}",
    ).start()
    yield bp, metrics_port
    bp.stop()


def _frames_read(bp: BrokerProcess, metrics_port: int) -> int:
    # The metrics listener shares the broker's event loop with the fuzzed connections, so a
    # scrape that is not answered means the loop is held: every client is waiting too. (That
    # is how a Fetch of no partitions with a long max_wait, which spun the loop, showed here.)
    try:
        text = httpx.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=30).text
    except httpx.TimeoutException:
        raise AssertionError(
            "the broker's event loop answered nothing for 30 s:\n" + bp.output()[-3000:]
        ) from None
    handled = sum(
        float(m)
        for m in re.findall(
            r"^kafka_network_requestmetrics_totaltime_seconds_count\{[^}]*\} (\S+)$", text, re.M
        )
    )
    return int(handled) + bp.output().count("closing connection from")


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _blast(bootstrap: str, payload: bytes) -> None:
    host, port = bootstrap.rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=30) as s:
            s.sendall(payload)
            s.shutdown(socket.SHUT_WR)
            while s.recv(1 << 20):
                pass  # responses are read so the broker never waits on us
    except OSError:
        pass  # closed by the broker mid-send: expected for hostile frames


class _WellBehaved(threading.Thread):
    """Produces numbered records and consumes them back until told to stop."""

    def __init__(self, bootstrap: str) -> None:
        super().__init__(name="well-behaved", daemon=True)
        self.bootstrap = bootstrap
        self.stop_event = threading.Event()
        self.sent = 0
        self.seen: set[bytes] = set()
        self.errors: list[str] = []

    def run(self) -> None:
        p = Producer({"bootstrap.servers": self.bootstrap, "linger.ms": 5})
        c = Consumer(
            {"bootstrap.servers": self.bootstrap, "group.id": "well-behaved", "auto.offset.reset": "earliest"}
        )
        c.subscribe(["well-behaved"])

        def delivered(err: Any, _msg: Any) -> None:
            if err is not None:
                self.errors.append(str(err))

        while not self.stop_event.is_set():
            p.produce("well-behaved", value=b"%d" % self.sent, on_delivery=delivered)
            self.sent += 1
            p.poll(0)
            for m in c.consume(100, 0.05):
                value = m.value()
                if m.error() is None and value is not None:
                    self.seen.add(value)
        if p.flush(60) != 0:
            self.errors.append("producer could not flush")
        expected = {b"%d" % i for i in range(self.sent)}
        deadline = time.monotonic() + 60
        while self.seen < expected and time.monotonic() < deadline:
            for m in c.consume(500, 0.5):
                value = m.value()
                if m.error() is None and value is not None:
                    self.seen.add(value)
        c.close()


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_a_million_frames(target: tuple[BrokerProcess, int]) -> None:
    bp, metrics_port = target
    rng = random.Random(int(os.environ.get("SLUICEWAY_FUZZ_SEED", "8")))
    pool = _pool(rng)
    client = _WellBehaved(bp.bootstrap)
    client.start()
    assert bp.proc is not None
    time.sleep(1)
    rss_start = _rss_kb(bp.proc.pid)
    started = time.monotonic()
    connections = 0

    def payloads() -> Iterator[bytes]:
        nonlocal connections
        while True:
            connections += 1
            yield b"".join(rng.choices(pool, k=PER_CONNECTION)) + _hostile(rng)

    read = 0
    batch = 64
    with ThreadPoolExecutor(max_workers=8) as pool_exec:
        gen = payloads()
        while read < TARGET:
            list(pool_exec.map(lambda p: _blast(bp.bootstrap, p), [next(gen) for _ in range(batch)]))
            assert bp.proc.poll() is None, "broker process died:\n" + bp.output()[-3000:]
            read = _frames_read(bp, metrics_port)
    elapsed = time.monotonic() - started
    rss_end = _rss_kb(bp.proc.pid)
    client.stop_event.set()
    client.join(180)
    print(
        f"\n{read} frames read by the broker over {connections} connections in {elapsed:.0f} s: "
        f"{read / elapsed:.0f} frames/s; distinct decodable mutants {len(pool)}; "
        f"broker RSS {rss_start // 1024} MiB -> {rss_end // 1024} MiB; "
        f"well-behaved client: {client.sent} records sent, {len(client.seen)} seen"
    )
    out = bp.output()
    failures = sorted(
        set(re.findall(r"ERROR closing connection from \S+ \(client [^)]*\): (\w+ v\d+) failed", out))
    )
    assert "Traceback" not in out, (
        f"handlers failed on bad input: {failures}\n" + out[out.index("Traceback") :][:6000]
    )
    assert not client.errors, client.errors[:5]
    assert len(client.seen) == client.sent
    assert rss_end - rss_start < 512 * 1024, "broker memory grew by more than 512 MiB"
    assert SEED_TOPIC  # the seed frames name this topic; it need not exist
