"""``sluiceway transactions``: Kafka's ``kafka-transactions.sh`` (``TransactionsCommand``).

- ``list [--duration-filter MS]``: every broker's transactions (ListTransactions).
- ``describe --transactional-id ID``: the coordinator's view of one id (DescribeTransactions).
- ``describe-producers --topic T --partition P``: a partition's active producers
  (DescribeProducers), with the start offset of each one's open transaction.
- ``abort --topic T --partition P --start-offset N`` (or ``--producer-id``,
  ``--producer-epoch``, ``--coordinator-epoch``): write an ABORT marker for a hanging
  transaction into that partition (WriteTxnMarkers), as Kafka's Admin ``abortTransaction``.
- ``find-hanging --topic T [--partition P] | --broker-id N [--max-transaction-timeout MIN]``:
  transactions open in partitions their coordinator does not know of
  (``sluiceway.broker_tools.hanging_transactions``).

Output columns and error lines are Kafka's; ``--bootstrap-server``/``--command-config`` may
come before or after the subcommand. librdkafka's AdminClient lacks these APIs, so the
requests go through ``sluiceway.broker_tools.kafka_wire``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from kio.schema.errors import ErrorCode

from sluiceway.broker_tools import hanging_transactions
from sluiceway.broker_tools.kafka_clients import (
    EXIT_OK,
    ToolError,
    api_timeout_s,
    read_properties_file,
    run_command,
)
from sluiceway.broker_tools.kafka_wire import (
    DESCRIBE_PRODUCERS,
    DESCRIBE_TRANSACTIONS,
    LIST_TRANSACTIONS,
    WRITE_TXN_MARKERS,
    Cluster,
    KafkaError,
    error_message,
)

LIST_HEADERS = ["TransactionalId", "Coordinator", "ProducerId", "TransactionState"]
DESCRIBE_HEADERS = [
    "CoordinatorId",
    "TransactionalId",
    "ProducerId",
    "ProducerEpoch",
    "TransactionState",
    "TransactionTimeoutMs",
    "CurrentTransactionStartTimeMs",
    "TransactionDurationMs",
    "TopicPartitions",
]
PRODUCER_HEADERS = [
    "ProducerId",
    "ProducerEpoch",
    "LatestCoordinatorEpoch",
    "LastSequence",
    "LastTimestamp",
    "CurrentTransactionStartOffset",
]


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Kafka's ``ToolsUtils.prettyPrintTable``: cells padded to the column width, each
    followed by a tab (the last one too)."""
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    lines = [
        "".join(f"{cell:<{w}}\t" for cell, w in zip(row, widths, strict=True)) for row in [headers, *rows]
    ]
    return "\n".join(lines) + "\n"


def _ms(value: Any) -> int:
    """A kio duration or instant (timedelta/datetime/None) as Kafka's milliseconds."""
    if value is None:
        return -1
    if hasattr(value, "total_seconds"):
        return round(float(value.total_seconds()) * 1000)
    if hasattr(value, "timestamp"):
        return round(float(value.timestamp()) * 1000)
    return int(value)


def _fail(message: str, cause: str) -> ToolError:
    return ToolError(f"{message}: {cause}. Enable debug logging for additional detail.", bare=True)


# -- list -------------------------------------------------------------------------------


def list_transactions(cluster: Cluster, duration_filter: int | None) -> list[list[str]]:
    rows = []
    for node_id in cluster.broker_ids():
        data: dict[str, Any] = {"state_filters": [], "producer_id_filters": []}
        if duration_filter is not None:
            data["duration_filter"] = duration_filter
        try:
            answer = cluster.node(node_id).request(
                LIST_TRANSACTIONS, data, min_version=1 if duration_filter is not None else 0
            )
        except KafkaError as exc:
            raise _fail("Failed to list transactions", error_message(exc.code)) from None
        if answer.error_code != ErrorCode.none:
            raise _fail("Failed to list transactions", error_message(answer.error_code))
        rows += [
            [s.transactional_id, str(node_id), str(s.producer_id), s.transaction_state]
            for s in answer.transaction_states
        ]
    return rows


# -- describe ---------------------------------------------------------------------------


def describe_transaction(cluster: Cluster, transactional_id: str, now_ms: int) -> list[str]:
    what = f"Failed to describe transaction state of transactional-id `{transactional_id}`"
    try:
        coordinator = cluster.coordinator_of_transaction(transactional_id)
        answer = cluster.node(coordinator).request(
            DESCRIBE_TRANSACTIONS, {"transactional_ids": [transactional_id]}
        )
    except KafkaError as exc:
        raise _fail(what, error_message(exc.code)) from None
    state = next((s for s in answer.transaction_states if s.transactional_id == transactional_id), None)
    if state is None:
        raise _fail(what, "the coordinator did not describe it")
    if state.error_code != ErrorCode.none:
        raise _fail(what, error_message(state.error_code))
    start = _ms(state.transaction_start_time)
    partitions = [f"{t.topic}-{p}" for t in state.topics for p in t.partitions]
    return [
        str(coordinator),
        transactional_id,
        str(state.producer_id),
        str(state.producer_epoch),
        state.transaction_state,
        str(_ms(state.transaction_timeout)),
        str(start) if start >= 0 else "None",
        str(now_ms - start) if start >= 0 else "None",
        ",".join(partitions),
    ]


