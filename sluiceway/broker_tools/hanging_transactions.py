"""``sluiceway transactions find-hanging``: Kafka's ``FindHangingTransactionsCommand``.

A transaction hangs when a partition holds it open (DescribeProducers reports a current
transaction start offset) for longer than any transaction may last, while its
coordinator does not count that partition in the producer's transaction (no
transactional id lists the producer id, the id is unknown, or DescribeTransactions does
not name the partition), so no marker will ever come and the partition's last stable
offset is stuck. ``abort --start-offset`` ends such a transaction.

``hanging`` is the pure decision; ``find_hanging`` gathers what it needs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kio.schema.errors import ErrorCode

from sluiceway.broker_tools.kafka_wire import (
    DESCRIBE_PRODUCERS,
    DESCRIBE_TRANSACTIONS,
    LIST_TRANSACTIONS,
    Cluster,
    KafkaError,
)

HEADERS = [
    "Topic",
    "Partition",
    "ProducerId",
    "ProducerEpoch",
    "CoordinatorEpoch",
    "StartOffset",
    "LastTimestamp",
    "Duration(min)",
]
_BATCH = 500  # partitions per DescribeProducers request, as Kafka's tool

TopicPartition = tuple[str, int]


@dataclass(frozen=True, slots=True)
class OpenTransaction:
    tp: TopicPartition
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    start_offset: int
    last_timestamp: int


def candidates(
    producers: Mapping[TopicPartition, Sequence[Any]], now_ms: int, max_timeout_ms: int
) -> list[OpenTransaction]:
    """Transactions open in a partition for longer than ``max_timeout_ms`` (since the
    producer last wrote there)."""
    return [
        OpenTransaction(
            tp,
            int(p.producer_id),
            int(p.producer_epoch),
            int(p.coordinator_epoch),
            int(p.current_txn_start_offset),
            int(p.last_timestamp),
        )
        for tp, states in producers.items()
        for p in states
        if p.current_txn_start_offset >= 0 and now_ms - p.last_timestamp > max_timeout_ms
    ]


def hanging(
    open_txns: Sequence[OpenTransaction],
    transactional_ids: Mapping[int, str],
    described: Mapping[str, set[TopicPartition] | None],
) -> list[OpenTransaction]:
    """Of ``open_txns``, those no coordinator will write a marker for: the producer id has no
    transactional id, the id is not found (None), or its transaction does not include the
    partition (DescribeTransactions lists the partitions of an ongoing transaction and
    those still waiting for markers)."""
    out = []
    for txn in open_txns:
        txn_id = transactional_ids.get(txn.producer_id)
        partitions = described.get(txn_id) if txn_id is not None else None
        if partitions is None or txn.tp not in partitions:
            out.append(txn)
    return out


def rows(txns: Sequence[OpenTransaction], now_ms: int) -> list[list[str]]:
    return [
        [
            t.tp[0],
            str(t.tp[1]),
            str(t.producer_id),
            str(t.producer_epoch),
            str(t.coordinator_epoch),
            str(t.start_offset),
            str(t.last_timestamp),
            str((now_ms - t.last_timestamp) // 60_000),
        ]
        for t in txns
    ]


# -- gathering --------------------------------------------------------------------------


def _partitions_by_node(
    cluster: Cluster, topic: str | None, partition: int | None, broker_id: int | None
) -> dict[int, list[TopicPartition]]:
    """The partitions to search, by the broker to ask: ``broker_id`` (those it has a replica
    of) or each partition's leader."""
    answer = cluster.metadata(None if topic is None else [topic])
    by_node: dict[int, list[TopicPartition]] = defaultdict(list)
    for t in answer.topics:
        if t.error_code != ErrorCode.none:
            raise KafkaError(t.error_code, f"topic {t.name}")
        for p in t.partitions:
            if partition is not None and p.partition_index != partition:
                continue
            if broker_id is not None and broker_id not in getattr(p, "replica_nodes", ()):
                continue
            node = broker_id if broker_id is not None else int(p.leader_id)
            by_node[node].append((t.name, int(p.partition_index)))
    return by_node


def _describe_producers(cluster: Cluster, node: int, tps: list[TopicPartition]) -> dict[TopicPartition, Any]:
    found: dict[TopicPartition, Any] = {}
    for i in range(0, len(tps), _BATCH):
        by_topic: dict[str, list[int]] = defaultdict(list)
        for name, p in tps[i : i + _BATCH]:
            by_topic[name].append(p)
        answer = cluster.node(node).request(
            DESCRIBE_PRODUCERS,
            {"topics": [{"name": n, "partition_indexes": ps} for n, ps in by_topic.items()]},
        )
        for t in answer.topics:
            for p in t.partitions:
                if p.error_code != ErrorCode.none:
                    raise KafkaError(p.error_code, f"DescribeProducers of {t.name}-{p.partition_index}")
                found[(t.name, int(p.partition_index))] = p.active_producers
    return found


def _transactional_ids(cluster: Cluster, producer_ids: set[int]) -> dict[int, str]:
    ids: dict[int, str] = {}
    for node in cluster.broker_ids():
        answer = cluster.node(node).request(
            LIST_TRANSACTIONS, {"state_filters": [], "producer_id_filters": sorted(producer_ids)}
        )
        if answer.error_code != ErrorCode.none:
            raise KafkaError(answer.error_code, "ListTransactions")
        ids.update(
            {
                int(s.producer_id): s.transactional_id
                for s in answer.transaction_states
                if s.producer_id in producer_ids
            }
        )
    return ids


def _describe(cluster: Cluster, transactional_id: str) -> set[TopicPartition] | None:
    coordinator = cluster.coordinator_of_transaction(transactional_id)
    answer = cluster.node(coordinator).request(
        DESCRIBE_TRANSACTIONS, {"transactional_ids": [transactional_id]}
    )
    for s in answer.transaction_states:
        if s.transactional_id != transactional_id:
            continue
        if s.error_code == ErrorCode.transactional_id_not_found:
            return None
        if s.error_code != ErrorCode.none:
            raise KafkaError(s.error_code, f"DescribeTransactions of {transactional_id}")
        return {(t.topic, int(p)) for t in s.topics for p in t.partitions}
    return None


def find_hanging(
    cluster: Cluster,
    topic: str | None,
    partition: int | None,
    broker_id: int | None,
    max_timeout_ms: int,
    now_ms: int,
) -> list[OpenTransaction]:
    producers: dict[TopicPartition, Any] = {}
    for node, tps in _partitions_by_node(cluster, topic, partition, broker_id).items():
        producers.update(_describe_producers(cluster, node, tps))
    open_txns = candidates(producers, now_ms, max_timeout_ms)
    if not open_txns:
        return []
    ids = _transactional_ids(cluster, {t.producer_id for t in open_txns})
    described = {txn_id: _describe(cluster, txn_id) for txn_id in set(ids.values())}
    return hanging(open_txns, ids, described)
