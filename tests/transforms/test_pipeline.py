"""SMTs configured by their Kafka class names in real pipelines: a worker and a broker in
this process, records through the Kafka protocol, errors to the dead letter queue."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from connect.api import Struct
from sluiceway.embedded import EmbeddedConnect
from tests.connect import plugins
from tests.support import unique

T = "org.apache.kafka.connect.transforms."
JSON = "org.apache.kafka.connect.json.JsonConverter"


@pytest.fixture(scope="module")
def connect(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedConnect]:
    with EmbeddedConnect(tmp_path_factory.mktemp("smt-worker")) as c:
        yield c


def test_source_pipeline_hoists_inserts_and_routes(connect: EmbeddedConnect, tmp_path: Path) -> None:
    src, raw = tmp_path / "in.txt", unique("lines") + "-raw"
    src.write_text("alpha\nbeta\n")
    connect.create_connector(
        unique("src"),
        {
            "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
            "file": str(src),
            "topic": raw,
            "value.converter": JSON,
            "transforms": "hoist,insert,route",
            "transforms.hoist.type": T + "HoistField$Value",
            "transforms.hoist.field": "line",
            "transforms.insert.type": T + "InsertField$Value",
            "transforms.insert.static.field": "origin",
            "transforms.insert.static.value": "file",
            "transforms.insert.topic.field": "source_topic!",
            "transforms.route.type": T + "RegexRouter",
            "transforms.route.regex": "(.*)-raw",
            "transforms.route.replacement": "$1-clean",
        },
    )
    clean = raw.replace("-raw", "-clean")
    messages = connect.consume(clean, 2)
    envelopes = [orjson.loads(m.value()) for m in messages]
    assert [e["payload"] for e in envelopes] == [
        {"line": "alpha", "source_topic": raw, "origin": "file"},
        {"line": "beta", "source_topic": raw, "origin": "file"},
    ]
    schema = envelopes[0]["schema"]
    assert schema["type"] == "struct"
    assert [(f["field"], f["type"], f["optional"]) for f in schema["fields"]] == [
        ("line", "string", False),
        ("source_topic", "string", False),
        ("origin", "string", True),
    ]


def test_sink_pipeline_filters_by_topic_and_inserts_kafka_coordinates(connect: EmbeddedConnect) -> None:
    name, live, test = unique("sink"), unique("orders"), unique("orders") + "-test"
    connect.produce(live, [(None, '{"id": 1}'), (None, '{"id": 2}')])
    connect.produce(test, [(None, '{"id": 99}')])
    connect.create_connector(
        name,
        {
            "connector.class": "tests.connect.plugins.RecordingSinkConnector",
            "topics": f"{live},{test}",
            "value.converter": JSON,
            "value.converter.schemas.enable": "false",
            "transforms": "dropTests,coordinates",
            "transforms.dropTests.type": T + "Filter",
            "transforms.dropTests.predicate": "isTest",
            "transforms.coordinates.type": T + "InsertField$Value",
            "transforms.coordinates.topic.field": "topic",
            "transforms.coordinates.offset.field": "offset",
            "predicates": "isTest",
            "predicates.isTest.type": T + "predicates.TopicNameMatches",
            "predicates.isTest.pattern": ".*-test",
        },
    )
    connect.wait_for(lambda: len(plugins.PUT[name]) >= 2, 30, "the two live records")
    connect.wait_for_running(name)
    assert [r.value for r in plugins.PUT[name]] == [
        {"id": 1, "topic": live, "offset": 0},
        {"id": 2, "topic": live, "offset": 1},
    ]


def test_a_record_a_transform_cannot_handle_goes_to_the_dead_letter_queue(connect: EmbeddedConnect) -> None:
    name, topic, dlq = unique("smt-dlq"), unique(), unique("dlq")
    connect.produce(
        topic,
        [
            (
                b"k1",
                b'{"schema":{"type":"struct","fields":[{"field":"id","type":"int32"}]},"payload":{"id":1}}',
            ),
            (b"k2", b'{"schema":{"type":"string"},"payload":"not a struct"}'),
            (
                b"k3",
                b'{"schema":{"type":"struct","fields":[{"field":"id","type":"int32"}]},"payload":{"id":3}}',
            ),
        ],
    )
    connect.create_connector(
        name,
        {
            "connector.class": "tests.connect.plugins.RecordingSinkConnector",
            "topics": topic,
            "value.converter": JSON,
            "transforms": "insert",
            "transforms.insert.type": T + "InsertField$Value",
            "transforms.insert.partition.field": "partition",
            "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": dlq,
            "errors.deadletterqueue.topic.replication.factor": "1",
            "errors.deadletterqueue.context.headers.enable": "true",
        },
    )
    connect.wait_for(lambda: len(plugins.PUT[name]) == 2, 30, "the two structs")
    values = [r.value for r in plugins.PUT[name]]
    assert all(isinstance(v, Struct) for v in values)
    assert [(v.get("id"), v.get("partition")) for v in values] == [(1, 0), (3, 0)]
    [bad] = connect.consume(dlq, 1)
    assert bad.key() == b"k2"
    headers = dict(bad.headers())
    assert headers["__connect.errors.stage"] == b"TRANSFORMATION"
    assert headers["__connect.errors.class.name"] == b"transforms.insert_field.InsertFieldValue"
    message = headers["__connect.errors.exception.message"].decode()
    assert message.startswith(
        "InsertField$Value: Only Struct objects supported for [field insertion], found: str"
    )
    assert f"topic '{topic}', partition 0, offset 1" in message


def test_invalid_transform_configs_are_refused_with_the_key_named(connect: EmbeddedConnect) -> None:
    r = connect.request(
        "PUT",
        "/connectors/bad-smt/config",
        {
            "connector.class": "tests.connect.plugins.RecordingSinkConnector",
            "topics": "t",
            "transforms": "route,insert",
            "transforms.route.type": T + "RegexRouter",
            "transforms.route.regex": "(a)",
            "transforms.route.replacement": "$2",
            "transforms.insert.type": T + "InsertField$Value",
        },
    )
    assert r.status_code == 400
    message = r.json()["message"]
    assert "Invalid value $2 for configuration transforms.route.replacement: No group 2" in message
    assert "No field insertion configured" in message
    assert connect.request("GET", "/connectors/bad-smt").status_code == 404
    validated = connect.request(
        "PUT",
        "/connector-plugins/RecordingSinkConnector/config/validate",
        {
            "connector.class": "tests.connect.plugins.RecordingSinkConnector",
            "name": "validated",
            "topics": "t",
            "transforms": "insert",
            "transforms.insert.type": T + "InsertField$Value",
            "transforms.insert.static.field": "s",
        },
    ).json()
    errors = {c["value"]["name"]: c["value"]["errors"] for c in validated["configs"] if c["value"]["errors"]}
    assert errors == {
        "transforms.insert.static.value": [
            "Invalid value null for configuration transforms.insert.static.value: "
            "No value specified for static field: s"
        ]
    }


KAFKA_TRANSFORMS = [
    *(f"{name}${part}" for name in (
        "Cast", "ExtractField", "Flatten", "HeaderFrom", "HoistField", "InsertField", "MaskField",
        "ReplaceField", "SetSchemaMetadata", "TimestampConverter",
    ) for part in ("Key", "Value")),
    "DropHeaders", "Filter", "InsertHeader", "RegexRouter", "TimestampRouter", "ValueToKey",
]  # fmt: skip
KAFKA_PREDICATES = ["HasHeaderKey", "RecordIsTombstone", "TopicNameMatches"]


def test_the_whole_catalogue_is_listed_and_answers_to_kafkas_names(connect: EmbeddedConnect) -> None:
    listed = connect.request("GET", "/connector-plugins?connectorsOnly=false").json()
    transformations = {p["class"] for p in listed if p["type"] == "transformation"}
    predicates = {p["class"] for p in listed if p["type"] == "predicate"}
    assert len(transformations) >= len(KAFKA_TRANSFORMS) and len(predicates) >= len(KAFKA_PREDICATES)
    for name in KAFKA_TRANSFORMS + [f"predicates.{p}" for p in KAFKA_PREDICATES]:
        r = connect.request("GET", f"/connector-plugins/{T}{name}/config")
        assert r.status_code == 200, (name, r.text)
        for key in r.json():
            assert key["documentation"], (name, key["name"])


def test_a_transform_config_definition_has_kafkas_keys_types_and_defaults(connect: EmbeddedConnect) -> None:
    defs = connect.request("GET", f"/connector-plugins/{T}InsertField$Value/config").json()
    by_name = {d["name"]: d for d in defs}
    assert set(by_name) == {
        "topic.field",
        "partition.field",
        "offset.field",
        "timestamp.field",
        "static.field",
        "static.value",
        "replace.null.with.default",
    }
    assert (
        by_name["replace.null.with.default"]["type"],
        by_name["replace.null.with.default"]["default_value"],
    ) == (
        "BOOLEAN",
        "true",
    )
    assert (by_name["topic.field"]["type"], by_name["topic.field"]["required"]) == ("STRING", False)
    router = {
        d["name"]: d for d in connect.request("GET", f"/connector-plugins/{T}TimestampRouter/config").json()
    }
    assert router["topic.format"]["default_value"] == "${topic}-${timestamp}"
    assert router["timestamp.format"]["default_value"] == "yyyyMMdd"
