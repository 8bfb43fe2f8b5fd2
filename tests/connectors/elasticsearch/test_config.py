"""The sink's keys: Confluent's names, defaults and cross-key checks, each naming its key."""

from __future__ import annotations

import pytest

from connect.api import ConfigValidationError
from connectors.elasticsearch.config import ElasticsearchSinkConfig

URL = {"connection.url": "http://es1:9200, es2:9200/"}


def issues(**props: str) -> dict[str, str]:
    return {i.key: i.message for i in ElasticsearchSinkConfig.issues({**URL, **props})}


def test_defaults_are_confluents() -> None:
    c = ElasticsearchSinkConfig.parse(URL)
    assert c.connection_url == ["http://es1:9200", "http://es2:9200"]
    assert (c.batch_size, c.bulk_size_bytes, c.max_in_flight_requests, c.max_buffered_records) == (
        2000,
        5242880,
        5,
        20000,
    )
    assert (c.linger_ms, c.flush_timeout_ms, c.max_retries, c.retry_backoff_ms) == (1, 180000, 5, 100)
    assert (c.connection_timeout_ms, c.read_timeout_ms) == (1000, 3000)
    assert (c.key_ignore, c.schema_ignore, c.compact_map_entries, c.drop_invalid_message) == (
        False,
        False,
        True,
        False,
    )
    assert (c.behavior_on_null_values, c.behavior_on_malformed_documents, c.write_method) == (
        "fail",
        "fail",
        "insert",
    )
    assert (c.data_stream_type, c.elastic_security_protocol) == ("none", "PLAINTEXT")


def test_enumerations_take_any_case() -> None:
    c = ElasticsearchSinkConfig.parse(
        {
            **URL,
            "write.method": "UPSERT",
            "behavior.on.null.values": "Delete",
            "elastic.security.protocol": "ssl",
        }
    )
    assert (c.write_method, c.behavior_on_null_values, c.elastic_security_protocol) == (
        "upsert",
        "delete",
        "SSL",
    )


def test_a_missing_url_and_bad_urls_are_named() -> None:
    with pytest.raises(ConfigValidationError, match=r'Missing required configuration "connection\.url"'):
        ElasticsearchSinkConfig.parse({})
    assert "not an http(s) URL" in issues(**{"connection.url": "ftp://x"})["connection.url"]
    assert "connection.username" in issues(**{"connection.url": "http://u:p@es:9200"})["connection.url"]


def test_the_password_is_never_shown() -> None:
    c = ElasticsearchSinkConfig.parse(
        {**URL, "connection.username": "elastic", "connection.password": "s3cret"}
    )
    assert "s3cret" not in repr(c) and "s3cret" not in str(c.model_dump())
    assert c.password() == "s3cret"


def test_cross_key_problems() -> None:
    assert "needs a dataset" in issues(**{"data.stream.type": "logs"})["data.stream.dataset"]
    both = issues(
        **{
            "data.stream.type": "logs",
            "data.stream.dataset": "d",
            "write.method": "upsert",
            "behavior.on.null.values": "delete",
        }
    )
    assert "append-only" in both["write.method"] and "append-only" in both["behavior.on.null.values"]
    assert "data.stream.type" in issues(**{"data.stream.dataset": "d"})["data.stream.dataset"]
    assert (
        "lowercase"
        in issues(**{"data.stream.type": "logs", "data.stream.dataset": "Bad-Name"})["data.stream.dataset"]
    )
    assert (
        "key.ignore=false"
        in issues(**{"key.ignore": "true", "behavior.on.null.values": "delete"})["behavior.on.null.values"]
    )
    assert (
        issues(
            **{
                "data.stream.type": "metrics",
                "data.stream.dataset": "cpu",
                "data.stream.namespace": "${topic}",
            }
        )
        == {}
    )
    assert "Invalid value maybe" in issues(**{"data.stream.type": "maybe"})["data.stream.type"]
