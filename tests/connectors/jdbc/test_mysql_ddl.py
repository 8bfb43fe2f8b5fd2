"""DDL statements applied to the schema catalog (pure; the real server judges in test_mysql_schema)."""

from __future__ import annotations

import pytest

from connectors.jdbc.mysql.schema import DdlError, MySqlColumn, MySqlTable, SchemaCatalog

SHOW_CREATE = """CREATE TABLE `t1` (
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `u` bigint(20) unsigned zerofill DEFAULT NULL,
  `name` varchar(100) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NOT NULL DEFAULT 'x''y',
  `d` decimal(10,2) DEFAULT 0.00,
  `e` enum('a','b,c','d''e') DEFAULT 'a',
  `s` set('x','y') DEFAULT NULL,
  `ts` timestamp(3) NOT NULL DEFAULT current_timestamp(3) ON UPDATE current_timestamp(3),
  `b` bit(5) DEFAULT b'101',
  `j` longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT NULL CHECK (json_valid(`j`)),
  `g` int(11) GENERATED ALWAYS AS (`id` + 1) VIRTUAL,
  `p` point DEFAULT NULL,
  `c` char(3) COMMENT 'hello',
  PRIMARY KEY (`id`),
  UNIQUE KEY `n` (`name`),
  KEY `k` (`d`,`e`),
  CONSTRAINT `fk` FOREIGN KEY (`id`) REFERENCES `other` (`id`) ON DELETE CASCADE
) ENGINE=InnoDB AUTO_INCREMENT=5 DEFAULT CHARSET=latin1 COLLATE=latin1_swedish_ci COMMENT='hi'"""


def created(ddl: str, database: str | None = "db") -> MySqlTable:
    catalog = SchemaCatalog()
    changes = catalog.apply(ddl, database)
    assert [c.type for c in changes] == ["CREATE"]
    table = changes[0].table
    assert table is not None
    return table


def test_show_create_table_output_becomes_the_table() -> None:
    table = created(SHOW_CREATE)
    assert table.id == "db.t1"
    assert table.primary_key == ("id",)
    assert table.default_charset == "latin1"
    assert table.comment == "hi"
    assert [c.position for c in table.columns] == list(range(1, 13))
    col = {c.name: c for c in table.columns}
    expected_id = MySqlColumn("id", "INT", 1, length=11, optional=False, auto_increment=True, jdbc_type=4)
    assert col["id"] == expected_id.__class__(**{**expected_id.__dict__, "type_expression": "INT"})
    assert (col["u"].type_name, col["u"].length, col["u"].unsigned, col["u"].zerofill) == (
        "BIGINT",
        20,
        True,
        True,
    )
    assert col["u"].default == "NULL"
    name = col["name"]
    assert (name.charset, name.collation, name.optional, name.default) == (
        "utf8mb4",
        "utf8mb4_unicode_ci",
        False,
        "'x''y'",
    )
    assert (col["d"].length, col["d"].scale, col["d"].default) == (10, 2, "0.00")
    assert col["e"].enum_values == ("a", "b,c", "d'e")
    assert col["s"].enum_values == ("x", "y")
    ts = col["ts"]
    assert (ts.type_name, ts.length, ts.default, ts.on_update) == (
        "TIMESTAMP",
        3,
        "current_timestamp(3)",
        "current_timestamp(3)",
    )
    assert (col["b"].length, col["b"].default) == (5, "b'101'")
    assert (col["j"].type_name, col["j"].charset) == ("LONGTEXT", "utf8mb4")
    assert col["g"].generated
    assert col["p"].type_name == "POINT"
    assert (col["c"].length, col["c"].comment, col["c"].default) == (3, "hello", "NULL")


def test_table_ddl_that_cannot_be_read_names_the_statement() -> None:
    for ddl in (
        "CREATE TABLE t (a)",
        "CREATE TABLE t (a int",
        "CREATE TABLE t a int",
        "CREATE TABLE t (a int, b)",
    ):
        with pytest.raises(DdlError, match="CREATE TABLE t"):
            SchemaCatalog().apply(ddl, "db")
