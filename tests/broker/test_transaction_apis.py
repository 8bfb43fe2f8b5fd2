"""The transaction coordinator's APIs on a real in-process broker, request by request, with
Kafka's error codes (and their downgrades for old request versions)."""

from __future__ import annotations

import struct
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kio.schema.errors import ErrorCode

from broker.protocol.build import build
from broker.protocol.codec import encode_request, request_class
from broker.protocol.versions import ApiKey
from broker.server import EmbeddedBroker
from broker.storage.records import Record, build_batch
from tests.support import embedded_broker, unique, wait_until
from tests.wire import WireClient


@pytest.fixture
def wire(broker: EmbeddedBroker) -> Iterator[WireClient]:
    with WireClient(broker.bootstrap) as client:
        yield client


TRANSACTIONAL = 0x10


def make_topic(client: WireClient, name: str, partitions: int = 2) -> None:
    r = client.request(
        ApiKey.CREATE_TOPICS,
        7,
        topics=[
            {
                "name": name,
                "num_partitions": partitions,
                "replication_factor": 1,
                "assignments": [],
                "configs": [],
            }
        ],
        timeout=5000,
    )
    assert r.topics[0].error_code == ErrorCode.none


def init(client: WireClient, tid: str, timeout_ms: int = 60000, version: int = 4, **kw: Any) -> Any:
    return client.request(
        ApiKey.INIT_PRODUCER_ID,
        version,
        transactional_id=tid,
        transaction_timeout=timeout_ms,
        producer_id=kw.get("pid", -1),
        producer_epoch=kw.get("epoch", -1),
    )


def add(
    client: WireClient, tid: str, pid: int, epoch: int, parts: dict[str, list[int]], version: int = 3
) -> dict:
    r = client.request(
        ApiKey.ADD_PARTITIONS_TO_TXN,
        version,
        v3_and_below_transactional_id=tid,
        v3_and_below_producer_id=pid,
        v3_and_below_producer_epoch=epoch,
        v3_and_below_topics=[{"name": t, "partitions": ps} for t, ps in parts.items()],
    )
    return {
        (t.name, p.partition_index): p.partition_error_code
        for t in r.results_by_topic_v3_and_below
        for p in t.results_by_partition
    }


def end(client: WireClient, tid: str, pid: int, epoch: int, commit: bool, version: int = 3) -> ErrorCode:
    r = client.request(
        ApiKey.END_TXN, version, transactional_id=tid, producer_id=pid, producer_epoch=epoch, committed=commit
    )
    return r.error_code


def produce_txn(
    c: WireClient,
    tid: str,
    pid: int,
    epoch: int,
    topic: str,
    partition: int,
    values: list[bytes],
    check: bool = True,
) -> ErrorCode:
    """A transactional batch (sequence 0) as a client sends it; its partition's error."""
    now = int(time.time() * 1000)
    batch = build_batch(
        0,
        [Record(i, 0, None, v) for i, v in enumerate(values)],
        base_timestamp=now,
        attributes=TRANSACTIONAL,
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=0,
    )
    r = c.request(
        ApiKey.PRODUCE,
        9,
        transactional_id=tid,
        acks=-1,
        timeout=5000,
        topic_data=[{"name": topic, "partition_data": [{"index": partition, "records": batch}]}],
    )
    error = r.responses[0].partition_responses[0].error_code
    if check:
        assert error == ErrorCode.none
    return error


def describe(client: WireClient, tid: str) -> Any:
    return client.request(ApiKey.DESCRIBE_TRANSACTIONS, 0, transactional_ids=[tid]).transaction_states[0]


def describe_error(client: WireClient, tid: str) -> ErrorCode:
    """DescribeTransactions' error for one id, read from the bytes: for an id in Empty Kafka
    answers a start time of -1, which kio's decoder refuses (Kafka's clients read it as
    "none"); an id not described gets the field's default, 0."""
    body = build(request_class(ApiKey.DESCRIBE_TRANSACTIONS, 0), transactional_ids=[tid])
    client.send_raw(encode_request(99, body, client_id="wire-test"))
    frame = client.recv_frame()
    # correlation id (4), header tags (1), throttle (4), compact array length (1), error code.
    assert struct.unpack_from(">i", frame, 0)[0] == 99 and frame[9] == 2
    error = ErrorCode(struct.unpack_from(">h", frame, 10)[0])
    pos = 12 + frame[12]  # the id, a compact string (short here: one length byte)
    pos += frame[pos] + 4  # the state, then the timeout
    start = struct.unpack_from(">q", frame, pos)[0]
    assert start == (0 if error != ErrorCode.none else -1), (error, start)
    return error


