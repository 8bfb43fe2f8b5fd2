"""The console's pure JavaScript modules (Prometheus parsing, throughput rates, .properties
text), run in Chromium exactly as the console loads them from the worker."""

from __future__ import annotations

from typing import Any

from tests.console.conftest import Console

EXPOSITION = r"""# HELP kafka_connect_source_task_metrics_source_record_write_total Records written to Kafka.
# TYPE kafka_connect_source_task_metrics_source_record_write_total counter
kafka_connect_source_task_metrics_source_record_write_total{connector="src",task="0"} 120.0
kafka_connect_source_task_metrics_source_record_write_total{connector="src",task="1"} 30.0
kafka_connect_sink_task_metrics_sink_record_read_total{task="0",connector="we \"quote\", a\\b\nc"} 7
kafka_connect_worker_metrics_connector_count 2
weird_values{kind="nan"} NaN
weird_values{kind="inf",} +Inf 1718000000000
weird_values{kind="minus"} -Inf
weird_values{kind="exp"} 1.5e3
# EOF
"""


def run(console: Console, module: str, body: str, arg: Any = None) -> Any:
    """Evaluate ``body`` (an async function body that sees the module as ``m``)."""
    console.open()
    return console.page.evaluate(
        f"async (arg) => {{ const m = await import('/ui/{module}'); {body} }}",
        arg,
    )


def test_exposition_samples_labels_and_special_values(console: Console) -> None:
    parsed = run(
        console,
        "prometheus.js",
        """const r = m.parseExposition(arg);
        return {types: r.types, help: r.help,
                samples: r.samples.map(s => [s.name, s.labels, String(s.value)])};""",
        EXPOSITION,
    )

    write = "kafka_connect_source_task_metrics_source_record_write_total"
    assert parsed["types"] == {write: "counter"}
    assert parsed["help"] == {write: "Records written to Kafka."}
    assert parsed["samples"] == [
        [write, {"connector": "src", "task": "0"}, "120"],
        [write, {"connector": "src", "task": "1"}, "30"],
        [
            "kafka_connect_sink_task_metrics_sink_record_read_total",
            {"task": "0", "connector": 'we "quote", a\\b\nc'},
            "7",
        ],
        ["kafka_connect_worker_metrics_connector_count", {}, "2"],
        ["weird_values", {"kind": "nan"}, "NaN"],
        ["weird_values", {"kind": "inf"}, "Infinity"],
        ["weird_values", {"kind": "minus"}, "-Infinity"],
        ["weird_values", {"kind": "exp"}, "1500"],
    ]
    assert console.log.errors == []


def test_exposition_errors_name_the_line(console: Console) -> None:
    messages = run(
        console,
        "prometheus.js",
        """return arg.map(text => { try { m.parseExposition(text); return null; }
                                   catch (e) { return e.message; } });""",
        ['ok 1\nbroken{connector="x" 1\n', "ok 1\n\nno_value\n", 'x{a="1"} one\n'],
    )

    assert messages == [
        "/metrics line 2: expected ',' or '}' after label connector",
        "/metrics line 3: no value for no_value",
        "/metrics line 1: 'one' is not a number",
    ]


def test_rates_sum_tasks_and_survive_resets(console: Console) -> None:
    rates = run(
        console,
        "throughput.js",
        """
        const W = "kafka_connect_source_task_metrics_source_record_write_total";
        const R = "kafka_connect_sink_task_metrics_sink_record_read_total";
        const s = (name, connector, task, value) => ({name, labels: {connector, task}, value});
        const t = new m.Throughput(60000);
        t.add(0, {samples: [s(W, "src", "0", 100), s(R, "snk", "0", 5)]});
        // +20 and a new task with 10: 30 records in 2 s
        t.add(2000, {samples: [s(W, "src", "0", 120), s(W, "src", "1", 10), s(R, "snk", "0", 5)]});
        // task 0 restarted (counter reset to 4), task 1 +10: 14 records in 2 s
        t.add(4000, {samples: [s(W, "src", "0", 4), s(W, "src", "1", 20), s(R, "snk", "0", 45),
                               {name: "unrelated_total", labels: {connector: "src"}, value: 1e9}]});
        return {src: t.rates("src"), snk: t.rates("snk"), none: t.rates("none"), has: t.has("src")};
        """,
    )

    assert rates["src"] == [{"t": 2000, "rate": 15}, {"t": 4000, "rate": 7}]
    assert rates["snk"] == [{"t": 2000, "rate": 0}, {"t": 4000, "rate": 20}]
    assert rates["none"] == []
    assert rates["has"] is True


def test_samples_older_than_the_window_are_dropped(console: Console) -> None:
    kept = run(
        console,
        "throughput.js",
        """
        const t = new m.Throughput(10000);
        for (let i = 0; i <= 30; i++) {
          const sample = {name: m.THROUGHPUT_METRICS[0], labels: {connector: "c", task: "0"}, value: i};
          t.add(i * 1000, {samples: [sample]});
        }
        return {first: t.samples[0].t, count: t.samples.length, rates: t.rates("c").length};
        """,
    )

    assert kept == {"first": 20000, "count": 11, "rates": 10}


def test_properties_parse_like_java(console: Console) -> None:
    parsed = run(
        console,
        "properties.js",
        "return m.parseProperties(arg);",
        "# comment\n! other comment\n  name = file-source\nconnector.class:FileStreamSource\n"
        "file /tmp/a\\ b.txt\nlong=one, \\\n    two\nkey\\=with\\:seps=v\\u00e9\\t\ntopic=\n",
    )

    assert parsed == {
        "name": "file-source",
        "connector.class": "FileStreamSource",
        "file": "/tmp/a b.txt",
        "long": "one, two",
        "key=with:seps": "v\u00e9\t",
        "topic": "",
    }


def test_properties_round_trip(console: Console) -> None:
    values = {"a key": " leading space", "x=y": "line\nbreak", "path": "C:\\dir", "#hash": "!bang"}

    back = run(console, "properties.js", "return m.parseProperties(m.formatProperties(arg));", values)

    assert back == values


def test_properties_errors_name_the_line(console: Console) -> None:
    message = run(
        console,
        "properties.js",
        "try { m.parseProperties(arg); return null; } catch (e) { return e.message; }",
        "a=1\nb=\\u12\n",
    )

    assert message == "properties line 2: malformed \\u escape '\\u12'"
