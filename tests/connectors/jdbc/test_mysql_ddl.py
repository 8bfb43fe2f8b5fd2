"""DDL statements applied to the schema catalog (pure; the real server judges in test_mysql_schema)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connectors.jdbc.mysql.ddl import truncated_tables
from connectors.jdbc.mysql.ddl_columns import JDBC_TYPES
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


@pytest.mark.parametrize(
    ("sql_type", "expected"),
    [
        ("integer", ("INT", None, None, False, None)),
        ("int1", ("TINYINT", None, None, False, None)),
        ("int2 unsigned", ("SMALLINT", None, None, True, None)),
        ("middleint(6)", ("MEDIUMINT", 6, None, False, None)),
        ("int8 zerofill", ("BIGINT", None, None, True, None)),
        ("bool", ("BOOLEAN", None, None, False, None)),
        ("boolean", ("BOOLEAN", None, None, False, None)),
        ("tinyint(1)", ("TINYINT", 1, None, False, None)),
        ("dec", ("DECIMAL", 10, 0, False, None)),
        ("numeric(7)", ("DECIMAL", 7, 0, False, None)),
        ("fixed(9,4) unsigned", ("DECIMAL", 9, 4, True, None)),
        ("real", ("DOUBLE", None, None, False, None)),
        ("double precision(10,2)", ("DOUBLE", 10, 2, False, None)),
        ("float(7,3) unsigned", ("FLOAT", 7, 3, True, None)),
        ("float(24)", ("FLOAT", None, None, False, None)),
        ("float(25)", ("DOUBLE", None, None, False, None)),
        ("char", ("CHAR", 1, None, False, None)),
        ("character varying(12)", ("VARCHAR", 12, None, False, None)),
        ("national char(3)", ("CHAR", 3, None, False, "utf8mb3")),
        ("national varchar(4)", ("VARCHAR", 4, None, False, "utf8mb3")),
        ("national character varying(5)", ("VARCHAR", 5, None, False, "utf8mb3")),
        ("nvarchar(6)", ("VARCHAR", 6, None, False, "utf8mb3")),
        ("varchar(5) ascii", ("VARCHAR", 5, None, False, "latin1")),
        ("text unicode", ("TEXT", None, None, False, "ucs2")),
        ("varchar(9) collate utf8mb4_bin", ("VARCHAR", 9, None, False, "utf8mb4")),
        ("char(5) binary", ("CHAR", 5, None, False, None)),
        ("char(5) byte", ("BINARY", 5, None, False, None)),
        ("varchar(5) character set binary", ("VARBINARY", 5, None, False, None)),
        ("text charset binary", ("BLOB", None, None, False, None)),
        ("binary", ("BINARY", 1, None, False, None)),
        ("bit", ("BIT", 1, None, False, None)),
        ("long", ("MEDIUMTEXT", None, None, False, None)),
        ("long varchar", ("MEDIUMTEXT", None, None, False, None)),
        ("long varbinary", ("MEDIUMBLOB", None, None, False, None)),
        ("time(4)", ("TIME", 4, None, False, None)),
        ("timestamp", ("TIMESTAMP", None, None, False, None)),
        ("year(4)", ("YEAR", 4, None, False, None)),
        ("json", ("JSON", None, None, False, None)),
        ("geomcollection", ("GEOMETRYCOLLECTION", None, None, False, None)),
        ("point srid 4326", ("POINT", None, None, False, None)),
        ("inet6", ("INET6", None, None, False, None)),
        ("varchar(10) compressed", ("VARCHAR", 10, None, False, None)),
        ("int column_format fixed storage disk", ("INT", None, None, False, None)),
    ],
)
def test_type_spellings_normalise_as_mysql_names_them(sql_type: str, expected: tuple[object, ...]) -> None:
    column = created(f"CREATE TABLE t (c {sql_type})").columns[0]
    assert (column.type_name, column.length, column.scale, column.unsigned, column.charset) == expected


def test_jdbc_types_follow_debezium() -> None:
    table = created(
        "CREATE TABLE t (a int, b varchar(3), c datetime, d timestamp, e decimal(5,2), f json, g bool)"
    )
    assert [c.jdbc_type for c in table.columns] == [4, 12, 93, 2014, 3, 1111, 16]


def test_serial_is_an_unsigned_not_null_auto_increment_bigint() -> None:
    column = created("CREATE TABLE t (id serial)").columns[0]
    assert (column.type_name, column.unsigned, column.optional, column.auto_increment, column.default) == (
        "BIGINT",
        True,
        False,
        True,
        None,
    )


def test_default_expressions_keep_their_text() -> None:
    table = created(
        "CREATE TABLE t (a int DEFAULT -1, b varchar(5) DEFAULT _utf8mb4'x', c blob DEFAULT x'0A',"
        ' d datetime DEFAULT now(), e int DEFAULT (1 + 2), f int NOT NULL, g varchar(3) DEFAULT "q",'
        " h timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP, i bit(2) DEFAULT b'01')"
    )
    assert [c.default for c in table.columns] == [
        "-1",
        "_utf8mb4'x'",
        "x'0A'",
        "now()",
        "(1 + 2)",
        None,
        '"q"',
        "CURRENT_TIMESTAMP",
        "b'01'",
    ]
    assert table.columns[7].on_update == "CURRENT_TIMESTAMP"


def test_keys_and_constraints_are_not_columns() -> None:
    table = created(
        "CREATE TABLE t (a int, b varchar(20), c int,"
        " CONSTRAINT `pk` PRIMARY KEY USING BTREE (`b`(10), a DESC) COMMENT 'key',"
        " UNIQUE INDEX u (c), FULLTEXT KEY f (b), SPATIAL INDEX s (c), INDEX (c), KEY k USING HASH (c),"
        " CONSTRAINT fk FOREIGN KEY (c) REFERENCES o (x) ON DELETE SET NULL, CHECK (c > 0),"
        " CONSTRAINT ck CHECK (a < 5))"
    )
    assert [c.name for c in table.columns] == ["a", "b", "c"]
    assert table.primary_key == ("b", "a")
    assert [c.optional for c in table.columns] == [False, False, True]


def test_executable_and_ordinary_comments() -> None:
    table = created(
        "/* leading */ CREATE TABLE `t` ( -- a comment, with a comma and a quote: it's\n"
        "  `a` int /*!50606 COMMENT 'executed' */, # hash comment ) isn't closing\n"
        "  `b` varchar(3) /*M!100301 COMPRESSED*/ /* ignored, comment */\n"
        ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 WITH SYSTEM VERSIONING\n"
        "/*!50100 PARTITION BY RANGE (a) (PARTITION p0 VALUES LESS THAN (10) ENGINE = InnoDB) */"
    )
    assert [(c.name, c.comment) for c in table.columns] == [("a", "executed"), ("b", None)]
    assert table.default_charset == "utf8mb4"


def test_names_are_quoted_qualified_and_case_insensitive() -> None:
    catalog = SchemaCatalog()
    catalog.apply("CREATE TABLE `My Db`.`Odd ``Name``` (`Col` int, `select` int)", None)
    table = catalog.table("my db", "ODD `NAME`")
    assert table is not None
    assert (table.database, table.name, table.id) == ("My Db", "Odd `Name`", "My Db.Odd `Name`")
    assert table.column("COL") is not None and table.column("Select") is not None
    catalog.apply("ALTER TABLE `MY DB`.`odd ``name``` ADD COLUMN x int AFTER col", None)
    table = catalog.table("My Db", "Odd `Name`")
    assert table is not None and [c.name for c in table.columns] == ["Col", "x", "select"]


def test_unqualified_table_without_a_database_is_an_error() -> None:
    with pytest.raises(DdlError, match="no database"):
        SchemaCatalog().apply("CREATE TABLE t (a int)", None)


def test_several_statements_and_use() -> None:
    catalog = SchemaCatalog()
    changes = catalog.apply(
        "CREATE DATABASE a; USE a; CREATE TABLE t (x int); USE b; CREATE TABLE t (y int);", None
    )
    assert [c.id for c in changes] == ["a.t", "b.t"]


def test_create_like_if_not_exists_and_or_replace() -> None:
    catalog = SchemaCatalog()
    catalog.apply("CREATE TABLE src (a int PRIMARY KEY, b text) DEFAULT CHARSET latin1", "db")
    (change,) = catalog.apply("CREATE TABLE IF NOT EXISTS copy LIKE src", "db")
    (paren,) = catalog.apply("CREATE TABLE other.copy2 (LIKE db.src)", "db")
    source = catalog.table("db", "src")
    assert change.table is not None and paren.table is not None and source is not None
    assert change.table.columns == source.columns == paren.table.columns
    assert (change.table.id, change.table.primary_key, change.table.default_charset) == (
        "db.copy",
        ("a",),
        "latin1",
    )
    assert catalog.apply("CREATE TABLE IF NOT EXISTS copy (z int)", "db") == []
    assert catalog.apply("CREATE TABLE unknown_copy LIKE not_captured", "db") == []
    (replaced,) = catalog.apply("CREATE OR REPLACE TABLE copy (z int)", "db")
    assert replaced.type == "CREATE" and [c.name for c in replaced.table.columns] == ["z"]  # type: ignore[union-attr]


def test_database_default_charset_reaches_its_tables() -> None:
    catalog = SchemaCatalog()
    catalog.apply("CREATE DATABASE IF NOT EXISTS d DEFAULT CHARACTER SET = utf8mb4", None)
    assert created_in(catalog, "CREATE TABLE d.t (a varchar(3))").default_charset == "utf8mb4"
    catalog.apply("ALTER DATABASE d COLLATE latin1_swedish_ci", None)
    assert created_in(catalog, "CREATE TABLE d.u (a varchar(3))").default_charset == "latin1"


def created_in(catalog: SchemaCatalog, ddl: str) -> MySqlTable:
    (change,) = catalog.apply(ddl, None)
    assert change.table is not None
    return change.table


def alter(catalog: SchemaCatalog, ddl: str) -> MySqlTable:
    (change,) = catalog.apply(ddl, "db")
    assert change.type == "ALTER" and change.table is not None
    return change.table


def test_alter_table_column_actions() -> None:
    catalog = SchemaCatalog()
    catalog.apply("CREATE TABLE t (a int, b varchar(3), c int)", "db")
    table = alter(catalog, "ALTER TABLE t ADD COLUMN d int FIRST, ADD e int AFTER b, ADD (f int, g text)")
    assert [(c.name, c.position) for c in table.columns] == [
        ("d", 1), ("a", 2), ("b", 3), ("e", 4), ("c", 5), ("f", 6), ("g", 7),
    ]  # fmt: skip
    table = alter(catalog, "ALTER TABLE t DROP COLUMN d, DROP g, MODIFY b varchar(30) NOT NULL AFTER c")
    assert [(c.name, c.type_name, c.length, c.optional) for c in table.columns] == [
        ("a", "INT", None, True), ("e", "INT", None, True), ("c", "INT", None, True),
        ("b", "VARCHAR", 30, False), ("f", "INT", None, True),
    ]  # fmt: skip
    table = alter(catalog, "ALTER TABLE t CHANGE COLUMN a aa bigint unsigned FIRST, RENAME COLUMN e TO ee")
    assert [c.name for c in table.columns] == ["aa", "ee", "c", "b", "f"]
    assert (table.columns[0].type_name, table.columns[0].unsigned) == ("BIGINT", True)
    table = alter(catalog, "ALTER TABLE t ALTER COLUMN c SET DEFAULT 42, ALTER f DROP DEFAULT")
    assert (table.column("c").default, table.column("f").default) == ("42", "NULL")  # type: ignore[union-attr]


def test_alter_table_keys_options_and_rename() -> None:
    catalog = SchemaCatalog()
    catalog.apply("CREATE TABLE t (a int, b varchar(3), c text) CHARSET latin1", "db")
    table = alter(
        catalog, "ALTER TABLE t ADD CONSTRAINT pk PRIMARY KEY USING BTREE (b, a), ADD INDEX i (c(5))"
    )
    assert table.primary_key == ("b", "a") and not table.column("a").optional  # type: ignore[union-attr]
    table = alter(catalog, "ALTER TABLE t CHANGE b bb varchar(3), DROP COLUMN a")
    assert table.primary_key == ("bb",)
    table = alter(catalog, "ALTER TABLE t DROP PRIMARY KEY, ENGINE=InnoDB, ALGORITHM=INPLACE, LOCK=NONE")
    assert table.primary_key == ()
    table = alter(catalog, "ALTER TABLE t CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")
    assert table.default_charset == "utf8mb4"
    assert [(c.charset, c.collation) for c in table.columns] == [("utf8mb4", "utf8mb4_bin")] * 2
    assert alter(catalog, "ALTER TABLE t DEFAULT CHARSET = ascii, COMMENT 'x'").default_charset == "ascii"
    (change,) = catalog.apply("ALTER TABLE t RENAME TO other.t2", "db")
    assert (change.type, change.id, change.previous_id) == ("ALTER", "other.t2", "db.t")
    assert catalog.table("db", "t") is None and catalog.table("other", "t2") is not None
    (change,) = catalog.apply("ALTER TABLE other.t2 RENAME AS t3, ADD COLUMN z int", "db")
    assert change.id == "db.t3" and [c.name for c in change.table.columns] == ["bb", "c", "z"]  # type: ignore[union-attr]


def test_alter_table_edge_cases() -> None:
    catalog = SchemaCatalog()
    catalog.apply("CREATE TABLE t (a int, b int)", "db")
    assert catalog.apply("ALTER TABLE not_captured ADD COLUMN x int", "db") == []
    for statement in (
        "ALTER TABLE t DROP COLUMN IF EXISTS zz",
        "ALTER TABLE t ADD COLUMN IF NOT EXISTS a int",
        "ALTER TABLE t MODIFY COLUMN IF EXISTS zz int FIRST",
        "ALTER TABLE t CHANGE IF EXISTS zz yy int AFTER b",
        "ALTER ONLINE TABLE t ADD INDEX (a), RENAME INDEX x TO y",
    ):
        assert [c.name for c in alter(catalog, statement).columns] == ["a", "b"], statement
    with pytest.raises(DdlError, match=r"no column 'zz'.*ALTER TABLE t DROP zz"):
        catalog.apply("ALTER TABLE t DROP zz", "db")


def test_rename_table_applies_left_to_right() -> None:
    catalog = SchemaCatalog()
    catalog.apply("CREATE TABLE a (x int); CREATE TABLE b (y int)", "db")
    changes = catalog.apply("RENAME TABLE a TO tmp, b TO a, db.tmp TO other.b", "db")
    assert [(c.id, c.previous_id) for c in changes] == [
        ("db.tmp", "db.a"),
        ("db.a", "db.b"),
        ("other.b", "db.tmp"),
    ]
    assert [c.name for c in catalog.table("db", "a").columns] == ["y"]  # type: ignore[union-attr]
    assert [c.name for c in catalog.table("other", "b").columns] == ["x"]  # type: ignore[union-attr]
    assert catalog.apply("RENAME TABLE not_captured TO elsewhere", "db") == []


def test_drop_table_truncate_and_databases() -> None:
    catalog = SchemaCatalog()
    catalog.apply("CREATE TABLE a (x int); CREATE TABLE b (y int); CREATE TABLE d2.c (z int)", "db")
    assert catalog.apply("TRUNCATE TABLE a", "db") == []
    assert catalog.apply("DROP TEMPORARY TABLE IF EXISTS a", "db") == []
    assert catalog.apply("DROP TABLE IF EXISTS nope, other.nope RESTRICT", "db") == []
    changes = catalog.apply("DROP TABLE IF EXISTS `a`, nope /* generated by server */", "db")
    assert [(c.type, c.id, c.table) for c in changes] == [("DROP", "db.a", None)]
    assert [c.id for c in catalog.apply("DROP SCHEMA IF EXISTS db", None)] == ["db.b"]
    assert [t.id for t in catalog.tables()] == ["d2.c"]


@pytest.mark.parametrize(
    "statement",
    [
        "BEGIN",
        "COMMIT",
        "XA START 'x'",
        "GRANT SELECT ON db.* TO 'u'@'%'",
        "CREATE USER 'u'@'%' IDENTIFIED BY 'p'",
        "FLUSH PRIVILEGES",
        "SET GLOBAL binlog_format = 'ROW'",
        "CREATE INDEX i ON t (c)",
        "DROP INDEX i ON t",
        "CREATE TEMPORARY TABLE tmp (a int)",
        "CREATE VIEW v AS SELECT * FROM t",
        "CREATE DEFINER=`root`@`%` PROCEDURE p() BEGIN SELECT 1; DROP TABLE t; END",
        "CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.a = 1",
        "INSERT INTO t VALUES (1)",
        "ANALYZE TABLE t",
        "/*!40101 SET NAMES utf8mb4 */",
        "",
    ],
)
def test_statements_that_change_no_table(statement: str) -> None:
    catalog = SchemaCatalog()
    catalog.apply("CREATE TABLE t (a int, c int)", "db")
    before = catalog.tables()
    assert catalog.apply(statement, "db") == []
    assert catalog.tables() == before


def test_apply_on_a_copy_leaves_the_original() -> None:
    catalog = SchemaCatalog()
    catalog.apply("CREATE TABLE t (a int)", "db")
    copy = catalog.copy()
    copy.apply("ALTER TABLE t ADD b int; CREATE TABLE u (x int)", "db")
    assert [c.name for c in catalog.table("db", "t").columns] == ["a"]  # type: ignore[union-attr]
    assert catalog.table("db", "u") is None and copy.table("db", "u") is not None


def _quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


_names = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=8).filter(
    lambda n: n == n.strip()  # MySQL refuses names ending in spaces
)
_texts = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=6)
_INTEGERS = ("TINYINT", "SMALLINT", "MEDIUMINT", "INT", "BIGINT")
_TEXTS = ("TINYTEXT", "TEXT", "MEDIUMTEXT", "LONGTEXT")
_BLOBS = ("TINYBLOB", "BLOB", "MEDIUMBLOB", "LONGBLOB")


@st.composite
def _columns(draw: st.DrawFn) -> tuple[str, MySqlColumn]:
    """A random column definition and the column it describes."""
    name = draw(_names)
    family = draw(
        st.sampled_from(["int", "decimal", "float", "char", "text", "blob", "enum", "time", "plain", "bit"])
    )
    kwargs: dict[str, Any] = {}
    sql_default: str | None = None
    if family == "int":
        type_name = draw(st.sampled_from(_INTEGERS))
        length = draw(st.none() | st.integers(1, 255))
        zerofill = draw(st.booleans())
        unsigned = zerofill or draw(st.booleans())
        sql = type_name.lower() + (f"({length})" if length else "") + (" unsigned" if unsigned else "")
        sql += " zerofill" if zerofill else ""
        kwargs.update(length=length, unsigned=unsigned, zerofill=zerofill)
        if draw(st.booleans()):
            sql_default = str(draw(st.integers(-100, 100)))
        elif draw(st.booleans()):
            kwargs["auto_increment"] = True
    elif family == "decimal":
        precision = draw(st.integers(1, 65))
        scale = draw(st.integers(0, min(precision, 30)))
        type_name, sql = "DECIMAL", f"decimal({precision},{scale})"
        kwargs.update(length=precision, scale=scale)
    elif family == "float":
        type_name = draw(st.sampled_from(["FLOAT", "DOUBLE"]))
        sql = type_name.lower()
        if draw(st.booleans()):
            precision = draw(st.integers(1, 53))
            scale = draw(st.integers(0, min(precision, 30)))
            sql += f"({precision},{scale})"
            kwargs.update(length=precision, scale=scale)
    elif family == "char":
        type_name = draw(st.sampled_from(["CHAR", "VARCHAR", "BINARY", "VARBINARY"]))
        length = draw(st.integers(0, 255))
        sql = f"{type_name.lower()}({length})"
        kwargs["length"] = length
        if type_name in ("CHAR", "VARCHAR"):
            if draw(st.booleans()):
                charset = draw(st.sampled_from(["utf8mb4", "latin1"]))
                sql += f" CHARACTER SET {charset}"
                kwargs["charset"] = charset
            if draw(st.booleans()):
                collation = draw(st.sampled_from(["utf8mb4_bin", "latin1_swedish_ci"]))
                sql += f" COLLATE {collation}"
                kwargs["collation"] = collation
                kwargs.setdefault("charset", collation.split("_")[0])
        if draw(st.booleans()):
            sql_default = _quote(draw(_texts))
    elif family in ("text", "blob"):
        type_name = draw(st.sampled_from(_TEXTS if family == "text" else _BLOBS))
        sql = type_name.lower()
    elif family == "enum":
        type_name = draw(st.sampled_from(["ENUM", "SET"]))
        members = draw(st.lists(_texts, min_size=1, max_size=4))
        sql = f"{type_name.lower()}({','.join(_quote(m) for m in members)})"
        kwargs["enum_values"] = tuple(members)
        if draw(st.booleans()):
            sql_default = _quote(draw(st.sampled_from(members)))
    elif family == "time":
        type_name = draw(st.sampled_from(["TIME", "DATETIME", "TIMESTAMP"]))
        fsp = draw(st.none() | st.integers(0, 6))
        sql = type_name.lower() + ("" if fsp is None else f"({fsp})")
        kwargs["length"] = fsp
        if draw(st.booleans()):
            sql_default = draw(
                st.sampled_from(["current_timestamp", "CURRENT_TIMESTAMP(6)", "now()", "NULL"])
            )
    elif family == "bit":
        type_name, width = "BIT", draw(st.integers(1, 64))
        sql = f"bit({width})"
        kwargs["length"] = width
        if draw(st.booleans()):
            sql_default = "b'" + draw(st.text("01", min_size=1, max_size=width)) + "'"
    else:
        type_name = draw(st.sampled_from(["DATE", "YEAR", "JSON", "GEOMETRY", "POINT", "BOOLEAN"]))
        sql = type_name.lower()
    nulls = ["", " NOT NULL"] if kwargs.get("auto_increment") else ["", " NULL", " NOT NULL"]
    null = draw(st.sampled_from(nulls))
    optional = null != " NOT NULL"
    sql += null
    if sql_default is not None:
        sql += f" DEFAULT {sql_default}"
    if kwargs.get("auto_increment"):
        sql += " AUTO_INCREMENT"
    comment = draw(st.none() | _texts)
    if comment is not None:
        sql += f" COMMENT {_quote(comment)}"
    default = sql_default
    if default is None and optional and not kwargs.get("auto_increment"):
        default = "NULL"  # MySQL's implied DEFAULT NULL
    escaped = name.replace("`", "``")
    column = MySqlColumn(
        name=name,
        type_name=type_name,
        position=1,
        optional=optional,
        default=default,
        comment=comment,
        jdbc_type=JDBC_TYPES.get(type_name, 1111),
        type_expression=type_name,
        **kwargs,
    )
    return f"`{escaped}` {sql}", column


@settings(max_examples=300)
@given(definition=_columns())
def test_random_column_definitions_parse_back_to_their_column(definition: tuple[str, MySqlColumn]) -> None:
    sql, column = definition
    table = created(f"CREATE TABLE t ({sql})")
    assert table.columns == (column,), sql


_ALTER_TYPES = (
    "int",
    "bigint unsigned",
    "varchar(12) NOT NULL",
    "decimal(9,3) DEFAULT 1.5",
    "enum('x','y')",
    "text",
)


@settings(max_examples=200)
@given(data=st.data())
def test_random_alters_equal_the_table_created_directly(data: st.DataObject) -> None:
    """Replaying ALTERs gives the model CREATE TABLE gives for the resulting column list."""
    columns: list[tuple[str, str]] = [("c0", "int"), ("c1", "text")]
    catalog = SchemaCatalog()
    catalog.apply("CREATE TABLE t (`c0` int, `c1` text)", "db")
    for step in range(data.draw(st.integers(1, 8))):
        names = [n for n, _ in columns]
        fresh, kind = f"n{step}", data.draw(st.sampled_from(["add", "drop", "modify", "change", "rename"]))
        new_type = data.draw(st.sampled_from(_ALTER_TYPES))
        subject = data.draw(st.sampled_from(names))
        if kind == "drop" and len(columns) == 1:
            kind = "add"
        others = [n for n in names if n != subject] if kind in ("modify", "change") else names
        where = data.draw(st.sampled_from(["", "FIRST"] + [f"AFTER `{n.upper()}`" for n in others]))
        if kind == "add":
            statement, entry, index = (
                f"ADD COLUMN `{fresh}` {new_type} {where}",
                (fresh, new_type),
                len(columns),
            )
        elif kind == "drop":
            columns.pop(names.index(subject))
            catalog.apply(f"ALTER TABLE t DROP COLUMN `{subject.upper()}`", "db")
            continue
        elif kind == "rename":
            columns[names.index(subject)] = (fresh, columns[names.index(subject)][1])
            catalog.apply(f"ALTER TABLE t RENAME COLUMN `{subject}` TO `{fresh}`", "db")
            continue
        else:
            index = names.index(subject)
            columns.pop(index)
            new_name = subject if kind == "modify" else fresh
            head = "MODIFY" if kind == "modify" else f"CHANGE `{subject}`"
            statement, entry = f"{head} `{new_name}` {new_type} {where}", (new_name, new_type)
        if where == "FIRST":
            index = 0
        elif where:
            index = [n for n, _ in columns].index(where.split("`")[1].lower()) + 1
        columns.insert(index, entry)
        catalog.apply(f"ALTER TABLE t {statement}", "db")
    direct = SchemaCatalog()
    direct.apply("CREATE TABLE t (" + ", ".join(f"`{n}` {sql}" for n, sql in columns) + ")", "db")
    assert catalog.table("db", "t") == direct.table("db", "t")


def test_drop_table_forms() -> None:
    catalog = SchemaCatalog()
    catalog.apply("CREATE TABLE a (x int); CREATE TABLE d2.b (y int); CREATE TABLE c (z int)", "db")
    assert [c.id for c in catalog.apply("DROP TABLE a WAIT 3", "db")] == ["db.a"]
    assert [c.id for c in catalog.apply("DROP TABLES `d2`.`b`, c NOWAIT CASCADE", "db")] == ["d2.b", "db.c"]
    with pytest.raises(DdlError, match="unexpected 'junk'"):
        catalog.apply("DROP TABLE x junk", "db")


MYSQL8_SHOW_CREATE = """CREATE TABLE `orders` (
  `id` bigint unsigned NOT NULL AUTO_INCREMENT,
  `uuid` binary(16) NOT NULL DEFAULT (uuid_to_bin(uuid())),
  `customer_id` int NOT NULL,
  `status` enum('new','paid') CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci NOT NULL DEFAULT 'new',
  `total` decimal(12,2) NOT NULL DEFAULT '0.00',
  `note` text COLLATE utf8mb4_unicode_ci,
  `loc` point NOT NULL /*!80003 SRID 4326 */,
  `secret` varchar(20) DEFAULT NULL /*!80023 INVISIBLE */,
  `updated_at` timestamp NULL DEFAULT NULL ON UPDATE CURRENT_TIMESTAMP,
  `total_x2` decimal(13,2) GENERATED ALWAYS AS ((`total` * 2)) STORED NOT NULL,
  PRIMARY KEY (`id`),
  UNIQUE KEY `uuid` (`uuid`),
  SPATIAL KEY `loc` (`loc`),
  CONSTRAINT `fk_customer` FOREIGN KEY (`customer_id`) REFERENCES `customers` (`id`) ON DELETE CASCADE,
  CONSTRAINT `orders_chk_1` CHECK ((`total` >= 0))
) ENGINE=InnoDB AUTO_INCREMENT=1001 DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci ROW_FORMAT=DYNAMIC
/*!50100 PARTITION BY HASH (`id`)
PARTITIONS 4 */"""


def test_mysql8_show_create_table_output() -> None:
    table = created(MYSQL8_SHOW_CREATE, "shop")
    assert (table.id, table.primary_key, table.default_charset) == ("shop.orders", ("id",), "utf8mb4")
    assert [(c.name, c.type_name, c.length, c.scale, c.unsigned, c.optional) for c in table.columns] == [
        ("id", "BIGINT", None, None, True, False),
        ("uuid", "BINARY", 16, None, False, False),
        ("customer_id", "INT", None, None, False, False),
        ("status", "ENUM", None, None, False, False),
        ("total", "DECIMAL", 12, 2, False, False),
        ("note", "TEXT", None, None, False, True),
        ("loc", "POINT", None, None, False, False),
        ("secret", "VARCHAR", 20, None, False, True),
        ("updated_at", "TIMESTAMP", None, None, False, True),
        ("total_x2", "DECIMAL", 13, 2, False, False),
    ]
    assert [c.default for c in table.columns] == [
        None, "(uuid_to_bin(uuid()))", None, "'new'", "'0.00'", "NULL", None, "NULL", "NULL", None,
    ]  # fmt: skip
    assert (table.columns[5].charset, table.columns[5].collation) == ("utf8mb4", "utf8mb4_unicode_ci")
    assert table.columns[8].on_update == "CURRENT_TIMESTAMP" and table.columns[9].generated


def test_mysqldump_and_show_create_database_text() -> None:
    catalog = SchemaCatalog()
    catalog.apply(
        "CREATE DATABASE /*!32312 IF NOT EXISTS*/ `inv` /*!40100 DEFAULT CHARACTER SET latin1 */", None
    )
    catalog.apply(
        "CREATE DATABASE `shop` /*!40100 DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin */", None
    )
    assert (catalog.database_charset("INV"), catalog.database_charset("shop")) == ("latin1", "utf8mb4")
    changes = catalog.apply(
        "USE `shop`;\n/*!40101 SET character_set_client = utf8 */;\nCREATE TABLE t (a text);", None
    )
    assert [(c.id, c.table.default_charset) for c in changes] == [("shop.t", "utf8mb4")]  # type: ignore[union-attr]
    assert catalog.databases() == ["inv", "shop"]


def test_inline_references_system_versioning_and_serial_default_value() -> None:
    table = created(
        "CREATE TABLE t (a int REFERENCES o (x) MATCH FULL ON DELETE SET NULL ON UPDATE CASCADE DEFAULT 1,"
        " b bigint unsigned GENERATED ALWAYS AS ROW START INVISIBLE,"
        " c bigint unsigned GENERATED ALWAYS AS ROW END, d int SERIAL DEFAULT VALUE,"
        " PERIOD FOR SYSTEM_TIME (b, c)) WITH SYSTEM VERSIONING"
    )
    a, b, c, d = table.columns
    assert (a.on_update, a.default) == (None, "1")
    assert not b.generated and not c.generated and [b.type_name, c.type_name] == ["BIGINT", "BIGINT"]
    assert (d.optional, d.auto_increment) == (False, True)


def test_truncated_tables_are_named() -> None:
    ddl = "TRUNCATE TABLE a; TRUNCATE other.`b`; USE x; /* c */ TRUNCATE c; SELECT 1"
    assert truncated_tables(ddl, "db") == [("db", "a"), ("other", "b"), ("x", "c")]
    assert truncated_tables("ALTER TABLE a ADD b int", "db") == []


def test_system_versioning_without_declared_row_columns_is_flagged() -> None:
    # MariaDB logs the implicit row_start/row_end values after the visible columns.
    catalog = SchemaCatalog()
    (hidden,) = catalog.apply("CREATE TABLE h (x int) WITH SYSTEM VERSIONING", "db")
    (declared,) = catalog.apply(
        "CREATE TABLE d (x int, s timestamp(6) GENERATED ALWAYS AS ROW START,"
        " e timestamp(6) GENERATED ALWAYS AS ROW END, PERIOD FOR SYSTEM_TIME (s, e)) WITH SYSTEM VERSIONING",
        "db",
    )
    (plain,) = catalog.apply("CREATE TABLE p (x int)", "db")
    flags = [c.table.hidden_row_period for c in (hidden, declared, plain)]  # type: ignore[union-attr]
    assert flags == [True, False, False]
    assert alter(catalog, "ALTER TABLE p ADD SYSTEM VERSIONING").hidden_row_period
    assert not alter(catalog, "ALTER TABLE p DROP SYSTEM VERSIONING").hidden_row_period
    assert alter(catalog, "ALTER TABLE h ADD COLUMN y int").hidden_row_period


def test_charset_actions_within_one_alter_statement() -> None:
    """Cases the server-judged random ALTERs found (test_mysql_schema), pinned here."""
    catalog = SchemaCatalog()
    catalog.apply("CREATE TABLE t (a varchar(10), b text) DEFAULT CHARSET=latin1", "db")
    table = alter(catalog, "ALTER TABLE t MODIFY a text, CONVERT TO CHARACTER SET utf8mb4")
    assert [(c.type_name, c.charset) for c in table.columns] == [
        ("TEXT", "utf8mb4"),
        ("MEDIUMTEXT", "utf8mb4"),
    ]
    table = alter(catalog, "ALTER TABLE t DEFAULT CHARSET=latin1, CONVERT TO CHARACTER SET utf8mb4")
    assert table.default_charset == "latin1"  # the option outranks CONVERT's default
    table = alter(catalog, "ALTER TABLE t ADD COLUMN n varchar(3), DEFAULT CHARSET=utf8mb4")
    effective = [(c.name, c.charset or table.default_charset) for c in table.columns]
    assert effective == [("a", "utf8mb4"), ("b", "utf8mb4"), ("n", "utf8mb4")]
    table = alter(catalog, "ALTER TABLE t CHARSET=latin1")
    effective = [(c.name, c.charset or table.default_charset) for c in table.columns]
    assert effective == [("a", "utf8mb4"), ("b", "utf8mb4"), ("n", "utf8mb4")]  # existing columns keep theirs


def test_modify_of_a_column_added_in_the_same_statement_moves_it_last() -> None:
    """MariaDB places a column ADDed and then MODIFYed/CHANGEd (without FIRST/AFTER) in one
    statement after all others (found by the server-judged random ALTERs)."""
    catalog = SchemaCatalog()
    catalog.apply("CREATE TABLE t (a int, b int)", "db")
    table = alter(catalog, "ALTER TABLE t ADD COLUMN n int FIRST, MODIFY n bigint")
    assert [(c.name, c.type_name) for c in table.columns] == [("a", "INT"), ("b", "INT"), ("n", "BIGINT")]
    table = alter(catalog, "ALTER TABLE t ADD COLUMN m int FIRST, CHANGE m mm int AFTER a")
    assert [c.name for c in table.columns] == ["a", "mm", "b", "n"]
