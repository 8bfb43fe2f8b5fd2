"""``sluiceway transactions`` (kafka-transactions.sh) and ``console-consumer
--isolation-level``, run as a user runs them (subprocesses) against a real broker, with
confluent-kafka's transactional producer making the transactions and its read_committed
consumer judging what an abort did.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from kio.schema.errors import ErrorCode

from broker.protocol.build import build
from broker.protocol.codec import encode_response, response_class
from broker.protocol.versions import ApiKey
from broker.server import EmbeddedBroker
from broker.storage.batch import TRANSACTIONAL
from broker.storage.records import Record, build_batch
from sluiceway.broker_tools.hanging_transactions import OpenTransaction, hanging
from sluiceway.broker_tools.kafka_wire import _describe_transactions_v0
from sluiceway.broker_tools.transactions import table
from tests.support import ROOT, embedded_broker, unique
from tests.wire import WireClient

RUN_TIMEOUT_S = 120  # a bound so a stuck command fails instead of hanging; never asserted on


def tool(command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sluiceway.cli", *shlex.split(command)],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        cwd=ROOT,
    )


def ok(command: str) -> str:
    result = tool(command)
    assert result.returncode == 0, f"{command} exited {result.returncode}:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def rows(stdout: str) -> list[dict[str, str]]:
    """Kafka's prettyPrintTable: tab-terminated, space-padded cells under a header row."""
    lines = stdout.splitlines()
    header = [c.strip() for c in lines[0].split("\t")[:-1]]
    return [dict(zip(header, (c.strip() for c in line.split("\t")[:-1]), strict=True)) for line in lines[1:]]


@pytest.fixture(scope="module")
def kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedBroker]:
    with embedded_broker(tmp_path_factory.mktemp("transactions-tool")) as eb:
        yield eb


def new_topic(kafka: EmbeddedBroker) -> str:
    name = unique("txn")
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap})
    admin.create_topics([NewTopic(name, 1, 1)])[name].result(30)
    return name


def transactional_producer(kafka: EmbeddedBroker, txn_id: str) -> Producer:
    p = Producer({"bootstrap.servers": kafka.bootstrap, "transactional.id": txn_id, "linger.ms": 0})
    p.init_transactions(30)
    return p


def committed_values(kafka: EmbeddedBroker, topic: str) -> list[str]:
    c = Consumer(
        {
            "bootstrap.servers": kafka.bootstrap,
            "group.id": unique("judge"),
            "isolation.level": "read_committed",
            "auto.offset.reset": "earliest",
            "enable.partition.eof": True,
        }
    )
    c.subscribe([topic])
    values: list[str] = []
    try:
        while True:
            msg = c.poll(10)
            assert msg is not None, "no end of partition within 10 s"
            if msg.error():
                return values  # _PARTITION_EOF at the last stable offset
            values.append((msg.value() or b"").decode())
    finally:
        c.close()


def test_table_is_kafkas_pretty_print() -> None:
    assert table(["A", "Long"], [["xyz", "1"]]) == "A  \tLong\t\nxyz\t1   \t\n"


def test_describe_transactions_reads_kafkas_minus_one_start_time() -> None:
    """Kafka answers TransactionStartTimeMs -1 for a transaction not started; kio refuses it
    as a datetime, so the tool reads that response itself."""
    state = {
        "error_code": 0,
        "transactional_id": "x",
        "transaction_state": "Empty",
        "transaction_timeout": 60000,
        "transaction_start_time": 1_700_000_000_000,
        "producer_id": 5,
        "producer_epoch": 1,
        "topics": [],
    }
    frame = encode_response(7, build(response_class(65, 0), throttle_time=0, transaction_states=[state]))
    raw = frame[4:].replace((1_700_000_000_000).to_bytes(8, "big"), b"\xff" * 8)
    correlation, answer = _describe_transactions_v0(raw)
    assert correlation == 7
    (described,) = answer.transaction_states
    assert (described.transaction_state, described.transaction_start_time, described.producer_id) == (
        "Empty",
        -1,
        5,
    )


