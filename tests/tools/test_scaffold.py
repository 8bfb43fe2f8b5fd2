"""``sluiceway new``: the generated packages install and pass their own tests, and bad
input is refused with a clear message.

The end-to-end tests generate each kind of plugin with the real CLI, install it with pip
into a throwaway virtualenv that sees this environment's packages (a ``.pth`` file; no
network, no copies), run the generated package's own test suite with that virtualenv's
pytest, and check from its report that every test passed, the one asking the worker's
``/connector-plugins`` included.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tomllib
import venv
from pathlib import Path
from xml.etree import ElementTree

import pytest

from sluiceway.scaffold.cli import main
from sluiceway.scaffold.names import InvalidName, plugin_names

# What the generated tests must not inherit from this run.
_SCRUBBED = ("PYTHONPATH", "PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_CURRENT_TEST")


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in _SCRUBBED}


@pytest.fixture(scope="module")
def throwaway_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtualenv's interpreter that imports everything this environment has installed
    (Sluiceway included, editable or not) through one ``.pth`` line: packages installed into
    it land in it alone."""
    root = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=False).create(root)
    python = root / "bin" / "python"
    site_packages = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    ours = sysconfig.get_paths()["purelib"]
    # addsitedir, not a bare path: this environment's own .pth files (the editable install's
    # finder among them) must run too.
    (Path(site_packages) / "_sluiceway_parent_env.pth").write_text(
        f"import site; site.addsitedir({ours!r})\n"
    )
    return python


def _run(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=600)


def _generate_install_and_test(python: Path, kind: str, name: str, where: Path) -> dict[str, str]:
    """Generate with ``sluiceway new``, pip-install, run the package's tests: test name -> outcome."""
    target = where / name
    made = _run([sys.executable, "-m", "sluiceway.cli", "new", kind, name, "--directory", str(target)])
    assert made.returncode == 0, made.stderr
    assert str(target) in made.stdout
    lint = _run([sys.executable, "-m", "ruff", "check", "--no-cache", "."], cwd=target)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    installed = _run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-e",
            str(target),
        ]
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    report = where / f"{name}.xml"
    tested = _run([str(python), "-m", "pytest", "-p", "no:cacheprovider", f"--junitxml={report}"], cwd=target)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    outcomes = {}
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        failed = [c.tag for c in case if c.tag in ("failure", "error", "skipped")]
        outcomes[case.attrib["name"]] = failed[0] if failed else "passed"
    return outcomes


def test_generated_source_installs_and_passes_its_tests(throwaway_python: Path, tmp_path: Path) -> None:
    outcomes = _generate_install_and_test(throwaway_python, "source", "counter-source", tmp_path)
    assert outcomes == {
        "test_the_worker_lists_the_connector": "passed",
        "test_config_errors_name_their_key": "passed",
        "test_counts_from_zero": "passed",
        "test_goes_on_where_it_stopped": "passed",
    }


def test_generated_sink_installs_and_passes_its_tests(throwaway_python: Path, tmp_path: Path) -> None:
    outcomes = _generate_install_and_test(throwaway_python, "sink", "jsonl-sink", tmp_path)
    assert outcomes == {
        "test_the_worker_lists_the_connector": "passed",
        "test_a_missing_file_is_a_config_error": "passed",
        "test_records_are_on_disk_once_committed": "passed",
        "test_structured_values_stay_structured": "passed",
    }


def test_generated_transform_installs_and_passes_its_tests(throwaway_python: Path, tmp_path: Path) -> None:
    outcomes = _generate_install_and_test(throwaway_python, "transform", "add-prefix", tmp_path)
    assert outcomes == {
        "test_prefixes_string_values": "passed",
        "test_tombstones_pass_unchanged": "passed",
        "test_other_values_are_data_errors": "passed",
        "test_prefix_is_required": "passed",
        "test_the_worker_lists_the_transform": "passed",
        "test_in_a_sink_pipeline": "passed",
        "test_bad_records_go_to_the_dead_letter_queue": "passed",
    }


