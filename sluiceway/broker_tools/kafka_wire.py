"""A small Kafka protocol client for the admin APIs librdkafka's AdminClient does not offer
(ListTransactions, DescribeTransactions, DescribeProducers, WriteTxnMarkers).

Requests and responses are kio entities (``broker.protocol``); each connection asks
ApiVersions once and sends every request at the highest version both sides know.
Metadata tells which broker leads a partition; FindCoordinator which one coordinates
a transactional id, so the tools work against a multi-broker Kafka cluster too. Only
PLAINTEXT listeners are spoken: a ``security.protocol`` other than PLAINTEXT in the
tool's properties is refused with a clear message.
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kio.schema.errors import ErrorCode
from kio.serial.readers import (
    read_compact_array_length,
    read_compact_string,
    read_int16,
    read_int32,
    read_int64,
    read_unsigned_varint,
)

from broker.protocol.build import build
from broker.protocol.codec import decode_response, encode_request, request_class
from sluiceway.broker_tools.kafka_clients import ToolError

API_VERSIONS = 18
METADATA = 3
FIND_COORDINATOR = 10
WRITE_TXN_MARKERS = 27
DESCRIBE_PRODUCERS = 61
DESCRIBE_TRANSACTIONS = 65
LIST_TRANSACTIONS = 66
TRANSACTION_KEY = 1  # FindCoordinator key type of a transactional id

# What this client can build, per API: kio's classes, and shapes whose field names the
# callers fill (FindCoordinator 4+ batches keys; Metadata 13 is as 12 for us).
CLIENT_VERSIONS: dict[int, tuple[int, int]] = {
    METADATA: (1, 12),
    FIND_COORDINATOR: (1, 3),
    WRITE_TXN_MARKERS: (1, 1),  # kio has no v0
    DESCRIBE_PRODUCERS: (0, 0),
    DESCRIBE_TRANSACTIONS: (0, 0),
    LIST_TRANSACTIONS: (0, 1),
}

# Kafka's texts of the errors these tools meet (``Errors.java``), for the one-line failures.
_MESSAGES = {
    ErrorCode.transactional_id_not_found: "The transactionalId could not be found.",
    ErrorCode.transactional_id_authorization_failed: "Transactional Id authorization failed.",
    ErrorCode.cluster_authorization_failed: "Cluster authorization failed.",
    ErrorCode.topic_authorization_failed: "Topic authorization failed.",
    ErrorCode.unknown_topic_or_partition: "This server does not host this topic-partition.",
    ErrorCode.not_leader_or_follower: "For requests intended only for the leader, this error indicates that "
    "the broker is not the current leader.",
    ErrorCode.coordinator_not_available: "The coordinator is not available.",
    ErrorCode.coordinator_load_in_progress: "The coordinator is loading and hence can't process requests.",
    ErrorCode.not_coordinator: "This is not the correct coordinator.",
    ErrorCode.invalid_producer_epoch: "Producer attempted to produce with an old epoch.",
    ErrorCode.transaction_coordinator_fenced: "Indicates that the transaction coordinator sending a "
    "WriteTxnMarker is no longer the current coordinator for a given producer",
    ErrorCode.unsupported_version: "The version of API is not supported.",
}


def error_message(code: ErrorCode) -> str:
    return _MESSAGES.get(code, code.name.upper())


class KafkaError(ToolError):
    """A broker answered with an error code."""

    def __init__(self, code: ErrorCode, what: str = "") -> None:
        super().__init__(f"{what}: {error_message(code)}" if what else error_message(code))
        self.code = code


@dataclass(frozen=True, slots=True)
class Node:
    node_id: int
    host: str
    port: int


class Connection:
    """One socket to one broker, requests answered in order."""

    def __init__(self, host: str, port: int, timeout_s: float, client_id: str) -> None:
        try:
            self.sock = socket.create_connection((host, port), timeout=timeout_s)
        except OSError as exc:
            raise ToolError(
                f"Could not reach the Kafka broker at {host}:{port}: {exc.strerror or exc}"
            ) from None
        self.address = f"{host}:{port}"
        self.client_id = client_id
        self._correlation = 0
        self.versions: dict[int, tuple[int, int]] = {}
        answer = self._send(API_VERSIONS, 0, {})
        if answer.error_code != ErrorCode.none:
            raise KafkaError(answer.error_code, f"ApiVersions to {self.address}")
        self.versions = {int(k.api_key): (int(k.min_version), int(k.max_version)) for k in answer.api_keys}

    def close(self) -> None:
        self.sock.close()

    def version_for(self, api_key: int) -> int:
        ours = CLIENT_VERSIONS[api_key]
        theirs = self.versions.get(api_key)
        if theirs is None or theirs[1] < ours[0] or theirs[0] > ours[1]:
            raise KafkaError(ErrorCode.unsupported_version, f"API {api_key} at {self.address}")
        return min(ours[1], theirs[1])

    def request(self, api_key: int, data: Mapping[str, Any], min_version: int = 0) -> Any:
        """Send ``data`` at the highest common version (at least ``min_version``)."""
        version = self.version_for(api_key)
        if version < min_version:
            raise KafkaError(ErrorCode.unsupported_version, f"API {api_key} v{min_version} at {self.address}")
        return self._send(api_key, version, data)

    def _send(self, api_key: int, version: int, data: Mapping[str, Any]) -> Any:
        body = build(request_class(api_key, version), dict(data))
        self._correlation += 1
        try:
            self.sock.sendall(encode_request(self._correlation, body, client_id=self.client_id))
            size = struct.unpack(">i", self._read(4))[0]
            frame = self._read(size)
        except OSError as exc:
            raise ToolError(f"Connection to {self.address} failed: {exc.strerror or exc}") from None
        own = _DECODERS.get((api_key, version))
        correlation, response = own(frame) if own is not None else decode_response(api_key, version, frame)
        if correlation != self._correlation:
            raise ToolError(f"{self.address} answered request {correlation}, expected {self._correlation}")
        return response

    def _read(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ToolError(f"{self.address} closed the connection")
            buf += chunk
        return bytes(buf)


class Cluster:
    """Connections to a cluster's brokers, found through the bootstrap servers."""

    def __init__(
        self,
        bootstrap: str,
        settings: Mapping[str, str],
        timeout_s: float,
        client_id: str = "sluiceway-tools",
    ) -> None:
        protocol = settings.get("security.protocol", "PLAINTEXT").upper()
        if protocol != "PLAINTEXT":
            raise ToolError(f"security.protocol={protocol} is not supported by this command (PLAINTEXT only)")
        self.timeout_s = timeout_s
        self.client_id = client_id
        self._by_node: dict[int, Connection] = {}
        self.bootstrap = self._connect_bootstrap(bootstrap)
        self.nodes: dict[int, Node] = {}

    def _connect_bootstrap(self, bootstrap: str) -> Connection:
        failures = []
        for server in (s.strip() for s in bootstrap.split(",") if s.strip()):
            host, _, port = server.rpartition(":")
            if not host or not port.isdigit():
                raise ToolError(f"Invalid bootstrap server {server!r}: expected host:port")
            try:
                return Connection(host.strip("[]"), int(port), self.timeout_s, self.client_id)
            except ToolError as exc:
                failures.append(str(exc))
        raise ToolError("; ".join(failures) or "no bootstrap server given")

    def close(self) -> None:
        for conn in {id(c): c for c in [self.bootstrap, *self._by_node.values()]}.values():
            conn.close()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def metadata(self, topics: list[str] | None) -> Any:
        answer = self.bootstrap.request(
            METADATA,
            {
                "topics": None if topics is None else [{"name": t} for t in topics],
                "allow_auto_topic_creation": False,
            },
        )
        self.nodes = {int(b.node_id): Node(int(b.node_id), b.host, int(b.port)) for b in answer.brokers}
        return answer

    def broker_ids(self) -> list[int]:
        self.metadata([])
        return sorted(self.nodes)

    def leader_of(self, topic: str, partition: int) -> int:
        answer = self.metadata([topic])
        for t in answer.topics:
            if t.name != topic:
                continue
            if t.error_code != ErrorCode.none:
                raise KafkaError(t.error_code, f"{topic}-{partition}")
            for p in t.partitions:
                if p.partition_index == partition:
                    if p.error_code not in (ErrorCode.none, ErrorCode.replica_not_available):
                        raise KafkaError(p.error_code, f"{topic}-{partition}")
                    return int(p.leader_id)
        raise KafkaError(ErrorCode.unknown_topic_or_partition, f"{topic}-{partition}")

    def coordinator_of_transaction(self, transactional_id: str) -> int:
        answer = self.bootstrap.request(
            FIND_COORDINATOR, {"key": transactional_id, "key_type": TRANSACTION_KEY}
        )
        if answer.error_code != ErrorCode.none:
            raise KafkaError(answer.error_code)
        node = Node(int(answer.node_id), answer.host, int(answer.port))
        self.nodes[node.node_id] = node
        return node.node_id

    def node(self, node_id: int) -> Connection:
        conn = self._by_node.get(node_id)
        if conn is None:
            if not self.nodes:
                self.metadata([])
            where = self.nodes.get(node_id)
            if where is None:
                raise ToolError(f"Broker {node_id} is not in the cluster's metadata")
            conn = Connection(where.host, where.port, self.timeout_s, self.client_id)
            self._by_node[node_id] = conn
        return conn


