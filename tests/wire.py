"""A minimal synchronous Kafka wire client for tests that need exact control over requests.

It speaks through ``broker.protocol`` (kio entities) and a plain socket, so tests can
send any API at any version, or raw bytes, and see exactly what comes back.
"""

from __future__ import annotations

import socket
import struct
import time
from typing import Any

from broker.protocol.build import build
from broker.protocol.codec import decode_response, encode_request, request_class
from broker.protocol.versions import ApiKey
from broker.storage.records import simple_batch


class WireClient:
    def __init__(self, bootstrap: str, timeout: float = 10.0) -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self._correlation = 0

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> WireClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def recv_frame(self) -> bytes:
        size = struct.unpack(">i", self._recv_exactly(4))[0]
        return self._recv_exactly(size)

    def _recv_exactly(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("connection closed by the broker")
            buf += chunk
        return bytes(buf)

    def request(self, api_key: int, version: int, data: dict[str, Any] | None = None, **fields: Any) -> Any:
        """Send one request built from plain data and return the decoded response body."""
        body = build(request_class(api_key, version), data, **fields)
        self._correlation += 1
        self.sock.sendall(encode_request(self._correlation, body, client_id="wire-test"))
        correlation, response = decode_response(api_key, version, self.recv_frame())
        assert correlation == self._correlation
        return response

    def is_open(self) -> bool:
        """True when the broker has not closed this connection."""
        self.sock.setblocking(False)
        try:
            return self.sock.recv(1, socket.MSG_PEEK) != b""
        except BlockingIOError:
            return True
        except OSError:
            return False
        finally:
            self.sock.setblocking(True)


def _topic(topic: str, **partition: Any) -> list[dict[str, Any]]:
    return [
        {"name": topic, "topic": topic, "partitions": [{"partition_index": 0, "partition": 0, **partition}]}
    ]


def sample_request(key: int, topic: str, group: str) -> dict[str, Any]:
    """A sensible request of each API, in field names that cover all its versions."""
    now = int(time.time() * 1000)
    match key:
        case ApiKey.PRODUCE:
            batch = simple_batch(0, [(b"k", b"v")], now)
            return {
                "acks": -1,
                "timeout": 5000,
                "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": batch}]}],
            }
        case ApiKey.FETCH:
            return {
                "replica_id": -1,
                "max_wait": 10,
                "min_bytes": 1,
                "max_bytes": 1 << 20,
                "session_epoch": -1,
                "topics": [
                    {
                        "topic": topic,
                        "partitions": [
                            {
                                "partition": 0,
                                "fetch_offset": 0,
                                "partition_max_bytes": 1 << 20,
                                "current_leader_epoch": -1,
                                "log_start_offset": -1,
                                "last_fetched_epoch": -1,
                            }
                        ],
                    }
                ],
            }
        case ApiKey.LIST_OFFSETS:
            return {"replica_id": -1, "topics": _topic(topic, timestamp=-1, current_leader_epoch=-1)}
        case ApiKey.METADATA:
            return {"topics": [{"name": topic}], "allow_auto_topic_creation": False}
        case ApiKey.OFFSET_COMMIT:
            return {
                "group_id": group,
                "generation_id_or_member_epoch": -1,
                "member_id": "",
                "retention_time": -1,
                "topics": [
                    {
                        "name": topic,
                        "partitions": [
                            {
                                "partition_index": 0,
                                "committed_offset": 1,
                                "committed_metadata": "m",
                                "committed_leader_epoch": -1,
                            }
                        ],
                    }
                ],
            }
        case ApiKey.OFFSET_FETCH:
            return {
                "group_id": group,
                "topics": [{"name": topic, "partition_indexes": [0]}],
                "groups": [{"group_id": group, "topics": [{"name": topic, "partition_indexes": [0]}]}],
            }
        case ApiKey.FIND_COORDINATOR:
            return {"key": group, "key_type": 0}
        case ApiKey.JOIN_GROUP:
            return {
                "group_id": _unique("join"),
                "session_timeout": 6000,
                "rebalance_timeout": 6000,
                "member_id": "",
                "protocol_type": "consumer",
                "protocols": [{"name": "range", "metadata": b"m"}],
            }
        case ApiKey.HEARTBEAT | ApiKey.SYNC_GROUP:
            return {"group_id": group, "generation_id": 1, "member_id": "nobody", "assignments": []}
        case ApiKey.LEAVE_GROUP:
            return {"group_id": group, "member_id": "nobody", "members": [{"member_id": "nobody"}]}
        case ApiKey.DESCRIBE_GROUPS:
            return {"groups": [group]}
        case ApiKey.LIST_GROUPS:
            return {"states_filter": []}
        case ApiKey.API_VERSIONS:
            return {"client_software_name": "wire-test", "client_software_version": "1.0"}
        case ApiKey.CREATE_TOPICS:
            return {
                "topics": [
                    {
                        "name": _unique("created"),
                        "num_partitions": 2,
                        "replication_factor": 1,
                        "assignments": [],
                        "configs": [{"name": "retention.ms", "value": "60000"}],
                    }
                ],
                "timeout": 5000,
            }
        case ApiKey.DELETE_TOPICS:
            return {"timeout": 5000, "topic_names": ["no-such-topic"], "topics": [{"name": "no-such-topic"}]}
        case ApiKey.DELETE_RECORDS:
            return {
                "timeout": 5000,
                "topics": [{"name": topic, "partitions": [{"partition_index": 0, "offset": 0}]}],
            }
        case ApiKey.INIT_PRODUCER_ID:
            return {
                "transactional_id": None,
                "transaction_timeout": 60000,
                "producer_id": -1,
                "producer_epoch": -1,
            }
        case ApiKey.OFFSET_FOR_LEADER_EPOCH:
            return {
                "replica_id": -1,
                "topics": [
                    {
                        "topic": topic,
                        "partitions": [{"partition": 0, "current_leader_epoch": -1, "leader_epoch": 0}],
                    }
                ],
            }
        case ApiKey.DESCRIBE_CONFIGS:
            return {
                "resources": [{"resource_type": 2, "resource_name": topic, "configuration_keys": None}],
                "include_synonyms": True,
                "include_documentation": True,
            }
        case ApiKey.ALTER_CONFIGS:
            return {
                "resources": [
                    {
                        "resource_type": 2,
                        "resource_name": topic,
                        "configs": [{"name": "retention.ms", "value": "86400000"}],
                    }
                ]
            }
        case ApiKey.CREATE_PARTITIONS:
            return {"topics": [{"name": "no-such-topic", "count": 3, "assignments": None}], "timeout": 5000}
        case ApiKey.DELETE_GROUPS:
            return {"groups_names": [_unique("absent")]}
        case ApiKey.INCREMENTAL_ALTER_CONFIGS:
            return {
                "resources": [
                    {
                        "resource_type": 2,
                        "resource_name": topic,
                        "configs": [{"name": "retention.ms", "config_operation": 0, "value": "7200000"}],
                    }
                ]
            }
        case ApiKey.DESCRIBE_CLUSTER:
            return {"include_cluster_authorized_operations": False, "endpoint_type": 1}
        case ApiKey.SASL_HANDSHAKE:
            return {"mechanism": "PLAIN"}
        case ApiKey.SASL_AUTHENTICATE:
            return {"auth_bytes": b"\x00alice\x00alice-secret"}
        case ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS:
            return {"users": [{"name": f"user-{topic}"}]}
        case ApiKey.ALTER_USER_SCRAM_CREDENTIALS:
            return {"deletions": [{"name": f"user-{topic}", "mechanism": 1}], "upsertions": []}
        case ApiKey.DESCRIBE_ACLS | ApiKey.DELETE_ACLS:
            acl_filter = {
                "resource_type_filter": 1,
                "resource_name_filter": None,
                "pattern_type_filter": 1,
                "principal_filter": None,
                "host_filter": None,
                "operation": 1,
                "permission_type": 1,
            }
            return acl_filter if key == ApiKey.DESCRIBE_ACLS else {"filters": [acl_filter]}
        case ApiKey.CREATE_ACLS:
            acl = {
                "resource_type": 2,
                "resource_name": topic,
                "resource_pattern_type": 3,
                "principal": "User:alice",
                "host": "*",
                "operation": 3,
                "permission_type": 3,
            }
            return {"creations": [acl]}
        # Transactions (H2a): an unknown transactional id answers with Kafka's codes.
        case ApiKey.ADD_PARTITIONS_TO_TXN:
            txn = {"transactional_id": _unique("txn"), "producer_id": 1, "producer_epoch": 0}
            topics = [{"name": topic, "partitions": [0]}]
            return {
                "v3_and_below_transactional_id": txn["transactional_id"],
                "v3_and_below_producer_id": 1,
                "v3_and_below_producer_epoch": 0,
                "v3_and_below_topics": topics,
                "transactions": [{**txn, "verify_only": True, "topics": topics}],
            }
        case ApiKey.ADD_OFFSETS_TO_TXN:
            return {
                "transactional_id": _unique("txn"),
                "producer_id": 1,
                "producer_epoch": 0,
                "group_id": group,
            }
        case ApiKey.END_TXN:
            return {
                "transactional_id": _unique("txn"),
                "producer_id": 1,
                "producer_epoch": 0,
                "committed": True,
            }
        case ApiKey.WRITE_TXN_MARKERS:
            return {
                "markers": [
                    {
                        "producer_id": 1,
                        "producer_epoch": 0,
                        "transaction_result": False,
                        "topics": [{"name": topic, "partition_indexes": [0]}],
                        "coordinator_epoch": 0,
                    }
                ]
            }
        case ApiKey.DESCRIBE_TRANSACTIONS:
            return {"transactional_ids": [_unique("txn")]}
        case ApiKey.LIST_TRANSACTIONS:
            return {"state_filters": [], "producer_id_filters": [], "duration_filter": -1}
        case ApiKey.TXN_OFFSET_COMMIT:
            partition = {"partition_index": 0, "committed_offset": 1, "committed_metadata": None}
            return {
                "transactional_id": _unique("txn"),
                "group_id": group,
                "producer_id": 1,
                "producer_epoch": 0,
                "topics": [{"name": topic, "partitions": [partition]}],
            }
        case ApiKey.DESCRIBE_PRODUCERS:
            return {"topics": [{"name": topic, "partition_indexes": [0]}]}
    raise AssertionError(f"no request template for API {key}")


def _unique(prefix: str) -> str:
    import uuid

    return f"{prefix}-{uuid.uuid4().hex[:10]}"
