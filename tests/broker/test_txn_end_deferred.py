"""EndTxn answered once Prepare* is logged, its markers and Complete* written right after (as
Kafka's coordinator does), and the one-record batches the coordinator writes (markers,
``__transaction_state`` records), built without the general encoder, byte for byte."""

from __future__ import annotations

import select
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from crc32c import crc32c
from hypothesis import given
from hypothesis import strategies as st
from kio.schema.errors import ErrorCode

from broker.broker import Broker
from broker.config import BrokerConfig
from broker.protocol.build import build
from broker.protocol.codec import decode_response, encode_request, request_class
from broker.protocol.versions import ApiKey
from broker.storage.batch import ATTRIBUTES_OFFSET, CONTROL, TRANSACTIONAL, read_header, validate_produced
from broker.storage.control import build_marker, one_record_batch, read_marker
from broker.storage.records import Record, build_batch, simple_batch
from broker.transactions.state import TxnMetadata, TxnState
from tests.support import embedded_broker, unique, wait_until
from tests.wire import WireClient

TID = "connect-cluster-src-0"
DATA = ("data", 0)


@given(
    key=st.none() | st.binary(max_size=300),
    value=st.none() | st.binary(max_size=20_000),
    timestamp=st.integers(-1, 2**62),
    attributes=st.sampled_from([0, TRANSACTIONAL, TRANSACTIONAL | CONTROL]),
    producer_id=st.integers(-1, 2**63 - 1),
    producer_epoch=st.integers(-1, 2**15 - 1),
    base_sequence=st.integers(-1, 2**31 - 1),
)
def test_one_record_batch_is_what_the_general_encoder_makes(
    key: bytes | None,
    value: bytes | None,
    timestamp: int,
    attributes: int,
    producer_id: int,
    producer_epoch: int,
    base_sequence: int,
) -> None:
    fast = one_record_batch(key, value, timestamp, attributes, producer_id, producer_epoch, base_sequence)
    general = build_batch(
        0,
        [Record(0, 0, key, value)],
        base_timestamp=timestamp,
        max_timestamp=timestamp,
        attributes=attributes,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
    )
    assert fast == general
    if attributes == 0 and producer_id == -1 and producer_epoch == -1 and base_sequence == -1:
        assert fast == simple_batch(0, [(key, value)], timestamp)


@pytest.mark.parametrize("commit", [True, False])
def test_a_marker_reads_back_as_written(commit: bool) -> None:
    batch = build_marker(42, 3, commit, 7, 1_700_000_000_000)
    h = read_header(batch)
    assert h.crc == crc32c(batch[ATTRIBUTES_OFFSET:])
    assert (h.producer_id, h.producer_epoch, h.base_sequence, h.count) == (42, 3, -1, 1)
    assert h.attributes & (TRANSACTIONAL | CONTROL) == TRANSACTIONAL | CONTROL
    marker = read_marker(batch)
    assert marker is not None and (marker.commit, marker.coordinator_epoch) == (commit, 7)


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    b = Broker(BrokerConfig(**{"log.dirs": str(tmp_path)}))
    b.open()
    b.logs.create_topic(DATA[0], 1)
    try:
        yield b
    finally:
        b.close()


def _open_transaction(b: Broker) -> tuple[int, int]:
    """A transaction of TID holding one record in DATA; (producer id, epoch)."""
    tc = b.transactions
    r = tc.init_producer_id(TID, 60_000)
    assert r.error == ErrorCode.none
    assert tc.add_partitions(TID, r.producer_id, r.producer_epoch, [DATA]) == ErrorCode.none
    raw = one_record_batch(None, b"v", 1, TRANSACTIONAL, r.producer_id, r.producer_epoch, 0)
    plog = b.logs.get(*DATA)
    assert plog is not None
    plog.append(raw, validate_produced(raw, 1 << 20))
    return r.producer_id, r.producer_epoch


Deferred = list[tuple[Callable[[TxnMetadata], None], TxnMetadata]]


def _collecting(into: Deferred) -> Callable[[Callable[[TxnMetadata], None], TxnMetadata], None]:
    return lambda fn, meta: into.append((fn, meta))


