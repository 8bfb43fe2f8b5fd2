"""Plugin discovery and lookup: connectors, converters, transforms, predicates, config providers.

Plugins are found through the ``sluiceway.plugins`` entry point group (how the
shipped plugins register too) and in ``plugin.path`` directories (each ``.py``
module or package in them is imported and its plugin classes registered). A plugin
answers to its ``module.Class`` (or ``module:Class``) name, its class name, for
connectors its class name without the ``Connector`` suffix, and its ``aliases``
(the Java class names of the Kafka plugins it replaces), so Kafka configs load
unchanged. Any importable ``module.Class`` path works even if not registered.
"""

from __future__ import annotations

import enum
import importlib
import importlib.util
import inspect
import logging
import pkgutil
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType
from typing import Any

from connect.api.config_provider import ConfigProvider
from connect.api.connector import Connector, SinkConnector, SourceConnector
from connect.api.converter import Converter, HeaderConverter
from connect.api.errors import ConnectException
from connect.api.transforms import FunctionTransformation, Predicate, Transformation

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "sluiceway.plugins"


class PluginType(enum.Enum):
    SOURCE = "source"
    SINK = "sink"
    CONVERTER = "converter"
    HEADER_CONVERTER = "header_converter"
    TRANSFORMATION = "transformation"
    PREDICATE = "predicate"
    CONFIG_PROVIDER = "config_provider"


_BASES: list[tuple[type, PluginType]] = [
    (SourceConnector, PluginType.SOURCE),
    (SinkConnector, PluginType.SINK),
    (Converter, PluginType.CONVERTER),
    (HeaderConverter, PluginType.HEADER_CONVERTER),
    (Transformation, PluginType.TRANSFORMATION),
    (Predicate, PluginType.PREDICATE),
    (ConfigProvider, PluginType.CONFIG_PROVIDER),
]


def plugin_type(cls: type) -> PluginType | None:
    if not inspect.isclass(cls) or inspect.isabstract(cls):
        return None
    for base, kind in _BASES:
        if issubclass(cls, base) and cls is not base:
            return kind
    return None


@dataclass(frozen=True, slots=True)
class PluginDesc:
    cls: type
    type: PluginType
    name: str  # canonical: module.Class

    @property
    def version(self) -> str:
        if issubclass(self.cls, Connector):
            try:
                return str(self.cls().version())
            except Exception:
                return "unknown"
        return str(
            getattr(self.cls, "version", None)
            or getattr(sys.modules.get(self.cls.__module__), "__version__", None)
            or "unknown"
        )

    @property
    def aliases(self) -> tuple[str, ...]:
        return tuple(getattr(self.cls, "aliases", ()))


class PluginNotFound(ConnectException):
    def __init__(self, name: str, kind: str, available: Iterable[str]) -> None:
        self.available = sorted(available)
        super().__init__(
            f"Failed to find any class that implements {kind} and which name matches {name}, "
            f"available {kind}s are: {', '.join(self.available) or '(none)'}"
        )


def _names_for(cls: type, kind: PluginType) -> set[str]:
    canonical = f"{cls.__module__}.{cls.__qualname__}"
    names = {canonical, f"{cls.__module__}:{cls.__qualname__}", cls.__name__}
    if kind in (PluginType.SOURCE, PluginType.SINK) and cls.__name__.endswith("Connector"):
        names.add(cls.__name__[: -len("Connector")])
    for alias in getattr(cls, "aliases", ()):
        names.add(alias)
        simple = alias.rsplit(".", 1)[-1]
        names.add(simple)
        if kind in (PluginType.SOURCE, PluginType.SINK) and simple.endswith("Connector"):
            names.add(simple[: -len("Connector")])
    return names


