"""``connect-distributed --processes N``: what each worker process is told (pure)."""

from __future__ import annotations

import sys

import pytest

from connect.worker_processes import Layout, listeners_of, worker_commands


def test_each_worker_listens_on_the_ports_plus_its_index() -> None:
    assert listeners_of(["http://:8083"], 0) == "http://:8083"
    assert listeners_of(["http://:8083"], 2) == "http://:8085"
    assert listeners_of(["http://localhost:8083", "https://0.0.0.0:8443"], 1) == (
        "http://localhost:8084,https://0.0.0.0:8444"
    )
    assert listeners_of(["http://[::1]:8083"], 1) == "http://[::1]:8084"
    assert listeners_of(["http://127.0.0.1:0"], 3) == "http://127.0.0.1:0"  # any free port stays so


def test_a_listener_without_a_port_is_refused() -> None:
    with pytest.raises(ValueError, match="names no port"):
        listeners_of(["http://localhost"], 1)


def test_worker_commands_share_the_file_and_overrides_and_only_the_first_runs_the_broker() -> None:
    layout = Layout(["http://:8083"], 9000, embedded_broker=True)
    commands = worker_commands("w.properties", ["group.id=g"], layout, 3, "INFO")
    assert len(commands) == 3
    for i, command in enumerate(commands):
        assert command[:4] == [sys.executable, "-m", "connect.distributed", "w.properties"]
        assert command[6:8] == ["--override", "group.id=g"]
        assert f"listeners=http://:{8083 + i}" in command
        assert f"rest.advertised.port={9000 + i}" in command
        assert ("embedded.broker.enable=false" in command) == (i > 0)