def test_find_coordinator_answers_for_transactional_ids(wire: WireClient, broker: EmbeddedBroker) -> None:
    for version in range(0, 4):
        r = wire.request(ApiKey.FIND_COORDINATOR, version, key=unique("tx"), key_type=1)
        if version == 0:
            continue  # v0 has no key_type: a group lookup
        assert r.error_code == ErrorCode.none
        assert f"{r.host}:{r.port}" == broker.bootstrap
    assert (
        wire.request(ApiKey.FIND_COORDINATOR, 3, key="", key_type=1).error_code == ErrorCode.invalid_request
    )
    md = wire.request(ApiKey.METADATA, 12, topics=None, allow_auto_topic_creation=False)
    assert "__transaction_state" in {t.name for t in md.topics}


def test_init_producer_id_bumps_epochs_and_refuses_bad_input(wire: WireClient) -> None:
    tid = unique("tx")
    assert init(wire, tid, timeout_ms=900001).error_code == ErrorCode.invalid_transaction_timeout
    assert init(wire, tid, timeout_ms=0).error_code == ErrorCode.invalid_transaction_timeout
    assert init(wire, "").error_code == ErrorCode.invalid_request
    first = init(wire, tid)
    assert first.error_code == ErrorCode.none and first.producer_epoch == 0
    second = init(wire, tid)
    assert (second.producer_id, second.producer_epoch) == (first.producer_id, 1)
    # KIP-360: re-init with the current pid/epoch bumps; a stale one is fenced (v3: 47).
    third = init(wire, tid, pid=first.producer_id, epoch=1)
    assert (third.error_code, third.producer_epoch) == (ErrorCode.none, 2)
    assert init(wire, tid, pid=first.producer_id, epoch=0).error_code == ErrorCode.producer_fenced
    assert (
        init(wire, tid, version=3, pid=first.producer_id, epoch=0).error_code
        == ErrorCode.invalid_producer_epoch
    )
    # An idempotent (non-transactional) producer still gets its own fresh id.
    idem = wire.request(
        ApiKey.INIT_PRODUCER_ID,
        4,
        transactional_id=None,
        transaction_timeout=-1,
        producer_id=-1,
        producer_epoch=-1,
    )
    assert idem.error_code == ErrorCode.none and idem.producer_id != first.producer_id


def test_add_partitions_and_end_txn_with_kafkas_codes(wire: WireClient) -> None:
    topic, tid = unique("t"), unique("tx")
    make_topic(wire, topic)
    unknown = add(wire, unique("tx"), 1, 0, {topic: [0]})
    assert unknown == {(topic, 0): ErrorCode.invalid_producer_id_mapping}
    r = init(wire, tid)
    pid, epoch = r.producer_id, r.producer_epoch
    assert end(wire, tid, pid, epoch, True) == ErrorCode.invalid_txn_state  # nothing begun
    # A partition that does not exist fails the request; the others are not attempted.
    errors = add(wire, tid, pid, epoch, {topic: [0, 9]})
    assert errors == {
        (topic, 0): ErrorCode.operation_not_attempted,
        (topic, 9): ErrorCode.unknown_topic_or_partition,
    }
    assert add(wire, tid, pid, epoch, {topic: [0, 1]}) == {
        (topic, 0): ErrorCode.none,
        (topic, 1): ErrorCode.none,
    }
    assert add(wire, tid, pid + 1, epoch, {topic: [0]}) == {(topic, 0): ErrorCode.invalid_producer_id_mapping}
    assert add(wire, tid, pid, epoch - 1 if epoch else epoch + 5, {topic: [0]}) == {
        (topic, 0): ErrorCode.producer_fenced
    }
    assert add(wire, tid, pid, epoch + 5, {topic: [0]}, version=1) == {
        (topic, 0): ErrorCode.invalid_producer_epoch
    }
    state = describe(wire, tid)
    assert (state.error_code, state.transaction_state) == (ErrorCode.none, "Ongoing")
    assert [(t.topic, sorted(t.partitions)) for t in state.topics] == [(topic, [0, 1])]
    assert end(wire, tid, pid, epoch + 5, True) == ErrorCode.producer_fenced
    assert end(wire, tid, pid, epoch + 5, True, version=1) == ErrorCode.invalid_producer_epoch
    assert end(wire, "", pid, epoch, True) == ErrorCode.invalid_request
    assert end(wire, tid, pid, epoch, True) == ErrorCode.none
    assert end(wire, tid, pid, epoch, True) == ErrorCode.none  # a retry
    assert end(wire, tid, pid, epoch, False) == ErrorCode.invalid_txn_state
    state = describe(wire, tid)
    assert (state.transaction_state, state.producer_epoch) == ("CompleteCommit", epoch)
    # The next transaction starts afresh from the completed one.
    assert add(wire, tid, pid, epoch, {topic: [1]}) == {(topic, 1): ErrorCode.none}
    assert [(t.topic, list(t.partitions)) for t in describe(wire, tid).topics] == [(topic, [1])]


