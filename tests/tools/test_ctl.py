"""``sluiceway ctl`` end to end: the real CLI in a subprocess against a live worker.

One ``EmbeddedConnect`` (a real broker and a standalone worker with its REST API, in
this process) serves the module; every test uses connectors, files and topics of its
own. Each command runs as ``python -m sluiceway.cli ctl --url URL ...`` (stdout is a
pipe, so progress comes as plain lines on stderr), and its effect is checked through
the REST API and the topics, never through the CLI's own output alone.
"""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from sluiceway.embedded import EmbeddedConnect, free_port
from tests.certificates import tls_files

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"


@pytest.fixture(scope="module")
def connect(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedConnect]:
    with EmbeddedConnect(tmp_path_factory.mktemp("ctl-worker")) as c:
        yield c


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def run_ctl(
    url: str | None, *args: str, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k != "SLUICEWAY_CONNECT_URL"}
    command = [sys.executable, "-m", "sluiceway.cli", "ctl"] + (["--url", url] if url else []) + list(args)
    return subprocess.run(
        command, input=stdin, capture_output=True, text=True, timeout=180, env={**base, **(env or {})}
    )


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, (
        f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    )
    return result.stdout


def rest(connect: EmbeddedConnect, method: str, path: str, body: Any = None, status: int = 200) -> Any:
    r = connect.request(method, path, body)
    assert r.status_code == status, f"{method} {path}: {r.status_code} {r.text}"
    return r.json() if r.content else None


def table(stdout: str) -> list[list[str]]:
    return [line.split() for line in stdout.splitlines() if line.strip()]


def source_config(tmp_path: Path, lines: str = "one\ntwo\nthree\n") -> tuple[Path, str, dict[str, str]]:
    """A file with ``lines`` and a FileStreamSource config reading it into a new topic."""
    data = tmp_path / f"{uuid.uuid4().hex[:6]}.txt"
    data.write_text(lines)
    topic = unique("lines")
    return data, topic, {"connector.class": FILE_SOURCE, "file": str(data), "topic": topic}


def create_source(
    connect: EmbeddedConnect, tmp_path: Path, lines: str = "one\ntwo\nthree\n"
) -> tuple[str, Path, str]:
    name = unique("src")
    data, topic, config = source_config(tmp_path, lines)
    connect.create_connector(name, config)
    connect.wait_for_running(name)
    return name, data, topic


def values(connect: EmbeddedConnect, topic: str, count: int) -> list[str]:
    return [m.value().decode() for m in connect.consume(topic, count)]  # type: ignore[union-attr]


def committed_position(connect: EmbeddedConnect, name: str, position: int) -> None:
    """Wait until the source's committed offset (through the REST API) is ``position``."""

    def done() -> bool:
        offsets = rest(connect, "GET", f"/connectors/{name}/offsets")["offsets"]
        return [o["offset"] for o in offsets] == [{"position": position}]

    connect.wait_for(done, 30, f"{name} to commit position {position}")


# -- help and usage ---------------------------------------------------------------------------


