"""Tests of connect.runtime.validation.validate and the ConfigInfos body it builds
(``PUT /connector-plugins/{plugin}/config/validate`` in Kafka Connect).

Kafka reports every problem against the key it belongs to (``ConfigValue.errorMessages``), with
transform and predicate keys under their full ``transforms.<alias>.`` / ``predicates.<alias>.``
names, and counts them in ``error_count``.
"""

from __future__ import annotations

from typing import Any

import pytest

from connect.runtime.config import WorkerConfig
from connect.runtime.plugins import Plugins
from connect.runtime.validation import BadRequest, Validation, validate
from connectors.file.sink import FileStreamSinkConnector
from connectors.file.source import FileStreamSourceConnector


@pytest.fixture(scope="module")
def plugins() -> Plugins:
    return Plugins()


def worker(policy: str | None = None) -> WorkerConfig:
    settings = {
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    }
    if policy is not None:
        settings["connector.client.config.override.policy"] = policy
    return WorkerConfig.model_validate(settings)


SOURCE = {
    "name": "file-source",
    "connector.class": "FileStreamSource",
    "topic": "lines",
    "file": "/tmp/in.txt",
}
SINK = {"name": "file-sink", "connector.class": "FileStreamSink", "topics": "lines", "file": "/tmp/out.txt"}


def run(plugins: Plugins, config: dict[str, str], policy: str | None = None) -> Validation:
    return validate(plugins, worker(policy), config)


def errors(v: Validation) -> dict[str, list[str]]:
    """Key -> error messages, for keys that have any."""
    return {c["value"]["name"]: c["value"]["errors"] for c in v.infos["configs"] if c["value"]["errors"]}


def entry(v: Validation, key: str) -> dict[str, Any]:
    matches = [c for c in v.infos["configs"] if c["value"]["name"] == key]
    assert len(matches) == 1, f"{key} appears {len(matches)} times"
    return matches[0]


# -- valid configs ----------------------------------------------------------------------------------


def test_a_valid_source_config(plugins: Plugins) -> None:
    v = run(plugins, SOURCE)
    assert v.error_count == 0
    assert errors(v) == {}
    assert v.issues() == []
    assert v.connector_class is FileStreamSourceConnector
    assert v.infos["name"] == SOURCE["connector.class"]  # Kafka names the response after the class as given


def test_a_valid_sink_config(plugins: Plugins) -> None:
    v = run(plugins, SINK)
    assert v.error_count == 0, v.issues()
    assert v.connector_class is FileStreamSinkConnector


@pytest.mark.parametrize(
    "cls",
    [
        "org.apache.kafka.connect.file.FileStreamSourceConnector",
        "FileStreamSourceConnector",
        "FileStreamSource",
        "connectors.file.source.FileStreamSourceConnector",
    ],
)
def test_connector_class_aliases(plugins: Plugins, cls: str) -> None:
    v = run(plugins, {**SOURCE, "connector.class": cls})
    assert v.error_count == 0
    assert v.connector_class is FileStreamSourceConnector
    assert v.infos["name"] == cls


# -- connector.class and name -----------------------------------------------------------------------


def test_missing_connector_class_is_a_bad_request(plugins: Plugins) -> None:
    with pytest.raises(BadRequest) as info:
        run(plugins, {"name": "x", "topic": "t"})
    assert "contains no connector type" in str(info.value)


def test_unknown_connector_class_is_a_bad_request_listing_plugins(plugins: Plugins) -> None:
    with pytest.raises(BadRequest) as info:
        run(plugins, {**SOURCE, "connector.class": "com.example.MissingConnector"})
    message = str(info.value)
    assert "com.example.MissingConnector" in message
    assert "connectors.file.source.FileStreamSourceConnector" in message
    assert "connectors.file.sink.FileStreamSinkConnector" in message


def test_missing_name(plugins: Plugins) -> None:
    config = dict(SOURCE)
    del config["name"]
    v = run(plugins, config)
    assert errors(v) == {"name": ['Missing required configuration "name" which has no default value.']}
    assert v.error_count == 1


