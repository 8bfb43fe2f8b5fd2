"""The Elasticsearch contract server, driven by the official ``elasticsearch`` client.

Every test talks to the server the way a connector will: through ``Elasticsearch`` (with
retries off, so statuses are not hidden) and ``helpers.bulk``; raw HTTP only where the client
cannot produce the request (a malformed bulk body, a foreign content type).
"""

from __future__ import annotations

import datetime as dt
import gzip
import http.client
import signal
import ssl
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from elasticsearch import (
    ApiError,
    AuthenticationException,
    BadRequestError,
    ConnectionError,
    Elasticsearch,
    NotFoundError,
    helpers,
)

from tests.certificates import tls_files
from tests.contract_servers.elasticsearch import ElasticsearchContractProcess, ElasticsearchContractServer
from tests.support import ROOT, free_port, wait_until


def _client(url: str, **kwargs: Any) -> Elasticsearch:
    return Elasticsearch(url, max_retries=0, retry_on_status=(), request_timeout=10, **kwargs)


def _server_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("es-contract")]


@pytest.fixture
def server() -> Iterator[ElasticsearchContractServer]:
    srv = ElasticsearchContractServer().start()
    try:
        yield srv
    finally:
        srv.stop()
    assert not _server_threads(), "the server left threads behind"


@pytest.fixture
def es(server: ElasticsearchContractServer) -> Iterator[Elasticsearch]:
    client = _client(server.url)
    try:
        yield client
    finally:
        client.close()


def _raw(
    server: ElasticsearchContractServer,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def _ndjson(*lines: dict[str, Any]) -> bytes:
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


def _items(response: Any) -> list[tuple[str, dict[str, Any]]]:
    return [next(iter(item.items())) for item in response["items"]]


# ------------------------------------------------------------------------------------------
# the REST surface


def test_info_and_wire_headers(server: ElasticsearchContractServer, es: Elasticsearch) -> None:
    info = es.info()
    assert info["version"]["number"] == "8.15.0"
    assert info["version"]["build_flavor"] == "default"
    assert info["tagline"] == "You Know, for Search"
    assert {"name", "cluster_name", "cluster_uuid"} <= set(info.body)
    assert info.meta.headers["x-elastic-product"] == "Elasticsearch"
    assert info.meta.headers["content-type"].startswith("application/vnd.elasticsearch+json")

    status, headers, body = _raw(server, "GET", "/")
    assert status == 200 and headers["x-elastic-product"] == "Elasticsearch"
    assert headers["content-type"] == "application/json"
    assert int(headers["content-length"]) == len(body) and orjson.loads(body)["cluster_uuid"]

    status, headers, body = _raw(server, "HEAD", "/missing-index")
    assert (status, body) == (404, b"") and headers["x-elastic-product"] == "Elasticsearch"


def test_index_create_exists_mapping_and_conflicts(es: Elasticsearch) -> None:
    created = es.indices.create(
        index="orders",
        settings={"number_of_shards": 1},
        mappings={"properties": {"amount": {"type": "long"}, "sku": {"type": "keyword"}}},
    )
    assert created.body == {"acknowledged": True, "shards_acknowledged": True, "index": "orders"}
    assert es.indices.exists(index="orders") and not es.indices.exists(index="other")

    with pytest.raises(BadRequestError) as again:
        es.indices.create(index="orders")
    error = again.value.body["error"]
    assert error["type"] == "resource_already_exists_exception"
    assert error["reason"].startswith("index [orders/") and error["reason"].endswith("] already exists")
    assert error["root_cause"][0]["type"] == "resource_already_exists_exception"
    assert again.value.body["status"] == 400

    es.indices.put_mapping(index="orders", properties={"note": {"type": "text"}})
    mapping = es.indices.get_mapping(index="orders")["orders"]["mappings"]
    assert mapping["properties"] == {
        "amount": {"type": "long"},
        "note": {"type": "text"},
        "sku": {"type": "keyword"},
    }

    with pytest.raises(BadRequestError) as changed:
        es.indices.put_mapping(index="orders", properties={"amount": {"type": "text"}})
    assert changed.value.body["error"]["type"] == "illegal_argument_exception"
    assert (
        changed.value.body["error"]["reason"]
        == "mapper [amount] cannot be changed from type [long] to [text]"
    )
    assert es.indices.get_mapping(index="orders")["orders"]["mappings"]["properties"]["amount"] == {
        "type": "long"
    }

    with pytest.raises(BadRequestError) as unknown:
        es.indices.create(index="typo", mappings={"properties": {"f": {"type": "strnig"}}})
    assert unknown.value.body["error"]["type"] == "mapper_parsing_exception"
    assert "No handler for type [strnig] declared on field [f]" in unknown.value.body["error"]["reason"]

    assert es.indices.delete(index="orders").body == {"acknowledged": True}
    assert not es.indices.exists(index="orders")
    with pytest.raises(NotFoundError) as gone:
        es.indices.delete(index="orders")
    assert gone.value.body["error"]["type"] == "index_not_found_exception"


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("Orders", "must be lowercase"),
        ("a*b", "must not contain the following characters"),
        ("a b", "must not contain the following characters"),
        ("a#b", "must not contain '#'"),
        ("a:b", "must not contain ':'"),
        ("_hidden", "must not start with '_', '-', or '+'"),
        ("-x", "must not start with '_', '-', or '+'"),
        ("..", "must not be '.' or '..'"),
        ("x" * 256, "index name is too long"),
    ],
)
def test_invalid_index_names(es: Elasticsearch, name: str, why: str) -> None:
    with pytest.raises(BadRequestError) as bad:
        es.indices.create(index=name)
    assert bad.value.body["error"]["type"] == "invalid_index_name_exception"
    assert bad.value.body["error"]["reason"].startswith(f"Invalid index name [{name}], {why}")