def test_a_new_instance_fences_the_old_one_and_aborts_its_transaction(wire: WireClient) -> None:
    topic, tid = unique("t"), unique("tx")
    make_topic(wire, topic, 1)
    old = init(wire, tid)
    assert add(wire, tid, old.producer_id, old.producer_epoch, {topic: [0]}) == {(topic, 0): ErrorCode.none}
    # Kafka: the open transaction is aborted with a bumped epoch first; the client retries.
    assert init(wire, tid).error_code == ErrorCode.concurrent_transactions
    aborted = describe(wire, tid)
    assert (aborted.transaction_state, aborted.producer_epoch) == ("CompleteAbort", old.producer_epoch + 1)
    new = init(wire, tid)
    assert (new.error_code, new.producer_id, new.producer_epoch) == (
        ErrorCode.none,
        old.producer_id,
        old.producer_epoch + 2,
    )
    assert end(wire, tid, old.producer_id, old.producer_epoch, True) == ErrorCode.producer_fenced
    assert add(wire, tid, old.producer_id, old.producer_epoch, {topic: [0]}) == {
        (topic, 0): ErrorCode.producer_fenced
    }
    r = wire.request(
        ApiKey.ADD_OFFSETS_TO_TXN,
        3,
        transactional_id=tid,
        producer_id=old.producer_id,
        producer_epoch=old.producer_epoch,
        group_id=unique("g"),
    )
    assert r.error_code == ErrorCode.producer_fenced


def test_add_offsets_puts_the_groups_offsets_partition_in_the_transaction(wire: WireClient) -> None:
    from broker.group.records import partition_for

    tid, group = unique("tx"), unique("g")
    r = init(wire, tid)
    out = wire.request(
        ApiKey.ADD_OFFSETS_TO_TXN,
        3,
        transactional_id=tid,
        producer_id=r.producer_id,
        producer_epoch=r.producer_epoch,
        group_id=group,
    )
    assert out.error_code == ErrorCode.none
    assert [(t.topic, list(t.partitions)) for t in describe(wire, tid).topics] == [
        ("__consumer_offsets", [partition_for(group, 5)])
    ]
    assert end(wire, tid, r.producer_id, r.producer_epoch, False) == ErrorCode.none


def test_batched_add_partitions_verifies_only(wire: WireClient) -> None:
    topic, tid = unique("t"), unique("tx")
    make_topic(wire, topic, 2)
    r = init(wire, tid)
    add(wire, tid, r.producer_id, r.producer_epoch, {topic: [0]})

    def verify(epoch: int) -> dict:
        out = wire.request(
            ApiKey.ADD_PARTITIONS_TO_TXN,
            4,
            transactions=[
                {
                    "transactional_id": tid,
                    "producer_id": r.producer_id,
                    "producer_epoch": epoch,
                    "verify_only": True,
                    "topics": [{"name": topic, "partitions": [0, 1]}],
                }
            ],
        )
        assert out.error_code == ErrorCode.none
        [txn] = out.results_by_transaction
        return {
            (t.name, p.partition_index): p.partition_error_code
            for t in txn.topic_results
            for p in t.results_by_partition
        }

    assert verify(r.producer_epoch) == {(topic, 0): ErrorCode.none, (topic, 1): ErrorCode.invalid_txn_state}
    assert set(verify(r.producer_epoch + 1).values()) == {ErrorCode.producer_fenced}
    # Verification added nothing.
    assert [list(t.partitions) for t in describe(wire, tid).topics] == [[0]]