# -- the generated files ----------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["source", "sink", "transform"])
def test_every_placeholder_is_filled_and_every_module_compiles(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([kind, "demo-plugin", "--directory", str(tmp_path / "out")]) == 0
    files = sorted(p for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert files
    for path in files:
        text = path.read_text()
        assert "$" not in text, f"{path} keeps a template placeholder"
        if path.suffix == ".py":
            compile(text, str(path), "exec")
    printed = capsys.readouterr().out
    assert "pip install -e '.[test]'" in printed
    assert all(str(p.relative_to(tmp_path / "out")) in printed for p in files)


def test_pyproject_declares_the_entry_point_dependency_and_test_extra(tmp_path: Path) -> None:
    assert main(["sink", "events", "--directory", str(tmp_path / "events"), "--package", "acme_events"]) == 0
    project = tomllib.loads((tmp_path / "events" / "pyproject.toml").read_text())
    assert project["project"]["name"] == "events"
    assert project["project"]["entry-points"]["sluiceway.plugins"] == {"acme_events": "acme_events"}
    (requirement,) = project["project"]["dependencies"]
    assert requirement == "sluiceway>=0.1,<0.2"
    assert any(r.startswith("pytest") for r in project["project"]["optional-dependencies"]["test"])
    package = tmp_path / "events" / "src" / "acme_events"
    assert sorted(p.name for p in package.iterdir()) == [
        "__init__.py",
        "config.py",
        "connector.py",
        "py.typed",
        "task.py",
        "version.py",
    ]
    assert "class EventsSinkConnector(SinkConnector):" in (package / "connector.py").read_text()
    assert (tmp_path / "events" / "tests" / "test_acme_events.py").is_file()


@pytest.mark.parametrize(
    ("kind", "name", "classes"),
    [
        ("source", "counter-source", ("CounterSourceConnector", "CounterSourceTask", "CounterSourceConfig")),
        ("source", "counter", ("CounterSourceConnector", "CounterSourceTask", "CounterSourceConfig")),
        ("sink", "events", ("EventsSinkConnector", "EventsSinkTask", "EventsSinkConfig")),
        ("sink", "s3_archive", ("S3ArchiveSinkConnector", "S3ArchiveSinkTask", "S3ArchiveSinkConfig")),
    ],
)
def test_connector_class_names(kind: str, name: str, classes: tuple[str, str, str]) -> None:
    names = plugin_names(kind, name)  # type: ignore[arg-type]
    assert (names.connector_class, names.task_class, names.config_class) == classes
    assert names.package == name.replace("-", "_")


def test_transform_class_names() -> None:
    names = plugin_names("transform", "add-prefix")
    assert (names.transform_class, names.config_class, names.package) == (
        "AddPrefix",
        "AddPrefixConfig",
        "add_prefix",
    )


# -- refusals -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["source", "9lives"], "invalid name '9lives': it must be a Python identifier once dashes"),
        (["source", "my.plugin"], "invalid name 'my.plugin'"),
        (["sink", "with space"], "invalid name 'with space'"),
        (
            ["transform", "class"],
            "invalid name (as a package) 'class': must be a Python identifier (and not a keyword)",
        ),
        (
            ["source", "json"],
            "invalid name (as a package) 'json': the standard library has a module of that name",
        ),
        (
            ["sink", "connect"],
            "invalid name (as a package) 'connect': an importable module of that name exists",
        ),
        (["sink", "fine", "--package", "not-an-identifier"], "invalid --package 'not-an-identifier'"),
    ],
)
def test_invalid_names_are_refused(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "target"
    assert main([*args, "--directory", str(target)]) == 1
    assert message in capsys.readouterr().err
    assert not target.exists()


def test_a_non_empty_directory_is_refused_and_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "mine.txt").write_text("keep me")
    assert main(["source", "counter", "--directory", str(tmp_path)]) == 1
    assert f"{tmp_path} exists and is not empty; choose another with --directory" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == ["mine.txt"]


def test_a_file_in_the_way_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "counter").write_text("")
    assert main(["source", "counter", "--directory", str(tmp_path / "counter")]) == 1
    assert "counter is not a directory" in capsys.readouterr().err


def test_an_empty_directory_is_used(tmp_path: Path) -> None:
    assert main(["transform", "upper", "--directory", str(tmp_path)]) == 0
    assert (tmp_path / "src" / "upper" / "transform.py").is_file()


def test_the_default_directory_is_the_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["sink", "my-sink"]) == 0
    assert (tmp_path / "my-sink" / "src" / "my_sink" / "task.py").is_file()


def test_names_check_raises_a_value_error() -> None:
    with pytest.raises(InvalidName) as raised:
        plugin_names("source", "-dash-first")
    assert isinstance(raised.value, ValueError)
