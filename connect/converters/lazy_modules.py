"""Third-party modules a converter needs only once it converts, imported when a converter
of that kind is configured rather than with its module.

Every converter class is imported when the worker starts (plugin discovery), so every
module a converter imports at its top is in every worker's memory, converters in use or
not: fastavro and jsonschema (with referencing) were 7.7 MB of an idle worker's 122 MB
(``benchmarks/file_pipeline.py`` prints the idle RSS; the target is 120 MB).

They are imported by the import system, which is thread-safe (a thread importing a module
another thread is importing waits for it; the standard library's ``LazyLoader`` is not on
Python 3.11, gh-114763), and bound as globals of the converter's module, so its per-record
calls read them as before. ``configure`` comes before any conversion, so a missing or
broken library fails the task at its start, not at its first record.
"""

from __future__ import annotations

import importlib
from typing import Any


def import_into(namespace: dict[str, Any], *names: str) -> None:
    """Import ``names`` (``"referencing.jsonschema"`` imports that submodule too) and bind
    each one's top-level package in ``namespace`` (a module's ``globals()``)."""
    for name in names:
        importlib.import_module(name)
        top = name.partition(".")[0]
        namespace[top] = importlib.import_module(top)
