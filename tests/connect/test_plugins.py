"""Tests of connect.runtime.plugins: discovery through the ``sluiceway.plugins`` entry points and
``plugin.path`` directories, and lookup by every name Kafka Connect accepts (Java class names,
simple class names, connector names without the ``Connector`` suffix, ``module.Class``)."""

from __future__ import annotations

import logging
import sys
import textwrap
import uuid
from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from connect.api import FunctionTransformation, SinkConnector, SourceConnector, SourceRecord, Transformation
from connect.api.config_provider import ConfigProvider
from connect.api.connector import Connector
from connect.converters.json import JsonConverter
from connect.converters.string import StringConverter
from connect.runtime.config_providers import FileConfigProvider
from connect.runtime.plugins import ENTRY_POINT_GROUP, PluginNotFound, Plugins, PluginType, plugin_type
from connectors.file.sink import FileStreamSinkConnector
from connectors.file.source import FileStreamSourceConnector
from transforms.predicates import HasHeaderKey, RecordIsTombstone, TopicNameMatches
from transforms.regex_router import RegexRouter

CONNECTORS = (PluginType.SOURCE, PluginType.SINK)


@pytest.fixture(scope="module")
def plugins() -> Plugins:
    return Plugins()


@pytest.fixture
def isolated_imports(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """plugin.path puts directories on sys.path and imports modules: undo both after the test."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield
    for name in [n for n in sys.modules if n.startswith("acme_")]:
        del sys.modules[name]


def unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:10]}"


def write(path: Path, source: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source), encoding="utf-8")


MODULE_SOURCE = """
    from connect.api import SourceConnector, SourceTask, Transformation, Predicate
    from transforms.regex_router import RegexRouter  # imported, not defined here

    __version__ = "2.5"


    class LinesTask(SourceTask):
        def version(self):
            return "3.1"

        def start(self, props):
            pass

        def poll(self):
            return None

        def stop(self):
            pass


    class LinesConnector(SourceConnector):
        aliases = ("com.acme.kafka.LinesSourceConnector",)

        def version(self):
            return "3.1"

        def start(self, props):
            self.props = props

        def task_class(self):
            return LinesTask

        def task_configs(self, max_tasks):
            return [self.props]

        def stop(self):
            pass


    class Shout(Transformation):
        def apply(self, record):
            return record.new_record(value=str(record.value).upper())


    class HalfDone(Transformation):
        '''Abstract: apply is not implemented, so it is no plugin.'''


    class NotAPlugin:
        pass


    def exclaim(record):
        return record.new_record(value=f"{record.value}!")


    def drop_all(record):
        return None
"""

PACKAGE_INIT = """
    from .sinks import ArchiveSinkConnector
"""

PACKAGE_SINKS = """
    from connect.api import SinkConnector, SinkTask


    class ArchiveTask(SinkTask):
        def version(self):
            return "1"

        def start(self, props):
            pass

        def put(self, records):
            pass

        def stop(self):
            pass


    class ArchiveSinkConnector(SinkConnector):
        def version(self):
            return "0.9"

        def start(self, props):
            pass

        def task_class(self):
            return ArchiveTask

        def task_configs(self, max_tasks):
            return [{}] * max_tasks

        def stop(self):
            pass
"""

PACKAGE_PREDICATE = """
    from connect.api import Predicate


    class IsOdd(Predicate):
        def test(self, record):
            return record.kafka_partition % 2 == 1
"""


@pytest.fixture
def plugin_dir(tmp_path: Path, isolated_imports: None) -> tuple[Path, str, str]:
    """A plugin.path directory with a module and a package (with a nested subpackage)."""
    root = tmp_path / "plugins"
    module = unique("acme_lines")
    package = unique("acme_archive")
    write(root / f"{module}.py", MODULE_SOURCE)
    write(root / package / "__init__.py", PACKAGE_INIT)
    write(root / package / "sinks.py", PACKAGE_SINKS)
    write(root / package / "extra" / "__init__.py", "")
    write(root / package / "extra" / "odd.py", PACKAGE_PREDICATE)
    write(root / "README.txt", "not python")
    return root, module, package


# -- built-ins through entry points ---------------------------------------------------------------


def test_the_distribution_registers_the_built_ins_as_entry_points() -> None:
    names = {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}
    assert names["converters"] == "connect.converters"
    assert names["config-providers"] == "connect.runtime.config_providers"
    assert names["file-connectors"] == "connectors.file"
    assert names["transforms"] == "transforms"


def test_built_ins_are_discovered(plugins: Plugins) -> None:
    by_type = {kind: set(plugins.names([kind])) for kind in PluginType}
    assert "connectors.file.source.FileStreamSourceConnector" in by_type[PluginType.SOURCE]
    assert "connectors.file.sink.FileStreamSinkConnector" in by_type[PluginType.SINK]
    assert "connect.converters.json.JsonConverter" in by_type[PluginType.CONVERTER]
    assert "connect.converters.string.StringConverter" in by_type[PluginType.CONVERTER]
    assert "connect.converters.header.SimpleHeaderConverter" in by_type[PluginType.HEADER_CONVERTER]
    assert "transforms.regex_router.RegexRouter" in by_type[PluginType.TRANSFORMATION]
    assert {
        "transforms.predicates.TopicNameMatches",
        "transforms.predicates.HasHeaderKey",
        "transforms.predicates.RecordIsTombstone",
    } <= by_type[PluginType.PREDICATE]
    assert {
        "connect.runtime.config_providers.FileConfigProvider",
        "connect.runtime.config_providers.DirectoryConfigProvider",
        "connect.runtime.config_providers.EnvVarConfigProvider",
    } <= by_type[PluginType.CONFIG_PROVIDER]


def test_descriptors_are_sorted_and_typed(plugins: Plugins) -> None:
    descs = plugins.descriptors()
    assert [d.name for d in descs] == sorted(d.name for d in descs)
    source = next(d for d in descs if d.cls is FileStreamSourceConnector)
    assert source.type is PluginType.SOURCE
    assert source.type.value == "source"
    assert source.version == "1.0"
    assert source.aliases == ("org.apache.kafka.connect.file.FileStreamSourceConnector",)
    only_connectors = plugins.descriptors(CONNECTORS)
    assert {d.type for d in only_connectors} == {PluginType.SOURCE, PluginType.SINK}
    assert {t.value for t in PluginType} >= {
        "source",
        "sink",
        "converter",
        "header_converter",
        "transformation",
        "predicate",
    }


def test_a_registry_without_discovery_is_empty() -> None:
    empty = Plugins(discover=False)
    assert empty.descriptors() == []


def test_plugin_type_of_classes() -> None:
    assert plugin_type(FileStreamSourceConnector) is PluginType.SOURCE
    assert plugin_type(FileStreamSinkConnector) is PluginType.SINK
    assert plugin_type(RegexRouter) is PluginType.TRANSFORMATION
    assert plugin_type(TopicNameMatches) is PluginType.PREDICATE
    assert plugin_type(JsonConverter) is PluginType.CONVERTER
    assert plugin_type(FileConfigProvider) is PluginType.CONFIG_PROVIDER
    for not_a_plugin in (SourceConnector, SinkConnector, Transformation, ConfigProvider, dict, len):
        assert plugin_type(not_a_plugin) is None  # type: ignore[arg-type]


# -- every alias form -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "org.apache.kafka.connect.file.FileStreamSourceConnector",
        "FileStreamSourceConnector",
        "FileStreamSource",
        "connectors.file.source.FileStreamSourceConnector",
        "connectors.file.source:FileStreamSourceConnector",
        "connectors.file.FileStreamSourceConnector",  # importable re-export
        "  FileStreamSource  ",
    ],
)
def test_source_connector_aliases(plugins: Plugins, name: str) -> None:
    assert plugins.connector_class(name) is FileStreamSourceConnector
    assert isinstance(plugins.new_connector(name), FileStreamSourceConnector)


@pytest.mark.parametrize(
    "name",
    [
        "org.apache.kafka.connect.file.FileStreamSinkConnector",
        "FileStreamSinkConnector",
        "FileStreamSink",
        "connectors.file.sink.FileStreamSinkConnector",
    ],
)
def test_sink_connector_aliases(plugins: Plugins, name: str) -> None:
    assert plugins.connector_class(name) is FileStreamSinkConnector


@pytest.mark.parametrize(
    ("names", "kind", "cls"),
    [
        (
            [
                "org.apache.kafka.connect.json.JsonConverter",
                "JsonConverter",
                "connect.converters.json.JsonConverter",
            ],
            PluginType.CONVERTER,
            JsonConverter,
        ),
        (
            ["org.apache.kafka.connect.storage.StringConverter", "StringConverter"],
            PluginType.CONVERTER,
            StringConverter,
        ),
        (
            [
                "org.apache.kafka.connect.transforms.RegexRouter",
                "RegexRouter",
                "transforms.regex_router.RegexRouter",
            ],
            PluginType.TRANSFORMATION,
            RegexRouter,
        ),
        (
            ["org.apache.kafka.connect.transforms.predicates.TopicNameMatches", "TopicNameMatches"],
            PluginType.PREDICATE,
            TopicNameMatches,
        ),
        (
            ["org.apache.kafka.connect.transforms.predicates.HasHeaderKey", "HasHeaderKey"],
            PluginType.PREDICATE,
            HasHeaderKey,
        ),
        (
            ["org.apache.kafka.connect.transforms.predicates.RecordIsTombstone", "RecordIsTombstone"],
            PluginType.PREDICATE,
            RecordIsTombstone,
        ),
        (
            ["org.apache.kafka.common.config.provider.FileConfigProvider", "FileConfigProvider"],
            PluginType.CONFIG_PROVIDER,
            FileConfigProvider,
        ),
    ],
)
def test_every_alias_form_resolves_to_the_same_class(
    plugins: Plugins, names: list[str], kind: PluginType, cls: type
) -> None:
    for name in names:
        assert plugins.find(name, [kind]).cls is cls, name


def test_suffixless_names_are_only_for_connectors(plugins: Plugins) -> None:
    with pytest.raises(PluginNotFound):
        plugins.find("Json", [PluginType.CONVERTER])


def test_instantiation_helpers_configure_what_they_make(plugins: Plugins, tmp_path: Path) -> None:
    converter = plugins.new_converter(
        "org.apache.kafka.connect.json.JsonConverter", {"schemas.enable": "false"}, False
    )
    assert isinstance(converter, JsonConverter)
    header_converter = plugins.new_header_converter(
        "org.apache.kafka.connect.storage.SimpleHeaderConverter", {}
    )
    assert type(header_converter).__name__ == "SimpleHeaderConverter"
    router = plugins.new_transformation("RegexRouter", {"regex": "a(.*)", "replacement": "b$1"})
    assert isinstance(router, RegexRouter)
    assert router.apply(SourceRecord(topic="axy")).topic == "bxy"
    predicate = plugins.new_predicate("TopicNameMatches", {"pattern": "x.*"})
    assert predicate.test(SourceRecord(topic="xyz"))
    props = tmp_path / "s.properties"
    props.write_text("k=v\n", encoding="utf-8")
    provider = plugins.new_config_provider("FileConfigProvider", {"allowed.paths": str(tmp_path)})
    assert isinstance(provider, ConfigProvider)
    assert provider.get(str(props)) == {"k": "v"}


# -- unknown names ----------------------------------------------------------------------------------


def test_unknown_connector_lists_the_available_ones(plugins: Plugins) -> None:
    with pytest.raises(PluginNotFound) as info:
        plugins.connector_class("com.example.NoSuchConnector")
    error = info.value
    assert "com.example.NoSuchConnector" in str(error)
    assert "connectors.file.source.FileStreamSourceConnector" in error.available
    assert "connectors.file.sink.FileStreamSinkConnector" in error.available
    assert all(a in str(error) for a in error.available)
    assert error.available == sorted(error.available)
    assert "transforms.regex_router.RegexRouter" not in error.available


def test_a_plugin_of_another_type_is_not_found(plugins: Plugins) -> None:
    with pytest.raises(PluginNotFound) as info:
        plugins.connector_class("RegexRouter")
    assert "connectors.file.source.FileStreamSourceConnector" in info.value.available
    with pytest.raises(PluginNotFound) as info:
        plugins.find("FileStreamSource", [PluginType.TRANSFORMATION])
    assert info.value.available == plugins.names([PluginType.TRANSFORMATION])


def test_importable_non_plugins_are_not_found(plugins: Plugins) -> None:
    for name in (
        "json.JSONDecoder",
        "os.path",
        "collections:OrderedDict",
        "no_such_module_xyz.Thing",
        "",
        ".",
    ):
        with pytest.raises(PluginNotFound):
            plugins.find(name, CONNECTORS)


def test_every_converter_also_serves_as_header_converter(plugins: Plugins) -> None:
    """As in Kafka, where JsonConverter, StringConverter... implement HeaderConverter too."""
    assert isinstance(plugins.new_header_converter("JsonConverter", {}), JsonConverter)
    assert isinstance(plugins.new_header_converter("StringConverter", {}), StringConverter)
    with pytest.raises(PluginNotFound):
        plugins.new_header_converter("RegexRouter", {})


# -- plugin.path ------------------------------------------------------------------------------------


def test_plugin_path_discovers_a_module_and_a_package(plugin_dir: tuple[Path, str, str]) -> None:
    root, module, package = plugin_dir
    p = Plugins([str(root)])

    lines = p.connector_class("LinesConnector")
    assert lines.__module__ == module
    assert p.connector_class("Lines") is lines
    assert p.connector_class(f"{module}.LinesConnector") is lines
    assert p.connector_class(f"{module}:LinesConnector") is lines
    assert p.connector_class("com.acme.kafka.LinesSourceConnector") is lines
    assert p.connector_class("LinesSourceConnector") is lines
    assert p.connector_class("LinesSource") is lines
    assert issubclass(lines, Connector)
    desc = p.find("Lines", CONNECTORS)
    assert desc.type is PluginType.SOURCE
    assert desc.version == "3.1"

    shout = p.find("Shout", [PluginType.TRANSFORMATION])
    assert shout.name == f"{module}.Shout"
    assert shout.version == "2.5"  # the module's __version__
    transformation = p.new_transformation("Shout", {})
    assert transformation.apply(SourceRecord(topic="t", value="hi")).value == "HI"

    archive = p.connector_class("ArchiveSinkConnector")
    assert archive.__module__ == f"{package}.sinks"
    assert p.find("ArchiveSink", CONNECTORS).type is PluginType.SINK

    odd = p.find("IsOdd", [PluginType.PREDICATE])
    assert odd.cls.__module__ == f"{package}.extra.odd"

    # The built-ins are still there, and nothing was registered twice or under the wrong name.
    assert p.connector_class("FileStreamSource") is FileStreamSourceConnector
    names = p.names(list(PluginType))
    assert len(names) == len(set(names))
    assert f"{module}.RegexRouter" not in names
    assert p.find("RegexRouter", [PluginType.TRANSFORMATION]).cls is RegexRouter
    assert f"{module}.HalfDone" not in names
    assert f"{module}.NotAPlugin" not in names
    assert f"{module}.LinesTask" not in names


def test_plugin_path_survives_broken_modules_and_missing_directories(
    tmp_path: Path, isolated_imports: None, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "plugins"
    good = unique("acme_good")
    broken = unique("acme_broken")
    write(root / f"{broken}.py", "raise RuntimeError('cannot import me')\n")
    write(root / f"{good}.py", MODULE_SOURCE)
    with caplog.at_level(logging.WARNING, logger="connect.runtime.plugins"):
        p = Plugins([str(tmp_path / "does-not-exist"), str(root)])
    assert p.connector_class("LinesConnector").__module__ == good
    messages = " ".join(r.getMessage() for r in caplog.records)
    assert broken in messages
    assert "does-not-exist" in messages


def test_ambiguous_short_names_are_refused_and_full_names_work(
    tmp_path: Path, isolated_imports: None
) -> None:
    """Two plugins with the same class name: Kafka only keeps aliases that name one class."""
    first, second = unique("acme_one"), unique("acme_two")
    write(tmp_path / "a" / f"{first}.py", MODULE_SOURCE)
    write(tmp_path / "b" / f"{second}.py", MODULE_SOURCE)
    p = Plugins([str(tmp_path / "a"), str(tmp_path / "b")])
    assert p.connector_class(f"{first}.LinesConnector").__module__ == first
    assert p.connector_class(f"{second}.LinesConnector").__module__ == second
    for name in ("LinesConnector", "Lines"):
        with pytest.raises(PluginNotFound):
            p.connector_class(name)


# -- module.Class and module:function ---------------------------------------------------------------


def test_a_dotted_class_path_works_without_registration(tmp_path: Path, isolated_imports: None) -> None:
    module = unique("acme_dotted")
    write(tmp_path / "lib" / f"{module}.py", MODULE_SOURCE)
    sys.path.insert(0, str(tmp_path / "lib"))
    p = Plugins(discover=False)
    cls = p.connector_class(f"{module}.LinesConnector")
    assert cls.__module__ == module
    # Found once, it is registered with its short names too.
    assert p.connector_class("Lines") is cls
    assert p.find(f"{module}:Shout", [PluginType.TRANSFORMATION]).cls.__name__ == "Shout"
    assert p.find("transforms.regex_router.RegexRouter", [PluginType.TRANSFORMATION]).cls is RegexRouter


@pytest.mark.parametrize("separator", [":", "."])
def test_a_function_is_a_transformation(tmp_path: Path, isolated_imports: None, separator: str) -> None:
    module = unique("acme_fn")
    write(tmp_path / "lib" / f"{module}.py", MODULE_SOURCE)
    sys.path.insert(0, str(tmp_path / "lib"))
    p = Plugins(discover=False)
    t = p.new_transformation(f"{module}{separator}exclaim", {"ignored": "x"})
    assert isinstance(t, FunctionTransformation)
    record = SourceRecord({"f": 1}, {"o": 1}, "topic", value="hello")
    out = t.apply(record)
    assert out is not None
    assert out.value == "hello!"
    assert record.value == "hello"
    assert p.new_transformation(f"{module}{separator}drop_all", {}).apply(record) is None
    assert "connect.api.transforms.FunctionTransformation" not in p.names([PluginType.TRANSFORMATION])


def test_a_function_name_that_does_not_exist_is_not_found(plugins: Plugins) -> None:
    with pytest.raises(PluginNotFound):
        plugins.new_transformation("transforms.regex_router:no_such_function", {})
    with pytest.raises(PluginNotFound):
        plugins.new_transformation("no_such_module_abc:fn", {})


@pytest.mark.parametrize(
    "name",
    [
        ".³ëC:$",  # a relative module name: importlib raised TypeError (a 500 on the REST API)
        "..Sneaky",
        "antigravity.Fly",  # the standard library is never imported for a plugin name
        "this:that",
        "os.path.join",
    ],
)
def test_names_that_cannot_be_plugins_are_not_found_and_import_nothing(name: str) -> None:
    plugins = Plugins([])
    before = set(sys.modules)
    with pytest.raises(PluginNotFound):
        plugins.find(name, list(PluginType))
    assert not {"antigravity", "this", "webbrowser"} & (set(sys.modules) - before)


def test_discovering_plugins_imports_no_client_library() -> None:
    """The bundled connectors load their clients (boto3, elasticsearch, tweepy, pyarrow) when
    a task starts or a config is validated, not when the worker discovers them: an idle
    worker with all of them was 151 MB with the clients and 94 MB without
    (benchmarks/file_pipeline.py, target <= 120 MB)."""
    import subprocess

    code = textwrap.dedent(
        """
        import sys
        from connect.runtime.plugins import Plugins, PluginType
        plugins = Plugins()
        names = plugins.names([PluginType.SOURCE, PluginType.SINK])
        for wanted in ("connectors.s3.connector.S3SinkConnector",
                       "connectors.elasticsearch.connector.ElasticsearchSinkConnector",
                       "spark_sink.connector.SparkSinkConnector",
                       "connectors.twitter.connector.TwitterSourceConnector"):
            assert wanted in names, (wanted, names)
        print(sorted(m for m in ("boto3", "botocore", "elasticsearch", "elastic_transport",
                                  "tweepy", "pyarrow", "pyspark") if m in sys.modules))
        """
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
