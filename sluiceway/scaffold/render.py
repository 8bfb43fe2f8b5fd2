"""Templates to files: which template becomes which file of a generated package.

Templates are package data (``templates/<kind or common>/<file>.tmpl``) in
``string.Template`` syntax; a literal ``$`` is written ``$$``. Every placeholder must
be known: a template naming an unknown one is a bug, and fails loudly.
"""

from __future__ import annotations

from importlib import resources
from importlib.metadata import version
from pathlib import Path
from string import Template

from sluiceway.scaffold.names import Kind, PluginNames

# (template, path in the generated package; {package} is the import package's name)
_CONNECTOR_FILES = [
    ("{kind}/__init__.py.tmpl", "src/{package}/__init__.py"),
    ("{kind}/config.py.tmpl", "src/{package}/config.py"),
    ("{kind}/connector.py.tmpl", "src/{package}/connector.py"),
    ("{kind}/task.py.tmpl", "src/{package}/task.py"),
    ("common/version.py.tmpl", "src/{package}/version.py"),
]
_TRANSFORM_FILES = [
    ("transform/__init__.py.tmpl", "src/{package}/__init__.py"),
    ("transform/config.py.tmpl", "src/{package}/config.py"),
    ("transform/transform.py.tmpl", "src/{package}/transform.py"),
]
_COMMON_FILES = [
    ("common/pyproject.toml.tmpl", "pyproject.toml"),
    ("{kind}/README.md.tmpl", "README.md"),
    ("{kind}/test.py.tmpl", "tests/test_{package}.py"),
]

_DESCRIPTIONS: dict[Kind, str] = {
    "source": "A Sluiceway source connector",
    "sink": "A Sluiceway sink connector",
    "transform": "A Sluiceway single message transform",
}


def sluiceway_requirement() -> str:
    """``sluiceway>=X.Y,<X.(Y+1)``: the running minor version (before 1.0 a minor release may
    change the plugin API)."""
    major, minor = (int(p) for p in version("sluiceway").split(".")[:2])
    if major == 0:
        return f"sluiceway>={major}.{minor},<{major}.{minor + 1}"
    return f"sluiceway>={major}.{minor},<{major + 1}"


def substitutions(names: PluginNames) -> dict[str, str]:
    values = {
        "kind": names.kind,
        "name": names.name,
        "dist": names.name,
        "package": names.package,
        "config_class": names.config_class,
        "description": _DESCRIPTIONS[names.kind],
        "sluiceway_requirement": sluiceway_requirement(),
    }
    if names.kind == "transform":
        values["transform_class"] = names.transform_class
    else:
        values["connector_class"] = names.connector_class
        values["task_class"] = names.task_class
    return values


def render(names: PluginNames) -> dict[str, str]:
    """Every file of the package: relative path -> content (``py.typed`` included)."""
    templates = resources.files("sluiceway.scaffold") / "templates"
    values = substitutions(names)
    pairs = _COMMON_FILES + (_TRANSFORM_FILES if names.kind == "transform" else _CONNECTOR_FILES)
    out = {}
    for template, target in pairs:
        text = (templates / template.format(kind=names.kind)).read_text(encoding="utf-8")
        out[target.format(package=names.package)] = Template(text).substitute(values)
    out[f"src/{names.package}/py.typed"] = ""
    return dict(sorted(out.items()))


def write(files: dict[str, str], directory: Path) -> list[Path]:
    """Write ``files`` under ``directory`` (created); returns the paths written."""
    written = []
    for relative, content in files.items():
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        written.append(path)
    return written
