"""The Elasticsearch sink in a real worker, fed through the real broker, writing with the
real ``elasticsearch`` client to the contract server: every record indexed once, ids and
versions making redelivery harmless, mappings from schemas, tombstones, upserts, data
streams, per-item and whole-request failures, an unreachable cluster, backpressure, auth."""

from __future__ import annotations

import logging
import ssl
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from elasticsearch import Elasticsearch

from sluiceway.embedded import EmbeddedConnect
from tests.certificates import tls_files
from tests.contract_servers.elasticsearch import ElasticsearchContractServer
from tests.support import unique

JSON = "org.apache.kafka.connect.json.JsonConverter"
STRING = "org.apache.kafka.connect.storage.StringConverter"
SINK = "io.confluent.connect.elasticsearch.ElasticsearchSinkConnector"


def tweet(i: int) -> bytes:
    return orjson.dumps(
        {
            "id": 1_000 + i,
            "text": f"tweet number {i} #kafka",
            "lang": "en",
            "user": {"screen_name": f"user{i % 7}", "followers": i * 3},
            "created_at": "2026-11-21T10:00:00Z",
        }
    )


def sink_config(es: ElasticsearchContractServer, topic: str, **extra: str) -> dict[str, str]:
    return {
        "connector.class": SINK,
        "topics": topic,
        "connection.url": es.url,
        "key.ignore": "true",
        "schema.ignore": "true",
        "value.converter": JSON,
        "value.converter.schemas.enable": "false",
        "linger.ms": "5",
        "retry.backoff.ms": "20",
        **extra,
    }


def create_index(url: str, index: str, mappings: dict[str, Any]) -> None:
    with Elasticsearch(url) as client:
        client.indices.create(index=index, mappings=mappings)


def committed(connect: EmbeddedConnect, name: str) -> int | None:
    offsets = connect.request("GET", f"/connectors/{name}/offsets").json()["offsets"]
    return offsets[0]["offset"]["kafka_offset"] if offsets else None


def wait_docs(
    connect: EmbeddedConnect, es: ElasticsearchContractServer, index: str, n: int, timeout: float = 30
) -> dict[str, Any]:
    connect.wait_for(lambda: len(es.documents(index)) >= n, timeout, f"{n} documents in {index}")
    return es.documents(index)


def test_tweets_are_indexed_once_each_and_offsets_follow(
    connect: EmbeddedConnect, es: ElasticsearchContractServer
) -> None:
    topic, name = unique("Tweets"), unique("es")
    connect.produce(topic, [(None, tweet(i)) for i in range(500)])
    connect.create_connector(name, sink_config(es, topic, **{"batch.size": "100"}))
    docs = wait_docs(connect, es, topic.lower(), 500)
    assert len(docs) == 500
    assert docs[f"{topic}+0+7"]["user"] == {"screen_name": "user0", "followers": 21}
    connect.wait_for(lambda: committed(connect, name) == 500, 15, "offset 500 committed")
    # A second connector (its own consumer group) delivers all of it again: same ids, no duplicates.
    again = unique("es-again")
    connect.create_connector(again, sink_config(es, topic))
    connect.wait_for(lambda: committed(connect, again) == 500, 30, "the second delivery committed")
    assert len(es.documents(topic.lower())) == 500


def test_keys_as_ids_with_external_versions_keep_the_newest_value(
    connect: EmbeddedConnect, es: ElasticsearchContractServer
) -> None:
    topic, name = unique("accounts"), unique("es")
    updates = [(f"acct-{i % 10}", orjson.dumps({"balance": i})) for i in range(100)]
    connect.produce(topic, updates)
    connect.create_connector(name, sink_config(es, topic, **{"key.ignore": "false", "key.converter": STRING}))
    connect.wait_for(lambda: committed(connect, name) == 100, 30, "all updates acknowledged")
    docs = es.documents(topic)
    assert {k: v["balance"] for k, v in docs.items()} == {f"acct-{i}": 90 + i for i in range(10)}
    # Redelivered from the start by another group: every write is older than what is stored,
    # so Elasticsearch refuses each as a version conflict, which the sink counts as done.
    again = unique("es-again")
    connect.create_connector(
        again, sink_config(es, topic, **{"key.ignore": "false", "key.converter": STRING})
    )
    connect.wait_for(lambda: committed(connect, again) == 100, 30, "the redelivery acknowledged")
    assert {k: v["balance"] for k, v in es.documents(topic).items()} == {
        f"acct-{i}": 90 + i for i in range(10)
    }
    assert connect.status(again)["tasks"][0]["state"] == "RUNNING"