def test_help_documents_the_exit_codes() -> None:
    out = ok(run_ctl(None, "--help"))
    for line in ("0  success", "1  the cluster refused", "2  usage error", "3  cannot reach", "4  a wait"):
        assert line in out
    assert "SLUICEWAY_CONNECT_URL" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["get"], "the following arguments are required: WHAT"),
        (["apply", "-f", "/no/such/file.properties"], "/no/such/file.properties: cannot read"),
        (["patch", "connector", "x", "--set", "novalue"], "--set 'novalue': expected KEY=VALUE"),
        (["restart", "task", "x"], "task 'x': expected CONNECTOR/TASK-ID"),
        (["get", "connectors", "--timeout", "0"], "must be more than 0 seconds"),
        (["get", "connectors", "--cacert", "/no/such/ca.pem"], "--cacert /no/such/ca.pem: no such file"),
        (["get", "connectors", "--user", "nopassword"], "--user: expected USER:PASSWORD"),
        (["logs", "level", "root", "LOUD"], "invalid choice: 'LOUD'"),
        (["offsets", "reset", "x", "--wait"], "give --resume too"),
    ],
)
def test_usage_errors_exit_2_with_a_message(connect: EmbeddedConnect, args: list[str], message: str) -> None:
    result = run_ctl(connect.url, *args)
    assert result.returncode == 2, result
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_bad_files_are_named_in_the_error(connect: EmbeddedConnect, tmp_path: Path) -> None:
    nameless = tmp_path / "nameless.properties"
    nameless.write_text(f"connector.class={FILE_SOURCE}\ntopic=t\n")
    result = run_ctl(connect.url, "apply", "-f", str(nameless))
    assert result.returncode == 2
    assert f"{nameless}: no connector name: set 'name' in the file or pass --name" in result.stderr
    broken = tmp_path / "broken.json"
    broken.write_text('{"name": "x",\n  "config": {')
    result = run_ctl(connect.url, "apply", "-f", str(broken))
    assert result.returncode == 2
    assert f"{broken}:2:" in result.stderr and "not valid JSON" in result.stderr


def test_unreachable_worker_exits_3_naming_the_url() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    result = run_ctl(url, "get", "connectors")
    assert result.returncode == 3
    assert f"cannot reach the worker at {url}" in result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_connector_exits_1_with_the_rest_message(connect: EmbeddedConnect) -> None:
    name = unique("missing")
    for args in (
        ["pause", name],
        ["describe", "connector", name],
        ["get", "offsets", name],
        ["delete", "connector", name],
    ):
        result = run_ctl(connect.url, *args)
        assert result.returncode == 1, (args, result)
        assert f"Unknown connector {name}" in result.stderr or f"{name} not found" in result.stderr
        assert "HTTP 404" in result.stderr


# -- apply / patch / delete ---------------------------------------------------------------------


def test_apply_creates_updates_and_leaves_unchanged(connect: EmbeddedConnect, tmp_path: Path) -> None:
    name = unique("apply")
    _, topic, config = source_config(tmp_path)
    props = tmp_path / "source.properties"
    props.write_text(f"name={name}\n" + "".join(f"{k}={v}\n" for k, v in config.items()))

    assert ok(run_ctl(connect.url, "apply", "-f", str(props))).strip() == f"connector {name} created"
    assert rest(connect, "GET", f"/connectors/{name}/config") == {**config, "name": name}
    connect.wait_for_running(name)
    assert values(connect, topic, 3) == ["one", "two", "three"]

    assert ok(run_ctl(connect.url, "apply", "-f", str(props))).strip() == f"connector {name} unchanged"

    props.write_text(props.read_text() + "batch.size=5\n")
    assert ok(run_ctl(connect.url, "apply", "-f", str(props))).strip() == f"connector {name} updated"
    assert rest(connect, "GET", f"/connectors/{name}/config")["batch.size"] == "5"


def test_apply_json_shapes_stdin_and_name_override(connect: EmbeddedConnect, tmp_path: Path) -> None:
    wrapped, flat, piped = unique("wrapped"), unique("flat"), unique("stdin")
    _, _, config = source_config(tmp_path)
    wrapped_file = tmp_path / "wrapped.json"
    wrapped_file.write_text(json.dumps({"name": wrapped, "config": {**config, "tasks.max": 1}}))
    flat_file = tmp_path / "flat.json"
    flat_file.write_text(json.dumps({"name": "ignored", **config}))

    out = ok(run_ctl(connect.url, "apply", "-f", str(wrapped_file)))
    assert out.strip() == f"connector {wrapped} created"
    assert rest(connect, "GET", f"/connectors/{wrapped}/config") == {
        **config,
        "tasks.max": "1",
        "name": wrapped,
    }

    out = ok(run_ctl(connect.url, "apply", "-f", str(flat_file), "--name", flat))
    assert out.strip() == f"connector {flat} created"
    assert rest(connect, "GET", f"/connectors/{flat}/config") == {**config, "name": flat}
    rest(connect, "GET", "/connectors/ignored", status=404)

    out = ok(run_ctl(connect.url, "apply", "-f", "-", stdin=json.dumps({"name": piped, "config": config})))
    assert out.strip() == f"connector {piped} created"
    rest(connect, "GET", f"/connectors/{piped}")

    ok(run_ctl(connect.url, "delete", "connector", wrapped, flat, piped))