# -- describe-producers -----------------------------------------------------------------


def describe_producers(
    cluster: Cluster, topic: str, partition: int, broker_id: int | None = None
) -> list[Any]:
    """The partition's active producers (kio ProducerState entities), from its leader or the
    replica on ``broker_id``."""
    where = "leader" if broker_id is None else f"broker {broker_id}"
    what = f"Failed to describe producers for partition {topic}-{partition} on {where}"
    try:
        node = cluster.leader_of(topic, partition) if broker_id is None else broker_id
        answer = cluster.node(node).request(
            DESCRIBE_PRODUCERS, {"topics": [{"name": topic, "partition_indexes": [partition]}]}
        )
    except KafkaError as exc:
        raise _fail(what, error_message(exc.code)) from None
    for t in answer.topics:
        for p in t.partitions:
            if t.name == topic and p.partition_index == partition:
                if p.error_code != ErrorCode.none:
                    raise _fail(what, p.error_message or error_message(p.error_code))
                return list(p.active_producers)
    raise _fail(what, "the leader did not describe it")


def producer_rows(producers: Sequence[Any]) -> list[list[str]]:
    return [
        [
            str(p.producer_id),
            str(p.producer_epoch),
            str(p.coordinator_epoch),
            str(p.last_sequence),
            str(p.last_timestamp),
            str(p.current_txn_start_offset) if p.current_txn_start_offset >= 0 else "None",
        ]
        for p in producers
    ]


# -- abort ------------------------------------------------------------------------------


def abort_spec(cluster: Cluster, topic: str, partition: int, start_offset: int) -> tuple[int, int, int]:
    """(producer id, epoch, coordinator epoch) of the transaction open at ``start_offset``."""
    producers = describe_producers(cluster, topic, partition)
    found = next((p for p in producers if p.current_txn_start_offset == start_offset), None)
    if found is None:
        raise ToolError(
            f"Could not find any open transactions starting at offset {start_offset} "
            f"on partition {topic}-{partition}",
            bare=True,
        )
    return int(found.producer_id), int(found.producer_epoch), max(int(found.coordinator_epoch), 0)


def abort_transaction(
    cluster: Cluster, topic: str, partition: int, producer_id: int, epoch: int, coordinator_epoch: int
) -> None:
    spec = (
        f"AbortTransactionSpec(topicPartition={topic}-{partition}, producerId={producer_id}, "
        f"producerEpoch={epoch}, coordinatorEpoch={coordinator_epoch})"
    )
    try:
        leader = cluster.leader_of(topic, partition)
        answer = cluster.node(leader).request(
            WRITE_TXN_MARKERS,
            {
                "markers": [
                    {
                        "producer_id": producer_id,
                        "producer_epoch": epoch,
                        "transaction_result": False,
                        "topics": [{"name": topic, "partition_indexes": [partition]}],
                        "coordinator_epoch": coordinator_epoch,
                    }
                ]
            },
        )
    except KafkaError as exc:
        raise _fail(f"Failed to abort transaction {spec}", error_message(exc.code)) from None
    for marker in answer.markers:
        for t in marker.topics:
            for p in t.partitions:
                if p.error_code != ErrorCode.none:
                    raise _fail(f"Failed to abort transaction {spec}", error_message(p.error_code))


# -- the command ------------------------------------------------------------------------


def _connection_arguments(parser: argparse.ArgumentParser, default: Any) -> None:
    parser.add_argument(
        "--bootstrap-server",
        dest="bootstrap_server",
        default=default,
        metavar="host:port",
        help="hostname and port for the broker to connect to, in the form `host:port` "
        "(multiple comma-separated entries can be given)",
    )
    parser.add_argument(
        "--command-config",
        dest="command_config",
        default=default,
        metavar="FILE",
        help="property file containing configs to be passed to admin client",
    )


