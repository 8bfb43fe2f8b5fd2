"""The table model judged by a real MariaDB: the catalog built from ``SHOW CREATE TABLE`` (and
from replaying ALTER statements) must describe the columns information_schema reports."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from typing import Any

import pymysql
import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from connectors.jdbc.mysql.schema import MySqlColumn, MySqlTable, SchemaCatalog
from tests.databases import MariaDBServer

_names = itertools.count()


@pytest.fixture()
def db(mariadb: MariaDBServer) -> Iterator[tuple[Any, str]]:
    """A cursor on a fresh database of the session's MariaDB (table default charset latin1)."""
    name = f"schema_{next(_names)}"
    conn = pymysql.connect(host="127.0.0.1", port=mariadb.port, user="root", autocommit=True)
    cur = conn.cursor()
    cur.execute(f"CREATE DATABASE {name} CHARACTER SET latin1")
    cur.execute(f"USE {name}")
    try:
        yield cur, name
    finally:
        cur.execute(f"DROP DATABASE {name}")
        conn.close()


def show_create(cur: Any, table: str, database: str | None = None) -> str:
    cur.execute(f"SHOW CREATE TABLE `{database}`.`{table}`" if database else f"SHOW CREATE TABLE `{table}`")
    return str(cur.fetchone()[1])


_COLUMN_TYPE = re.compile(r"^(\w+)(?:\((\d+)(?:,(\d+))?\))?")


def _enum_values(column_type: str) -> tuple[str, ...]:
    inner = column_type[column_type.index("(") + 1 : column_type.rindex(")")]
    # COLUMN_TYPE quotes members SQL-style: '' for a quote, \\ for a backslash.
    found = re.findall(r"'((?:[^'\\]|''|\\.)*)'", inner)
    return tuple(re.sub(r"''|\\(.)", lambda m: m.group(1) or "'", v) for v in found)


def server_columns(cur: Any, database: str, table: str) -> list[dict[str, Any]]:
    cur.execute(
        "SELECT COLUMN_NAME, ORDINAL_POSITION, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT,"
        " CHARACTER_SET_NAME, EXTRA, COLUMN_COMMENT FROM information_schema.COLUMNS"
        " WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s ORDER BY ORDINAL_POSITION",
        (database, table),
    )
    keys = (
        "name",
        "position",
        "data_type",
        "column_type",
        "nullable",
        "default",
        "charset",
        "extra",
        "comment",
    )
    return [dict(zip(keys, row, strict=True)) for row in cur.fetchall()]


def server_key(cur: Any, database: str, table: str) -> tuple[str, ...]:
    cur.execute(
        "SELECT COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = %s"
        " AND TABLE_NAME = %s AND CONSTRAINT_NAME = 'PRIMARY' ORDER BY ORDINAL_POSITION",
        (database, table),
    )
    return tuple(row[0] for row in cur.fetchall())


def expected_view(server: dict[str, Any]) -> dict[str, Any]:
    """What information_schema says, in the model's terms."""
    column_type = str(server["column_type"])
    match = _COLUMN_TYPE.match(column_type)
    assert match is not None
    data_type = str(server["data_type"]).upper()
    enum = data_type in ("ENUM", "SET")
    extra = str(server["extra"]).lower()
    on_update = re.search(r"on update (\S+)", extra)
    return {
        "name": server["name"],
        "position": server["position"],
        "type_name": data_type,
        "length": None if enum or match.group(2) is None else int(match.group(2)),
        "scale": None if match.group(3) is None else int(match.group(3)),
        "unsigned": "unsigned" in column_type,
        "zerofill": "zerofill" in column_type,
        "optional": server["nullable"] == "YES",
        "auto_increment": "auto_increment" in extra,
        "generated": "generated" in extra,
        # A generated column has no default; information_schema still says NULL for it.
        "default": None if "generated" in extra else server["default"],
        "on_update": on_update.group(1) if on_update else None,
        "enum_values": _enum_values(column_type) if enum else (),
        "charset": server["charset"],
        "comment": server["comment"] or None,
    }


_TEXTUAL = frozenset({"CHAR", "VARCHAR", "TINYTEXT", "TEXT", "MEDIUMTEXT", "LONGTEXT", "ENUM", "SET"})


def model_view(column: MySqlColumn, table: MySqlTable) -> dict[str, Any]:
    textual = column.type_name in (
        "CHAR",
        "VARCHAR",
        "TINYTEXT",
        "TEXT",
        "MEDIUMTEXT",
        "LONGTEXT",
        "ENUM",
        "SET",
    )
    return {
        "name": column.name,
        "position": column.position,
        "type_name": column.type_name,
        "length": column.length,
        "scale": column.scale,
        "unsigned": column.unsigned,
        "zerofill": column.zerofill,
        "optional": column.optional,
        "auto_increment": column.auto_increment,
        "generated": column.generated,
        "default": column.default,
        "on_update": column.on_update.lower() if column.on_update else None,
        "enum_values": column.enum_values,
        "charset": (column.charset or table.default_charset) if textual else None,
        "comment": column.comment,
    }


