"""Random and mutated frames never stop the broker from serving a well-behaved client.

The broker runs as its own process so a crash cannot hide; hypothesis throws garbage,
truncations and bit flips of real requests (every API, every version) at it, each on
its own connection, and after every example a clean client must still get answers.
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from broker.protocol.build import build
from broker.protocol.codec import encode_request, request_class
from broker.protocol.versions import SUPPORTED_VERSIONS, ApiKey
from tests.support import BrokerProcess
from tests.wire import WireClient, sample_request

SEED_TOPIC = "fuzz-seed"
SEED_GROUP = "fuzz-group"


def _seed_frames() -> list[bytes]:
    """Valid requests of every API at every version (without the size prefix)."""
    frames = []
    for key, (lo, hi) in sorted(SUPPORTED_VERSIONS.items()):
        if key == ApiKey.DELETE_TOPICS:
            continue  # mutations would only ever hit our own seed topic
        for v in range(lo, hi + 1):
            body = build(request_class(key, v), sample_request(key, SEED_TOPIC, SEED_GROUP))
            frames.append(encode_request(1, body, client_id="fuzz")[4:])
    return frames


SEEDS = _seed_frames()


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    # A small frame cap so oversized announcements are cheap to try.
    bp = BrokerProcess(Path(tmp_path_factory.mktemp("fuzz")), socket_request_max_bytes="1048576").start()
    with WireClient(bp.bootstrap) as c:
        c.request(
            ApiKey.CREATE_TOPICS,
            5,
            topics=[{"name": SEED_TOPIC, "num_partitions": 1, "replication_factor": 1}],
            timeout=5000,
        )
    yield bp
    bp.stop()


def _throw(bootstrap: str, data: bytes) -> None:
    """Send bytes on a fresh connection, read whatever comes back until close or a short timeout."""
    host, port = bootstrap.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as s:
        try:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
            s.settimeout(0.3)
            while s.recv(65536):
                pass
        except (TimeoutError, ConnectionError, OSError):
            pass


def _still_serving(bp: BrokerProcess) -> None:
    assert bp.proc is not None and bp.proc.poll() is None, "broker process died:\n" + bp.output()[-3000:]
    with WireClient(bp.bootstrap) as c:
        md = c.request(ApiKey.METADATA, 12, topics=[{"name": SEED_TOPIC}], allow_auto_topic_creation=False)
        assert md.topics[0].name == SEED_TOPIC and len(md.brokers) == 1


def framed(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


mutation = st.tuples(
    st.sampled_from(["flip", "truncate", "insert", "delete", "overwrite"]),
    st.integers(0, 10_000),
    st.binary(min_size=1, max_size=8),
)


def _mutate(frame: bytes, ops: list[tuple[str, int, bytes]]) -> bytes:
    data = bytearray(frame)
    for op, pos, blob in ops:
        if not data:
            break
        i = pos % len(data)
        if op == "flip":
            data[i] ^= blob[0] or 1
        elif op == "truncate":
            del data[i:]
        elif op == "insert":
            data[i:i] = blob
        elif op == "delete":
            del data[i : i + len(blob)]
        else:
            data[i : i + len(blob)] = blob
    return bytes(data)


FUZZ = settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@FUZZ
@given(payload=st.binary(max_size=512), lie=st.integers(-(2**31), 2**31 - 1) | st.none())
def test_random_frames(target: BrokerProcess, payload: bytes, lie: int | None) -> None:
    size = len(payload) if lie is None else lie
    _throw(target.bootstrap, struct.pack(">i", size) + payload)
    _still_serving(target)


@FUZZ
@given(seed=st.sampled_from(range(len(SEEDS))), ops=st.lists(mutation, min_size=1, max_size=4))
def test_mutated_requests(target: BrokerProcess, seed: int, ops: list[tuple[str, int, bytes]]) -> None:
    _throw(target.bootstrap, framed(_mutate(SEEDS[seed], ops)))
    _still_serving(target)


@FUZZ
@given(seed=st.sampled_from(range(len(SEEDS))), body=st.binary(max_size=300))
def test_valid_header_random_body(target: BrokerProcess, seed: int, body: bytes) -> None:
    header_end = 8 + 2 + len("fuzz")  # api key, version, correlation id, client id (int16 length + bytes)
    frame = SEEDS[seed][:header_end]
    api_key, version = struct.unpack_from(">hh", frame)
    if request_class(api_key, version).__header_schema__.__flexible__:
        frame += b"\x00"  # empty tagged fields of header v2
    _throw(target.bootstrap, framed(frame + body))
    _still_serving(target)


def test_broker_survives_the_fuzzing_and_logs_without_flooding(target: BrokerProcess) -> None:
    for payload in (b"", b"\x00" * 3, struct.pack(">i", 2**31 - 1), struct.pack(">i", -5) + b"abc"):
        _throw(target.bootstrap, payload)
    _still_serving(target)
    # A real client still produces and consumes.
    from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

    p = Producer({"bootstrap.servers": target.bootstrap})
    p.produce("after-fuzz", value=b"alive")
    assert p.flush(15) == 0
    c = Consumer({"bootstrap.servers": target.bootstrap, "group.id": "after-fuzz"})
    c.assign([TopicPartition("after-fuzz", 0, OFFSET_BEGINNING)])
    m = None
    for _ in range(50):
        m = c.poll(0.2)
        if m is not None and m.error() is None:
            break
    c.close()
    assert m is not None and m.value() == b"alive"
    out = target.output()
    # Bad clients get one line each; a traceback appears at most once per kind of failure.
    assert out.count("Traceback") <= 10, out[-5000:]
