"""Third-party modules a converter needs only once it converts, imported on first use.

Every converter class is imported when the worker starts (plugin discovery), so every
module a converter imports at its top is in every worker's memory, converters in use or
not: fastavro and jsonschema (with referencing) were 7.7 MB of an idle worker's 122 MB
(``benchmarks/file_pipeline.py`` prints the idle RSS; the target is 120 MB). The standard
library's ``LazyLoader`` executes such a module on its first attribute access; from then on
it is the ordinary module, so the converters' per-record calls cost what they did.

On Python 3.11 that first access is not thread-safe: the module looks loaded to other
threads while its code still runs, and they find its attributes missing (gh-114763, fixed
in 3.12.3). So a converter calls ``load`` on what it uses in ``configure``, before any
conversion: the first caller executes the module under a lock, the others wait for it.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from types import ModuleType

_LOADING = threading.Lock()


def lazy_module(name: str) -> ModuleType:
    """``name``, imported already or the first time one of its attributes is read.

    ``ModuleNotFoundError`` at once if it is not installed (a missing dependency is found
    when the worker starts, not at the first record)."""
    module = sys.modules.get(name)
    if module is not None:
        return module
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module


def load(*modules: ModuleType) -> None:
    """Execute ``modules`` now if they are still lazy, one thread at a time (see above)."""
    with _LOADING:
        for module in modules:
            getattr(module, "__name__")  # noqa: B009 - any attribute read runs a lazy module's code