@pytest.mark.parametrize("name", ["", "bad\nname", "tab\there"])
def test_invalid_names(plugins: Plugins, name: str) -> None:
    v = run(plugins, {**SOURCE, "name": name})
    assert list(errors(v)) == ["name"]


# -- tasks.max ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["0", "-1", "abc", "1.5"])
def test_bad_tasks_max(plugins: Plugins, value: str) -> None:
    v = run(plugins, {**SOURCE, "tasks.max": value})
    assert list(errors(v)) == ["tasks.max"]
    assert value in errors(v)["tasks.max"][0]
    assert v.error_count == 1


def test_good_tasks_max(plugins: Plugins) -> None:
    v = run(plugins, {**SOURCE, "tasks.max": "8"})
    assert v.error_count == 0
    assert entry(v, "tasks.max")["value"]["value"] == "8"


# -- sinks: topics / topics.regex / dead letter queue --------------------------------------------------


def test_sink_with_topics_regex_only_is_valid(plugins: Plugins) -> None:
    config = {k: v for k, v in SINK.items() if k != "topics"}
    v = run(plugins, {**config, "topics.regex": "lines-.*"})
    assert v.error_count == 0, v.issues()


def test_sink_needs_topics_or_topics_regex(plugins: Plugins) -> None:
    config = {k: v for k, v in SINK.items() if k != "topics"}
    v = run(plugins, config)
    assert v.error_count >= 1
    found = errors(v)
    assert "" not in found, "an error must name the key it belongs to"
    assert any("topics" in m and "topics.regex" in m for m in found.get("topics", [])), found


def test_sink_may_not_have_both_topics_and_topics_regex(plugins: Plugins) -> None:
    v = run(plugins, {**SINK, "topics.regex": "lines-.*"})
    assert v.error_count >= 1
    found = errors(v)
    assert "" not in found
    assert found.get("topics"), found
    assert found.get("topics.regex"), found


def test_sink_invalid_topics_regex(plugins: Plugins) -> None:
    config = {k: v for k, v in SINK.items() if k != "topics"}
    v = run(plugins, {**config, "topics.regex": "lines-("})
    assert v.error_count >= 1
    assert errors(v).get("topics.regex"), errors(v)


def test_dlq_topic_may_not_be_one_of_the_topics(plugins: Plugins) -> None:
    v = run(plugins, {**SINK, "topics": "lines,dlq", "errors.deadletterqueue.topic.name": "dlq"})
    assert v.error_count >= 1
    found = errors(v)
    assert "" not in found
    assert any("dlq" in m for m in found.get("errors.deadletterqueue.topic.name", [])), found


def test_dlq_topic_may_not_match_topics_regex(plugins: Plugins) -> None:
    config = {k: v for k, v in SINK.items() if k != "topics"}
    v = run(plugins, {**config, "topics.regex": "lines.*", "errors.deadletterqueue.topic.name": "lines-dlq"})
    assert v.error_count >= 1
    found = errors(v)
    assert "" not in found
    assert any("lines-dlq" in m for m in found.get("errors.deadletterqueue.topic.name", [])), found


def test_dlq_topic_outside_the_topics_is_fine(plugins: Plugins) -> None:
    v = run(plugins, {**SINK, "errors.deadletterqueue.topic.name": "dlq", "errors.tolerance": "all"})
    assert v.error_count == 0, v.issues()
    config = {k: v for k, v in SINK.items() if k != "topics"}
    v = run(plugins, {**config, "topics.regex": "lines", "errors.deadletterqueue.topic.name": "lines-dlq"})
    assert v.error_count == 0, "topics.regex must match the whole name, as in Java"


def test_sink_keys_are_not_defined_for_sources(plugins: Plugins) -> None:
    names = {c["definition"]["name"] for c in run(plugins, SOURCE).infos["configs"]}
    assert "topic.creation.groups" in names
    assert "topics.regex" not in names
    sink_names = {c["definition"]["name"] for c in run(plugins, SINK).infos["configs"]}
    assert {"topics", "topics.regex", "errors.deadletterqueue.topic.name"} <= sink_names
    assert "topic.creation.groups" not in sink_names