def test_describe_and_list_transactions(wire: WireClient) -> None:
    topic = unique("t")
    make_topic(wire, topic, 1)
    open_tid, done_tid = unique("tx"), unique("tx")
    a, b = init(wire, open_tid), init(wire, done_tid)
    add(wire, open_tid, a.producer_id, a.producer_epoch, {topic: [0]})
    assert describe_error(wire, unique("tx")) == ErrorCode.transactional_id_not_found
    state = describe(wire, open_tid)
    assert state.transaction_timeout.total_seconds() == 60
    assert state.transaction_start_time is not None

    def listed(**filters: Any) -> tuple[set[tuple[str, int, str]], list[str]]:
        r = wire.request(
            ApiKey.LIST_TRANSACTIONS,
            1,
            **{"state_filters": [], "producer_id_filters": [], "duration_filter": -1, **filters},
        )
        assert r.error_code == ErrorCode.none
        return {(s.transactional_id, s.producer_id, s.transaction_state) for s in r.transaction_states}, list(
            r.unknown_state_filters
        )

    everything, _ = listed()
    assert {(open_tid, a.producer_id, "Ongoing"), (done_tid, b.producer_id, "Empty")} <= everything
    ongoing, unknown = listed(state_filters=["Ongoing", "Bogus"])
    assert (open_tid, a.producer_id, "Ongoing") in ongoing and all(s == "Ongoing" for *_, s in ongoing)
    assert unknown == ["Bogus"]
    by_pid, _ = listed(producer_id_filters=[b.producer_id])
    assert by_pid == {(done_tid, b.producer_id, "Empty")}
    long_running, _ = listed(duration_filter=3_600_000)
    assert open_tid not in {t for t, _, _ in long_running}


def test_state_survives_a_restart(tmp_path: Path) -> None:
    topic, tid = unique("t"), unique("tx")
    with embedded_broker(tmp_path / "logs") as eb, WireClient(eb.bootstrap) as c:
        make_topic(c, topic, 1)
        r = init(c, tid)
        add(c, tid, r.producer_id, r.producer_epoch, {topic: [0]})
    with embedded_broker(tmp_path / "logs") as eb, WireClient(eb.bootstrap) as c:
        state = describe(c, tid)
        assert (state.transaction_state, state.producer_id, state.producer_epoch) == (
            "Ongoing",
            r.producer_id,
            r.producer_epoch,
        )
        assert end(c, tid, r.producer_id, r.producer_epoch, True) == ErrorCode.none
        again = init(c, tid)
        assert (again.producer_id, again.producer_epoch) == (r.producer_id, r.producer_epoch + 1)


def test_timed_out_transactions_are_fenced_and_aborted(tmp_path: Path) -> None:
    topic, tid = unique("t"), unique("tx")
    with (
        embedded_broker(
            tmp_path / "logs", **{"transaction.abort.timed.out.transaction.cleanup.interval.ms": "50"}
        ) as eb,
        WireClient(eb.bootstrap) as c,
    ):
        make_topic(c, topic, 1)
        r = init(c, tid, timeout_ms=300)
        add(c, tid, r.producer_id, r.producer_epoch, {topic: [0]})
        wait_until(lambda: describe(c, tid).transaction_state == "CompleteAbort", timeout=10)
        assert describe(c, tid).producer_epoch == r.producer_epoch + 1
        assert end(c, tid, r.producer_id, r.producer_epoch, True) == ErrorCode.producer_fenced


def test_idle_ids_expire_with_a_tombstone(tmp_path: Path) -> None:
    tid = unique("tx")
    keys = {
        "transactional.id.expiration.ms": "200",
        "transaction.remove.expired.transaction.cleanup.interval.ms": "50",
    }
    with embedded_broker(tmp_path / "logs", **keys) as eb, WireClient(eb.bootstrap) as c:
        init(c, tid)
        wait_until(lambda: describe_error(c, tid) == ErrorCode.transactional_id_not_found, timeout=10)
    with embedded_broker(tmp_path / "logs") as eb, WireClient(eb.bootstrap) as c:
        # The tombstone, not the sweep (an hour by default), keeps it gone after a restart.
        assert describe_error(c, tid) == ErrorCode.transactional_id_not_found