def test_apply_dry_run_validates_without_creating(connect: EmbeddedConnect, tmp_path: Path) -> None:
    name = unique("dry")
    _, _, config = source_config(tmp_path)
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"name": name, "config": config}))
    out = ok(run_ctl(connect.url, "apply", "--dry-run", "-f", str(good)))
    assert f"connector {name} would be created (dry run)" in out
    rest(connect, "GET", f"/connectors/{name}", status=404)

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"name": name, "config": {**config, "batch.size": "lots"}}))
    result = run_ctl(connect.url, "apply", "--dry-run", "-f", str(bad))
    assert result.returncode == 1
    assert "batch.size:" in result.stdout
    rest(connect, "GET", f"/connectors/{name}", status=404)


def test_apply_refused_by_the_worker_exits_1(connect: EmbeddedConnect, tmp_path: Path) -> None:
    name = unique("refused")
    bad = tmp_path / "bad.properties"
    bad.write_text(f"name={name}\nconnector.class=no.such.Connector\n")
    result = run_ctl(connect.url, "apply", "-f", str(bad))
    assert result.returncode == 1
    assert f"{bad}: connector {name}:" in result.stderr and "(HTTP 400)" in result.stderr
    rest(connect, "GET", f"/connectors/{name}", status=404)


def test_patch_sets_and_unsets_keys(connect: EmbeddedConnect, tmp_path: Path) -> None:
    name = unique("patch")
    _, _, config = source_config(tmp_path)
    connect.create_connector(name, {**config, "batch.size": "7", "tasks.max": "1"})
    out = ok(
        run_ctl(connect.url, "patch", "connector", name, "--set", "batch.size=3", "--unset", "tasks.max")
    )
    assert out.strip() == f"connector {name} patched"
    assert rest(connect, "GET", f"/connectors/{name}/config") == {**config, "batch.size": "3", "name": name}

    # -o json prints the ConnectorInfo the worker answered with
    info = json.loads(
        ok(run_ctl(connect.url, "patch", "connector", name, "--set", "batch.size=4", "-o", "json"))
    )
    assert info == rest(connect, "GET", f"/connectors/{name}")
    assert info["config"]["batch.size"] == "4"


def test_delete_several_connectors(connect: EmbeddedConnect, tmp_path: Path) -> None:
    first, _, _ = create_source(connect, tmp_path)
    second, _, _ = create_source(connect, tmp_path)
    out = ok(run_ctl(connect.url, "delete", "connector", first, second))
    assert out.splitlines() == [f"connector {first} deleted", f"connector {second} deleted"]
    rest(connect, "GET", f"/connectors/{first}", status=404)
    rest(connect, "GET", f"/connectors/{second}", status=404)


# -- get / describe ---------------------------------------------------------------------------