@pytest.mark.parametrize("commit", [True, False])
def test_end_txn_answers_at_prepare_and_the_deferred_step_completes_it(broker: Broker, commit: bool) -> None:
    pid, epoch = _open_transaction(broker)
    plog = broker.logs.get(*DATA)
    assert plog is not None and plog.last_stable_offset == 0
    deferred: Deferred = []
    assert broker.transactions.end_txn(TID, pid, epoch, commit, defer=_collecting(deferred)) == ErrorCode.none
    prepare = TxnState.PREPARE_COMMIT if commit else TxnState.PREPARE_ABORT
    assert broker.transactions.txns[TID].state == prepare
    # Nothing written to the partition yet: its transaction is still open there.
    assert (plog.next_offset, plog.last_stable_offset) == (1, 0)
    # What another request meanwhile gets (KIP-98: the client retries it).
    assert broker.transactions.add_partitions(TID, pid, epoch, [DATA]) == ErrorCode.concurrent_transactions
    [(step, meta)] = deferred
    step(meta)
    complete = TxnState.COMPLETE_COMMIT if commit else TxnState.COMPLETE_ABORT
    assert broker.transactions.txns[TID].state == complete
    assert (plog.next_offset, plog.last_stable_offset) == (2, 2)  # the marker, and the LSO past it
    assert len(plog.aborted) == (0 if commit else 1)
    # The state that was logged is what a restarted coordinator reads back.
    assert broker.transactions.txn_log.read()[TID].state == complete


def test_a_deferred_step_that_was_overtaken_writes_nothing(broker: Broker) -> None:
    pid, epoch = _open_transaction(broker)
    deferred: Deferred = []
    assert broker.transactions.end_txn(TID, pid, epoch, True, defer=_collecting(deferred)) == ErrorCode.none
    # The periodic sweep retries Prepare* states and gets there first.
    broker.transactions.abort_timed_out()
    plog = broker.logs.get(*DATA)
    assert plog is not None and plog.next_offset == 2
    assert broker.transactions.txns[TID].state == TxnState.COMPLETE_COMMIT
    [(step, meta)] = deferred
    step(meta)
    assert plog.next_offset == 2  # no second marker
    assert broker.transactions.txns[TID].state == TxnState.COMPLETE_COMMIT


def test_over_the_wire_markers_are_written_once_the_answer_is_in_the_clients_socket(
    tmp_path: Path,
) -> None:
    # The server's wiring (RequestContext.after_answer): the coordinator starts on the markers
    # only when EndTxn's answer already waits in the client's socket, unread.
    tid = unique("txn")
    with embedded_broker(tmp_path) as eb, WireClient(eb.bootstrap) as client:
        assert eb.server is not None
        broker = eb.server.broker
        topic = unique("t")
        created = client.request(
            ApiKey.CREATE_TOPICS, 4, topics=[{"name": topic, "num_partitions": 1, "replication_factor": 1}]
        )
        assert created.topics[0].error_code == ErrorCode.none
        init = client.request(ApiKey.INIT_PRODUCER_ID, 1, transactional_id=tid, transaction_timeout=60_000)
        assert init.error_code == ErrorCode.none
        pid, epoch = init.producer_id, init.producer_epoch
        added = client.request(
            ApiKey.ADD_PARTITIONS_TO_TXN,
            3,
            v3_and_below_transactional_id=tid,
            v3_and_below_producer_id=pid,
            v3_and_below_producer_epoch=epoch,
            v3_and_below_topics=[{"name": topic, "partitions": [0]}],
        )
        assert added.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code == 0

        answer_waiting: list[bool] = []
        began = threading.Event()
        write_markers = broker.transactions.write_markers

        def observed(*args: Any, **kwargs: Any) -> bool:
            # Runs on the broker's thread; the test thread does not read until this is done.
            if not began.is_set():
                readable, _, _ = select.select([client.sock], [], [], 0)
                answer_waiting.append(bool(readable))
                began.set()
            return write_markers(*args, **kwargs)

        broker.transactions.write_markers = observed  # type: ignore[method-assign]
        end = build(
            request_class(ApiKey.END_TXN, 3),
            transactional_id=tid,
            producer_id=pid,
            producer_epoch=epoch,
            committed=True,
        )
        client.send_raw(encode_request(99, end, client_id="wire-test"))
        assert began.wait(10), "the markers were never written"
        correlation, answer = decode_response(ApiKey.END_TXN, 3, client.recv_frame())
        assert (correlation, answer.error_code) == (99, ErrorCode.none)
        assert answer_waiting == [True]
        wait_until(
            lambda: broker.transactions.txns[tid].state == TxnState.COMPLETE_COMMIT,
            10,
            message="the transaction to complete",
        )
