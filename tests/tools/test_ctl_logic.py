"""``sluiceway ctl``'s pure logic, function by function: connector and offsets files,
``--set``/``--unset`` patches, task references, REST answers to table rows, target
states, exit codes, URL and TLS options, and the describe layout.

The payloads are shaped like Kafka Connect's REST answers (see ``connect/rest/app.py``);
``tests/tools/test_ctl.py`` runs the same code against a live worker.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest
from rich.console import Console

from sluiceway.ctl import rows
from sluiceway.ctl.client import error_message, parse_url, parse_user, tls_verify
from sluiceway.ctl.config_files import detect_format, parse_config, parse_connector
from sluiceway.ctl.config_patch import build_patch, parse_assignment
from sluiceway.ctl.errors import RefusedError, UnexpectedAnswer, UsageError
from sluiceway.ctl.exit_codes import ExitCode, for_http_status, overall
from sluiceway.ctl.names import parse_task_ref
from sluiceway.ctl.offsets_file import parse_offsets
from sluiceway.ctl.render import describe_renderable
from sluiceway.ctl.rest_models import (
    ConnectorInfo,
    ConnectorOffsets,
    ConnectorStatus,
    ExpandedConnector,
    LoggerLevel,
    PluginInfo,
    ValidationResult,
    parse_answer,
)
from sluiceway.ctl.states import Target, reached, summary, task_reached

WORKER = "10.0.0.1:8083"


def status(connector: str, *tasks: str, name: str = "c", trace: str | None = None) -> ConnectorStatus:
    return ConnectorStatus.model_validate(
        {
            "name": name,
            "connector": {"state": connector, "worker_id": WORKER},
            "tasks": [
                {"id": i, "state": s, "worker_id": WORKER, **({"trace": trace} if s == "FAILED" else {})}
                for i, s in enumerate(tasks)
            ],
            "type": "source",
        }
    )


# -- connector files ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "text", "expected"),
    [
        ("a.json", "name=x", "json"),  # the extension decides
        ("a.properties", "{", "properties"),
        ("A.PROPERTIES", "", "properties"),
        ("<stdin>", '  {"name": "x"}', "json"),
        ("<stdin>", "name=x", "properties"),
        ("conf.txt", "# comment\nname=x", "properties"),
    ],
)
def test_detect_format(source: str, text: str, expected: str) -> None:
    assert detect_format(source, text) == expected


def test_properties_file_uses_java_syntax() -> None:
    text = (
        "# a comment\n"
        "! another\n"
        "name = file-source\n"
        "connector.class:FileStreamSource\n"
        "file /data/in\\\n"
        "      put.txt\n"
        "topic=lines\\u00e9\n"
        "key\\ with\\ spaces=v\n"
    )
    cf = parse_connector(text, "src.properties")
    assert cf.name == "file-source"
    assert cf.config == {
        "name": "file-source",
        "connector.class": "FileStreamSource",
        "file": "/data/input.txt",
        "topic": "linesé",
        "key with spaces": "v",
    }


def test_json_wrapped_like_post_connectors() -> None:
    cf = parse_connector('{"name": "s", "config": {"connector.class": "X", "tasks.max": 2}}', "s.json")
    assert (cf.name, cf.config) == ("s", {"connector.class": "X", "tasks.max": "2", "name": "s"})


def test_json_flat_like_put_config_with_java_booleans() -> None:
    cf = parse_connector('{"name": "s", "connector.class": "X", "a": true, "b": false, "c": 1.5}', "s.json")
    assert cf.config == {"name": "s", "connector.class": "X", "a": "true", "b": "false", "c": "1.5"}


def test_name_override_wins_over_the_file() -> None:
    cf = parse_connector("name=old\nconnector.class=X\n", "f.properties", name_override="new")
    assert cf.name == "new" and cf.config["name"] == "new"
    cf = parse_connector(
        '{"name": "old", "config": {"name": "old", "connector.class": "X"}}', "f.json", "new"
    )
    assert cf.name == "new" and cf.config["name"] == "new"


def test_name_from_inside_config_of_wrapped_json() -> None:
    cf = parse_connector('{"config": {"name": "inner", "connector.class": "X"}}', "f.json")
    assert cf.name == "inner"


@pytest.mark.parametrize(
    ("source", "text", "message"),
    [
        (
            "f.properties",
            "connector.class=X\n",
            "f.properties: no connector name: set 'name' in the file or pass --name",
        ),
        ("f.properties", "name=  \nconnector.class=X\n", "f.properties: the connector name is empty"),
        ("f.properties", "name=a/b\nconnector.class=X\n", "must not contain '/'"),
        ("f.properties", "name=x\n", "f.properties: the file holds no connector configuration"),
        ("f.json", '{"name": "x",\n "config": {"a": }}', "f.json:2:18: not valid JSON"),
        ("f.json", "[1, 2]", "f.json: expected a JSON object, not a JSON list"),
        (
            "f.json",
            '{"name": "a", "config": {"name": "b"}}',
            "'name' (a) differs from the name in 'config' (b)",
        ),
        (
            "f.json",
            '{"name": "a", "config": {}, "initial_state": "PAUSED"}',
            "unexpected key(s) initial_state",
        ),
        ("f.json", '{"name": "a", "config": "x"}', "'config' must be a JSON object of strings"),
        ("f.json", '{"name": "a", "k": null}', "f.json: the value of 'k' is null"),
        (
            "f.json",
            '{"name": "a", "k": {"n": 1}}',
            "f.json: the value of 'k' must be a string, not a JSON dict",
        ),
        ("f.json", '{"name": 5, "config": {"a": "b"}}', "f.json: 'name' must be a string"),
        ("f.properties", "name=x\nbad=\\uZZZZ\n", "f.properties: not a valid .properties file"),
    ],
)
def test_bad_connector_files_say_what_and_where(source: str, text: str, message: str) -> None:
    with pytest.raises(UsageError) as info:
        parse_connector(text, source)
    assert message in str(info.value)
    assert info.value.exit_code == ExitCode.USAGE


def test_validate_needs_no_name() -> None:
    assert parse_config("connector.class=X\n", "f.properties") == (None, {"connector.class": "X"})
    assert parse_config("connector.class=X\n", "f.properties", "n") == (
        "n",
        {"connector.class": "X", "name": "n"},
    )


# -- offsets files ------------------------------------------------------------------------------


def test_offsets_file_in_get_offsets_shape_or_bare_list() -> None:
    entry = {"partition": {"filename": "/in.txt"}, "offset": {"position": 3}}
    reset = {"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": None}
    assert parse_offsets(json.dumps({"offsets": [entry]}), "o.json") == {"offsets": [entry]}
    assert parse_offsets(json.dumps([entry, reset]), "o.json") == {"offsets": [entry, reset]}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "o.json:1:2: not valid JSON"),
        ('{"offsets": {}}', 'expected {"offsets": [...]} or a JSON list'),
        ('{"offsets": []}', "the list of offsets is empty"),
        ("[1]", "offsets[0]: expected an object with 'partition' and 'offset'"),
        ('[{"partition": {}, "offset": {}, "x": 1}]', "offsets[0]: unexpected key(s) x"),
        (
            '[{"partition": {}, "offset": {}}, {"partition": [], "offset": {}}]',
            "offsets[1]: 'partition' must be",
        ),
        ('[{"partition": {}}]', "offsets[0]: 'offset' is missing (use null to reset the partition)"),
        ('[{"partition": {}, "offset": 5}]', "offsets[0]: 'offset' must be a JSON object or null"),
    ],
)
def test_bad_offsets_files(text: str, message: str) -> None:
    with pytest.raises(UsageError) as info:
        parse_offsets(text, "o.json")
    assert message in str(info.value)


# -- patches and task references ----------------------------------------------------------------


def test_patch_sets_and_unsets() -> None:
    patch = build_patch(["batch.size=10", "transforms.x.spec=a=b", "empty="], ["tasks.max"])
    assert patch == {"batch.size": "10", "transforms.x.spec": "a=b", "empty": "", "tasks.max": None}


def test_repeated_set_keeps_the_last_value() -> None:
    assert build_patch(["k=1", "k=2"], []) == {"k": "2"}


@pytest.mark.parametrize(
    ("sets", "unsets", "message"),
    [
        (["novalue"], [], "--set 'novalue': expected KEY=VALUE"),
        (["=v"], [], "--set '=v': the key is empty"),
        ([], [" "], "--unset: the key is empty"),
        (["k=v"], ["k"], "'k' is both set and unset"),
        (["name=x"], [], "'name' cannot be patched"),
        ([], ["name"], "'name' cannot be patched"),
        ([], [], "nothing to change"),
    ],
)
def test_bad_patches(sets: list[str], unsets: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=re.escape(message)):
        build_patch(sets, unsets)


def test_assignment_splits_at_the_first_equals() -> None:
    assert parse_assignment(" k =a=b") == ("k", "a=b")


def test_task_refs() -> None:
    assert parse_task_ref("my-sink/0") == ("my-sink", 0)
    assert parse_task_ref("a.b-c/12") == ("a.b-c", 12)
    for bad, message in [
        ("sink", "expected CONNECTOR/TASK-ID"),
        ("/0", "expected CONNECTOR/TASK-ID"),
        ("sink/x", "the task id 'x' is not a non-negative integer"),
        ("sink/-1", "the task id '-1'"),
    ]:
        with pytest.raises(UsageError, match=message):
            parse_task_ref(bad)


# -- REST answers to rows --------------------------------------------------------------------


def test_connectors_table_sorted_with_running_over_total() -> None:
    expanded = parse_answer(
        dict[str, ExpandedConnector],
        {
            "b": {
                "status": status("RUNNING", "RUNNING", "FAILED", "RUNNING", name="b").model_dump(),
                "info": {"name": "b", "config": {}, "tasks": [], "type": "sink"},
            },
            "a": {"status": status("STOPPED", name="a").model_dump()},
            "c": {
                "info": {
                    "name": "c",
                    "config": {},
                    "tasks": [{"connector": "c", "task": 0}],
                    "type": "source",
                }
            },
        },
        "GET /connectors",
    )
    table = rows.connectors_table(expanded)
    assert table.headers == ("NAME", "TYPE", "STATE", "TASKS")
    assert table.rows == [
        ("a", "source", "STOPPED", "0/0"),
        ("b", "sink", "RUNNING", "2/3"),
        ("c", "source", "UNKNOWN", "?/1"),
    ]
    assert rows.connectors_table(expanded, ["c", "a"]).rows == [table.rows[0], table.rows[2]]


def test_plugins_table_with_missing_versions() -> None:
    plugins = parse_answer(
        list[PluginInfo],
        [{"class": "a.Sink", "type": "sink", "version": "1.0"}, {"class": "a.Conv", "type": "converter"}],
        "GET /connector-plugins",
    )
    assert rows.plugins_table(plugins).rows == [("a.Sink", "sink", "1.0"), ("a.Conv", "converter", "")]


def test_offsets_table_for_sinks_and_sources() -> None:
    sink = ConnectorOffsets.model_validate(
        {
            "offsets": [
                {"partition": {"kafka_topic": "t", "kafka_partition": 1}, "offset": {"kafka_offset": 7}},
                {"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": 42}},
            ]
        }
    )
    table = rows.offsets_table(sink)
    assert table.headers == ("TOPIC", "PARTITION", "OFFSET")
    assert table.rows == [("t", "0", "42"), ("t", "1", "7")]
    source = ConnectorOffsets.model_validate(
        {"offsets": [{"partition": {"filename": "/in.txt"}, "offset": {"position": 6}}]}
    )
    table = rows.offsets_table(source)
    assert table.headers == ("PARTITION", "OFFSET")
    assert table.rows == [('{"filename": "/in.txt"}', '{"position": 6}')]


def test_loggers_table_root_first_and_utc_times() -> None:
    loggers = {
        "zeta": LoggerLevel(level="DEBUG", last_modified=1_700_000_000_123),
        "alpha": LoggerLevel(level="INFO"),
        "root": LoggerLevel(level="WARN"),
    }
    assert rows.loggers_table(loggers).rows == [
        ("root", "WARN", ""),
        ("alpha", "INFO", ""),
        ("zeta", "DEBUG", "2023-11-14T22:13:20Z"),
    ]


def test_validation_errors_in_the_workers_order() -> None:
    result = ValidationResult.model_validate(
        {
            "name": "FileStreamSource",
            "error_count": 3,
            "groups": ["Common"],
            "configs": [
                {
                    "definition": {"name": "topic"},
                    "value": {"name": "topic", "value": None, "errors": ["missing"]},
                },
                {"definition": {"name": "file"}, "value": {"name": "file", "value": "x", "errors": []}},
                {"definition": {"name": "b"}, "value": {"name": "b", "value": "x", "errors": ["one", "two"]}},
            ],
        }
    )
    assert rows.validation_errors(result) == [("topic", "missing"), ("b", "one"), ("b", "two")]


def test_unexpected_answers_are_reported_not_raised_as_tracebacks() -> None:
    with pytest.raises(UnexpectedAnswer, match=r"GET /connectors/x/status: connector: Field required"):
        parse_answer(ConnectorStatus, {"name": "x", "tasks": []}, "GET /connectors/x/status")
    with pytest.raises(UnexpectedAnswer) as info:
        parse_answer(dict[str, ExpandedConnector], ["a", "b"], "GET /connectors")
    assert info.value.exit_code == ExitCode.REFUSED


# -- states ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("current", "target", "expected"),
    [
        (status("RUNNING", "RUNNING", "RUNNING"), Target.RUNNING, True),
        (status("RUNNING", "RUNNING", "FAILED"), Target.RUNNING, False),
        (status("RUNNING"), Target.RUNNING, False),  # tasks not created yet after a resume
        (status("RESTARTING", "RUNNING"), Target.RUNNING, False),
        (status("PAUSED", "PAUSED"), Target.PAUSED, True),
        (status("PAUSED", "FAILED"), Target.PAUSED, False),
        (status("PAUSED"), Target.PAUSED, True),
        (status("STOPPED"), Target.STOPPED, True),
        (status("STOPPED", "RUNNING"), Target.STOPPED, False),  # tasks still shutting down
        (status("PAUSED", "PAUSED"), Target.STOPPED, False),
    ],
)
def test_reached(current: ConnectorStatus, target: Target, expected: bool) -> None:
    assert reached(current, target) is expected


def test_task_reached_and_summary() -> None:
    s = status("RUNNING", "RUNNING", "FAILED")
    assert task_reached(s, 0) and not task_reached(s, 1) and not task_reached(s, 2)
    assert summary(s) == "connector RUNNING, tasks: 0 RUNNING, 1 FAILED"
    assert summary(status("STOPPED")) == "connector STOPPED, no tasks"


# -- exit codes ---------------------------------------------------------------------------------


def test_exit_codes() -> None:
    assert [for_http_status(s) for s in (200, 201, 204, 400, 404, 409, 500)] == [0, 0, 0, 1, 1, 1, 1]
    assert overall([0, 0]) == 0
    assert overall([0, 4, 1]) == 4
    assert overall([]) == 0


# -- client options -------------------------------------------------------------------------------


def test_urls() -> None:
    assert parse_url("http://localhost:8083") == "http://localhost:8083"
    assert parse_url(" https://connect.example:8443/ ") == "https://connect.example:8443"
    assert parse_url("http://gw/connect/") == "http://gw/connect"
    for bad, message in [
        ("localhost:8083", "expected http://HOST:PORT"),
        ("ftp://x", "expected http://HOST:PORT"),
        ("http://h:8083/?a=b", "no query or fragment"),
        ("http://h:99999", "not a valid URL"),
    ]:
        with pytest.raises(UsageError, match=message):
            parse_url(bad)


def test_user_and_tls_options(tmp_path: Path) -> None:
    assert parse_user("admin:s3:cr3t") == ("admin", "s3:cr3t")
    with pytest.raises(UsageError, match="--user: expected USER:PASSWORD"):
        parse_user("admin")
    assert tls_verify(False, None) is True
    assert tls_verify(True, None) is False
    with pytest.raises(UsageError, match="contradict"):
        tls_verify(True, "ca.pem")
    with pytest.raises(UsageError, match=re.escape("--cacert /no/such/ca.pem: no such file")):
        tls_verify(False, "/no/such/ca.pem")
    garbage = tmp_path / "ca.pem"
    garbage.write_text("not a certificate")
    with pytest.raises(UsageError, match="not a PEM file"):
        tls_verify(False, str(garbage))


def test_error_messages_come_from_kafka_connects_error_body() -> None:
    body = httpx.Response(404, json={"error_code": 404, "message": "Connector x not found"})
    assert error_message(body) == "Connector x not found (HTTP 404)"
    html = httpx.Response(502, text="<html>Bad Gateway</html>")
    assert error_message(html) == "HTTP 502 Bad Gateway: <html>Bad Gateway</html>"
    assert error_message(httpx.Response(503)) == "HTTP 503 Service Unavailable"
    assert RefusedError("x", 404).exit_code == ExitCode.REFUSED


# -- describe layout --------------------------------------------------------------------------


def _text(d: rows.ConnectorDescription) -> str:
    console = Console(width=200, no_color=True, highlight=False)
    with console.capture() as captured:
        console.print(describe_renderable(d))
    return "\n".join(line.rstrip() for line in captured.get().splitlines())


def test_describe_layout_with_failed_task_trace_and_no_markup() -> None:
    info = ConnectorInfo.model_validate(
        {"name": "[red]x", "config": {"topic": "t", "connector.class": "C"}, "tasks": [], "type": "source"}
    )
    current = status("RUNNING", "RUNNING", "FAILED", name="[red]x", trace="Boom\n  at [bold]here")
    text = _text(rows.describe(info, current, ["t2", "t1"]))
    assert text.splitlines() == [
        "Name:       [red]x",
        "Type:       source",
        "State:      RUNNING",
        f"Worker ID:  {WORKER}",
        "Config:",
        "  connector.class:  C",
        "  topic:            t",
        "Tasks:",
        "  0:",
        "    State:      RUNNING",
        f"    Worker ID:  {WORKER}",
        "  1:",
        "    State:      FAILED",
        f"    Worker ID:  {WORKER}",
        "    Trace:",
        "      Boom",
        "        at [bold]here",
        "Topics:",
        "  t1",
        "  t2",
    ]
    assert "Topics: (topic tracking is disabled on the worker)" in _text(rows.describe(info, current, None))