# -- errors.* ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("errors.tolerance", "some"),
        ("errors.retry.timeout", "-2"),
        ("errors.retry.timeout", "soon"),
        ("errors.retry.delay.max.ms", "0"),
        ("errors.log.enable", "perhaps"),
    ],
)
def test_bad_error_handling_values(plugins: Plugins, key: str, value: str) -> None:
    v = run(plugins, {**SOURCE, key: value})
    assert list(errors(v)) == [key]


def test_good_error_handling_values(plugins: Plugins) -> None:
    v = run(
        plugins,
        {
            **SOURCE,
            "errors.tolerance": "all",
            "errors.retry.timeout": "-1",
            "errors.retry.delay.max.ms": "1000",
            "errors.log.enable": "true",
            "errors.log.include.messages": "false",
        },
    )
    assert v.error_count == 0


# -- transforms ----------------------------------------------------------------------------------------


def test_transform_without_type(plugins: Plugins) -> None:
    v = run(plugins, {**SOURCE, "transforms": "r"})
    assert errors(v) == {
        "transforms.r.type": [
            'Missing required configuration "transforms.r.type" which has no default value.'
        ]
    }


def test_transform_with_unknown_type(plugins: Plugins) -> None:
    v = run(plugins, {**SOURCE, "transforms": "u", "transforms.u.type": "com.example.Nope"})
    (message,) = errors(v)["transforms.u.type"]
    assert "com.example.Nope" in message
    assert "transforms.regex_router.RegexRouter" in message
    assert v.error_count == 1


def test_transform_config_errors_use_the_prefixed_key(plugins: Plugins) -> None:
    v = run(
        plugins,
        {**SOURCE, "transforms": "r", "transforms.r.type": "RegexRouter", "transforms.r.replacement": "x"},
    )
    assert list(errors(v)) == ["transforms.r.regex"]
    assert v.error_count == 1
    defined = {c["definition"]["name"] for c in v.infos["configs"]}
    assert {"transforms.r.type", "transforms.r.regex", "transforms.r.replacement"} <= defined
    assert {"transforms.r.predicate", "transforms.r.negate"} <= defined


def test_transform_missing_key_message_names_the_prefixed_key(plugins: Plugins) -> None:
    """Kafka validates transform keys with the prefixed ConfigDef, so messages say the full name."""
    v = run(
        plugins,
        {**SOURCE, "transforms": "r", "transforms.r.type": "RegexRouter", "transforms.r.replacement": "x"},
    )
    assert errors(v)["transforms.r.regex"] == [
        'Missing required configuration "transforms.r.regex" which has no default value.'
    ]


def test_transform_invalid_regex(plugins: Plugins) -> None:
    v = run(
        plugins,
        {
            **SOURCE,
            "transforms": "r",
            "transforms.r.type": "org.apache.kafka.connect.transforms.RegexRouter",
            "transforms.r.regex": "(unclosed",
            "transforms.r.replacement": "x",
        },
    )
    assert list(errors(v)) == ["transforms.r.regex"]


def test_several_transforms_are_each_validated(plugins: Plugins) -> None:
    v = run(
        plugins,
        {
            **SOURCE,
            "transforms": " a , b ,c",
            "transforms.a.type": "RegexRouter",
            "transforms.a.regex": "x",
            "transforms.a.replacement": "y",
            "transforms.b.type": "RegexRouter",
            "transforms.c.type": "Nope",
        },
    )
    assert set(errors(v)) == {"transforms.b.regex", "transforms.b.replacement", "transforms.c.type"}
    assert v.error_count == 3


def test_function_transformations_validate(plugins: Plugins) -> None:
    v = run(plugins, {**SOURCE, "transforms": "f", "transforms.f.type": "tests.connect.plugins:upper_value"})
    assert v.error_count == 0, v.issues()


# -- predicates ----------------------------------------------------------------------------------------

ROUTE = {
    "transforms": "r",
    "transforms.r.type": "RegexRouter",
    "transforms.r.regex": "(.*)",
    "transforms.r.replacement": "$1-x",
}