def test_list_describe_describe_producers_and_abort_a_hanging_transaction(kafka: EmbeddedBroker) -> None:
    topic, txn_id = new_topic(kafka), unique("tid")
    boot = f"--bootstrap-server {kafka.bootstrap}"
    producer = transactional_producer(kafka, txn_id)
    producer.begin_transaction()
    producer.produce(topic, b"committed-1", partition=0)
    producer.commit_transaction(30)
    producer.begin_transaction()
    for i in range(3):
        producer.produce(topic, f"hanging-{i}".encode(), partition=0)
    producer.flush(30)  # sent, never committed: the transaction hangs from offset 2

    listed = [r for r in rows(ok(f"transactions {boot} list")) if r["TransactionalId"] == txn_id]
    assert len(listed) == 1 and listed[0]["TransactionState"] == "Ongoing"
    pid = listed[0]["ProducerId"]
    # ListTransactions v1: only transactions running longer than the filter.
    long_running = rows(ok(f"transactions {boot} list --duration-filter 3600000"))
    assert txn_id not in [r["TransactionalId"] for r in long_running]

    (described,) = rows(ok(f"transactions describe --transactional-id {txn_id} {boot}"))
    assert described["TransactionalId"] == txn_id and described["ProducerId"] == pid
    assert described["TransactionState"] == "Ongoing" and described["TopicPartitions"] == f"{topic}-0"
    assert int(described["TransactionTimeoutMs"]) > 0 and int(described["TransactionDurationMs"]) >= 0

    producers = rows(ok(f"transactions {boot} describe-producers --topic {topic} --partition 0"))
    assert [(r["ProducerId"], r["CurrentTransactionStartOffset"]) for r in producers] == [(pid, "2")]

    missing = tool(f"transactions {boot} abort --topic {topic} --partition 0 --start-offset 1")
    assert missing.returncode == 1
    assert "Could not find any open transactions starting at offset 1" in missing.stderr

    ok(f"transactions {boot} abort --topic {topic} --partition 0 --start-offset 2")
    producers = rows(ok(f"transactions {boot} describe-producers --topic {topic} --partition 0"))
    assert [r["CurrentTransactionStartOffset"] for r in producers] == ["None"]
    # The partition's last stable offset moved past the aborted records: a read_committed
    # consumer reaches its end and saw only the committed one.
    assert committed_values(kafka, topic) == ["committed-1"]
    del producer  # its transaction was aborted under it; librdkafka's handle just goes away


def test_describe_an_unknown_transactional_id_fails_with_kafkas_message(kafka: EmbeddedBroker) -> None:
    result = tool(f"transactions --bootstrap-server {kafka.bootstrap} describe --transactional-id nobody")
    assert result.returncode == 1
    assert "Failed to describe transaction state of transactional-id `nobody`" in result.stderr
    assert "transactionalId could not be found" in result.stderr


def test_abort_needs_a_start_offset_or_the_producer(kafka: EmbeddedBroker) -> None:
    result = tool(f"transactions --bootstrap-server {kafka.bootstrap} abort --topic t --partition 0")
    assert result.returncode == 1 and "--start-offset" in result.stderr


def test_console_consumer_read_committed_hides_aborted_records(kafka: EmbeddedBroker) -> None:
    topic = new_topic(kafka)
    producer = transactional_producer(kafka, unique("tid"))
    for value, commit in (("a", True), ("b", False), ("c", True)):
        producer.begin_transaction()
        producer.produce(topic, value.encode(), partition=0)
        if commit:
            producer.commit_transaction(30)
        else:
            producer.flush(30)
            producer.abort_transaction(30)
    base = f"console-consumer --bootstrap-server {kafka.bootstrap} --topic {topic} --from-beginning"
    # Each transaction's marker takes an offset too; the records are a, b, c with markers between.
    assert ok(f"{base} --max-messages 2 --isolation-level read_committed").split() == ["a", "c"]
    assert ok(f"{base} --max-messages 3 --isolation-level read_uncommitted").split() == ["a", "b", "c"]


@pytest.fixture(scope="module")
def unverified(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedBroker]:
    """A broker that lets a transactional Produce through to a partition its transaction does
    not name (KIP-890 off, as brokers before 3.6): the way transactions came to hang."""
    with embedded_broker(
        tmp_path_factory.mktemp("unverified"), **{"transaction.partition.verification.enable": "false"}
    ) as eb:
        yield eb


