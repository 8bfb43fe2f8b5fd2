"""The names a generated plugin package gets, derived from the one the user gives.

``counter-source`` becomes the distribution ``counter-source``, the import package
``counter_source`` and the classes ``CounterSourceConnector``, ``CounterSourceTask``
and ``CounterSourceConfig``; ``sluiceway new sink events`` gives ``EventsSinkConnector``.
Pure: no I/O beyond asking the import system whether a package name is taken.
"""

from __future__ import annotations

import importlib.util
import keyword
import re
import sys
from dataclasses import dataclass
from typing import Literal

Kind = Literal["source", "sink", "transform"]
KINDS: tuple[Kind, ...] = ("source", "sink", "transform")

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


class InvalidName(ValueError):
    """A name or package the scaffold refuses; the message says which and why."""


@dataclass(frozen=True, slots=True)
class PluginNames:
    kind: Kind
    name: str  # as given: the distribution name
    package: str  # the import package
    prefix: str  # CamelCase stem of the class names

    @property
    def connector_class(self) -> str:
        kind = self.kind.capitalize()
        stem = self.prefix if self.prefix.endswith(kind) else self.prefix + kind
        return f"{stem}Connector"

    @property
    def task_class(self) -> str:
        return self.connector_class.removesuffix("Connector") + "Task"

    @property
    def transform_class(self) -> str:
        return self.prefix

    @property
    def config_class(self) -> str:
        stem = (
            self.transform_class
            if self.kind == "transform"
            else self.connector_class.removesuffix("Connector")
        )
        return f"{stem}Config"


def check_package(package: str, what: str = "package") -> str:
    """``package`` if it can name a new top-level package; else ``InvalidName``."""
    if not package.isidentifier() or keyword.iskeyword(package):
        raise InvalidName(f"invalid {what} {package!r}: must be a Python identifier (and not a keyword)")
    if package in sys.stdlib_module_names:
        raise InvalidName(f"invalid {what} {package!r}: the standard library has a module of that name")
    try:
        taken = importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        taken = True
    if taken:
        raise InvalidName(
            f"invalid {what} {package!r}: an importable module of that name exists already, and the "
            "generated package would shadow it (or be shadowed)"
        )
    return package


def plugin_names(kind: Kind, name: str, package: str | None = None) -> PluginNames:
    """Validate ``name`` (and ``package``) and derive the rest; raises ``InvalidName``."""
    if not _NAME.fullmatch(name) or not name.replace("-", "_").isidentifier():
        raise InvalidName(
            f"invalid name {name!r}: it must be a Python identifier once dashes become underscores "
            "(letters, digits, '_' and '-', starting with a letter)"
        )
    derived = name.replace("-", "_")
    if package is None:
        check_package(derived, "name (as a package)")
    else:
        check_package(package, "--package")
    prefix = "".join(part[:1].upper() + part[1:] for part in re.split(r"[-_]+", name) if part)
    return PluginNames(kind, name, package or derived, prefix)