def test_bulk_mixes_every_action_with_elasticsearch_results(es: Elasticsearch) -> None:
    es.indices.create(index="mix")
    es.index(index="mix", id="keep", document={"n": 1, "tags": {"a": 1, "b": 2}})
    es.index(index="mix", id="gone", document={"n": 2})
    response = es.bulk(
        index="mix",
        refresh="wait_for",
        operations=[
            {"index": {}},
            {"n": 10},
            {"index": {"_id": "keep"}},
            {"n": 11, "tags": {"a": 1, "b": 2}},
            {"create": {"_id": "keep"}},
            {"n": 12},
            {"update": {"_id": "keep"}},
            {"doc": {"tags": {"b": 3}}},
            {"update": {"_id": "keep"}},
            {"doc": {"tags": {"b": 3}}},
            {"update": {"_id": "new"}},
            {"doc": {"n": 13}, "doc_as_upsert": True},
            {"update": {"_id": "absent"}},
            {"doc": {"n": 14}},
            {"delete": {"_id": "gone"}},
            {"delete": {"_id": "never"}},
        ],
    )
    assert response["errors"] is True and isinstance(response["took"], int)
    items = _items(response)
    assert [(action, item["status"], item.get("result")) for action, item in items] == [
        ("index", 201, "created"),
        ("index", 200, "updated"),
        ("create", 409, None),
        ("update", 200, "updated"),
        ("update", 200, "noop"),
        ("update", 201, "created"),
        ("update", 404, None),
        ("delete", 200, "deleted"),
        ("delete", 404, "not_found"),
    ]
    generated = items[0][1]
    assert len(generated["_id"]) == 20 and generated["_index"] == "mix"
    assert generated["_shards"] == {"total": 2, "successful": 1, "failed": 0}
    assert generated["_primary_term"] == 1
    seq_nos = [item["_seq_no"] for _, item in items if "_seq_no" in item and item.get("result") != "noop"]
    assert seq_nos == sorted(seq_nos) and len(set(seq_nos)) == len(seq_nos)

    assert items[1][1]["_version"] == 2
    conflict = items[2][1]["error"]
    assert conflict["type"] == "version_conflict_engine_exception"
    assert conflict["reason"] == "[keep]: version conflict, document already exists (current version [2])"
    assert items[3][1]["_version"] == 3
    noop = items[4][1]
    assert noop["_version"] == 3 and noop["_shards"] == {"total": 0, "successful": 0, "failed": 0}
    missing = items[6][1]["error"]
    assert missing == {
        **missing,
        "type": "document_missing_exception",
        "reason": "[absent]: document missing",
    }
    not_found = items[8][1]
    assert "error" not in not_found and not_found["_version"] == 1

    assert es.get(index="mix", id="keep")["_source"] == {"n": 11, "tags": {"a": 1, "b": 3}}
    assert es.get(index="mix", id="new")["_source"] == {"n": 13}
    absent = es.options(ignore_status=404).get(index="mix", id="gone")
    assert absent.body == {"_index": "mix", "_id": "gone", "found": False}

    only_missing_deletes = es.bulk(operations=[{"delete": {"_index": "mix", "_id": "nope"}}])
    assert only_missing_deletes["errors"] is False
    assert _items(only_missing_deletes)[0][1]["result"] == "not_found"


def test_deletes_do_not_create_indices(es: Elasticsearch) -> None:
    response = es.bulk(operations=[{"delete": {"_index": "nowhere", "_id": "1"}}])
    assert response["errors"] is True
    error = _items(response)[0][1]
    assert (error["status"], error["error"]["type"]) == (404, "index_not_found_exception")
    assert not es.indices.exists(index="nowhere")