def test_get_connectors_table_json_yaml_and_url_from_env(connect: EmbeddedConnect, tmp_path: Path) -> None:
    running, _, _ = create_source(connect, tmp_path)
    stopped, _, _ = create_source(connect, tmp_path)
    connect.request("PUT", f"/connectors/{stopped}/stop")
    connect.wait_for_state(stopped, "STOPPED", tasks=0)

    rows = table(ok(run_ctl(connect.url, "get", "connectors", running, stopped)))
    assert rows == [
        ["NAME", "TYPE", "STATE", "TASKS"],
        *sorted([[running, "source", "RUNNING", "1/1"], [stopped, "source", "STOPPED", "0/0"]]),
    ]

    expected = {
        k: v
        for k, v in rest(connect, "GET", "/connectors?expand=status&expand=info").items()
        if k in (running, stopped)
    }
    assert (
        json.loads(ok(run_ctl(connect.url, "get", "connectors", running, stopped, "-o", "json"))) == expected
    )
    # global options before the command, and the URL from the environment
    env = {"SLUICEWAY_CONNECT_URL": connect.url}
    assert (
        yaml.safe_load(ok(run_ctl(None, "-o", "yaml", "get", "connectors", running, stopped, env=env)))
        == expected
    )

    everything = table(ok(run_ctl(connect.url, "get", "connectors")))
    assert [running, "source", "RUNNING", "1/1"] in everything

    result = run_ctl(connect.url, "get", "connectors", running, "nope-" + running)
    assert result.returncode == 1 and f"connector nope-{running} not found" in result.stderr
    ok(run_ctl(connect.url, "delete", "connector", running, stopped))


def test_get_plugins(connect: EmbeddedConnect) -> None:
    rows = table(ok(run_ctl(connect.url, "get", "plugins")))
    assert rows[0] == ["CLASS", "TYPE", "VERSION"]
    assert ["connectors.file.source.FileStreamSourceConnector", "source", "1.0"] in rows
    assert ["connectors.file.sink.FileStreamSinkConnector", "sink", "1.0"] in rows
    assert all(r[1] in ("source", "sink") for r in rows[1:])

    every = json.loads(ok(run_ctl(connect.url, "get", "plugins", "--all", "-o", "json")))
    assert every == rest(connect, "GET", "/connector-plugins?connectorsOnly=false")
    assert {"transformation", "converter", "source", "sink"} <= {p["type"] for p in every}


def test_describe_connector_with_topics_and_a_failed_tasks_trace(
    connect: EmbeddedConnect, tmp_path: Path
) -> None:
    source, data, topic = create_source(connect, tmp_path)
    values(connect, topic, 3)
    connect.wait_for(
        lambda: rest(connect, "GET", f"/connectors/{source}/topics")[source]["topics"] == [topic]
    )
    out = ok(run_ctl(connect.url, "describe", "connector", source))
    lines = out.splitlines()
    worker = rest(connect, "GET", f"/connectors/{source}/status")["connector"]["worker_id"]
    assert lines[:4] == [
        f"Name:       {source}",
        "Type:       source",
        "State:      RUNNING",
        f"Worker ID:  {worker}",
    ]
    assert f"  file:             {data}" in lines
    assert lines[lines.index("Tasks:") + 1 :][:3] == [
        "  0:",
        "    State:      RUNNING",
        f"    Worker ID:  {worker}",
    ]
    assert lines[-2:] == ["Topics:", f"  {topic}"]
    assert "Trace:" not in out

    sink = unique("failing-sink")
    connect.create_connector(
        sink,
        {
            "connector.class": FILE_SINK,
            "file": str(tmp_path / "no" / "such" / "dir" / "out.txt"),
            "topics": topic,
        },
    )
    connect.wait_for_state(sink, "RUNNING", tasks=1, task_state="FAILED")
    out = ok(run_ctl(connect.url, "describe", "connector", sink))
    assert "    State:      FAILED" in out
    trace = out[out.index("    Trace:") :]
    assert "No such file or directory" in trace

    described = json.loads(ok(run_ctl(connect.url, "describe", "connector", source, "-o", "json")))
    assert described == {
        "info": rest(connect, "GET", f"/connectors/{source}"),
        "status": rest(connect, "GET", f"/connectors/{source}/status"),
        "topics": [topic],
    }
    ok(run_ctl(connect.url, "delete", "connector", source, sink))


# -- validate -------------------------------------------------------------------------------------