def test_tombstones_delete_and_upserts_merge(
    connect: EmbeddedConnect, es: ElasticsearchContractServer
) -> None:
    topic, name = unique("users"), unique("es")
    connect.produce(
        topic,
        [
            ("u1", orjson.dumps({"name": "Ada", "city": "London"})),
            ("u2", orjson.dumps({"name": "Alan"})),
            ("u1", orjson.dumps({"city": "Paris"})),
            ("u2", None),
            ("u3", None),  # deleting what never existed is fine
        ],
    )
    connect.create_connector(
        name,
        sink_config(
            es,
            topic,
            **{
                "key.ignore": "false",
                "key.converter": STRING,
                "write.method": "upsert",
                "behavior.on.null.values": "delete",
            },
        ),
    )
    connect.wait_for(lambda: committed(connect, name) == 5, 30, "all five acknowledged")
    assert es.documents(topic) == {"u1": {"name": "Ada", "city": "Paris"}}


def test_schemas_become_the_index_mapping(connect: EmbeddedConnect, es: ElasticsearchContractServer) -> None:
    topic, name = unique("payments"), unique("es")
    schema = {
        "type": "struct",
        "fields": [
            {"field": "id", "type": "int64", "optional": False},
            {
                "field": "amount",
                "type": "bytes",
                "optional": False,
                "name": "org.apache.kafka.connect.data.Decimal",
                "parameters": {"scale": "2"},
            },
            {
                "field": "at",
                "type": "int64",
                "optional": False,
                "name": "org.apache.kafka.connect.data.Timestamp",
            },
            {"field": "day", "type": "int32", "optional": True, "name": "org.apache.kafka.connect.data.Date"},
            {
                "field": "payee",
                "type": "struct",
                "optional": True,
                "fields": [{"field": "name", "type": "string", "optional": False}],
            },
        ],
    }
    values = [
        orjson.dumps(
            {
                "schema": schema,
                "payload": {
                    "id": i,
                    "amount": "ME4=",
                    "at": 1_700_000_000_000 + i,
                    "day": 19_700,
                    "payee": {"name": f"p{i}"},
                },
            }
        )
        for i in range(20)
    ]  # "ME4=" is 12366 unscaled: 123.66
    connect.produce(topic, [(None, v) for v in values])
    connect.create_connector(
        name, sink_config(es, topic, **{"schema.ignore": "false", "value.converter.schemas.enable": "true"})
    )
    docs = wait_docs(connect, es, topic, 20)
    mapping = es.mapping(topic)["properties"]
    assert mapping["id"] == {"type": "long"}
    assert mapping["amount"] == {"type": "double"}
    assert mapping["at"]["type"] == "date" and mapping["day"]["type"] == "date"
    assert mapping["payee"]["properties"]["name"]["type"] == "text"
    doc = docs[f"{topic}+0+3"]
    assert (
        doc["amount"] == 123.66 and doc["day"] == "2023-12-09" and doc["at"] == "2023-11-14T22:13:20.003000Z"
    )


def test_a_topic_router_picks_the_index(connect: EmbeddedConnect, es: ElasticsearchContractServer) -> None:
    topic, name = unique("raw-clicks"), unique("es")
    connect.produce(topic, [(None, tweet(i)) for i in range(10)])
    connect.create_connector(
        name,
        sink_config(
            es,
            topic,
            transforms="route",
            **{
                "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
                "transforms.route.regex": "raw-(.*)",
                "transforms.route.replacement": "Clicks-Index-$1",
                "connection.compression": "true",  # gzip bodies, which Elasticsearch accepts
            },
        ),
    )
    index = "clicks-index-" + topic.removeprefix("raw-")
    assert len(wait_docs(connect, es, index, 10)) == 10
    connect.wait_for(lambda: committed(connect, name) == 10, 15, "offsets of the consumed topic committed")


def test_data_stream(connect: EmbeddedConnect, es: ElasticsearchContractServer) -> None:
    topic, name = unique("events"), unique("es")
    connect.produce(topic, [(None, tweet(i)) for i in range(30)])
    connect.create_connector(
        name,
        sink_config(
            es,
            topic,
            **{
                "data.stream.type": "logs",
                "data.stream.dataset": "tweets",
                "data.stream.timestamp.field": "created_at",
            },
        ),
    )
    stream = f"logs-tweets-{topic}"
    docs = wait_docs(connect, es, stream, 30)
    assert all(d["@timestamp"] == "2026-11-21T10:00:00Z" for d in docs.values())


