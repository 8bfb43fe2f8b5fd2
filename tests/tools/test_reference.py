"""The generated configuration reference (``python -m sluiceway.reference``, ``make docs``).

The first test is what keeps ``docs/reference`` from drifting: it fails, naming the pages,
whenever a plugin's config model changes without the pages being regenerated.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import pytest

from connect.api import (
    ConfigModel,
    ConnectorConfig,
    Field,
    SecretStr,
    SinkConnector,
    Task,
    importance,
)
from connect.api.config import CommaList
from connect.runtime.config_info import key_defs
from connect.runtime.plugin_config import plugin_key_defs
from connect.runtime.plugins import PluginDesc, Plugins, PluginType
from sluiceway.reference import (
    COMMON_PAGES,
    INDEX,
    MARKER,
    generate,
    key_docs,
    main,
    page_name,
    render_key,
    render_plugin_page,
    shipped_plugins,
    stale_pages,
    valid_values,
)

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "docs" / "reference"


@pytest.fixture(scope="module")
def shipped() -> list[PluginDesc]:
    return shipped_plugins()


@pytest.fixture(scope="module")
def pages(shipped: list[PluginDesc]) -> dict[str, str]:
    return generate(shipped)


def test_committed_pages_equal_freshly_generated_ones(pages: dict[str, str]) -> None:
    stale = stale_pages(COMMITTED, pages)
    assert stale == [], "run `make docs` and commit docs/reference:\n" + "\n".join(stale)


def test_every_shipped_connector_converter_and_transform_has_a_page(shipped: list[PluginDesc]) -> None:
    names = {d.name for d in shipped}
    for expected in (
        "connectors.file.source.FileStreamSourceConnector",
        "connectors.file.sink.FileStreamSinkConnector",
        "connectors.jdbc.query.connector.JdbcSourceConnector",
        "spark_sink.connector.SparkSinkConnector",
        "connect.converters.json.JsonConverter",
        "connect.converters.header.SimpleHeaderConverter",
        "transforms.insert_field.InsertFieldValue",
        "transforms.predicates.TopicNameMatches",
    ):
        assert expected in names
    # Config providers are not served by /connector-plugins/{p}/config, nor documented.
    assert not any(d.type is PluginType.CONFIG_PROVIDER for d in shipped)


def _headings(page: str) -> list[str]:
    return re.findall(r"^### `([^`]+)`$", page, re.M)


def test_pages_document_exactly_the_keys_the_rest_api_serves(
    shipped: list[PluginDesc], pages: dict[str, str]
) -> None:
    # GET /connector-plugins/{p}/config serves plugin_key_defs: the framework's keys (the
    # common page of the connector's kind), then the plugin's own (its page). Pages group
    # keys by their group, so compare what is documented, not the order.
    for desc in shipped:
        documented = _headings(pages[page_name(desc)])
        common = COMMON_PAGES.get(desc.type)
        if common is not None:
            documented = _headings(pages[common[0]]) + documented
        assert sorted(documented) == sorted(d.name for d in plugin_key_defs(desc)), desc.name


def test_the_index_links_every_page(pages: dict[str, str]) -> None:
    linked = set(re.findall(r"\]\(([^)]+\.md)\)", pages[INDEX]))
    assert linked == set(pages) - {INDEX}
    assert all(page.startswith(MARKER) for page in pages.values())


def test_check_names_stale_pages_and_writing_fixes_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(tmp_path)]) == 0
    assert main(["--check", str(tmp_path)]) == 0
    capsys.readouterr()

    edited = tmp_path / "connectors.file.sink.FileStreamSinkConnector.md"
    edited.write_text(edited.read_text() + "hand edit\n")
    (tmp_path / "transforms.filter.Filter.md").unlink()
    gone = tmp_path / "connectors.retired.OldConnector.md"
    gone.write_text(MARKER + "\n# OldConnector\n")
    handwritten = tmp_path / "notes.md"
    handwritten.write_text("# Notes kept by hand\n")

    assert main(["--check", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "3 reference page(s) out of date; run `make docs`:" in err
    assert f"{edited}: differs from the generated page" in err
    assert f"{tmp_path / 'transforms.filter.Filter.md'}: missing" in err
    assert f"{gone}: no shipped plugin has this page any more" in err
    assert "notes.md" not in err

    assert main([str(tmp_path)]) == 0
    assert main(["--check", str(tmp_path)]) == 0
    assert not gone.exists()
    assert handwritten.read_text() == "# Notes kept by hand\n"


def test_a_file_as_outdir_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "f").write_text("")
    assert main([str(tmp_path / "f")]) == 1
    assert "is not a directory" in capsys.readouterr().err


# -- rendering ----------------------------------------------------------------------------------


class _Config(ConnectorConfig):
    target: str = Field(
        alias="target.url",
        min_length=1,
        description="Where records go.",
        json_schema_extra=importance("HIGH", group="Connection"),
    )
    mode: Literal["insert", "upsert"] = Field(
        "insert", alias="write.mode", description="How to write.", json_schema_extra=importance("MEDIUM")
    )
    batch: int = Field(500, alias="batch.size", ge=1, le=5000, description="Rows per batch | write.")
    retries: int = Field(3, alias="max.retries", gt=0)
    fields: CommaList = Field(default_factory=lambda: ["a", "b"], alias="fields")
    secret: SecretStr = Field(SecretStr("hunter2"), alias="password")
    label: str = Field("", alias="label")


class ExampleSinkConnector(SinkConnector):
    """Writes records somewhere, for these tests.

    Only the first paragraph is the summary."""

    Config = _Config
    aliases = ("com.example.ExampleSinkConnector",)

    def version(self) -> str:
        return "9.9"

    def start(self, props: dict[str, str]) -> None:
        pass

    def task_class(self) -> type[Task]:
        raise NotImplementedError

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return []

    def stop(self) -> None:
        pass


def _keys() -> dict[str, str]:
    return {k.definition.name: render_key(k) for k in key_docs(_Config)}


def test_valid_values_in_kafkas_notation() -> None:
    by_name = {k.definition.name: k.valid_values for k in key_docs(_Config)}
    assert by_name == {
        "target.url": "non-empty string",
        "write.mode": "[insert, upsert]",
        "batch.size": "[1,...,5000]",
        "max.retries": "(0,...]",
        "fields": "",
        "password": "",
        "label": "",
    }
    (definition,) = key_defs(_Config)[:1]
    assert valid_values(definition, []) == ""


def test_a_key_is_documented_with_its_definition() -> None:
    keys = _keys()
    assert keys["target.url"] == (
        "### `target.url`\n\nWhere records go.\n\n| | |\n|---|---|\n"
        "| Type | STRING |\n| Default | none (required) |\n| Valid values | `non-empty string` |\n"
        "| Importance | HIGH |\n| Group | Connection |\n"
    )
    assert "| Default | `insert` |" in keys["write.mode"]
    assert "| Default | `a,b` |" in keys["fields"] and "| Type | LIST |" in keys["fields"]
    assert "| Default | `[hidden]` |" in keys["password"] and "hunter2" not in keys["password"]
    assert '| Default | `""` |' in keys["label"]
    # A pipe in the documentation is not a table cell's end.
    assert "Rows per batch | write." in keys["batch.size"]
    assert "| Importance | MEDIUM |" in keys["batch.size"] and "Group" not in keys["batch.size"]


def test_a_connector_page() -> None:
    desc = PluginDesc(ExampleSinkConnector, PluginType.SINK, "tests.example.ExampleSinkConnector")
    page = render_plugin_page(desc)
    assert page.startswith(MARKER + "\n\n# ExampleSinkConnector\n\n")
    assert "`tests.example.ExampleSinkConnector`: sink connector, version 9.9." in page
    assert "Also known as `com.example.ExampleSinkConnector`." in page
    assert "Writes records somewhere, for these tests.\n" in page and "Only the first" not in page
    assert "[every sink connector](common-sink-connector-keys.md)" in page
    # Keys in groups, in the model's order; keys without a group after their own heading.
    assert page.index("## Connection\n") < page.index("### `target.url`") < page.index("## Other keys\n")
    assert _headings(page) == [
        "target.url",
        "write.mode",
        "batch.size",
        "max.retries",
        "fields",
        "password",
        "label",
    ]


def test_a_plugin_without_a_config_model_shows_its_module_documentation(shipped: list[PluginDesc]) -> None:
    (json_converter,) = [d for d in shipped if d.name == "connect.converters.json.JsonConverter"]
    page = render_plugin_page(json_converter)
    assert "declares no config model" in page
    assert "> - ``schemas.enable`` (true): wrap values in the envelope" in page


def test_only_this_distributions_plugins_are_shipped() -> None:
    plugins = Plugins(discover=False)
    plugins.register(ExampleSinkConnector)
    from connectors.file.sink import FileStreamSinkConnector

    plugins.register(FileStreamSinkConnector)
    assert [d.name for d in shipped_plugins(plugins)] == ["connectors.file.sink.FileStreamSinkConnector"]


def test_config_model_subclasses_without_keys_render() -> None:
    class Empty(ConfigModel):
        pass

    assert key_docs(Empty) == []