def test_validate_prints_each_keys_errors_and_exits_1(connect: EmbeddedConnect, tmp_path: Path) -> None:
    _, _, config = source_config(tmp_path)
    good = tmp_path / "good.properties"
    good.write_text("".join(f"{k}={v}\n" for k, v in {**config, "name": "v"}.items()))
    assert f"{good}: valid" in ok(run_ctl(connect.url, "validate", "-f", str(good)))

    bad_config = {"connector.class": FILE_SOURCE, "name": "v", "batch.size": "lots"}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(bad_config))
    result = run_ctl(connect.url, "validate", "-f", str(bad))
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"{bad}: 2 error(s)")
    assert any(line.startswith("  topic: Missing required configuration") for line in lines)
    assert any(line.startswith("  batch.size: Invalid value lots") for line in lines)

    answer = rest(connect, "PUT", f"/connector-plugins/{FILE_SOURCE}/config/validate", bad_config)
    result = run_ctl(connect.url, "validate", "-f", str(bad), "-o", "json")
    assert result.returncode == 1
    assert json.loads(result.stdout) == answer

    classless = tmp_path / "classless.properties"
    classless.write_text("name=x\ntopic=t\n")
    result = run_ctl(connect.url, "validate", "-f", str(classless))
    assert result.returncode == 2 and "no 'connector.class'" in result.stderr


# -- state changes and waits ----------------------------------------------------------------------


def test_pause_resume_stop_restart_and_wait(connect: EmbeddedConnect, tmp_path: Path) -> None:
    name, _, _ = create_source(connect, tmp_path)

    def state() -> tuple[str, list[str]]:
        s = rest(connect, "GET", f"/connectors/{name}/status")
        return s["connector"]["state"], [t["state"] for t in s["tasks"]]

    result = run_ctl(connect.url, "pause", name, "--wait")
    assert ok(result).splitlines() == [f"connector {name} paused", f"connector {name} is PAUSED"]
    assert f"{name}: connector PAUSED, tasks: 0 PAUSED" in result.stderr  # plain progress lines off a TTY
    assert state() == ("PAUSED", ["PAUSED"])

    ok(run_ctl(connect.url, "resume", name, "--wait"))
    assert state() == ("RUNNING", ["RUNNING"])

    assert f"connector {name} is STOPPED" in ok(run_ctl(connect.url, "stop", name, "--wait"))
    assert state() == ("STOPPED", [])

    ok(run_ctl(connect.url, "resume", name, "--wait"))
    assert state() == ("RUNNING", ["RUNNING"])

    out = ok(run_ctl(connect.url, "restart", "connector", name, "--tasks", "--wait"))
    assert out.splitlines() == [
        f"connector {name} restarting: connector, task 0",
        f"connector {name} is RUNNING",
    ]
    assert state() == ("RUNNING", ["RUNNING"])

    out = ok(run_ctl(connect.url, "restart", "connector", name, "--tasks", "--only-failed"))
    assert out.strip() == f"connector {name}: nothing to restart (no failed instance)"

    out = ok(run_ctl(connect.url, "restart", "task", f"{name}/0", "--wait"))
    assert out.splitlines() == [f"task {name}/0 restarted", f"task {name}/0 is RUNNING"]
    assert state() == ("RUNNING", ["RUNNING"])

    result = run_ctl(connect.url, "restart", "task", f"{name}/5")
    assert result.returncode == 1 and "(HTTP 404)" in result.stderr
    ok(run_ctl(connect.url, "delete", "connector", name))


