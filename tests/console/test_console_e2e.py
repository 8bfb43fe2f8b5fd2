"""The console end to end in headless Chromium against a real worker: create a
FileStreamSource through the form (an invalid config first, its error shown next to the
key), see it RUNNING with its task and its throughput, pause, resume, stop, restart,
delete; a config edited as text; a failed task's trace; the topic
view with offsets and a sink connector's group lag; loggers; API errors shown with the
API's message. Screenshots of each step go to test-artifacts/console/<test>/."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import expect

from sluiceway.embedded import EmbeddedConnect
from tests.console.conftest import Console
from tests.support import unique

SOURCE_CLASS = "connectors.file.source.FileStreamSourceConnector"

expect.set_options(timeout=30_000)


def append_lines(path: Path, start: int, count: int) -> None:
    with path.open("a") as f:
        f.writelines(f"line {i}\n" for i in range(start, start + count))


def latest_offset(worker: EmbeddedConnect, topic: str) -> int | None:
    r = worker.request("GET", f"/sluiceway/topics/{topic}")
    return r.json()["partitions"][0]["latest_offset"] if r.status_code == 200 else None


def committed(worker: EmbeddedConnect, topic: str, group: str) -> int | None:
    r = worker.request("GET", f"/sluiceway/topics/{topic}")
    if r.status_code != 200:
        return None
    for g in r.json()["consumer_groups"]:
        if g["group_id"] == group:
            return g["partitions"][0]["committed_offset"]  # type: ignore[no-any-return]
    return None


def test_create_watch_pause_resume_delete_a_source(
    console: Console, worker: EmbeddedConnect, tmp_path: Path
) -> None:
    name, topic = unique("file-source"), unique("lines")
    source = tmp_path / "input.txt"
    source.touch()
    page = console.page
    console.open()
    page.select_option("#refresh", "1000")
    console.shot("01-connectors")

    # An invalid config first: no topic, and a batch size below 1.
    page.get_by_role("link", name="New connector").first.click()
    page.select_option("#plugin", SOURCE_CLASS)
    page.fill("#connector-name", name)
    page.fill("#key-file", str(source))
    page.fill("#key-batch\\.size", "0")
    page.get_by_role("button", name="Create").click()
    topic_row = page.locator('.key[data-key="topic"]')
    expect(topic_row).to_have_class(re.compile(r"\binvalid\b"))
    expect(topic_row.locator(".errors")).to_contain_text('Missing required configuration "topic"')
    expect(page.locator('.key[data-key="batch.size"] .errors')).to_contain_text("greater than or equal to 1")
    expect(page.locator("#form-errors")).to_contain_text("2 errors")
    console.shot("02-invalid-config")
    assert name not in worker.request("GET", "/connectors").json()  # nothing was created

    # Fixed: the errors go, and Create makes the connector.
    page.fill("#key-topic", topic)
    page.fill("#key-batch\\.size", "")
    page.get_by_role("button", name="Validate").click()
    expect(page.locator("#form-errors")).to_contain_text("The config is valid.")
    expect(topic_row.locator(".errors li")).to_have_count(0)
    console.shot("03-valid-config")
    page.get_by_role("button", name="Create").click()
    expect(page).to_have_url(re.compile(r"#/connectors$"))
    card = page.locator(f'article.connector[data-name="{name}"]')
    expect(card).to_have_attribute("data-state", "RUNNING")
    expect(card.locator("tr.task")).to_have_count(1)
    expect(card.locator('tr.task[data-task="0"]')).to_have_attribute("data-state", "RUNNING")
    expect(card.locator(".type")).to_have_text("source")
    assert worker.request("GET", f"/connectors/{name}/config").json()["topic"] == topic
    console.shot("04-running")

    # Throughput: lines in the file become records/s in the chart (from /metrics).
    append_lines(source, 0, 500)
    chart = card.locator(f'.throughput[data-connector="{name}"]')
    expect(chart).to_have_attribute("data-status", "ok")
    page.wait_for_function(
        "name => Number(document.querySelector(`.throughput[data-connector='${name}']`)?.dataset.peak) > 0",
        arg=name,
    )
    expect(chart.locator("svg.sparkline polyline")).to_have_count(1)
    console.shot("05-throughput")

    card.locator('button[data-action="pause"]').click()
    expect(card).to_have_attribute("data-state", "PAUSED")
    expect(card.locator('tr.task[data-task="0"]')).to_have_attribute("data-state", "PAUSED")
    console.shot("06-paused")

    card.locator('button[data-action="resume"]').click()
    expect(card).to_have_attribute("data-state", "RUNNING")
    expect(card.locator('tr.task[data-task="0"]')).to_have_attribute("data-state", "RUNNING")
    console.shot("07-resumed")

    card.locator('button[data-action="stop"]').click()
    expect(card).to_have_attribute("data-state", "STOPPED")
    expect(card.locator("tr.task")).to_have_count(0)
    console.shot("08-stopped")
    card.locator('button[data-action="resume"]').click()
    expect(card).to_have_attribute("data-state", "RUNNING")
    expect(card.locator('tr.task[data-task="0"]')).to_have_attribute("data-state", "RUNNING")
    card.locator('button[data-action="restart"]').click()
    expect(page.locator(".notice.info")).to_contain_text(f"Restarting {name} and its tasks")
    expect(card.locator('tr.task[data-task="0"]')).to_have_attribute("data-state", "RUNNING")
    console.shot("09-restarted")

    # Delete asks first; cancelling keeps the connector.
    card.locator('button[data-action="delete"]').click()
    dialog = page.locator("dialog#confirm")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text(f"Delete connector {name}?")
    console.shot("10-confirm-delete")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    assert name in worker.request("GET", "/connectors").json()
    card.locator('button[data-action="delete"]').click()
    dialog.get_by_role("button", name="Delete").click()
    expect(card).to_have_count(0)
    assert name not in worker.request("GET", "/connectors").json()
    console.shot("11-deleted")

    assert console.log.errors == []


def test_topic_view_shows_offsets_and_a_sink_groups_lag(
    console: Console, worker: EmbeddedConnect, tmp_path: Path
) -> None:
    source_name, sink_name, topic = unique("src"), unique("snk"), unique("events")
    source = tmp_path / "events.txt"
    append_lines(source, 0, 40)
    worker.create_connector(
        source_name, {"connector.class": "FileStreamSource", "file": str(source), "topic": topic}
    )
    worker.wait_for(lambda: latest_offset(worker, topic) == 40, what=f"40 records on {topic}")
    worker.create_connector(
        sink_name, {"connector.class": "FileStreamSink", "file": str(tmp_path / "out.txt"), "topics": topic}
    )
    group = f"connect-{sink_name}"
    worker.wait_for(lambda: committed(worker, topic, group) == 40, what=f"{group} to commit 40")
    # With the sink stopped (no tasks, so surely no consumer), 25 more records make a lag of 25.
    # (Not paused: the worker reports PAUSED before the task's consumer has paused.)
    worker.request("PUT", f"/connectors/{sink_name}/stop")
    worker.wait_for_state(sink_name, "STOPPED", 0)
    append_lines(source, 40, 25)
    worker.wait_for(lambda: latest_offset(worker, topic) == 65, what=f"65 records on {topic}")

    page = console.page
    console.open("#/topics")
    row = page.locator(f'tr.topic[data-topic="{topic}"]')
    expect(row.locator(".partitions")).to_have_text("1")
    expect(row.locator('.partition[data-partition="0"]')).to_have_text("0: 0 → 65")
    expect(row.locator(".records")).to_have_text("65")
    expect(page.locator('tr.topic[data-topic="__consumer_offsets"]')).to_have_count(0)
    console.shot("01-topics")
    page.check("#show-internal")
    expect(page.locator('tr.topic[data-topic="__consumer_offsets"]')).to_have_count(1)

    row.get_by_role("link", name=topic).click()
    expect(page).to_have_url(re.compile(f"#/topics/{topic}$"))
    partition = page.locator('table.partitions-table tr.partition[data-partition="0"]')
    expect(partition.locator(".earliest")).to_have_text("0")
    expect(partition.locator(".latest")).to_have_text("65")
    card = page.locator(f'article.group[data-group="{group}"]')
    expect(card.locator("strong.lag")).to_have_text("25")
    lag_row = card.locator('tr[data-partition="0"]')
    expect(lag_row.locator(".committed")).to_have_text("40")
    expect(lag_row.locator(".latest")).to_have_text("65")
    expect(lag_row.locator(".lag")).to_have_text("25")
    console.shot("02-topic-lag")

    # Resumed, the sink catches up and the lag the page shows drops to 0.
    worker.request("PUT", f"/connectors/{sink_name}/resume")
    page.select_option("#refresh", "1000")
    expect(card.locator("strong.lag")).to_have_text("0")
    console.shot("03-caught-up")
    for n in (source_name, sink_name):
        worker.request("DELETE", f"/connectors/{n}")

    assert console.log.errors == []


def test_loggers_page_changes_a_level(console: Console, worker: EmbeddedConnect) -> None:
    logger = unique("tests.console").replace("-", ".")  # a logger of its own: nothing else changes level
    page = console.page
    console.open("#/loggers")
    expect(page.locator('tr.logger[data-logger="root"]')).to_have_count(1)

    page.fill("#logger-name", logger)
    page.select_option("#logger-level", "DEBUG")
    page.get_by_role("button", name="Set level").click()

    expect(page.locator(f'tr.logger[data-logger="{logger}"] .level')).to_have_text("DEBUG")
    assert worker.request("GET", f"/admin/loggers/{logger}").json()["level"] == "DEBUG"
    console.shot("01-debug")

    row = page.locator(f'tr.logger[data-logger="{logger}"]')
    row.locator("select").select_option("WARN")
    row.get_by_role("button", name="Set").click()
    expect(page.locator(f'tr.logger[data-logger="{logger}"] .level')).to_have_text("WARN")
    assert worker.request("GET", f"/admin/loggers/{logger}").json()["level"] == "WARN"
    assert console.log.errors == []


def test_api_errors_show_the_apis_message(console: Console) -> None:
    missing = unique("nope")
    page = console.page

    console.open(f"#/connectors/{missing}/edit")

    alert = page.get_by_role("alert")
    expect(alert).to_contain_text(f"Connector {missing} not found")
    expect(alert).to_contain_text(f"GET /connectors/{missing}/config → 404")
    console.shot("01-not-found")
    # The browser reports the failed request itself; nothing else may go wrong.
    assert console.log.errors == [
        "Failed to load resource: the server responded with a status of 404 (Not Found)"
    ]


def test_edit_a_config_as_properties_and_json(
    console: Console, worker: EmbeddedConnect, tmp_path: Path
) -> None:
    name, topic = unique("editable"), unique("edited")
    source = tmp_path / "in.txt"
    source.touch()
    worker.create_connector(
        name, {"connector.class": "FileStreamSource", "file": str(source), "topic": topic}
    )
    page = console.page

    console.open(f"#/connectors/{name}/edit")
    expect(page.locator("#key-topic")).to_have_value(topic)
    expect(page.locator("#connector-name")).to_have_value(name)
    page.get_by_role("tab", name="JSON").click()
    expect(page.locator("#raw")).to_have_value(re.compile(f'"topic": "{topic}"'))
    page.get_by_role("tab", name="Properties").click()
    raw = page.locator("#raw")
    expect(raw).to_have_value(re.compile(f"^topic={topic}$", re.MULTILINE))

    # In raw mode the errors are listed by key under the text.
    raw.fill(f"name={name}\nconnector.class=FileStreamSource\nfile={source}\ntopic={topic}\nbatch.size=-1\n")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#form-errors")).to_contain_text("batch.size: Invalid value -1")
    console.shot("01-properties-invalid")

    raw.fill(f"name={name}\nconnector.class=FileStreamSource\nfile={source}\ntopic={topic}\nbatch.size=100\n")
    page.get_by_role("tab", name="Keys").click()
    expect(page.locator("#key-batch\\.size")).to_have_value("100")
    console.shot("02-back-to-keys")
    page.get_by_role("button", name="Save").click()
    expect(page).to_have_url(re.compile(r"#/connectors$"))
    worker.wait_for(
        lambda: worker.request("GET", f"/connectors/{name}/config").json().get("batch.size") == "100",
        what="the saved config",
    )
    worker.request("DELETE", f"/connectors/{name}")
    assert console.log.errors == []


def test_failed_task_trace_folds_out_and_stays_open(
    console: Console, worker: EmbeddedConnect, tmp_path: Path
) -> None:
    name = unique("broken-sink")
    worker.create_connector(
        name,
        {
            "connector.class": "FileStreamSink",
            "file": str(tmp_path / "no-such-dir" / "out.txt"),
            "topics": name,
        },
    )
    worker.wait_for_state(name, "RUNNING", 1, task_state="FAILED")
    page = console.page
    console.open()
    page.select_option("#refresh", "1000")
    task = page.locator(f'article.connector[data-name="{name}"] tr.task[data-task="0"]')
    expect(task).to_have_attribute("data-state", "FAILED")
    trace = task.locator("details.trace")
    expect(trace.locator("pre")).to_be_hidden()

    trace.locator("summary").click()
    expect(trace.locator("pre")).to_be_visible()
    expect(trace.locator("pre")).to_contain_text("No such file or directory")
    console.shot("01-trace")
    # The next refresh rebuilds the row; the trace the user opened stays open.
    shown = trace.element_handle()
    page.wait_for_function("el => !el.isConnected", arg=shown)
    expect(trace.locator("pre")).to_be_visible()
    worker.request("DELETE", f"/connectors/{name}")
    assert console.log.errors == []


def test_passwords_never_show_as_text(console: Console, worker: EmbeddedConnect, tmp_path: Path) -> None:
    """A password key is a password input in the form and [hidden] in the raw editors; saving
    without touching it keeps the stored value."""
    name, secret = unique("with-password"), "s3cret-Pw-42"
    config = {
        "connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector",
        "connection.url": f"jdbc:sqlite:{tmp_path / 'db.sqlite'}",
        "connection.user": "app",
        "connection.password": secret,
        "mode": "bulk",
        "topic.prefix": "pw-",
    }
    answer = worker.request("PUT", f"/connectors/{name}/config", config)
    assert answer.status_code in (200, 201), answer.text
    worker.request("PUT", f"/connectors/{name}/stop")
    page = console.page

    console.open(f"#/connectors/{name}/edit")
    password = page.locator("#key-connection\\.password")
    expect(password).to_have_attribute("type", "password")
    expect(password).to_have_value(secret)  # in the input, masked by the browser
    for tab in ("JSON", "Properties"):
        page.get_by_role("tab", name=tab).click()
        raw = page.locator("#raw")
        expect(raw).to_have_value(re.compile(r"connection\.password.{1,6}\[hidden\]"))
        assert secret not in raw.input_value()
    console.shot("01-password-hidden")
    page.get_by_role("button", name="Save").click()
    expect(page).to_have_url(re.compile(r"#/connectors$"))
    stored = worker.request("GET", f"/connectors/{name}/config").json()
    assert stored["connection.password"] == secret
    worker.request("DELETE", f"/connectors/{name}")
    assert console.log.errors == []