class Plugins:
    def __init__(self, plugin_path: Iterable[str] = (), discover: bool = True) -> None:
        self._by_name: dict[str, PluginDesc] = {}
        self._descs: dict[type, PluginDesc] = {}
        self._ambiguous: set[str] = set()
        if discover:
            self._load_entry_points()
            for directory in plugin_path:
                self._load_directory(Path(directory))

    # -- registration -------------------------------------------------------------------

    def register(self, cls: type) -> PluginDesc | None:
        kind = plugin_type(cls)
        if kind is None:
            return None
        desc = self._descs.get(cls)
        if desc is None:
            desc = PluginDesc(cls, kind, f"{cls.__module__}.{cls.__qualname__}")
            self._descs[cls] = desc
        full = {desc.name, f"{cls.__module__}:{cls.__qualname__}"}
        for name in _names_for(cls, kind):
            if name in self._ambiguous and name not in full:
                continue
            other = self._by_name.get(name)
            if other is not None and other.cls is not cls and name not in full:
                # Two plugins claim a short name: it means neither (which one would win
                # depends on load order); only their full names stay usable, as in Kafka.
                del self._by_name[name]
                self._ambiguous.add(name)
                log.warning(
                    "plugin name %s is ambiguous (%s, %s); use the full class name",
                    name,
                    other.name,
                    desc.name,
                )
                continue
            self._by_name[name] = desc
        return desc

    def _load_entry_points(self) -> None:
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            try:
                obj = ep.load()
            except Exception as exc:
                log.error("cannot load plugin entry point %s = %s: %s", ep.name, ep.value, exc)
                continue
            for cls in _classes_in(obj):
                self.register(cls)

    def _load_directory(self, directory: Path) -> None:
        if not directory.is_dir():
            log.warning("plugin.path entry %s is not a directory", directory)
            return
        root = str(directory.resolve())
        if root not in sys.path:
            sys.path.insert(0, root)
        for info in pkgutil.iter_modules([root]):
            self._import_and_register(info.name, info.ispkg)

    def _import_and_register(self, module_name: str, is_package: bool) -> None:
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:
            log.error("cannot import plugin module %s: %s", module_name, exc)
            return
        modules = [module]
        if is_package:
            for sub in pkgutil.walk_packages(module.__path__, module.__name__ + "."):
                try:
                    modules.append(importlib.import_module(sub.name))
                except Exception as exc:
                    log.error("cannot import plugin module %s: %s", sub.name, exc)
        for m in modules:
            for cls in _classes_in(m):
                if cls.__module__ == m.__name__:
                    self.register(cls)

    # -- lookup ---------------------------------------------------------------------

    def find(self, name: str, kinds: Iterable[PluginType]) -> PluginDesc:
        wanted = set(kinds)
        name = name.strip()
        desc = self._by_name.get(name)
        if desc is None:
            desc = self._import_path(name)
        if desc is None or desc.type not in wanted:
            kind = " or ".join(sorted(k.value for k in wanted))
            raise PluginNotFound(name, kind, self.names(wanted))
        return desc

    def _import_path(self, name: str) -> PluginDesc | None:
        module_name, sep, attr = name.partition(":")
        if not sep:
            module_name, _, attr = name.rpartition(".")
        if not module_name or not attr:
            return None
        try:
            module = import_plugin_module(module_name)
            obj = getattr(module, attr)
        except (ImportError, AttributeError, ValueError):
            return None
        if inspect.isclass(obj):
            return self.register(obj)
        return None

    def descriptors(self, kinds: Iterable[PluginType] | None = None) -> list[PluginDesc]:
        wanted = set(kinds) if kinds is not None else set(PluginType)
        return sorted((d for d in self._descs.values() if d.type in wanted), key=lambda d: d.name)

    def names(self, kinds: Iterable[PluginType]) -> list[str]:
        return [d.name for d in self.descriptors(kinds)]

    # -- instantiation --------------------------------------------------------------

    def connector_class(self, name: str) -> type[Connector]:
        cls = self.find(name, (PluginType.SOURCE, PluginType.SINK)).cls
        assert issubclass(cls, Connector)
        return cls

    def new_connector(self, name: str) -> Connector:
        return self.connector_class(name)()

    def new_converter(self, name: str, configs: Mapping[str, Any], is_key: bool) -> Converter:
        cls = self.find(name, (PluginType.CONVERTER,)).cls
        converter: Converter = cls()
        converter.configure(configs, is_key)
        return converter

    def new_header_converter(self, name: str, configs: Mapping[str, Any]) -> HeaderConverter:
        cls = self.find(name, (PluginType.HEADER_CONVERTER, PluginType.CONVERTER)).cls
        if issubclass(cls, HeaderConverter):
            hc: HeaderConverter = cls()
            hc.configure(configs)
            return hc
        raise PluginNotFound(name, "header_converter", self.names((PluginType.HEADER_CONVERTER,)))

    def new_transformation(self, name: str, configs: Mapping[str, Any]) -> Transformation[Any]:
        fn = self._function(name)
        if fn is not None:
            return FunctionTransformation(fn)
        cls = self.find(name, (PluginType.TRANSFORMATION,)).cls
        t: Transformation[Any] = cls()
        t.configure(configs)
        return t

    def new_predicate(self, name: str, configs: Mapping[str, Any]) -> Predicate[Any]:
        cls = self.find(name, (PluginType.PREDICATE,)).cls
        p: Predicate[Any] = cls()
        p.configure(configs)
        return p

    def new_config_provider(self, name: str, configs: Mapping[str, Any]) -> ConfigProvider:
        cls = self.find(name, (PluginType.CONFIG_PROVIDER,)).cls
        provider: ConfigProvider = cls()
        provider.configure(configs)
        return provider

    def _function(self, name: str) -> Callable[[Any], Any] | None:
        """``module:function`` (or ``module.function``) naming a plain transformation function."""
        if name in self._by_name:
            return None
        module_name, sep, attr = name.partition(":")
        if not sep:
            module_name, _, attr = name.rpartition(".")
        if not module_name:
            return None
        try:
            obj = getattr(import_plugin_module(module_name), attr)
        except (ImportError, AttributeError, ValueError):
            return None
        if callable(obj) and not inspect.isclass(obj):
            return obj  # type: ignore[no-any-return]
        return None


def import_plugin_module(name: str) -> ModuleType:
    """The module of a plugin named by its dotted path in a config or a REST path.

    Names come from users (and from anyone who can send a GET), so: relative names ('.x',
    which importlib refuses with a TypeError) and the standard library's modules (no plugin
    lives there, and importing some of them has effects: ``antigravity`` opens a browser)
    are not imported; both raise ImportError like a module that does not exist."""
    top = name.partition(".")[0]
    if not top or top in sys.stdlib_module_names:
        raise ImportError(f"No plugin module named {name!r}")
    return importlib.import_module(name)


def _classes_in(obj: Any) -> list[type]:
    if inspect.isclass(obj):
        return [obj]
    if inspect.ismodule(obj):
        return [v for v in vars(obj).values() if inspect.isclass(v) and plugin_type(v) is not None]
    if isinstance(obj, (list, tuple)):
        return [c for c in obj if inspect.isclass(c)]
    return []
