"""``sluiceway mirror-maker mm2.properties`` as a process: it starts, replicates and stops by
itself on SIGTERM; a file that cannot run stops it at once with the file, line and key."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sluiceway.mirror_maker import runner
from tests.mirror_maker.support import consume, mm2_values, produce, topics, write_mm2
from tests.support import ROOT, embedded_broker, terminate, unique


def mirror_maker(*args: str, log: Path | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "sluiceway.cli", "mirror-maker", *args],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE if log is None else log.open("ab"),
    )


def failure(*args: str) -> str:
    proc = mirror_maker(*args)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    return err.decode()


def test_starts_replicates_and_stops_on_sigterm(tmp_path: Path) -> None:
    with embedded_broker(tmp_path / "a") as a, embedded_broker(tmp_path / "b") as b:
        topic, other = unique("orders"), unique("payments")
        produce(a.bootstrap, topic, [(b"k", b"v", [])])
        produce(b.bootstrap, other, [(b"k", b"v", [])])
        path = write_mm2(
            tmp_path / "mm2.properties", mm2_values(a.bootstrap, b.bootstrap, **{"A->B.enabled": "true"})
        )
        log = tmp_path / "mm2.log"
        proc = mirror_maker(str(path), log=log)
        try:
            ended = lambda: proc.poll() is not None  # noqa: E731
            copied = consume(b.bootstrap, f"A.{topic}", 1, give_up=ended)
            assert (copied[0].key(), copied[0].value()) == (b"k", b"v")
            # B->A is not enabled: its herder only emits heartbeats into A.
            consume(a.bootstrap, "heartbeats", 1, give_up=ended)
            assert not any(t.startswith("B.") for t in topics(a.bootstrap))
        except AssertionError as exc:
            raise AssertionError(f"{exc}\nmirror-maker's log ends:\n{log.read_text()[-3000:]}") from None
        finally:
            code = terminate(proc)
        assert code == 0, log.read_text()
        assert "MirrorMaker stopped" in log.read_text()


def test_a_cluster_without_bootstrap_servers(tmp_path: Path) -> None:
    path = write_mm2(tmp_path / "mm2.properties", {"clusters": "A, B", "A.bootstrap.servers": "127.0.0.1:1"})
    err = failure(str(path))
    assert f"{path}:1: B.bootstrap.servers: missing" in err


# The other refusals in-process: the file is checked before anything starts.
def refused(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert runner.main(list(args), prog="sluiceway mirror-maker") == 1
    return capsys.readouterr().err


def test_a_flow_naming_an_unknown_cluster(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    values = {
        "clusters": "A, B",
        "A.bootstrap.servers": "h:1",
        "B.bootstrap.servers": "h:2",
        "A->C.enabled": "true",
    }
    path = write_mm2(tmp_path / "mm2.properties", values)
    err = refused(capsys, str(path))
    assert (
        f"sluiceway mirror-maker: {path}:4: A->C.enabled: cluster 'C' is not one of the clusters (A, B)"
        in err
    )


def test_clusters_naming_an_unknown_cluster_and_a_missing_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    values = {"clusters": "A, B", "A.bootstrap.servers": "h:1", "B.bootstrap.servers": "h:2"}
    path = write_mm2(tmp_path / "mm2.properties", values)
    assert "--clusters C: not among the clusters" in refused(capsys, str(path), "--clusters", "C")
    assert f"{tmp_path / 'none.properties'}: cannot read" in refused(
        capsys, str(tmp_path / "none.properties")
    )


def test_a_worker_setting_the_worker_refuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    values = {
        "clusters": "A, B",
        "A.bootstrap.servers": "h:1",
        "B.bootstrap.servers": "h:2",
        "B.session.timeout.ms": "x",
    }
    path = write_mm2(tmp_path / "mm2.properties", values)
    assert f"{path}:4: B.session.timeout.ms:" in refused(capsys, str(path))