def test_wait_that_cannot_finish_exits_4(connect: EmbeddedConnect, tmp_path: Path) -> None:
    # A failed task stays FAILED when its connector is paused, so PAUSED is never reached.
    name = unique("stuck")
    connect.create_connector(
        name,
        {"connector.class": FILE_SINK, "file": str(tmp_path / "missing" / "out.txt"), "topics": unique("t")},
    )
    connect.wait_for_state(name, "RUNNING", tasks=1, task_state="FAILED")
    result = run_ctl(connect.url, "pause", name, "--wait", "--timeout", "2")
    assert result.returncode == 4, result
    assert (
        f"{name} did not become PAUSED within 2 s; last status: connector PAUSED, tasks: 0 FAILED"
        in result.stderr
    )
    status = rest(connect, "GET", f"/connectors/{name}/status")
    assert status["connector"]["state"] == "PAUSED" and status["tasks"][0]["state"] == "FAILED"

    # restarting only the failed task brings it back up (it fails again: the directory is missing)
    result = run_ctl(connect.url, "restart", "connector", name, "--tasks", "--only-failed")
    assert ok(result).strip() == f"connector {name} restarting: task 0"
    ok(run_ctl(connect.url, "delete", "connector", name))


# -- offsets --------------------------------------------------------------------------------------


def test_offsets_reset_of_a_stopped_source_rereads_the_file(connect: EmbeddedConnect, tmp_path: Path) -> None:
    name, data, topic = create_source(connect, tmp_path)
    assert values(connect, topic, 3) == ["one", "two", "three"]
    committed_position(connect, name, data.stat().st_size)

    offsets = json.loads(ok(run_ctl(connect.url, "get", "offsets", name, "-o", "json")))
    assert offsets == rest(connect, "GET", f"/connectors/{name}/offsets")
    assert table(ok(run_ctl(connect.url, "get", "offsets", name))) == [
        ["PARTITION", "OFFSET"],
        ['{"filename":', f'"{data}"}}', '{"position":', f"{data.stat().st_size}}}"],
    ]

    ok(run_ctl(connect.url, "stop", name, "--wait"))
    result = run_ctl(connect.url, "offsets", "reset", name)
    assert "offsets for this connector have been reset successfully" in ok(result)
    assert f"connector {name} is already STOPPED" in result.stderr
    assert rest(connect, "GET", f"/connectors/{name}/offsets") == {"offsets": []}
    assert rest(connect, "GET", f"/connectors/{name}/status")["connector"]["state"] == "STOPPED"

    ok(run_ctl(connect.url, "resume", name, "--wait"))
    assert values(connect, topic, 6) == ["one", "two", "three", "one", "two", "three"]
    ok(run_ctl(connect.url, "delete", "connector", name))


def test_offsets_alter_stops_a_running_source_then_resumes(connect: EmbeddedConnect, tmp_path: Path) -> None:
    name, data, topic = create_source(connect, tmp_path)
    assert values(connect, topic, 3) == ["one", "two", "three"]
    committed_position(connect, name, data.stat().st_size)

    offsets_file = tmp_path / "offsets.json"
    after_first_line = len("one\n")
    offsets_file.write_text(
        json.dumps(
            {"offsets": [{"partition": {"filename": str(data)}, "offset": {"position": after_first_line}}]}
        )
    )
    result = run_ctl(connect.url, "offsets", "alter", name, "-f", str(offsets_file), "--resume", "--wait")
    out = ok(result)
    assert f"stopping connector {name} (it is RUNNING)" in result.stderr
    assert f"connector {name} is STOPPED" in result.stderr
    assert "offsets for this connector have been altered successfully" in out
    assert out.splitlines()[-2:] == [f"connector {name} resumed", f"connector {name} is RUNNING"]
    assert values(connect, topic, 5) == ["one", "two", "three", "two", "three"]

    bad = tmp_path / "bad-offsets.json"
    bad.write_text('{"offsets": [{"partition": {}}]}')
    result = run_ctl(connect.url, "offsets", "alter", name, "-f", str(bad))
    assert result.returncode == 2 and "offsets[0]: 'offset' is missing" in result.stderr
    assert rest(connect, "GET", f"/connectors/{name}/status")["connector"]["state"] == "RUNNING"  # untouched
    ok(run_ctl(connect.url, "delete", "connector", name))


# -- loggers --------------------------------------------------------------------------------------