def build_parser(prog: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog,
        description="This tool is used to analyze the transactional state of producers in the cluster. "
        "It can be used to detect and recover from hanging transactions.",
    )
    _connection_arguments(p, None)
    sub = p.add_subparsers(dest="command", title="commands", metavar="COMMAND", required=True)
    common = argparse.ArgumentParser(add_help=False)
    _connection_arguments(common, argparse.SUPPRESS)  # also accepted after the subcommand

    lst = sub.add_parser("list", parents=[common], help="list transactions")
    lst.add_argument(
        "--duration-filter",
        type=int,
        help="Duration (in millis) to filter by: if < 0, all transactions will be returned; "
        "otherwise, only transactions running longer than this duration will be returned",
    )
    desc = sub.add_parser(
        "describe", parents=[common], help="describe the state of an active transactional-id"
    )
    desc.add_argument("--transactional-id", required=True, help="transactional id")
    prod = sub.add_parser(
        "describe-producers",
        parents=[common],
        help="describe the states of active producers for a topic partition",
    )
    prod.add_argument(
        "--broker-id",
        type=int,
        help="optional broker id to describe the producer state on a specific replica",
    )
    prod.add_argument("--topic", required=True, help="topic name")
    prod.add_argument("--partition", type=int, required=True, help="partition number")
    abort = sub.add_parser(
        "abort", parents=[common], help="abort a hanging transaction (requires administrative privileges)"
    )
    abort.add_argument("--topic", required=True, help="topic name")
    abort.add_argument("--partition", type=int, required=True, help="partition number")
    abort.add_argument("--start-offset", type=int, help="start offset of the transaction to abort")
    abort.add_argument(
        "--producer-id", type=int, help="producer id (with --producer-epoch, --coordinator-epoch)"
    )
    abort.add_argument("--producer-epoch", type=int, help="producer epoch")
    abort.add_argument("--coordinator-epoch", type=int, help="coordinator epoch")
    find = sub.add_parser("find-hanging", parents=[common], help="find hanging transactions")
    find.add_argument("--broker-id", type=int, help="broker id to search for hanging transactions")
    find.add_argument(
        "--max-transaction-timeout",
        type=int,
        default=15,
        help="maximum transaction timeout in minutes to limit the scope of the search "
        "(15 minutes by default)",
    )
    find.add_argument("--topic", help="topic name to limit search to (required if --partition is specified)")
    find.add_argument("--partition", type=int, help="partition number")
    return p


def _find_hanging(cluster: Cluster, args: argparse.Namespace) -> str:
    if args.topic is None and args.broker_id is None:
        raise ToolError(
            "The `find-hanging` command requires either --topic or --broker-id "
            "to limit the scope of the search",
            bare=True,
        )
    if args.partition is not None and args.topic is None:
        raise ToolError("The --partition argument requires --topic to be provided", bare=True)
    now = int(time.time() * 1000)
    try:
        found = hanging_transactions.find_hanging(
            cluster, args.topic, args.partition, args.broker_id, args.max_transaction_timeout * 60_000, now
        )
    except KafkaError as exc:
        raise _fail("Failed to find hanging transactions", error_message(exc.code)) from None
    return table(hanging_transactions.HEADERS, hanging_transactions.rows(found, now))


def run(args: argparse.Namespace, out: Callable[[str], object] = sys.stdout.write) -> int:
    if not args.bootstrap_server:
        raise ToolError("the following arguments are required: --bootstrap-server")
    props = read_properties_file(args.command_config, "--command-config") if args.command_config else {}
    with Cluster(args.bootstrap_server, props, api_timeout_s(props), "sluiceway-transactions") as cluster:
        if args.command == "list":
            out(table(LIST_HEADERS, list_transactions(cluster, args.duration_filter)))
        elif args.command == "describe":
            row = describe_transaction(cluster, args.transactional_id, int(time.time() * 1000))
            out(table(DESCRIBE_HEADERS, [row]))
        elif args.command == "describe-producers":
            producers = describe_producers(cluster, args.topic, args.partition, args.broker_id)
            out(table(PRODUCER_HEADERS, producer_rows(producers)))
        elif args.command == "find-hanging":
            out(_find_hanging(cluster, args))
        else:
            if args.start_offset is None and args.producer_id is None:
                raise ToolError(
                    "The transaction to abort must be identified either with --start-offset "
                    "(for brokers on 3.0 or above) or with --producer-id, --producer-epoch, "
                    "and --coordinator-epoch (for older brokers)",
                    bare=True,
                )
            if args.start_offset is not None:
                pid, epoch, coordinator_epoch = abort_spec(
                    cluster, args.topic, args.partition, args.start_offset
                )
            else:
                if args.producer_epoch is None:
                    raise ToolError("Missing required argument --producer-epoch", bare=True)
                if args.coordinator_epoch is None:
                    raise ToolError("Missing required argument --coordinator-epoch", bare=True)
                pid, epoch = args.producer_id, args.producer_epoch
                # A transaction hanging before its first marker has coordinator epoch -1; 0 is
                # at most any real one (Kafka's tool does the same).
                coordinator_epoch = max(args.coordinator_epoch, 0)
            abort_transaction(cluster, args.topic, args.partition, pid, epoch, coordinator_epoch)
    return EXIT_OK


def main(argv: list[str] | None = None, prog: str = "sluiceway transactions") -> int:
    args = build_parser(prog).parse_args(sys.argv[1:] if argv is None else argv)
    return run_command(lambda: run(args))