def test_malformed_documents_go_to_the_dead_letter_queue_with_the_reason(
    connect: EmbeddedConnect, es: ElasticsearchContractServer
) -> None:
    topic, name, dlq = unique("orders"), unique("es"), unique("dlq")
    create_index(es.url, topic, {"properties": {"qty": {"type": "long"}}})
    records = [(None, orjson.dumps({"qty": "many" if i in (3, 7) else i})) for i in range(10)]
    connect.produce(topic, records)
    connect.create_connector(
        name,
        sink_config(
            es,
            topic,
            **{
                "errors.tolerance": "all",
                "errors.deadletterqueue.topic.name": dlq,
                "errors.deadletterqueue.topic.replication.factor": "1",
                "errors.deadletterqueue.context.headers.enable": "true",
            },
        ),
    )
    connect.wait_for(lambda: committed(connect, name) == 10, 30, "all ten settled")
    assert sorted(es.documents(topic)) == sorted(f"{topic}+0+{i}" for i in range(10) if i not in (3, 7))
    dead = connect.consume(dlq, 2)
    assert sorted(orjson.loads(m.value())["qty"] for m in dead) == ["many", "many"]
    headers = dict(dead[0].headers())
    assert headers["__connect.errors.topic"] == topic.encode()
    message = headers["__connect.errors.exception.message"].decode()
    assert "document_parsing_exception" in message and "[qty]" in message


def test_a_malformed_document_fails_the_task_by_default_and_warn_skips_it(
    connect: EmbeddedConnect, es: ElasticsearchContractServer
) -> None:
    topic = unique("orders")
    create_index(es.url, topic, {"properties": {"qty": {"type": "long"}}})
    connect.produce(topic, [(None, orjson.dumps({"qty": q})) for q in (1, "lots", 3)])
    failing = unique("es")
    connect.create_connector(failing, sink_config(es, topic))
    status = connect.wait_for_state(failing, "RUNNING", 1, task_state="FAILED")
    trace = status["tasks"][0]["trace"]
    assert (
        f"{topic}-0@1" in trace
        and "document_parsing_exception" in trace
        and "behavior.on.malformed.documents" in trace
    )
    assert committed(connect, failing) in (None, 1)  # never past the refused record

    warning = unique("es")
    connect.create_connector(warning, sink_config(es, topic, **{"behavior.on.malformed.documents": "warn"}))
    connect.wait_for(lambda: committed(connect, warning) == 3, 30, "all three settled")
    assert sorted(es.documents(topic)) == [f"{topic}+0+0", f"{topic}+0+2"]


def test_429s_and_rejected_items_are_retried_until_everything_is_in(
    connect: EmbeddedConnect, es: ElasticsearchContractServer
) -> None:
    topic, name = unique("busy"), unique("es")
    connect.produce(topic, [(None, tweet(i)) for i in range(300)])
    es.fail_next_requests(2, status=429)
    es.reject_next_items(40, status=429)
    connect.create_connector(name, sink_config(es, topic, **{"batch.size": "50", "max.retries": "10"}))
    connect.wait_for(lambda: committed(connect, name) == 300, 30, "all 300 acknowledged")
    assert len(es.documents(topic)) == 300
    assert connect.status(name)["tasks"][0]["state"] == "RUNNING"
    es.fail_next_requests(3, status=503)
    connect.produce(topic, [(None, tweet(i)) for i in range(300, 310)])
    connect.wait_for(lambda: committed(connect, name) == 310, 30, "the next ten after three 503s")


def test_an_unreachable_cluster_keeps_the_task_retrying_and_commits_nothing_it_did_not_ack(
    connect: EmbeddedConnect, es: ElasticsearchContractServer
) -> None:
    topic, name = unique("outage"), unique("es")
    connect.produce(topic, [(None, tweet(i)) for i in range(20)])
    connect.create_connector(name, sink_config(es, topic, **{"max.retries": "40", "retry.backoff.ms": "100"}))
    connect.wait_for(lambda: committed(connect, name) == 20, 30, "the first 20 acknowledged")
    es.stop()
    connect.produce(topic, [(None, tweet(i)) for i in range(20, 50)])
    time.sleep(2.0)  # four commit intervals while Elasticsearch is away
    assert committed(connect, name) == 20
    assert connect.status(name)["tasks"][0]["state"] == "RUNNING"
    es.start()
    connect.wait_for(lambda: committed(connect, name) == 50, 60, "everything once the cluster is back")
    assert len(es.documents(topic)) == 50


def test_an_index_that_cannot_be_created_yet_makes_put_retriable(
    connect: EmbeddedConnect, es: ElasticsearchContractServer
) -> None:
    """The first records of a topic need their index: with the cluster away, put() asks to be
    retried (RetriableException), holding nothing half-done, until the cluster returns."""
    topic, name = unique("later"), unique("es")
    connect.create_connector(name, sink_config(es, topic, **{"max.retries": "40", "retry.backoff.ms": "100"}))
    connect.wait_for_running(name)
    es.stop()
    connect.produce(topic, [(None, tweet(i)) for i in range(10)])
    time.sleep(1.5)
    assert connect.status(name)["tasks"][0]["state"] == "RUNNING"
    assert committed(connect, name) is None
    es.start()
    connect.wait_for(lambda: committed(connect, name) == 10, 60, "all ten once the index could be made")
    assert len(es.documents(topic)) == 10