def assert_matches_server(cur: Any, database: str, name: str) -> MySqlTable:
    catalog = SchemaCatalog()
    changes = catalog.apply(show_create(cur, name), database)
    assert [c.type for c in changes] == ["CREATE"]
    table = catalog.table(database, name)
    assert table is not None
    server = server_columns(cur, database, name)
    assert [model_view(c, table) for c in table.columns] == [expected_view(s) for s in server]
    assert table.primary_key == server_key(cur, database, name)
    return table


TYPES = """
  id int NOT NULL AUTO_INCREMENT PRIMARY KEY,
  t1 tinyint, t2 tinyint(1) DEFAULT 1, t3 bool NOT NULL DEFAULT TRUE, t4 smallint unsigned DEFAULT 7,
  t5 mediumint zerofill, t6 integer, t7 bigint unsigned NOT NULL DEFAULT 0, t8 int(5) unsigned zerofill,
  n1 decimal, n2 numeric(5), n3 dec(6,3) DEFAULT -1.5, n4 fixed(12,4) unsigned,
  f1 float, f2 float(7,3), f3 float(30), f4 double DEFAULT 1.5e3, f5 real, f6 double precision(10,2),
  b1 bit, b2 bit(10) DEFAULT b'101',
  c1 char, c2 char(10) CHARACTER SET utf8mb4 DEFAULT 'x''y', c3 varchar(255) COLLATE latin1_bin NOT NULL,
  c4 national char(3), c5 nvarchar(4), c6 char(5) BINARY, c7 varchar(20) CHARSET ascii DEFAULT '',
  c8 varchar(5) CHARACTER SET binary,
  y1 binary(4), y2 varbinary(9) DEFAULT x'0a',
  x1 tinytext, x2 text, x3 mediumtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, x4 longtext, x5 long varchar,
  l1 tinyblob, l2 blob, l3 mediumblob, l4 longblob,
  e1 enum('a','b,c','d''e') NOT NULL DEFAULT 'b,c', e2 set('x','y','z') DEFAULT 'x,z',
  d1 date DEFAULT '2020-01-02', d2 time, d3 time(3), d4 datetime(6) DEFAULT now(6), d5 year,
  d6 timestamp(3) NOT NULL DEFAULT current_timestamp(3) ON UPDATE current_timestamp(3),
  d7 datetime DEFAULT current_timestamp,
  j1 json, g1 geometry, g2 point, g3 linestring, g4 polygon, g5 multipoint, g6 multilinestring,
  g7 multipolygon, g8 geometrycollection, i6 inet6, u1 uuid,
  v1 int AS (t6 + 1) VIRTUAL, v2 bigint GENERATED ALWAYS AS (t6 * 2) STORED,
  k1 int DEFAULT (1 + 1) COMMENT 'computed default', k2 varchar(10) DEFAULT (concat('a', 'b')),
  `select` int COMMENT 'a ''reserved'' name', `Mixed Case` int
"""


def test_show_create_table_of_every_common_type_matches_information_schema(db: tuple[Any, str]) -> None:
    cur, database = db
    cur.execute(f"CREATE TABLE every_type ({TYPES}) ENGINE=InnoDB COMMENT='all of them'")
    table = assert_matches_server(cur, database, "every_type")
    assert table.default_charset == "latin1"
    assert table.comment == "all of them"
    assert table.column("T3") is not None and table.column("t3").type_name == "TINYINT"  # type: ignore[union-attr]


def test_keys_unique_and_foreign_clauses_and_table_options(db: tuple[Any, str]) -> None:
    cur, database = db
    options = "DEFAULT CHARSET=utf8mb4 COLLATE utf8mb4_unicode_ci"
    cur.execute(f"CREATE TABLE parent (a int, b varchar(10), PRIMARY KEY (b, a)) {options}")
    cur.execute(
        "CREATE TABLE child (id bigint unsigned NOT NULL, pa int, pb varchar(10), s serial, name varchar(40),"
        " PRIMARY KEY (id), UNIQUE KEY uq (name(10)), KEY k (pa, pb), FULLTEXT KEY ft (name),"
        " CONSTRAINT fk FOREIGN KEY (pb, pa) REFERENCES parent (b, a) ON DELETE CASCADE,"
        " CONSTRAINT chk CHECK (pa > 0)) ENGINE=InnoDB AUTO_INCREMENT=42 COLLATE=utf8mb4_unicode_ci"
    )
    assert assert_matches_server(cur, database, "parent").primary_key == ("b", "a")
    child = assert_matches_server(cur, database, "child")
    assert child.default_charset == "utf8mb4"