def test_transform_with_a_defined_predicate(plugins: Plugins) -> None:
    config = {
        **SOURCE,
        **ROUTE,
        "predicates": "isLines",
        "predicates.isLines.type": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
        "predicates.isLines.pattern": "lines",
        "transforms.r.predicate": "isLines",
        "transforms.r.negate": "true",
    }
    v = run(plugins, config)
    assert v.error_count == 0, v.issues()
    assert "predicates.isLines.pattern" in {c["definition"]["name"] for c in v.infos["configs"]}


def test_transform_referencing_an_undefined_predicate(plugins: Plugins) -> None:
    v = run(plugins, {**SOURCE, **ROUTE, "transforms.r.predicate": "ghost"})
    assert list(errors(v)) == ["transforms.r.predicate"]
    assert "ghost" in errors(v)["transforms.r.predicate"][0]


def test_predicate_without_type(plugins: Plugins) -> None:
    v = run(plugins, {**SOURCE, "predicates": "p"})
    assert list(errors(v)) == ["predicates.p.type"]


def test_predicate_with_unknown_type(plugins: Plugins) -> None:
    v = run(plugins, {**SOURCE, "predicates": "p", "predicates.p.type": "Nope"})
    (message,) = errors(v)["predicates.p.type"]
    assert "transforms.predicates.TopicNameMatches" in message


def test_predicate_config_errors_use_the_prefixed_key(plugins: Plugins) -> None:
    v = run(plugins, {**SOURCE, "predicates": "p", "predicates.p.type": "TopicNameMatches"})
    assert list(errors(v)) == ["predicates.p.pattern"]
    v = run(
        plugins, {**SOURCE, "predicates": "h", "predicates.h.type": "HasHeaderKey", "predicates.h.name": ""}
    )
    assert list(errors(v)) == ["predicates.h.name"]


def test_predicate_without_config(plugins: Plugins) -> None:
    v = run(plugins, {**SOURCE, "predicates": "t", "predicates.t.type": "RecordIsTombstone"})
    assert v.error_count == 0


@pytest.mark.parametrize("negate", ["true", "false", "TRUE", "False"])
def test_valid_negate_values(plugins: Plugins, negate: str) -> None:
    config = {
        **SOURCE,
        **ROUTE,
        "predicates": "t",
        "predicates.t.type": "RecordIsTombstone",
        "transforms.r.predicate": "t",
        "transforms.r.negate": negate,
    }
    assert run(plugins, config).error_count == 0


@pytest.mark.parametrize("negate", ["maybe", "yes", "1", ""])
def test_invalid_negate_values(plugins: Plugins, negate: str) -> None:
    config = {
        **SOURCE,
        **ROUTE,
        "predicates": "t",
        "predicates.t.type": "RecordIsTombstone",
        "transforms.r.predicate": "t",
        "transforms.r.negate": negate,
    }
    v = run(plugins, config)
    assert list(errors(v)) == ["transforms.r.negate"]


# -- converters ----------------------------------------------------------------------------------------


def test_known_converters(plugins: Plugins) -> None:
    v = run(
        plugins,
        {
            **SOURCE,
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "JsonConverter",
            "value.converter.schemas.enable": "false",
            "header.converter": "org.apache.kafka.connect.storage.SimpleHeaderConverter",
        },
    )
    assert v.error_count == 0, v.issues()


@pytest.mark.parametrize("key", ["key.converter", "value.converter", "header.converter"])
def test_unknown_converters(plugins: Plugins, key: str) -> None:
    v = run(plugins, {**SOURCE, key: "com.example.NopeConverter"})
    assert list(errors(v)) == [key]
    (message,) = errors(v)[key]
    assert "com.example.NopeConverter" in message
    assert "connect.converters.json.JsonConverter" in message


def test_a_transformation_is_not_a_converter(plugins: Plugins) -> None:
    v = run(plugins, {**SOURCE, "value.converter": "RegexRouter"})
    assert list(errors(v)) == ["value.converter"]


# -- connector.client.config.override.policy -----------------------------------------------------------

OVERRIDES = {
    "producer.override.linger.ms": "5",
    "consumer.override.sasl.mechanism": "PLAIN",
    "admin.override.security.protocol": "SASL_SSL",
    "producer.override.sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required;",
}