def test_user_index_template_for_a_data_stream(es: Elasticsearch) -> None:
    es.indices.put_index_template(
        name="events",
        index_patterns=["events-*"],
        data_stream={},
        priority=200,
        template={"mappings": {"properties": {"kind": {"type": "keyword"}}}},
    )
    item = _items(
        es.bulk(operations=[{"create": {"_index": "events-a"}}, {"@timestamp": 1, "kind": 5, "x": "y"}])
    )
    assert item[0][1]["status"] == 201
    backing = item[0][1]["_index"]
    props = es.indices.get_mapping(index="events-a")[backing]["mappings"]["properties"]
    assert props["kind"] == {"type": "keyword"} and props["@timestamp"] == {"type": "date"}
    assert props["x"]["type"] == "text"


def test_helpers_bulk_reports_item_failures(es: Elasticsearch) -> None:
    ok, errors = helpers.bulk(
        es,
        [
            {"_index": "h", "_id": "1", "v": 1},
            {"_op_type": "create", "_index": "h", "_id": "1", "v": 2},
            {"_index": "h", "_id": "2", "v": 3},
        ],
        raise_on_error=False,
    )
    assert ok == 2
    assert isinstance(errors, list) and len(errors) == 1
    assert errors[0]["create"]["status"] == 409