# One random column definition: (SQL, what information_schema must say is irrelevant here:
# the server judges the SHOW CREATE TABLE text it prints for it).
_int_types = st.sampled_from(["tinyint", "smallint", "mediumint", "int", "bigint"])
_int_defaults = st.sampled_from(["", " DEFAULT 3", " DEFAULT NULL"])


# MySQL strips trailing spaces from ENUM members.
_enum_member = st.text("ab,' \\", max_size=4).filter(lambda v: not v.endswith(" "))


def _enum_sql(members: list[str]) -> str:
    return "enum(" + ",".join("'" + v.replace("\\", "\\\\").replace("'", "''") + "'" for v in members) + ")"


_column_sql = st.one_of(
    st.tuples(
        _int_types, st.sampled_from(["", " unsigned", " zerofill"]), st.sampled_from(["", " DEFAULT 3"])
    ).map("".join),
    st.tuples(st.integers(1, 65), st.integers(0, 30)).map(lambda p: f"decimal({p[0]},{min(p)})"),
    st.integers(0, 6).map(lambda fsp: f"datetime({fsp})"),
    st.integers(1, 300).map(lambda n: f"varchar({n})"),
    st.lists(_enum_member, min_size=1, max_size=4, unique=True).map(
        lambda vs: (
            "enum(" + ",".join("'" + v.replace("\\", "\\\\").replace("'", "''") + "'" for v in vs) + ")"
        )
    ),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    columns=st.lists(_column_sql, min_size=1, max_size=5),
    nullable=st.lists(st.booleans(), min_size=5, max_size=5),
)
def test_random_column_definitions_match_information_schema(
    db: tuple[Any, str], columns: list[str], nullable: list[bool]
) -> None:
    cur, database = db
    cur.execute("DROP TABLE IF EXISTS random_cols")
    body = ", ".join(f"`c{i}` {sql}{'' if nullable[i] else ' NOT NULL'}" for i, sql in enumerate(columns))
    cur.execute(f"CREATE TABLE random_cols ({body})")
    assert_matches_server(cur, database, "random_cols")


def loose_view(table: MySqlTable) -> tuple[object, ...]:
    """What an ALTER statement decides, leaving out what the server adds on its own
    (integer display widths, collations)."""
    columns = tuple(
        (c.name, c.position, c.type_name, c.unsigned, c.optional, c.enum_values, c.scale, c.default, charset)
        for c in table.columns
        for charset in [(c.charset or table.default_charset) if c.type_name in _TEXTUAL else None]
    )
    return columns, table.primary_key, table.default_charset


_ALTER_TYPES = (
    "int",
    "bigint unsigned",
    "varchar(20)",
    "decimal(8,2)",
    "datetime(3)",
    "enum('p','q')",
    "text",
)
_KEYABLE = _ALTER_TYPES[:-1]