def test_override_policy_all_is_the_default(plugins: Plugins) -> None:
    assert worker().connector_client_config_override_policy == "All"
    assert run(plugins, {**SOURCE, **OVERRIDES}).error_count == 0
    assert run(plugins, {**SOURCE, **OVERRIDES}, policy="All").error_count == 0


def test_override_policy_none_refuses_every_override(plugins: Plugins) -> None:
    v = run(plugins, {**SOURCE, **OVERRIDES}, policy="None")
    assert set(errors(v)) == set(OVERRIDES)
    assert errors(v)["producer.override.linger.ms"] == [
        "The 'None' policy does not allow 'linger.ms' to be overridden in the connector configuration."
    ]
    assert v.error_count == 4


def test_override_policy_principal_allows_only_principal_settings(plugins: Plugins) -> None:
    v = run(plugins, {**SOURCE, **OVERRIDES}, policy="Principal")
    assert set(errors(v)) == {"producer.override.linger.ms"}
    assert errors(v)["producer.override.linger.ms"] == [
        "The 'Principal' policy does not allow 'linger.ms' to be overridden in the connector configuration."
    ]


def test_worker_level_client_settings_are_not_overrides(plugins: Plugins) -> None:
    v = run(plugins, {**SOURCE, "producer.linger.ms": "5", "override.x": "1"}, policy="None")
    assert v.error_count == 0


# -- the connector's own validation ----------------------------------------------------------------------


def test_connector_keys_are_validated(plugins: Plugins) -> None:
    config = {k: v for k, v in SOURCE.items() if k != "topic"}
    v = run(plugins, config)
    assert errors(v) == {"topic": ['Missing required configuration "topic" which has no default value.']}
    v = run(plugins, {**SOURCE, "batch.size": "0"})
    assert list(errors(v)) == ["batch.size"]


def test_file_source_refuses_a_topic_list(plugins: Plugins) -> None:
    v = run(plugins, {**SOURCE, "topic": "a,b"})
    assert errors(v) == {
        "topic": ["'topic' in FileStreamSourceConnector configuration requires exactly one topic."]
    }


def test_errors_are_counted_across_all_sources(plugins: Plugins) -> None:
    v = run(
        plugins,
        {
            "connector.class": "FileStreamSource",
            "topic": "a,b",
            "tasks.max": "0",
            "transforms": "x",
            "key.converter": "Nope",
        },
        policy="None",
    )
    found = errors(v)
    assert set(found) == {"name", "tasks.max", "transforms.x.type", "key.converter", "topic"}
    assert v.error_count == sum(len(m) for m in found.values())
    assert v.error_count == len(v.issues())
    expected = "Invalid value 0 for configuration tasks.max: Input should be greater than or equal to 1"
    assert ("tasks.max", expected) in v.issues()


# -- the ConfigInfos shape ---------------------------------------------------------------------------------


def test_config_infos_shape(plugins: Plugins) -> None:
    v = run(plugins, {**SOURCE, "tasks.max": "0"})
    infos = v.infos
    assert set(infos) == {"name", "error_count", "groups", "configs"}
    assert infos["name"] == SOURCE["connector.class"]
    assert infos["error_count"] == 1
    assert isinstance(infos["groups"], list)
    assert all(isinstance(g, str) for g in infos["groups"])
    assert infos["groups"][0] == "Common"
    assert len(infos["groups"]) == len(set(infos["groups"]))
    for c in infos["configs"]:
        assert set(c) == {"definition", "value"}
        assert set(c["definition"]) == {
            "name",
            "type",
            "required",
            "default_value",
            "importance",
            "documentation",
            "group",
            "order",
            "width",
            "display_name",
            "dependents",
        }
        assert set(c["value"]) == {"name", "value", "recommended_values", "errors", "visible"}
        assert c["definition"]["name"] == c["value"]["name"]
        assert c["definition"]["importance"] in ("HIGH", "MEDIUM", "LOW")
        assert c["definition"]["width"] in ("NONE", "SHORT", "MEDIUM", "LONG")
        assert c["value"]["value"] is None or isinstance(c["value"]["value"], str)
    names = [c["value"]["name"] for c in infos["configs"]]
    assert len(names) == len(set(names))
    assert {"name", "connector.class", "tasks.max", "key.converter", "transforms", "errors.tolerance"} <= set(
        names
    )