def test_external_versions_conflict_and_survive_deletes(es: Elasticsearch) -> None:
    def write(
        version: int, version_type: str = "external", doc: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        response = es.bulk(
            operations=[
                {"index": {"_index": "ext", "_id": "d", "version": version, "version_type": version_type}},
                doc or {"v": version},
            ]
        )
        return _items(response)[0][1]

    assert (write(5)["_version"], write(5, doc={"x": 1}).get("status")) == (5, 409)
    stale = write(3)
    assert stale["status"] == 409
    assert stale["error"]["type"] == "version_conflict_engine_exception"
    assert stale["error"]["reason"] == (
        "[d]: version conflict, current version [5] is higher or equal to the one provided [3]"
    )
    assert write(5, "external_gte")["_version"] == 5
    lower_gte = write(4, "external_gte")
    assert lower_gte["error"]["reason"] == (
        "[d]: version conflict, current version [5] is higher than the one provided [4]"
    )

    deleted = es.bulk(
        operations=[{"delete": {"_index": "ext", "_id": "d", "version": 7, "version_type": "external"}}]
    )
    assert _items(deleted)[0][1]["result"] == "deleted" and _items(deleted)[0][1]["_version"] == 7
    after_delete = write(6)
    assert after_delete["status"] == 409
    assert "current version [7] is higher or equal to the one provided [6]" in after_delete["error"]["reason"]
    recreated = write(8)
    assert (recreated["status"], recreated["result"], recreated["_version"]) == (201, "created", 8)
    assert es.get(index="ext", id="d")["_source"] == {"v": 8}


def test_internal_versions_continue_after_a_delete(es: Elasticsearch) -> None:
    assert es.index(index="iv", id="1", document={"a": 1})["_version"] == 1
    assert es.delete(index="iv", id="1")["_version"] == 2
    again = es.index(index="iv", id="1", document={"a": 2})
    assert (again["_version"], again["result"]) == (3, "created")


def test_request_level_validation_fails_the_whole_bulk(
    server: ElasticsearchContractServer, es: Elasticsearch
) -> None:
    with pytest.raises(BadRequestError) as internal:
        es.bulk(operations=[{"index": {"_index": "v", "_id": "1", "version": 2}}, {"a": 1}])
    error = internal.value.body["error"]
    assert error["type"] == "action_request_validation_exception"
    assert "internal versioning can not be used for optimistic concurrency control" in error["reason"]

    with pytest.raises(BadRequestError) as no_index:
        es.bulk(operations=[{"index": {}}, {"a": 1}])
    assert no_index.value.body["error"]["reason"] == "Validation Failed: 1: index is missing;"

    body = _ndjson({"index": {"_index": "v"}}, {"a": 1}).rstrip(b"\n")
    status, _, raw = _raw(server, "POST", "/_bulk", body, {"Content-Type": "application/x-ndjson"})
    error = orjson.loads(raw)["error"]
    assert status == 400 and error["type"] == "illegal_argument_exception"
    assert error["reason"] == "The bulk request must be terminated by a newline [\\n]"

    status, _, raw = _raw(
        server,
        "POST",
        "/_bulk",
        b'{"index": {"_index": "v"}\n{"a":1}\n',
        {"Content-Type": "application/x-ndjson"},
    )
    assert status == 400 and orjson.loads(raw)["error"]["type"] == "x_content_parse_exception"

    status, _, raw = _raw(
        server,
        "POST",
        "/_bulk",
        _ndjson({"upsert": {"_index": "v"}}, {"a": 1}),
        {"Content-Type": "application/x-ndjson"},
    )
    assert status == 400
    assert orjson.loads(raw)["error"]["reason"] == (
        "Malformed action/metadata line [1], expected field [create], [delete], [index] or [update] "
        "but found [upsert]"
    )
    assert not es.indices.exists(index="v")


def test_sequence_number_compare_and_write(es: Elasticsearch) -> None:
    first = es.index(index="cas", id="1", document={"a": 1})
    ok = es.bulk(
        operations=[
            {"index": {"_index": "cas", "_id": "1", "if_seq_no": first["_seq_no"], "if_primary_term": 1}},
            {"a": 2},
            {"index": {"_index": "cas", "_id": "1", "if_seq_no": first["_seq_no"], "if_primary_term": 1}},
            {"a": 3},
        ]
    )
    (_, good), (_, stale) = _items(ok)
    assert good["result"] == "updated" and stale["status"] == 409
    assert "required seqNo [0], primary term [1]. current document has seqNo [1]" in stale["error"]["reason"]


# ------------------------------------------------------------------------------------------
# mappings


def test_dynamic_mapping_types(es: Elasticsearch) -> None:
    es.index(
        index="dyn",
        id="1",
        document={
            "name": "alpha",
            "day": "2024-01-05",
            "at": "2024-01-05T10:00:00Z",
            "year_only": "2024",
            "count": 3,
            "ratio": 0.5,
            "ok": True,
            "nothing": None,
            "empty": [],
            "ids": [1, 2, 3],
            "user": {"id": 7, "tags": ["a", "b"]},
            "a.b": 1,
        },
    )
    props = es.indices.get_mapping(index="dyn")["dyn"]["mappings"]["properties"]
    text = {"type": "text", "fields": {"keyword": {"type": "keyword", "ignore_above": 256}}}
    assert props == {
        "a": {"properties": {"b": {"type": "long"}}},
        "at": {"type": "date"},
        "count": {"type": "long"},
        "day": {"type": "date"},
        "ids": {"type": "long"},
        "name": text,
        "ok": {"type": "boolean"},
        "ratio": {"type": "float"},
        "user": {"properties": {"id": {"type": "long"}, "tags": text}},
        "year_only": text,
    }


def test_type_mismatch_fails_only_that_item_and_leaves_the_mapping(es: Elasticsearch) -> None:
    es.indices.create(
        index="typed", mappings={"properties": {"amount": {"type": "long"}, "tag": {"type": "keyword"}}}
    )
    response = es.bulk(
        index="typed",
        operations=[
            {"index": {"_id": "1"}},
            {"amount": 5},
            {"index": {"_id": "2"}},
            {"amount": "12", "fresh": "new field"},
            {"index": {"_id": "3"}},
            {"extra": 1, "amount": "abc"},
            {"index": {"_id": "4"}},
            {"amount": 12.9},
            {"index": {"_id": "5"}},
            {"tag": {"nested": True}},
            {"index": {"_id": "6"}},
            {"amount": 2**40, "tag": 17},
        ],
    )
    items = _items(response)
    assert response["errors"] is True
    assert [item["status"] for _, item in items] == [201, 201, 400, 201, 400, 201]
    error = items[2][1]["error"]
    assert error["type"] == "document_parsing_exception"
    assert "failed to parse field [amount] of type [long] in document with id '3'" in error["reason"]
    assert error["reason"].endswith("Preview of field's value: 'abc'")
    assert error["reason"].startswith("[1:")
    assert items[4][1]["error"]["type"] == "document_parsing_exception"
    assert "of type [keyword]" in items[4][1]["error"]["reason"]

    props = es.indices.get_mapping(index="typed")["typed"]["mappings"]["properties"]
    assert set(props) == {"amount", "tag", "fresh"}
    assert es.count(index="typed")["count"] == 4

    out_of_range = es.bulk(
        operations=[
            {"index": {"_index": "small", "_id": "1"}},
            {"n": 1},
        ]
    )
    assert not out_of_range["errors"]
    es.indices.create(
        index="ints", mappings={"properties": {"i": {"type": "integer"}, "o": {"type": "object"}}}
    )
    bad = _items(
        es.bulk(
            index="ints",
            operations=[
                {"index": {}},
                {"i": 3_000_000_000},
                {"index": {}},
                {"o": "flat"},
                {"index": {}},
                {"i": True},
            ],
        )
    )
    assert bad[0][1]["error"]["caused_by"]["reason"] == "Value [3000000000] is out of range for an integer"
    assert bad[1][1]["error"]["reason"].endswith(
        "object mapping for [o] tried to parse field [o] as object, but found a concrete value"
    )
    assert bad[2][1]["status"] == 400


def test_strict_and_disabled_dynamic_mappings(es: Elasticsearch) -> None:
    es.indices.create(
        index="strict",
        mappings={"dynamic": "strict", "properties": {"id": {"type": "keyword"}, "user": {"properties": {}}}},
    )
    items = _items(
        es.bulk(
            index="strict",
            operations=[
                {"index": {"_id": "1"}},
                {"f": 1},
                {"index": {"_id": "2"}},
                {"id": "x", "user": {"name": "n"}},
                {"index": {"_id": "3"}},
                {"id": "ok"},
            ],
        )
    )
    assert items[0][1]["error"]["type"] == "strict_dynamic_mapping_exception"
    assert items[0][1]["error"]["reason"] == (
        "[1:2] mapping set to strict, dynamic introduction of [f] within [_doc] is not allowed"
    )
    assert "dynamic introduction of [name] within [user] is not allowed" in items[1][1]["error"]["reason"]
    assert items[2][1]["status"] == 201

    es.indices.create(index="loose", mappings={"dynamic": False, "properties": {"id": {"type": "keyword"}}})
    es.index(index="loose", id="1", document={"id": "a", "anything": {"goes": [1, "x"]}})
    assert es.indices.get_mapping(index="loose")["loose"]["mappings"]["properties"] == {
        "id": {"type": "keyword"}
    }
    assert es.get(index="loose", id="1")["_source"]["anything"] == {"goes": [1, "x"]}


def test_date_formats_and_coercion(es: Elasticsearch) -> None:
    es.indices.create(
        index="dates",
        mappings={
            "properties": {
                "d": {"type": "date"},
                "slash": {"type": "date", "format": "yyyy/MM/dd||epoch_millis"},
                "day": {"type": "date", "format": "strict_date"},
                "flag": {"type": "boolean"},
                "price": {"type": "double"},
            }
        },
    )
    statuses = [
        item["status"]
        for _, item in _items(
            es.bulk(
                index="dates",
                operations=[
                    {"index": {}},
                    {"d": "2024-01-05T10:00:00.123+02:00", "slash": "2024/01/05", "day": "2024-01-05"},
                    {"index": {}},
                    {"d": 1_704_450_000_000, "slash": 1_704_450_000_000, "flag": "true", "price": "3.5"},
                    {"index": {}},
                    {"d": "2024-01-05 10:00:00"},
                    {"index": {}},
                    {"slash": "2024-01-05"},
                    {"index": {}},
                    {"day": "2024-02-30"},
                    {"index": {}},
                    {"flag": "yes"},
                    {"index": {}},
                    {"price": "cheap"},
                ],
            )
        )
    ]
    assert statuses == [201, 201, 400, 400, 400, 400, 400]


# ------------------------------------------------------------------------------------------
# reads


def test_search_count_and_sort(es: Elasticsearch) -> None:
    es.indices.create(
        index="s", mappings={"properties": {"n": {"type": "long"}, "kind": {"type": "keyword"}}}
    )
    helpers.bulk(
        es,
        [
            {
                "_index": "s",
                "_id": str(i),
                "n": i,
                "kind": "even" if i % 2 == 0 else "odd",
                "text": f"Doc number {i}",
            }
            for i in range(12)
        ],
        refresh=True,
    )
    assert es.count(index="s")["count"] == 12
    assert es.count(index="s", query={"term": {"kind": "odd"}})["count"] == 6
    assert es.count(index="s", query={"match": {"text": "NUMBER"}})["count"] == 12
    assert es.count(index="s", query={"term": {"text.keyword": "Doc number 3"}})["count"] == 1

    page = es.search(
        index="s", query={"term": {"kind": "even"}}, sort=[{"n": {"order": "desc"}}], size=2, from_=1
    )
    assert page["hits"]["total"] == {"value": 6, "relation": "eq"}
    assert page["timed_out"] is False
    assert [hit["_id"] for hit in page["hits"]["hits"]] == ["8", "6"]
    assert page["hits"]["hits"][0]["sort"] == [8]
    everything = es.search(index="s", size=100)
    assert len(everything["hits"]["hits"]) == 12 and everything["hits"]["max_score"] == 1.0
    assert {"_index", "_id", "_score", "_source"} <= set(everything["hits"]["hits"][0])
    ranged = es.search(index="s", query={"bool": {"filter": [{"range": {"n": {"gte": 3, "lt": 6}}}]}})
    assert sorted(hit["_id"] for hit in ranged["hits"]["hits"]) == ["3", "4", "5"]

    with pytest.raises(BadRequestError) as text_sort:
        es.search(index="s", sort=["text"])
    assert text_sort.value.body["error"]["root_cause"][0]["reason"].startswith(
        "Fielddata is disabled on [text]"
    )
    with pytest.raises(NotFoundError) as missing:
        es.search(index="no-such-index")
    assert missing.value.body["error"]["type"] == "index_not_found_exception"
    assert es.indices.refresh(index="s")["_shards"]["failed"] == 0


# ------------------------------------------------------------------------------------------
# data streams


def test_data_streams(es: Elasticsearch) -> None:
    created = es.indices.create_data_stream(name="logs-app-default")
    assert created.body == {"acknowledged": True}
    stream = es.indices.get_data_stream(name="logs-app-default")["data_streams"][0]
    day = dt.datetime.now(dt.UTC).strftime("%Y.%m.%d")
    backing = f".ds-logs-app-default-{day}-000001"
    assert stream["name"] == "logs-app-default" and stream["generation"] == 1
    assert stream["timestamp_field"] == {"name": "@timestamp"} and stream["template"] == "logs"
    assert stream["indices"][0]["index_name"] == backing and stream["status"] == "GREEN"

    with pytest.raises(BadRequestError) as exists:
        es.indices.create_data_stream(name="logs-app-default")
    assert exists.value.body["error"]["type"] == "resource_already_exists_exception"
    with pytest.raises(BadRequestError) as no_template:
        es.indices.create_data_stream(name="plain-stream")
    assert no_template.value.body["error"]["type"] == "illegal_argument_exception"
    assert (
        no_template.value.body["error"]["reason"]
        == "no matching index template found for data stream [plain-stream]"
    )

    response = es.bulk(
        operations=[
            {"create": {"_index": "logs-app-default"}},
            {"@timestamp": "2024-01-05T10:00:00Z", "message": "hello", "level": "info"},
            {"index": {"_index": "logs-app-default"}},
            {"@timestamp": "2024-01-05T10:00:01Z"},
            {"update": {"_index": "logs-app-default", "_id": "x"}},
            {"doc": {"a": 1}},
            {"create": {"_index": "metrics-cpu-default"}},
            {"@timestamp": 1_704_448_800_000, "cpu": 0.5},
            {"create": {"_index": "metrics-cpu-default"}},
            {"cpu": 0.7},
        ]
    )
    items = _items(response)
    assert [item["status"] for _, item in items] == [201, 400, 400, 201, 400]
    assert items[0][1]["_index"] == backing
    op_type = items[1][1]["error"]
    assert op_type == {
        "type": "illegal_argument_exception",
        "reason": "only write ops with an op_type of create are allowed in data streams",
    }
    assert items[3][1]["_index"].startswith(".ds-metrics-cpu-default-")
    no_timestamp = items[4][1]["error"]
    assert no_timestamp["type"] == "document_parsing_exception"
    assert no_timestamp["reason"].endswith(
        "failed to parse: data stream timestamp field [@timestamp] is missing"
    )
    assert no_timestamp["caused_by"]["reason"] == "data stream timestamp field [@timestamp] is missing"

    assert es.indices.get_data_stream(name="metrics-cpu-default")["data_streams"][0]["template"] == "metrics"
    hits = es.search(index="logs-app-default")["hits"]["hits"]
    assert [hit["_index"] for hit in hits] == [backing]
    assert es.count(index="metrics-*")["count"] == 1
    mapping = es.indices.get_mapping(index="logs-app-default")[backing]["mappings"]
    assert mapping["properties"]["@timestamp"]["type"] == "date"
    assert mapping["properties"]["level"] == {"type": "keyword", "ignore_above": 1024}

    with pytest.raises(BadRequestError):
        es.indices.create(index="logs-app-other")
    # logs-*-* as Elasticsearch 8 ships it: the default pipeline stamps a missing @timestamp,
    # and ignore_malformed keeps a badly typed field from failing the document.
    lenient = _items(
        es.bulk(
            operations=[
                {"create": {"_index": "logs-app-default"}},
                {"ip": "not an address", "level": "warn"},
                {"create": {"_index": "logs-app-default"}},
                {"@timestamp": "yesterday"},
            ]
        )
    )
    assert lenient[0][1]["status"] == 201 and lenient[1][1]["status"] == 400
    assert len(lenient[1][1]["_id"]) == 20  # generated before the document was refused
    stamped = es.search(index="logs-app-default", query={"term": {"level": "warn"}})["hits"]["hits"][0]
    assert stamped["_ignored"] == ["ip"] and "@timestamp" in stamped["_source"]

    es.indices.delete_data_stream(name="logs-app-default")
    assert not es.indices.exists(index=backing)
    with pytest.raises(NotFoundError):
        es.indices.get_data_stream(name="logs-app-default")


# ------------------------------------------------------------------------------------------
# transport: auth, TLS, encodings


def test_authentication() -> None:
    with ElasticsearchContractServer(username="elastic", password="s3cret", api_key=("kid", "key")) as srv:
        anonymous = _client(srv.url)
        wrong = _client(srv.url, basic_auth=("elastic", "nope"))
        right = _client(srv.url, basic_auth=("elastic", "s3cret"))
        keyed = _client(srv.url, api_key=("kid", "key"))
        try:
            with pytest.raises(AuthenticationException) as missing:
                anonymous.info()
            assert missing.value.meta.status == 401
            assert missing.value.meta.headers["www-authenticate"].startswith('Basic realm="security"')
            assert missing.value.body["error"]["type"] == "security_exception"
            assert (
                missing.value.body["error"]["reason"]
                == "missing authentication credentials for REST request [/]"
            )
            with pytest.raises(AuthenticationException) as bad:
                wrong.info()
            assert (
                bad.value.body["error"]["reason"]
                == "unable to authenticate user [elastic] for REST request [/]"
            )
            assert right.info()["tagline"] == "You Know, for Search"
            assert keyed.bulk(operations=[{"index": {"_index": "a"}}, {"x": 1}])["errors"] is False
            assert srv.document_count("a") == 1
        finally:
            for client in (anonymous, wrong, right, keyed):
                client.close()


def test_tls(tmp_path: Path) -> None:
    ca_path, cert_path, key_path = tls_files(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    with ElasticsearchContractServer(ssl_context=context, username="u", password="p") as srv:
        assert srv.url.startswith("https://127.0.0.1:")
        client = _client(srv.url, ca_certs=str(ca_path), basic_auth=("u", "p"))
        untrusting = _client(srv.url, basic_auth=("u", "p"))
        try:
            assert client.info()["version"]["number"] == "8.15.0"
            assert client.bulk(operations=[{"index": {"_index": "tls"}}, {"x": 1}])["errors"] is False
            with pytest.raises(ConnectionError):
                untrusting.info()
        finally:
            client.close()
            untrusting.close()
    assert not _server_threads()


def test_gzip_bodies_and_content_types(server: ElasticsearchContractServer) -> None:
    client = _client(server.url, http_compress=True)
    try:
        assert (
            client.bulk(operations=[{"index": {"_index": "gz", "_id": "1"}}, {"x": "y" * 1000}])["errors"]
            is False
        )
    finally:
        client.close()
    assert server.documents("gz") == {"1": {"x": "y" * 1000}}

    body = gzip.compress(_ndjson({"index": {"_index": "gz", "_id": "2"}}, {"x": 2}))
    status, _, _ = _raw(
        server, "POST", "/_bulk", body, {"Content-Type": "application/x-ndjson", "Content-Encoding": "gzip"}
    )
    assert status == 200 and server.document_count("gz") == 2

    status, headers, raw = _raw(server, "POST", "/gz/_search", b"{}", {"Content-Type": "text/plain"})
    assert status == 406 and headers["x-elastic-product"] == "Elasticsearch"
    assert orjson.loads(raw) == {"error": "Content-Type header [text/plain] is not supported", "status": 406}

    status, _, raw = _raw(
        server,
        "POST",
        "/gz/_search?filter_path=hits.hits._id",
        b"{}",
        {"Content-Type": "application/json"},
    )
    assert status == 200 and orjson.loads(raw) == {"hits": {"hits": [{"_id": "1"}, {"_id": "2"}]}}


# ------------------------------------------------------------------------------------------
# fault injection and observation


def test_whole_request_failures(server: ElasticsearchContractServer, es: Elasticsearch) -> None:
    ops: list[dict[str, Any]] = [{"index": {"_index": "f"}}, {"x": 1}]
    server.fail_next_requests(2, status=429)
    assert es.info()["tagline"]  # only bulk requests are failed by default
    for _ in range(2):
        with pytest.raises(ApiError) as rejected:
            es.bulk(operations=ops)
        assert rejected.value.meta.status == 429
        assert rejected.value.body["error"]["type"] == "es_rejected_execution_exception"
        assert rejected.value.body["error"]["reason"].startswith(
            "rejected execution of coordinating operation"
        )
    assert es.bulk(operations=ops)["errors"] is False

    server.fail_next_requests(1, status=503, paths="*")
    with pytest.raises(ApiError) as unavailable:
        es.count(index="f")
    assert unavailable.value.meta.status == 503
    assert unavailable.value.body["error"]["type"] == "cluster_block_exception"
    server.fail_next_requests(1, status=500)
    with pytest.raises(ApiError) as internal:
        es.bulk(operations=ops)
    assert internal.value.meta.status == 500

    server.fail_next_requests(1, status=0)
    with pytest.raises(ConnectionError):
        es.bulk(operations=ops)
    assert server.document_count("f") == 1
    assert server.observations()["failed_requests"] == 5


def test_item_rejections_are_partial_failures(server: ElasticsearchContractServer, es: Elasticsearch) -> None:
    server.reject_next_items(3)
    docs = [{"_index": "p", "_id": str(i), "n": i} for i in range(5)]
    ok, errors = helpers.bulk(es, docs, raise_on_error=False, chunk_size=2)
    assert ok == 2
    assert isinstance(errors, list)
    assert [(e["index"]["_id"], e["index"]["status"]) for e in errors] == [("0", 429), ("1", 429), ("2", 429)]
    assert errors[0]["index"]["error"]["type"] == "es_rejected_execution_exception"
    assert set(server.documents("p")) == {"3", "4"}
    assert server.bulk_items == [2, 2, 1]

    server.reject_next_items(1, status=429)
    response = es.bulk(
        operations=[{"index": {"_index": "p", "_id": "a"}}, {"n": 1}, {"index": {"_index": "p"}}, {"n": 2}]
    )
    assert response["errors"] is True
    assert [item["status"] for _, item in _items(response)] == [429, 201]


def test_delay_and_concurrency_are_observed(server: ElasticsearchContractServer, es: Elasticsearch) -> None:
    server.delay(250)
    started = time.perf_counter()
    es.bulk(operations=[{"index": {"_index": "c"}}, {"n": 0}])
    assert time.perf_counter() - started >= 0.24  # Event.wait may wake a hair early

    server.reset_observations()
    threads = 4
    barrier = threading.Barrier(threads)
    failures: list[BaseException] = []

    def send(n: int) -> None:
        try:
            barrier.wait(5)
            es.bulk(operations=[{"index": {"_index": "c"}}, {"n": n}, {"index": {"_index": "c"}}, {"n": n}])
        except BaseException as exc:  # surfaced by the assertion below
            failures.append(exc)

    workers = [threading.Thread(target=send, args=(n,)) for n in range(threads)]
    started = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(10)
    elapsed = time.perf_counter() - started
    assert not failures
    assert server.max_concurrent_bulks == threads
    assert elapsed < 0.25 * threads  # the waits overlapped
    observed = server.observations()
    assert observed["bulk_requests"] == threads and observed["bulk_items"] == [2] * threads
    assert observed["documents"] == {"c": 1 + 2 * threads}
    server.delay(0)


def test_admin_endpoints(server: ElasticsearchContractServer, es: Elasticsearch) -> None:
    def admin(op: str, **payload: Any) -> Any:
        request = urllib.request.Request(
            f"{server.url}/_contract/{op}",
            data=orjson.dumps(payload),
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return orjson.loads(response.read())

    assert admin("fail_next_requests", n=1, status=503) == {"acknowledged": True}
    with pytest.raises(ApiError) as failed:
        es.bulk(operations=[{"index": {"_index": "adm", "_id": "1"}}, {"x": 1}])
    assert failed.value.meta.status == 503
    admin("reject_next_items", n=1)
    es.bulk(
        operations=[
            {"index": {"_index": "adm", "_id": "1"}},
            {"x": 1},
            {"index": {"_index": "adm", "_id": "2"}},
            {"x": 2},
        ]
    )
    observed = admin("observations")
    assert observed["bulk_requests"] == 2 and observed["bulk_items"] == [2]
    assert observed["rejected_items"] == 1 and observed["documents"] == {"adm": 1}
    assert admin("documents", index="adm") == {"2": {"x": 2}}
    admin("reset_observations")
    assert admin("observations")["bulk_requests"] == 0
    admin("reset")
    assert not es.indices.exists(index="adm")


def test_stop_and_start_on_the_same_port_keeps_data(
    server: ElasticsearchContractServer, es: Elasticsearch
) -> None:
    helpers.bulk(es, [{"_index": "persist", "_id": str(i), "n": i} for i in range(3)])
    port = server.port
    server.stop()
    assert not server.running and not _server_threads()
    with pytest.raises(ConnectionError):
        es.info()
    server.start()
    assert server.port == port
    assert es.count(index="persist")["count"] == 3
    assert es.get(index="persist", id="2")["_source"] == {"n": 2}


def test_fixed_port() -> None:
    port = free_port()
    with ElasticsearchContractServer(port=port) as srv:
        assert srv.url == f"http://127.0.0.1:{port}"
        client = _client(srv.url)
        try:
            assert client.info()["cluster_name"] == "contract-cluster"
        finally:
            client.close()


def test_python_dash_m_runs_in_the_foreground() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.contract_servers.elasticsearch", "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("LISTENING "), line
        port = int(line.split()[1])
        client = _client(f"http://127.0.0.1:{port}")
        try:
            assert client.bulk(operations=[{"index": {"_index": "sub"}}, {"x": 1}])["errors"] is False
            assert client.count(index="sub")["count"] == 1
        finally:
            client.close()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()


def test_process_helper_with_auth_and_admin() -> None:
    with ElasticsearchContractProcess(username="elastic", password="pw") as child:
        client = _client(child.url, basic_auth=("elastic", "pw"))
        try:
            child.admin("fail_next_requests", n=1, status=429)
            with pytest.raises(ApiError) as rejected:
                client.bulk(operations=[{"index": {"_index": "x"}}, {"a": 1}])
            assert rejected.value.meta.status == 429
            client.bulk(operations=[{"index": {"_index": "x"}}, {"a": 1}])
            wait_until(lambda: child.admin("observations")["documents"] == {"x": 1}, timeout=5)
        finally:
            client.close()
        proc = child.proc
    assert proc is not None and proc.returncode == 0
