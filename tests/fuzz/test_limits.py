"""The broker's connection limits and its defences against slow clients.

Each test starts a real broker with a limit set low, misbehaves against it on raw
sockets, and then checks that a well-behaved client is still served.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import socket
import struct
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from confluent_kafka import Producer

from broker.connection_limits import ConnectionLimits, parse_overrides
from broker.protocol.build import build
from broker.protocol.codec import decode_response, encode_request, request_class
from broker.protocol.versions import ApiKey
from broker.server import EmbeddedBroker
from tests.support import embedded_broker, unique, wait_until
from tests.wire import WireClient, sample_request

StartBroker = Callable[..., EmbeddedBroker]


def _serving(bootstrap: str) -> None:
    """A well-behaved client gets an answer."""
    with WireClient(bootstrap) as c:
        versions = c.request(ApiKey.API_VERSIONS, 3, client_software_name="t", client_software_version="1")
        assert versions.error_code == 0 and versions.api_keys


def _closed_by_broker(sock: socket.socket) -> bool:
    """Read until the broker closes the connection (True) or nothing happens for 10 s (False)."""
    sock.settimeout(10)
    try:
        while sock.recv(1 << 16):
            pass
    except TimeoutError:
        return False
    except ConnectionError:
        pass
    return True


def _big_fetch(eb: EmbeddedBroker, records: int) -> tuple[str, bytes]:
    """A new topic holding ``records`` records of 900 KB, and a Fetch frame that asks for all
    of them (up to 10 MB) from its start: (topic, frame)."""
    topic = unique("big")
    p = Producer({"bootstrap.servers": eb.bootstrap, "message.max.bytes": 2_000_000})
    for _ in range(records):
        p.produce(topic, value=b"x" * 900_000)
    assert p.flush(30) == 0
    fetch = sample_request(ApiKey.FETCH, topic, "g")
    fetch["max_bytes"] = 50 << 20
    fetch["topics"][0]["partitions"][0]["partition_max_bytes"] = 10 << 20
    return topic, encode_request(1, build(request_class(ApiKey.FETCH, 4), fetch), client_id="never-reads")


def _connect(bootstrap: str) -> socket.socket:
    host, port = bootstrap.rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=10)


@pytest.fixture
def broker_with(tmp_path: Path) -> Iterator[StartBroker]:
    numbers = itertools.count()
    with contextlib.ExitStack() as stack:

        def start(**overrides: str) -> EmbeddedBroker:
            return stack.enter_context(embedded_broker(tmp_path / f"b{next(numbers)}", **overrides))

        yield start


# -- pure logic ---------------------------------------------------------------------------


def test_overrides_parse_as_kafka_writes_them() -> None:
    assert parse_overrides("") == {}
    assert parse_overrides("127.0.0.1:5, hostA:0,[::1]:7") == {"127.0.0.1": 5, "hostA": 0, "::1": 7}
    for bad in ("127.0.0.1", "host:x", ":4"):
        with pytest.raises(ValueError, match="host:count"):
            parse_overrides(bad)


def test_limits_count_per_host_and_in_total() -> None:
    limits = ConnectionLimits(max_connections=3, per_ip=2, overrides={"10.0.0.9": 0})
    assert limits.admit("10.0.0.1") is None
    assert limits.admit("10.0.0.1") is None
    refused = limits.admit("10.0.0.1")
    assert refused is not None and "max.connections.per.ip=2" in refused
    assert limits.admit("10.0.0.9") is not None  # an override of 0 refuses the host
    assert limits.admit("10.0.0.2") is None
    refused = limits.admit("10.0.0.3")
    assert refused is not None and "max.connections=3" in refused
    limits.release("10.0.0.1")
    assert limits.count("10.0.0.1") == 1
    assert limits.admit("10.0.0.3") is None


def test_a_bad_override_is_a_config_error(tmp_path: Path) -> None:
    from broker.config import ConfigError, load_config

    with pytest.raises(ConfigError, match=r"max\.connections\.per\.ip\.overrides"):
        load_config({"log.dirs": str(tmp_path), "max.connections.per.ip.overrides": "127.0.0.1=3"})


# -- connection counts ------------------------------------------------------------------------


def _admitted(bootstrap: str) -> bool:
    """A new connection is served (False when the broker closes it at once)."""
    try:
        _serving(bootstrap)
    except ConnectionError:
        return False
    return True


def _metadata(c: WireClient) -> None:
    c.request(ApiKey.METADATA, 12, topics=[], allow_auto_topic_creation=False)


def test_connections_above_the_per_ip_limit_are_closed_at_once(broker_with: StartBroker) -> None:
    eb = broker_with(max_connections_per_ip="3")
    held = [WireClient(eb.bootstrap) for _ in range(3)]
    try:
        for c in held:  # each is really being served, so it counts
            _metadata(c)
        with _connect(eb.bootstrap) as extra:
            assert _closed_by_broker(extra)
        for c in held:  # the refusal took nothing from the others
            _metadata(c)
        held.pop().close()
        # The broker notices the close asynchronously; then there is room again.
        wait_until(lambda: _admitted(eb.bootstrap), message="a connection slot to free up")
    finally:
        for c in held:
            c.close()


def test_per_ip_overrides_and_max_connections(broker_with: StartBroker) -> None:
    eb = broker_with(max_connections_per_ip="1", max_connections_per_ip_overrides="127.0.0.1:2")
    with WireClient(eb.bootstrap) as first, WireClient(eb.bootstrap) as second:
        _metadata(first)
        _metadata(second)  # the override allows a second one from 127.0.0.1
        with _connect(eb.bootstrap) as third:
            assert _closed_by_broker(third)
        _metadata(first)

    eb2 = broker_with(max_connections="1")
    with WireClient(eb2.bootstrap) as only:
        _metadata(only)
        with _connect(eb2.bootstrap) as extra:
            assert _closed_by_broker(extra)
        _metadata(only)
    wait_until(lambda: _admitted(eb2.bootstrap), message="a connection slot to free up")


# -- slow and oversized requests ---------------------------------------------------------------


def _metadata_frame() -> bytes:
    body = build(request_class(ApiKey.METADATA, 12), sample_request(ApiKey.METADATA, "t", "g"))
    return encode_request(7, body, client_id="slow")


def test_a_client_that_starts_a_request_and_stalls_is_closed(
    broker_with: StartBroker, caplog: pytest.LogCaptureFixture
) -> None:
    # The idle timeout stays at its default (10 minutes): only the per-request deadline can act.
    eb = broker_with(socket_request_read_timeout_ms="300")
    caplog.set_level(logging.WARNING, logger="broker.server")
    frame = _metadata_frame()
    with _connect(eb.bootstrap) as half_prefix, _connect(eb.bootstrap) as half_body:
        half_prefix.sendall(frame[:2])
        half_body.sendall(frame[:-3])
        _serving(eb.bootstrap)  # while two requests hang half-sent
        assert _closed_by_broker(half_prefix)
        assert _closed_by_broker(half_body)
    assert "socket.request.read.timeout.ms" in caplog.text
    # A connection that is merely idle between requests is not a slow request.
    with WireClient(eb.bootstrap) as patient:
        patient.request(ApiKey.METADATA, 12, topics=[], allow_auto_topic_creation=False)
        time.sleep(0.6)  # longer than the per-request deadline, far below connections.max.idle.ms
        patient.request(ApiKey.METADATA, 12, topics=[], allow_auto_topic_creation=False)


def test_a_client_that_trickles_a_request_is_closed(broker_with: StartBroker) -> None:
    eb = broker_with(socket_request_read_timeout_ms="300")
    frame = struct.pack(">i", 5000) + _metadata_frame()[4:] + b"\x00" * 5000  # announces 5000 bytes
    sent = 0
    with _connect(eb.bootstrap) as slow:
        try:
            for sent in range(len(frame)):  # one byte every 20 ms: 100 s for the whole frame
                slow.sendall(frame[sent : sent + 1])
                time.sleep(0.02)
                if sent % 10 == 0:
                    slow.setblocking(False)
                    try:
                        if slow.recv(1) == b"":
                            break
                    except BlockingIOError:
                        pass
                    finally:
                        slow.setblocking(True)
        except ConnectionError:
            pass
        assert sent < len(frame) - 1, "the broker waited for the whole trickled frame"
    _serving(eb.bootstrap)


def test_an_oversized_frame_is_refused_from_its_size_prefix(
    broker_with: StartBroker, caplog: pytest.LogCaptureFixture
) -> None:
    eb = broker_with(socket_request_max_bytes="4096")
    caplog.set_level(logging.WARNING, logger="broker.server")
    for announced in (4097, 2**31 - 1, -1):
        with _connect(eb.bootstrap) as s:
            s.sendall(struct.pack(">i", announced) + b"\x00" * 16)  # the rest never comes
            assert _closed_by_broker(s)  # at once, not after a read timeout or idle time
    assert "socket.request.max.bytes" in caplog.text
    _serving(eb.bootstrap)


def test_a_client_that_never_reads_responses_cannot_make_the_broker_buffer(
    broker_with: StartBroker, caplog: pytest.LogCaptureFixture
) -> None:
    eb = broker_with(connections_max_idle_ms="1000", message_max_bytes="2000000")
    caplog.set_level(logging.WARNING, logger="broker.server")
    _, one = _big_fetch(eb, records=4)
    requests = 200  # ~3.6 MB of records per response: 720 MB if the broker buffered them all
    with _connect(eb.bootstrap) as greedy:
        greedy.sendall(one * requests)  # and read nothing
        wait_until(
            lambda: "connections.max.idle.ms" in caplog.text, timeout=60, message="the broker to give up"
        )
        _serving(eb.bootstrap)
        received = 0
        greedy.settimeout(30)
        try:
            while chunk := greedy.recv(1 << 20):
                received += len(chunk)
        except ConnectionError:
            pass
        # What was in flight in the socket buffers arrives; the rest was never produced.
        assert received < requests * 3_600_000 // 2
    _serving(eb.bootstrap)


def test_an_idle_connection_is_closed_and_an_active_one_is_not(
    broker_with: StartBroker, caplog: pytest.LogCaptureFixture
) -> None:
    # The broker keeps one timer per connection and moves only its deadline per request
    # (broker.connection_limits.Deadline): a request must push the idle deadline back.
    eb = broker_with(connections_max_idle_ms="1000")
    caplog.set_level(logging.DEBUG, logger="broker.server")
    with WireClient(eb.bootstrap) as busy, WireClient(eb.bootstrap) as idle:
        idle.request(ApiKey.METADATA, 12, topics=[], allow_auto_topic_creation=False)
        for _ in range(30):  # 3 s of requests 0.1 s apart: three idle timeouts' worth
            busy.request(ApiKey.METADATA, 12, topics=[], allow_auto_topic_creation=False)
            time.sleep(0.1)
        assert _closed_by_broker(idle.sock)
        assert busy.is_open()
        busy.request(ApiKey.METADATA, 12, topics=[], allow_auto_topic_creation=False)
    assert "closing idle connection" in caplog.text
    assert "socket.request.read.timeout.ms" not in caplog.text


def test_pipelined_requests_are_all_answered_in_order_before_a_bad_frame_closes(
    broker_with: StartBroker,
) -> None:
    # Answers to pipelined requests go out together (broker.responses.ResponseQueue: at the end
    # of the loop's turn, or at once past 64 KiB, which 3,000 answers cross); those queued
    # when a bad frame ends the connection must still reach the client, in order.
    eb = broker_with()
    body = build(request_class(ApiKey.METADATA, 12), topics=[], allow_auto_topic_creation=False)
    n = 3000
    frames = b"".join(encode_request(i, body, client_id="pipelined") for i in range(1, n + 1))
    garbage = struct.pack(">i", 8) + struct.pack(">hhi", 3, 12, n + 1)  # a header cut short
    with WireClient(eb.bootstrap) as c:
        c.send_raw(frames + garbage)
        for i in range(1, n + 1):
            correlation, response = decode_response(ApiKey.METADATA, 12, c.recv_frame())
            assert correlation == i
            assert response.brokers
        assert _closed_by_broker(c.sock)
    _serving(eb.bootstrap)


def test_without_an_idle_timeout_only_a_started_request_has_a_deadline(broker_with: StartBroker) -> None:
    eb = broker_with(connections_max_idle_ms="0", socket_request_read_timeout_ms="300")
    with WireClient(eb.bootstrap) as patient, _connect(eb.bootstrap) as stalled:
        patient.request(ApiKey.METADATA, 12, topics=[], allow_auto_topic_creation=False)
        stalled.sendall(_metadata_frame()[:-3])
        assert _closed_by_broker(stalled)
        time.sleep(0.6)  # twice the read deadline, between requests
        assert patient.is_open()
        patient.request(ApiKey.METADATA, 12, topics=[], allow_auto_topic_creation=False)


@pytest.mark.parametrize("ended_by_broker", [False, True], ids=["open", "ended-by-a-bad-frame"])
def test_shutdown_is_not_held_by_a_client_that_never_reads(
    broker_with: StartBroker, ended_by_broker: bool
) -> None:
    # A stopping broker drops what such a client has not read (Kafka closes its sockets at
    # shutdown); waiting for it to read would hold stop() for as long as the client likes.
    # A connection the broker already ended (a bad frame) is dropped too, not left open.
    eb = broker_with(message_max_bytes="2000000")
    topic, one = _big_fetch(eb, records=1)
    with _connect(eb.bootstrap) as greedy:
        # ~45 MB of answers, and it reads none of them.
        greedy.sendall(one * 50 + (struct.pack(">i", -5) if ended_by_broker else b""))
        # Until the broker has filled the socket buffers and waits for the client to read.
        wait_until(
            lambda: eb.server is not None and eb.server.broker.metrics.bytes_out[topic] >= 3 * 900_000,
            timeout=30,
            message="the broker to answer fetches",
        )
        time.sleep(0.5)
        eb.stop(timeout=20)  # raises TimeoutError while the client holds it (it did)
        # The broker's end is gone: reading what made it through ends in EOF or a reset.
        assert _closed_by_broker(greedy)