def test_config_infos_tasks_max_field_by_field(plugins: Plugins) -> None:
    c = entry(run(plugins, {**SOURCE, "tasks.max": "0"}), "tasks.max")
    assert c["definition"] == {
        "name": "tasks.max",
        "type": "INT",
        "required": False,
        "default_value": "1",
        "importance": "HIGH",
        "documentation": "Maximum number of tasks.",
        "group": "Common",
        "order": c["definition"]["order"],
        "width": "NONE",
        "display_name": "tasks.max",
        "dependents": [],
    }
    assert isinstance(c["definition"]["order"], int)
    assert c["value"] == {
        "name": "tasks.max",
        "value": "0",
        "recommended_values": [],
        "errors": ["Invalid value 0 for configuration tasks.max: Input should be greater than or equal to 1"],
        "visible": True,
    }


def test_config_infos_defaults_recommendations_and_required_keys(plugins: Plugins) -> None:
    v = run(plugins, SOURCE)
    tolerance = entry(v, "errors.tolerance")
    assert tolerance["definition"]["default_value"] == "none"
    assert tolerance["definition"]["group"] == "Error Handling"
    assert tolerance["value"]["value"] == "none"  # the default, as Kafka shows it
    assert tolerance["value"]["recommended_values"] == ["none", "all"]
    name = entry(v, "name")
    assert name["definition"]["required"] is True
    assert name["definition"]["default_value"] is None
    assert name["definition"]["display_name"] == "Connector name"
    assert name["value"]["value"] == "file-source"
    log_enable = entry(v, "errors.log.enable")
    assert log_enable["definition"]["type"] == "BOOLEAN"
    assert log_enable["value"]["value"] == "false"
    topic = entry(v, "topic")  # the connector's own key
    assert topic["definition"]["required"] is True
    assert topic["value"]["value"] == "lines"
    batch = entry(v, "batch.size")
    assert batch["definition"]["default_value"] == "2000"
    assert batch["definition"]["type"] == "INT"


def test_config_infos_lists_transform_keys_in_the_transforms_group(plugins: Plugins) -> None:
    v = run(plugins, {**SOURCE, **ROUTE})
    t = entry(v, "transforms.r.type")
    assert t["definition"]["group"] == "Transforms"
    assert t["definition"]["required"] is True
    assert t["value"]["value"] == "RegexRouter"
    regex = entry(v, "transforms.r.regex")
    assert regex["value"]["value"] == "(.*)"
    assert regex["definition"]["group"] == "Transforms"
    assert "Transforms" in v.infos["groups"]


def test_topic_creation_settings_are_validated_with_the_rest(plugins: Plugins) -> None:
    v = run(
        plugins,
        {
            **SOURCE,
            "topic.creation.default.replication.factor": "1",
            "topic.creation.default.partitions": "many",
        },
    )
    assert errors(v)["topic.creation.default.partitions"] == ["Invalid value many: not an integer"]
    v = run(
        plugins,
        {
            **SOURCE,
            "topic.creation.groups": "g",
            "topic.creation.default.partitions": "1",
            "topic.creation.default.replication.factor": "1",
            "topic.creation.g.include": "((",
        },
    )
    assert "not a valid regular expression" in errors(v)["topic.creation.g.include"][0]
    v = run(plugins, {**SOURCE, "topic.creation.default.partitions": "3"})
    assert errors(v)["topic.creation.default.replication.factor"] == [
        "is required when topic creation is enabled"
    ]


def test_a_standard_library_function_is_not_a_transformation(plugins: Plugins) -> None:
    # Importing a module named in a config runs its code; the standard library holds no
    # plugins, and some of its modules act on import (``this`` prints, ``antigravity`` browses).
    v = run(plugins, {**SOURCE, "transforms": "f", "transforms.f.type": "json:dumps"})
    assert set(errors(v)) == {"transforms.f.type"}
