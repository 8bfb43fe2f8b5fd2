"""The connector's settings: Debezium's keys and defaults, validation messages, the one task."""

from __future__ import annotations

import pytest

from connect.api import ConfigValidationError
from connectors.jdbc.cdc import PostgresCdcSourceConnector, PostgresCdcSourceTask
from connectors.jdbc.cdc.config import PostgresCdcConfig, PublicationMode, SnapshotMode
from connectors.jdbc.cdc.values import DecimalMode, TimePrecisionMode

REQUIRED = {
    "database.hostname": "db.example",
    "database.user": "cdc",
    "database.dbname": "shop",
    "topic.prefix": "shop-server",
}


def test_debezium_defaults() -> None:
    config = PostgresCdcConfig.parse(REQUIRED)
    assert config.port == 5432
    assert config.password is None
    assert (config.slot_name, config.publication_name, config.plugin_name) == (
        "debezium",
        "dbz_publication",
        "pgoutput",
    )
    assert config.publication_mode is PublicationMode.ALL_TABLES
    assert config.effective_snapshot_mode is SnapshotMode.INITIAL
    assert config.tombstones_on_delete is True
    assert config.skipped == frozenset({"t"})
    assert config.heartbeat_interval_ms == 0
    assert config.heartbeat_topic == "__debezium-heartbeat.shop-server"
    assert config.value_settings().decimal_mode is DecimalMode.PRECISE
    assert config.value_settings().time_precision_mode is TimePrecisionMode.ADAPTIVE
    assert config.slot_drop_on_stop is False
    assert config.include_unknown_datatypes is False


def test_enumerations_are_case_insensitive_and_never_means_no_data() -> None:
    config = PostgresCdcConfig.parse(
        {
            **REQUIRED,
            "snapshot.mode": "Never",
            "decimal.handling.mode": "STRING",
            "skipped.operations": "none",
        }
    )
    assert config.effective_snapshot_mode is SnapshotMode.NO_DATA
    assert config.value_settings().decimal_mode is DecimalMode.STRING
    assert config.skipped == frozenset()


def test_filters_follow_the_lists_anchored_and_case_insensitive() -> None:
    filters = PostgresCdcConfig.parse(
        {
            **REQUIRED,
            "table.include.list": "public\\.orders, inv\\..*",
            "column.exclude.list": "public.orders.secret",
        }
    ).filters()
    assert filters.captures_table("public", "orders") and filters.captures_table("INV", "stock")
    assert not filters.captures_table("public", "orders_archive")
    assert not filters.captures_table("pg_catalog", "pg_class")
    assert not filters.captures_column("public", "orders", "secret")
    assert filters.captures_column("public", "orders", "id")


@pytest.mark.parametrize(
    ("props", "key", "message"),
    [
        ({"plugin.name": "decoderbufs"}, "plugin.name", "only pgoutput"),
        ({"table.include.list": "a", "table.exclude.list": "b"}, "table.exclude.list", "cannot both be set"),
        ({"column.include.list": "a(b"}, "column.include.list", "invalid regular expression"),
        ({"skipped.operations": "c,x"}, "skipped.operations", "unknown operation x"),
        ({"slot.name": "Bad-Name"}, "slot.name", "should match pattern"),
        ({"topic.prefix": "a b"}, "topic.prefix", "should match pattern"),
        ({"snapshot.mode": "sometimes"}, "snapshot.mode", "Invalid value sometimes"),
        ({"publication.autocreate.mode": "all"}, "publication.autocreate.mode", "Invalid value all"),
        ({"database.port": "0"}, "database.port", "greater than or equal to 1"),
    ],
)
def test_invalid_settings_are_reported_against_their_key(
    props: dict[str, str], key: str, message: str
) -> None:
    issues = PostgresCdcConfig.issues({**REQUIRED, **props})
    assert [i.key for i in issues] == [key], issues
    assert message in issues[0].message


def test_required_keys_and_secret_password() -> None:
    issues = {i.key for i in PostgresCdcConfig.issues({"database.password": "s3cret"})}
    assert issues == {"database.hostname", "database.user", "database.dbname", "topic.prefix"}
    with pytest.raises(ConfigValidationError) as caught:
        PostgresCdcConfig.parse({**REQUIRED, "database.password": "s3cret", "database.port": "x"})
    assert "s3cret" not in str(caught.value)
    config = PostgresCdcConfig.parse({**REQUIRED, "database.password": "s3cret"})
    assert "s3cret" not in repr(config)


def test_the_connector_answers_to_debeziums_class_name_and_makes_one_task() -> None:
    assert "io.debezium.connector.postgresql.PostgresConnector" in PostgresCdcSourceConnector.aliases
    connector = PostgresCdcSourceConnector()
    connector.start({**REQUIRED, "tasks.max": "4"})
    assert connector.task_class() is PostgresCdcSourceTask
    assert connector.task_configs(4) == [{**REQUIRED, "tasks.max": "4"}]
    assert connector.validate({**REQUIRED, "plugin.name": "wal2json"})[0].key == "plugin.name"