def test_retries_spent_fail_the_task_saying_why(
    connect: EmbeddedConnect, es: ElasticsearchContractServer
) -> None:
    topic, name = unique("gone"), unique("es")
    connect.produce(topic, [(None, tweet(0))])
    connect.create_connector(name, sink_config(es, topic, **{"max.retries": "2"}))
    connect.wait_for(lambda: committed(connect, name) == 1, 30, "the first record")
    es.stop()
    connect.produce(topic, [(None, tweet(1))])
    status = connect.wait_for_state(name, "RUNNING", 1, task_state="FAILED", timeout=30)
    assert (
        "cannot reach Elasticsearch" in status["tasks"][0]["trace"]
        and "max.retries=2" in status["tasks"][0]["trace"]
    )
    assert committed(connect, name) == 1


def test_a_slow_cluster_pauses_the_partitions_instead_of_buffering(
    connect: EmbeddedConnect, es: ElasticsearchContractServer, caplog: pytest.LogCaptureFixture
) -> None:
    topic, name = unique("flood"), unique("es")
    connect.produce(topic, [(None, tweet(i)) for i in range(400)])
    es.delay(150)
    caplog.set_level(logging.INFO, logger="connectors.elasticsearch.task")
    connect.create_connector(
        name,
        sink_config(
            es, topic, **{"batch.size": "20", "max.in.flight.requests": "2", "max.buffered.records": "60"}
        ),
    )
    connect.wait_for(lambda: committed(connect, name) == 400, 60, "all 400 through a slow cluster")
    assert len(es.documents(topic)) == 400
    assert es.max_concurrent_bulks <= 2 and max(es.bulk_items) <= 20
    assert any("pausing" in r.getMessage() for r in caplog.records)


def test_credentials_are_checked_when_the_connector_is_created(connect: EmbeddedConnect) -> None:
    with ElasticsearchContractServer(username="elastic", password="changeme") as secured:
        topic = unique("private")
        bad = sink_config(
            secured, topic, **{"connection.username": "elastic", "connection.password": "wrong"}
        )
        r = connect.request("PUT", f"/connectors/{unique('es')}/config", bad)
        assert r.status_code == 400
        assert "connection.password" in r.text and "credentials" in r.text and "wrong" not in r.text
        unreachable = sink_config(secured, topic, **{"connection.url": "http://127.0.0.1:9"})
        r = connect.request("PUT", f"/connectors/{unique('es')}/config", unreachable)
        assert r.status_code == 400 and "Could not connect to Elasticsearch" in r.text
        name = unique("es")
        connect.produce(topic, [(None, tweet(i)) for i in range(5)])
        connect.create_connector(
            name,
            sink_config(
                secured, topic, **{"connection.username": "elastic", "connection.password": "changeme"}
            ),
        )
        connect.wait_for(lambda: committed(connect, name) == 5, 30, "five documents with credentials")
        assert len(secured.documents(topic)) == 5


def test_tls_with_pem_and_pkcs12_trust_stores(connect: EmbeddedConnect, tmp_path: Path) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import BestAvailableEncryption, pkcs12

    ca_path, cert_path, key_path = tls_files(tmp_path)
    p12 = tmp_path / "trust.p12"
    ca = x509.load_pem_x509_certificate(ca_path.read_bytes())
    p12.write_bytes(
        pkcs12.serialize_key_and_certificates(b"ca", None, None, [ca], BestAvailableEncryption(b"store-pw"))
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    with ElasticsearchContractServer(ssl_context=context) as secured:
        assert secured.url.startswith("https://")
        topic = unique("secure")
        connect.produce(topic, [(None, tweet(i)) for i in range(4)])
        untrusted = connect.request("PUT", f"/connectors/{unique('es')}/config", sink_config(secured, topic))
        assert untrusted.status_code == 400 and "CERTIFICATE_VERIFY_FAILED" in untrusted.text
        for trust in (
            {"elastic.https.ssl.truststore.location": str(ca_path)},
            {
                "elastic.https.ssl.truststore.location": str(p12),
                "elastic.https.ssl.truststore.type": "PKCS12",
                "elastic.https.ssl.truststore.password": "store-pw",
            },
        ):
            name = unique("es")
            connect.create_connector(
                name, sink_config(secured, topic, **{"elastic.security.protocol": "SSL", **trust})
            )
            connect.wait_for(lambda n=name: committed(connect, n) == 4, 30, "four documents over TLS")
        assert len(secured.documents(topic)) == 4
