"""The pytest plugin (``sluiceway.testing``): its fixtures, run by pytest in a child process
exactly as a plugin author's suite gets them, through the ``pytest11`` entry point (no
``conftest.py``, no ``-p``), against the shipped FileStream connectors."""

from __future__ import annotations

import subprocess
import sys

import pytest

from sluiceway.testing import _encode

pytest_plugins = ["pytester"]

FEED_AND_DRAIN = """
import json

import pytest


def test_feed_sink_returns_once_the_file_has_every_record(sluiceway_harness, tmp_path):
    out = tmp_path / "out.txt"
    sluiceway_harness.start_connector(
        "sink", {"connector.class": "FileStreamSink", "topics": "lines", "file": str(out)}
    )
    sluiceway_harness.feed_sink("sink", ["plain text", {"n": 1}, [1, 2], None, b"raw"])
    # No waiting here: feed_sink returned only after the sink committed, i.e. flushed, them all.
    assert out.read_text().splitlines() == ["plain text", '{"n":1}', "[1,2]", "null", "raw"]
    sluiceway_harness.feed_sink("sink", ["more"])
    assert out.read_text().splitlines()[-1] == "more"


def test_drain_decodes_with_the_connectors_own_converter(sluiceway_harness, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("first\\nsecond\\nthird\\n")
    sluiceway_harness.start_connector(
        "src",
        {
            "connector.class": "FileStreamSource",
            "file": str(source),
            "topic": "words",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        },
    )
    records = sluiceway_harness.drain("words", 3, connector="src")
    assert [r.value for r in records] == ["first", "second", "third"]
    assert [r.offset for r in records] == [0, 1, 2]
    assert all(r.value_schema is not None and r.value_schema.type.value == "string" for r in records)
    # Read with the worker's StringConverter instead, the same bytes are the JSON envelope.
    raw = sluiceway_harness.drain("words", 1)
    assert json.loads(raw[0].value) == {"schema": {"type": "string", "optional": False}, "payload": "first"}


def test_broker_serves_any_kafka_client(sluiceway_broker, sluiceway_harness):
    assert sluiceway_harness.bootstrap == sluiceway_broker.bootstrap
    ends = sluiceway_harness.produce("t", ["a", "b"], keys=["k1", "k2"])
    assert sum(ends.values()) == 2
    assert [(r.key, r.value) for r in sluiceway_harness.drain("t", 2)] in (
        [("k1", "a"), ("k2", "b")],
        [("k2", "b"), ("k1", "a")],
    )


def test_feed_sink_fails_with_the_tasks_trace(sluiceway_connect, sluiceway_harness, tmp_path):
    sluiceway_connect.create_connector(
        "broken",
        {"connector.class": "FileStreamSink", "topics": "x", "file": str(tmp_path / "no" / "such" / "dir")},
    )
    with pytest.raises(AssertionError, match="(?s)connector broken failed.*couldn't open"):
        sluiceway_harness.feed_sink("broken", ["a"])
"""

WORKER_CONFIG_OVERRIDE = """
import pytest


@pytest.fixture
def sluiceway_worker_config():
    return {
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
    }


def test_worker_converter_applies_to_sinks_and_drains(sluiceway_harness, tmp_path):
    out = tmp_path / "out.txt"
    sluiceway_harness.start_connector(
        "sink", {"connector.class": "FileStreamSink", "topics": "docs", "file": str(out)}
    )
    sluiceway_harness.feed_sink("sink", [{"a": 1}, 42])
    # The sink got Python values (JsonConverter without schemas), and wrote their str().
    assert out.read_text().splitlines() == ["{'a': 1}", "42"]
    assert [r.value for r in sluiceway_harness.drain("docs", 2)] == [{"a": 1}, 42]
"""


def test_fixtures_feed_a_sink_and_drain_a_source(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plugin_fixtures=FEED_AND_DRAIN)
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4)


def test_worker_config_fixture_is_the_override_point(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_worker_override=WORKER_CONFIG_OVERRIDE)
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_fixtures_are_listed_with_their_documentation(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_nothing="def test_nothing():\n    pass\n")
    result = pytester.runpytest_subprocess("--fixtures", "-p", "no:cacheprovider")
    for name in ("sluiceway_worker_config", "sluiceway_broker", "sluiceway_connect", "sluiceway_harness"):
        result.stdout.fnmatch_lines([f"{name} -- *sluiceway/testing.py*"])


def test_loading_the_plugin_imports_neither_broker_nor_runtime() -> None:
    # Every pytest run in the environment loads the plugin; it must stay cheap.
    heavy = ("broker", "connect", "confluent_kafka", "pyspark", "httpx")
    code = (
        "import sys, sluiceway.testing\n"
        f"loaded = sorted(m for m in sys.modules if m.split('.')[0] in {heavy!r})\n"
        "print(loaded)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_values_are_encoded_as_their_type_says() -> None:
    assert _encode(None) is None
    assert _encode(b"\x00\xff") == b"\x00\xff"
    assert _encode("é") == "é".encode()
    assert _encode({"b": [1, 2.5, None, True]}) == b'{"b":[1,2.5,null,true]}'
    assert _encode(7) == b"7"
    # For sinks reading with JsonConverter: strings as JSON strings.
    assert _encode("x", as_json=True) == b'"x"'
    assert _encode(b"x", as_json=True) == b"x"
    assert _encode(None, as_json=True) is None