def test_transactional_id_acls_are_enforced(tmp_path: Path) -> None:
    tid, other = unique("tx"), unique("tx")
    with (
        embedded_broker(
            tmp_path / "logs",
            **{
                "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                "allow.everyone.if.no.acl.found": "true",
            },
        ) as eb,
        WireClient(eb.bootstrap) as c,
    ):
        # An ACL on ``tid`` for someone else: ANONYMOUS may no longer use it; ``other``,
        # without ACLs, stays open (allow.everyone.if.no.acl.found).
        created = c.request(
            ApiKey.CREATE_ACLS,
            3,
            creations=[
                {
                    "resource_type": 5,
                    "resource_name": tid,
                    "resource_pattern_type": 3,
                    "principal": "User:alice",
                    "host": "*",
                    "operation": 2,
                    "permission_type": 3,
                }
            ],
        )
        assert created.results[0].error_code == ErrorCode.none
        assert init(c, tid).error_code == ErrorCode.transactional_id_authorization_failed
        assert init(c, other).error_code == ErrorCode.none
        fc = c.request(ApiKey.FIND_COORDINATOR, 3, key=tid, key_type=1)
        assert fc.error_code == ErrorCode.transactional_id_authorization_failed
        assert end(c, tid, 1, 0, True) == ErrorCode.transactional_id_authorization_failed
        assert add(c, tid, 1, 0, {"t": [0]}) == {("t", 0): ErrorCode.transactional_id_authorization_failed}
        assert describe_error(c, tid) == ErrorCode.transactional_id_authorization_failed
        assert describe_error(c, other) == ErrorCode.none
        listed = c.request(
            ApiKey.LIST_TRANSACTIONS, 1, state_filters=[], producer_id_filters=[], duration_filter=-1
        )
        assert {s.transactional_id for s in listed.transaction_states} == {other}
        # A DENY on the cluster takes CLUSTER_ACTION away: broker-only APIs refuse.
        c.request(
            ApiKey.CREATE_ACLS,
            3,
            creations=[
                {
                    "resource_type": 4,
                    "resource_name": "kafka-cluster",
                    "resource_pattern_type": 3,
                    "principal": "User:ANONYMOUS",
                    "host": "*",
                    "operation": 9,
                    "permission_type": 2,
                }
            ],
        )
        markers = c.request(
            ApiKey.WRITE_TXN_MARKERS,
            1,
            markers=[
                {
                    "producer_id": 1,
                    "producer_epoch": 0,
                    "transaction_result": False,
                    "coordinator_epoch": 0,
                    "topics": [{"name": "t", "partition_indexes": [0]}],
                }
            ],
        )
        assert markers.markers[0].topics[0].partitions[0].error_code == ErrorCode.cluster_authorization_failed
        batched = c.request(ApiKey.ADD_PARTITIONS_TO_TXN, 4, transactions=[])
        assert batched.error_code == ErrorCode.cluster_authorization_failed


def test_transactional_produce_is_verified_against_the_transaction(tmp_path: Path, wire: WireClient) -> None:
    """KIP-890: a transactional batch must go to a partition of the producer's open
    transaction, from its current epoch."""
    topic, tid = unique("t"), unique("tx")
    make_topic(wire, topic, 2)
    r = init(wire, tid)
    pid, epoch = r.producer_id, r.producer_epoch
    assert (
        produce_txn(wire, tid, pid, epoch, topic, 0, [b"early"], check=False) == ErrorCode.invalid_txn_state
    )
    add(wire, tid, pid, epoch, {topic: [0]})
    assert produce_txn(wire, tid, pid, epoch, topic, 0, [b"in"], check=False) == ErrorCode.none
    assert (
        produce_txn(wire, tid, pid, epoch, topic, 1, [b"not-added"], check=False)
        == ErrorCode.invalid_txn_state
    )
    assert end(wire, tid, pid, epoch, False) == ErrorCode.none
    bumped = init(wire, tid)
    add(wire, tid, pid, bumped.producer_epoch, {topic: [1]})
    assert (
        produce_txn(wire, tid, pid, epoch, topic, 1, [b"stale"], check=False)
        == ErrorCode.invalid_producer_epoch
    )
    # With verification off (Kafka's transaction.partition.verification.enable) the partition
    # takes the batch unasked: the hanging transaction KIP-890 prevents.
    other = unique("tx")
    with (
        embedded_broker(tmp_path / "off", **{"transaction.partition.verification.enable": "false"}) as eb,
        WireClient(eb.bootstrap) as c,
    ):
        make_topic(c, topic, 1)
        o = init(c, other)
        assert (
            produce_txn(c, other, o.producer_id, o.producer_epoch, topic, 0, [b"x"], check=False)
            == ErrorCode.none
        )