def hang_a_transaction(kafka: EmbeddedBroker, topic: str, age_ms: int) -> int:
    """A transactional batch written behind its coordinator's back, ``age_ms`` old; its pid."""
    txn_id = unique("hanging")
    with WireClient(kafka.bootstrap) as w:
        init = w.request(
            ApiKey.INIT_PRODUCER_ID,
            3,
            transactional_id=txn_id,
            transaction_timeout=60000,
            producer_id=-1,
            producer_epoch=-1,
        )
        pid, epoch = int(init.producer_id), int(init.producer_epoch)
        batch = build_batch(
            0,
            [Record(0, 0, None, b"stuck")],
            base_timestamp=int(time.time() * 1000) - age_ms,
            attributes=TRANSACTIONAL,
            producer_id=pid,
            producer_epoch=epoch,
            base_sequence=0,
        )
        answer = w.request(
            ApiKey.PRODUCE,
            9,
            transactional_id=txn_id,
            acks=-1,
            timeout=5000,
            topic_data=[{"name": topic, "partition_data": [{"index": 0, "records": batch}]}],
        )
        assert answer.responses[0].partition_responses[0].error_code == ErrorCode.none
    return pid


def test_find_hanging_lists_what_no_coordinator_will_end_and_abort_ends_it(
    unverified: EmbeddedBroker,
) -> None:
    topic = new_topic(unverified)
    boot = f"--bootstrap-server {unverified.bootstrap}"
    pid = hang_a_transaction(unverified, topic, age_ms=5 * 60_000)
    # A live transaction in the same partition, which its coordinator knows: never hanging.
    live = transactional_producer(unverified, unique("live"))
    live.begin_transaction()
    live.produce(topic, b"live", partition=0)
    live.flush(30)
    time.sleep(0.01)

    assert rows(ok(f"transactions {boot} find-hanging --topic {topic}")) == []  # 5 min < 15
    found = rows(ok(f"transactions {boot} find-hanging --topic {topic} --max-transaction-timeout 0"))
    assert [(r["Topic"], r["Partition"], r["ProducerId"], r["StartOffset"]) for r in found] == [
        (topic, "0", str(pid), "0")
    ]
    assert found[0]["Duration(min)"] == "5"
    by_broker = rows(ok(f"transactions {boot} find-hanging --broker-id 0 --max-transaction-timeout 1"))
    assert [(r["Topic"], r["ProducerId"]) for r in by_broker] == [(topic, str(pid))]

    ok(f"transactions {boot} abort --topic {topic} --partition 0 --start-offset 0")
    assert rows(ok(f"transactions {boot} find-hanging --topic {topic} --max-transaction-timeout 0")) == []
    live.commit_transaction(30)
    assert committed_values(unverified, topic) == ["live"]


def test_find_hanging_needs_a_scope(kafka: EmbeddedBroker) -> None:
    result = tool(f"transactions --bootstrap-server {kafka.bootstrap} find-hanging")
    assert result.returncode == 1 and "requires either --topic or --broker-id" in result.stderr
    result = tool(
        f"transactions --bootstrap-server {kafka.bootstrap} find-hanging --broker-id 0 --partition 1"
    )
    assert result.returncode == 1 and "--partition argument requires --topic" in result.stderr


def test_hanging_means_no_coordinator_counts_the_partition() -> None:
    def txn(pid: int, tp: tuple[str, int]) -> OpenTransaction:
        return OpenTransaction(tp, pid, 0, 0, 10, 0)

    open_txns = [txn(1, ("a", 0)), txn(2, ("a", 0)), txn(3, ("a", 0)), txn(4, ("a", 0)), txn(4, ("b", 1))]
    ids = {2: "unknown-id", 3: "other-partition", 4: "ongoing"}
    described: dict[str, set[tuple[str, int]] | None] = {
        "unknown-id": None,  # TRANSACTIONAL_ID_NOT_FOUND
        "other-partition": {("z", 0)},
        "ongoing": {("a", 0)},
    }
    # 1: no transactional id lists the producer; 2: the id is gone; 3: its transaction is
    # elsewhere; 4: ongoing in (a, 0) but not in (b, 1).
    assert hanging(open_txns, ids, described) == [open_txns[0], open_txns[1], open_txns[2], open_txns[4]]