@st.composite
def _alter_action(draw: st.DrawFn, table: MySqlTable, fresh: str) -> str:
    names = [c.name for c in table.columns]
    key = {k.lower() for k in table.primary_key}

    def some_name() -> str:
        name = draw(st.sampled_from(names))
        return name.upper() if draw(st.booleans()) else name  # column names are case-insensitive

    def place(moved: str | None = None) -> str:
        after = [n for n in names if n != moved]
        if not after:
            return draw(st.sampled_from(["", " FIRST"]))
        return draw(st.sampled_from(["", " FIRST", f" AFTER `{draw(st.sampled_from(after))}`"]))

    def definition(name: str) -> str:
        types = _KEYABLE if name.lower() in key else _ALTER_TYPES
        null = draw(st.sampled_from(["", " NOT NULL"]))
        default = " DEFAULT NULL" if not null and draw(st.booleans()) else ""
        return f"`{name}` {draw(st.sampled_from(types))}{null}{default}"

    kinds = ["add", "add_many", "modify", "change", "rename", "convert", "charset", "drop_default"]
    kinds += ["drop"] if len(names) > 1 else []
    kinds += ["drop_key"] if key else ["add_key"]
    kind = draw(st.sampled_from(kinds))
    if kind == "add":
        return f"ADD COLUMN {definition(fresh)}{place()}"
    if kind == "add_many":
        return f"ADD ({definition(fresh)}, {definition(fresh + '_b')})"
    if kind == "drop":
        return f"DROP COLUMN `{some_name()}`"
    if kind == "modify":
        name = draw(st.sampled_from(names))
        return f"MODIFY {definition(name)}{place(name)}"
    if kind == "change":
        old = draw(st.sampled_from(names))
        key |= {fresh.lower()} if old.lower() in key else set()
        return f"CHANGE `{old}` {definition(fresh)}{place(old)}"
    if kind == "rename":
        return f"RENAME COLUMN `{some_name()}` TO `{fresh}`"
    if kind == "drop_key":
        return "DROP PRIMARY KEY"
    if kind == "convert":
        return f"CONVERT TO CHARACTER SET {draw(st.sampled_from(['utf8mb4', 'latin1']))}"
    if kind == "charset":
        return f"DEFAULT CHARSET={draw(st.sampled_from(['utf8mb4', 'latin1']))}"
    if kind == "drop_default":
        return f"ALTER COLUMN `{some_name()}` DROP DEFAULT"
    keyable = [c.name for c in table.columns if "TEXT" not in c.type_name]
    if not keyable:
        return "ADD COLUMN `k` int"
    chosen = draw(st.lists(st.sampled_from(keyable), min_size=1, max_size=2, unique=True))
    return "ADD PRIMARY KEY (" + ", ".join(f"`{c}`" for c in chosen) + ")"


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_alter_sequences_keep_the_catalog_in_step_with_the_server(
    db: tuple[Any, str], data: st.DataObject
) -> None:
    cur, database = db
    cur.execute("DROP TABLE IF EXISTS altered")
    create = "CREATE TABLE altered (id int NOT NULL, a varchar(10), b text, PRIMARY KEY (id))"
    cur.execute(create)
    catalog = SchemaCatalog()
    catalog.apply(show_create(cur, "altered"), database)  # as the snapshot does
    for step in range(data.draw(st.integers(1, 6), label="steps")):
        table = catalog.table(database, "altered")
        assert table is not None
        actions = [data.draw(_alter_action(table, f"n{step}"), label="action")]
        if data.draw(st.booleans(), label="two actions"):
            # The second action sees the table as the first leaves it, as MySQL applies them.
            preview = catalog.copy()
            preview.apply("ALTER TABLE altered " + actions[0], database)
            after_first = preview.table(database, "altered")
            assert after_first is not None
            actions.append(data.draw(_alter_action(after_first, f"m{step}"), label="second action"))
        statement = "ALTER TABLE altered " + ", ".join(actions)
        try:
            cur.execute(statement)
        except pymysql.MySQLError:
            reject()  # e.g. two primary keys in one statement: the server refuses, nothing to compare
        changes = catalog.apply(statement, database)
        assert [c.type for c in changes] == ["ALTER"]
        server = SchemaCatalog()
        server.apply(show_create(cur, "altered"), database)
        expected = server.table(database, "altered")
        actual = catalog.table(database, "altered")
        assert actual is not None and expected is not None
        assert loose_view(actual) == loose_view(expected), statement


def test_table_statements_leave_the_catalog_holding_the_servers_tables(db: tuple[Any, str]) -> None:
    cur, database = db
    other = database + "_other"
    script = [
        f"CREATE DATABASE {other} CHARACTER SET utf8mb4",
        "CREATE TABLE a (x int PRIMARY KEY, s varchar(5))",
        "CREATE TABLE b (y bigint unsigned, t text) CHARSET utf8mb4",
        "CREATE TABLE IF NOT EXISTS a (other int)",
        "RENAME TABLE a TO tmp, b TO a, tmp TO b",
        "CREATE TABLE c LIKE a",
        f"ALTER TABLE c RENAME TO {other}.c, ADD COLUMN z int FIRST",
        f"CREATE TABLE {other}.d (LIKE b)",
        f"CREATE TABLE {other}.e (w varchar(3))",
        "DROP TABLE IF EXISTS a, nonexistent",
        f"USE {other}; ALTER TABLE e ADD COLUMN v int AFTER w",
    ]
    catalog = SchemaCatalog()
    catalog.add_database(database, "latin1")  # as the connector's snapshot learns it
    for statement in script:
        for part in statement.split("; "):
            cur.execute(part)
        catalog.apply(statement, database)
    cur.execute(f"USE {database}")
    cur.execute(
        "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA IN (%s, %s)"
        " ORDER BY 1, 2",
        (database, other),
    )
    on_server = [tuple(row) for row in cur.fetchall()]
    assert [(t.database, t.name) for t in catalog.tables()] == on_server
    for schema, name in on_server:
        judge = SchemaCatalog()
        judge.apply(show_create(cur, name, schema), schema)
        actual, expected = catalog.table(schema, name), judge.table(schema, name)
        assert actual is not None and expected is not None
        assert loose_view(actual) == loose_view(expected), name
    dropped = catalog.apply(f"DROP DATABASE {other}", database)
    cur.execute(f"DROP DATABASE {other}")
    assert sorted(c.id for c in dropped) == [f"{other}.c", f"{other}.d", f"{other}.e"]