# -- responses kio cannot read ------------------------------------------------------------
# kio reads TransactionStartTimeMs as a datetime and refuses the -1 Kafka sends for a
# transaction that has not started (Empty, or an unknown id), so DescribeTransactions v0 is
# read here, into the same field names with milliseconds as ints.


@dataclass(frozen=True, slots=True)
class TopicData:
    topic: str
    partitions: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class TransactionState:
    error_code: ErrorCode
    transactional_id: str
    transaction_state: str
    transaction_timeout: int  # ms
    transaction_start_time: int  # ms, -1 when none
    producer_id: int
    producer_epoch: int
    topics: tuple[TopicData, ...] = field(default_factory=tuple)


@dataclass(frozen=True, slots=True)
class DescribeTransactionsResponse:
    throttle_time: int
    transaction_states: tuple[TransactionState, ...]


class _Cursor:
    """kio's readers return (value, bytes used); this keeps the position."""

    def __init__(self, buf: bytes) -> None:
        self.buf = buf
        self.pos = 0

    def take(self, reader: Callable[[bytes, int], tuple[Any, int]]) -> Any:
        value, used = reader(self.buf, self.pos)
        self.pos += used
        return value

    def skip_tags(self) -> None:
        for _ in range(self.take(read_unsigned_varint)):
            self.take(read_unsigned_varint)  # tag
            self.pos += self.take(read_unsigned_varint)  # size, then the value skipped

    def count(self) -> int:
        return int(self.take(read_compact_array_length) or 0)  # a null array reads as empty


def _describe_transactions_v0(frame: bytes) -> tuple[int, DescribeTransactionsResponse]:
    c = _Cursor(bytes(frame))
    correlation = c.take(read_int32)
    c.skip_tags()  # response header v1
    throttle = c.take(read_int32)
    states = []
    for _ in range(c.count()):
        error = c.take(read_int16)
        txn_id, state = c.take(read_compact_string), c.take(read_compact_string)
        timeout, start = c.take(read_int32), c.take(read_int64)
        pid, epoch = c.take(read_int64), c.take(read_int16)
        topics = []
        for _ in range(c.count()):
            name = c.take(read_compact_string)
            parts = tuple(c.take(read_int32) for _ in range(c.count()))
            c.skip_tags()
            topics.append(TopicData(name, parts))
        c.skip_tags()
        states.append(
            TransactionState(ErrorCode(error), txn_id, state, timeout, start, pid, epoch, tuple(topics))
        )
    return correlation, DescribeTransactionsResponse(throttle, tuple(states))


_DECODERS: dict[tuple[int, int], Callable[[bytes], tuple[int, Any]]] = {
    (DESCRIBE_TRANSACTIONS, 0): _describe_transactions_v0,
}
