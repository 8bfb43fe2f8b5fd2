"""The layout's import rules and the plugin API's privacy, checked on the source as it is.

Connectors, transforms and the Spark sink reach the framework only through ``connect.api``
(a connector that needs more means the API misses a piece); ``connect.api`` imports nothing
of the runtime; the broker and the schema registry import nothing of Connect (they are
reached over the Kafka protocol and HTTP only), and Connect reaches the registry over HTTP
except where a worker starts one in-process. Plugins never touch ``connect.api``'s private
names: what they need is public, and a private name may change under them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLUGIN_PACKAGES = ("connectors", "transforms", "spark_sink")


def _sources(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _violations(packages: tuple[str, ...], allowed: tuple[str, ...], forbidden: tuple[str, ...]) -> list[str]:
    out = []
    for package in packages:
        for path in _sources(package):
            for line, module in _imports(path):
                if any(_within(module, f) for f in forbidden) and not any(
                    _within(module, a) for a in allowed
                ):
                    out.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    return out


def test_plugins_import_only_connect_api_of_the_framework() -> None:
    assert (
        _violations(PLUGIN_PACKAGES, ("connect.api",), ("connect", "broker", "sluiceway", "schema_registry"))
        == []
    )


def test_the_plugin_api_imports_nothing_of_the_runtime() -> None:
    assert (
        _violations(
            ("connect/api",),
            ("connect.api",),
            ("connect", "connectors", "transforms", "spark_sink", "broker", "sluiceway"),
        )
        == []
    )


@pytest.mark.parametrize("package", ["broker", "schema_registry"])
def test_the_broker_and_the_registry_import_nothing_of_connect(package: str) -> None:
    assert (
        _violations((package,), (), ("connect", "connectors", "transforms", "spark_sink", "sluiceway")) == []
    )


def test_connect_reaches_the_registry_over_http_only() -> None:
    """The converters talk to the registry's REST API; the one module that imports the
    registry is the one that starts it inside a worker."""
    found = [
        v
        for v in _violations(("connect",), (), ("schema_registry",))
        if not v.startswith("connect/runtime/embedded_registry.py:")
    ]
    assert found == []
    embedded = ROOT / "connect" / "runtime" / "embedded_registry.py"
    assert any(_within(m, "schema_registry") for _, m in _imports(embedded))


def _api_private_names() -> set[str]:
    """Every single-underscore name ``connect.api`` defines: functions, methods, classes,
    module constants and attributes its classes set on ``self``."""
    names: set[str] = set()
    for path in _sources("connect/api"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            name = None
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = node.name
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                name = node.attr if node.value.id in ("self", "cls", "s") else None
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                name = node.id
            if name and name.startswith("_") and not name.startswith("__"):
                names.add(name)
    return names


def test_plugins_touch_no_private_name_of_the_api() -> None:
    private = _api_private_names()
    assert "_headers" in private and "_values" in private  # the collection sees what it should
    found = []
    for package in PLUGIN_PACKAGES:
        for path in _sources(package):
            tree = ast.parse(path.read_text(), str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module and _within(node.module, "connect.api"):
                    found += [
                        f"{path.relative_to(ROOT)}:{node.lineno} imports {a.name}"
                        for a in node.names
                        if a.name.startswith("_")
                    ]
                if (
                    isinstance(node, ast.Attribute)
                    and node.attr in private
                    and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
                ):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} reads .{node.attr}")
    assert found == []