def test_logs_level_sets_and_reads_levels(connect: EmbeddedConnect) -> None:
    logger = unique("ctltest").replace("-", "_")
    out = ok(run_ctl(connect.url, "logs", "level", logger, "debug"))
    assert out.strip() == f"logger {logger} set to DEBUG; loggers changed: {logger}"
    assert rest(connect, "GET", f"/admin/loggers/{logger}")["level"] == "DEBUG"

    shown = json.loads(ok(run_ctl(connect.url, "logs", "level", logger, "-o", "json")))
    assert shown == rest(connect, "GET", f"/admin/loggers/{logger}")
    listed = table(ok(run_ctl(connect.url, "get", "loggers")))
    assert listed[0] == ["LOGGER", "LEVEL", "LAST", "MODIFIED"]
    assert listed[1][:2] == ["root", rest(connect, "GET", "/admin/loggers/root")["level"]]
    assert next(row for row in listed if row[0] == logger)[1] == "DEBUG"
    assert json.loads(ok(run_ctl(connect.url, "logs", "level", "-o", "json"))) == rest(
        connect, "GET", "/admin/loggers"
    )


# -- HTTPS and basic authentication -------------------------------------------------------------

USER, PASSWORD = "admin", "s3:cret"


@pytest.fixture
def secured(connect: EmbeddedConnect, tmp_path: Path) -> Iterator[tuple[EmbeddedConnect, Path]]:
    """(worker, CA file) of a second real worker, on the module's broker, serving its REST
    API over HTTPS only, with HTTP basic auth through Kafka's JAAS configuration."""
    ca, cert, key = tls_files(tmp_path)
    keystore = tmp_path / "keystore.pem"
    keystore.write_bytes(key.read_bytes() + cert.read_bytes())
    users = tmp_path / "connect.password"
    users.write_text(f"{USER}: {PASSWORD}\n")
    jaas = tmp_path / "connect_jaas.conf"
    jaas.write_text(
        "KafkaConnect {\n"
        "  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required\n"
        f'  file="{users}";\n'
        "};\n"
    )
    config = {
        "listeners": "https://127.0.0.1:0",
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(keystore),
        "rest.extension.classes": (
            "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"
        ),
        "java.security.auth.login.config": str(jaas),
    }
    http = {"verify": ssl.create_default_context(cafile=str(ca)), "auth": (USER, PASSWORD)}
    with EmbeddedConnect(tmp_path / "secured-worker", config, connect.bootstrap, http_options=http) as worker:
        yield worker, ca


def test_https_and_basic_auth_options(tmp_path: Path, secured: tuple[EmbeddedConnect, Path]) -> None:
    worker, ca = secured
    url = worker.url
    assert url.startswith("https://")
    name, _, _ = create_source(worker, tmp_path)
    user = f"{USER}:{PASSWORD}"
    expected = {name: rest(worker, "GET", "/connectors?expand=status&expand=info")[name]}

    listed = run_ctl(url, "--cacert", str(ca), "--user", user, "get", "connectors", name, "-o", "json")
    assert json.loads(ok(listed)) == expected
    assert json.loads(
        ok(run_ctl(url, "--insecure", "--user", user, "get", "connectors", name, "-o", "json"))
    ) == (expected)
    out = ok(run_ctl(url, "--cacert", str(ca), "--user", user, "pause", name, "--wait"))
    assert f"connector {name} is PAUSED" in out

    untrusted = run_ctl(url, "--user", user, "get", "connectors")
    assert untrusted.returncode == 3
    assert f"cannot reach the worker at {url}" in untrusted.stderr
    assert "CERTIFICATE_VERIFY_FAILED" in untrusted.stderr

    for credentials in ([], ["--user", f"{USER}:wrong"]):
        refused = run_ctl(url, "--cacert", str(ca), *credentials, "get", "connectors")
        assert refused.returncode == 1
        assert "User cannot access the resource. (HTTP 401)" in refused.stderr
    ok(run_ctl(url, "--cacert", str(ca), "--user", user, "delete", "connector", name))
    assert rest(worker, "GET", "/connectors") == []
