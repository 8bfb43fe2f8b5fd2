"""ALTER TABLE, RENAME TABLE and DROP TABLE applied to catalog tables, read from sqlglot's tokens.

sqlglot parses only part of MySQL's ALTER TABLE: ``ADD (c1 ..., c2 ...)``, ``CONVERT TO
CHARACTER SET``, ``RENAME AS``, ``ADD CONSTRAINT ... PRIMARY KEY USING BTREE`` and any list
mixing column changes with index, engine or partition clauses fall back to a ``Command`` or
fail, RENAME TABLE is always a ``Command`` and DROP TABLE ... WAIT n fails. These statements
are flat lists of comma-separated actions or names, so they are read here from the tokens,
with the column definitions read as in CREATE TABLE (``ddl_columns``). Index, engine,
partition and other table options change no column and are skipped.

Semantics are MySQL's, as checked against MariaDB (``test_mysql_schema``): the actions of one
statement apply in order; ``FIRST``/``AFTER`` place a column, otherwise ADD appends and
MODIFY/CHANGE keep the place; dropping or renaming a key column shrinks or renames the
primary key; key columns are NOT NULL; CONVERT TO CHARACTER SET widens TEXT types. An ALTER of
a table the catalog does not hold (not captured) changes nothing; a column action naming a
column the table lacks means the catalog is out of step with the server, a ``DdlError``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from sqlglot import Token, TokenType

from connectors.jdbc.mysql.ddl_columns import TokenReader, read_column, read_key_columns
from connectors.jdbc.mysql.schema import DdlError, MySqlColumn, MySqlTable, SchemaCatalog, TableChange

__all__ = ["alter_table", "drop_tables", "rename_tables", "table_name", "with_primary_key"]

_TEXT_TYPES = frozenset({"CHAR", "VARCHAR", "TINYTEXT", "TEXT", "MEDIUMTEXT", "LONGTEXT", "ENUM", "SET"})
# ADD / DROP followed by these words concern indexes, constraints or partitions, not columns.
_NOT_COLUMNS = frozenset(
    {
        "INDEX", "KEY", "FULLTEXT", "SPATIAL", "UNIQUE", "FOREIGN", "CHECK", "PARTITION",
        "PERIOD", "SYSTEM", "CONSTRAINT", "PRIMARY",
    }
)  # fmt: skip


# Bytes per character at most, for the character sets CONVERT TO may widen text into.
_MAX_BYTES = {
    "ascii": 1, "latin1": 1, "latin2": 1, "binary": 1, "cp1250": 1, "cp1251": 1, "cp1256": 1,
    "cp1257": 1, "ucs2": 2, "gbk": 2, "big5": 2, "sjis": 2, "euckr": 2, "utf8": 3,
    "utf8mb3": 3, "ujis": 3, "utf8mb4": 4, "utf16": 4, "utf16le": 4, "utf32": 4, "gb18030": 4,
}  # fmt: skip
_TEXT_BYTES = (("TINYTEXT", 255), ("TEXT", 65_535), ("MEDIUMTEXT", 16_777_215), ("LONGTEXT", 4_294_967_295))


def _text_type_for(type_name: str, old: str | None, new: str) -> str:
    """The TEXT type CONVERT TO CHARACTER SET gives a column: MySQL widens it to the smallest
    TEXT type holding as many characters in the new character set (never narrows it)."""
    capacity = dict(_TEXT_BYTES).get(type_name)
    old_bytes, new_bytes = _MAX_BYTES.get(old or ""), _MAX_BYTES.get(new)
    if capacity is None or old_bytes is None or new_bytes is None or new_bytes <= old_bytes:
        return type_name
    needed = capacity // old_bytes * new_bytes
    return next((name for name, size in _TEXT_BYTES if size >= needed), "LONGTEXT")


def with_primary_key(table: MySqlTable, key: Sequence[str]) -> MySqlTable:
    """``table`` keyed by ``key``, whose columns become NOT NULL (losing their implied DEFAULT
    NULL) as MySQL makes them; key names take the columns' spelling."""
    wanted = {k.lower() for k in key}
    columns = tuple(
        replace(c, optional=False, default=None if c.default == "NULL" else c.default)
        if c.name.lower() in wanted and c.optional
        else c
        for c in table.columns
    )
    spelled = tuple(c.name for k in key for c in columns if c.name.lower() == k.lower())
    return replace(table, columns=columns, primary_key=spelled)


class _Alter:
    def __init__(self, table: MySqlTable, reader: TokenReader) -> None:
        self.table = table
        self.r = reader
        self.columns: list[MySqlColumn] = list(table.columns)
        self.key: list[str] = list(table.primary_key)
        self.renamed_to: tuple[str | None, str] | None = None
        self.charset = table.default_charset
        self.comment = table.comment
        self.hidden_row_period = table.hidden_row_period
        self.declares_period = False  # ADD PERIOD FOR SYSTEM_TIME in this statement
        self.option_charset: str | None = None  # DEFAULT CHARSET / COLLATE given in this statement
        self.added: set[str] = set()  # the columns this statement ADDs (lower-case names)
        self.redefined: set[str] = set()  # the columns this statement defines (lower-case names)

    def error(self, why: str) -> DdlError:
        return DdlError(f"{why} in DDL statement {self.r.sql.strip()!r}")

    def find(self, name: str) -> int:
        for index, column in enumerate(self.columns):
            if column.name.lower() == name.lower():
                return index
        return -1

    def existing(self, name: str) -> int:
        index = self.find(name)
        if index < 0:
            raise self.error(f"table {self.table.id} has no column {name!r}")
        return index

    def place(self, column: MySqlColumn, default_index: int) -> None:
        """Insert ``column`` where FIRST/AFTER says, else at ``default_index``."""
        r = self.r
        if r.accept("FIRST"):
            self.columns.insert(0, column)
        elif r.accept("AFTER"):
            self.columns.insert(self.existing(r.name()) + 1, column)
        else:
            self.columns.insert(default_index, column)

    def column_definition(self) -> MySqlColumn:
        definition = read_column(self.r.tokens, self.r.i, self.r.sql, 0)
        self.r.i = definition.end
        self.redefined.add(definition.column.name.lower())
        if definition.primary_key:
            self.key = [definition.column.name]
        return definition.column

    def kept_place(self, name: str, index: int) -> int:
        """Where MODIFY/CHANGE without FIRST/AFTER leaves a column: in place, except a column
        ADDed earlier in the same statement, which MariaDB then places after all others."""
        return len(self.columns) if name.lower() in self.added else index

    def rename_key_column(self, old: str, new: str) -> None:
        self.key = [new if k.lower() == old.lower() else k for k in self.key]

    def action(self) -> None:
        """One comma-separated action; whatever of it changes no column is skipped."""
        self._action()
        self.r.skip_item()

    def _action(self) -> None:
        r = self.r
        if r.accept("ADD"):
            self.add()
        elif r.accept("DROP"):
            self.drop()
        elif r.accept("MODIFY"):
            r.accept("COLUMN")
            if_exists = r.accept("IF", "EXISTS")
            column = self.column_definition()
            if if_exists and self.find(column.name) < 0:
                return  # MariaDB's MODIFY IF EXISTS of a column that is not there
            index = self.existing(column.name)
            del self.columns[index]
            self.place(column, self.kept_place(column.name, index))
        elif r.accept("CHANGE"):
            r.accept("COLUMN")
            if_exists = r.accept("IF", "EXISTS")
            old = r.name()
            if if_exists and self.find(old) < 0:
                return
            index = self.existing(old)
            del self.columns[index]
            column = self.column_definition()
            self.rename_key_column(old, column.name)
            self.place(column, self.kept_place(old, index))
        elif r.accept("RENAME", "COLUMN"):
            old = r.name()
            r.accept("TO")
            new = r.name()
            index = self.existing(old)
            self.columns[index] = self.columns[index].renamed(new)
            self.rename_key_column(old, new)
        elif r.word() == "RENAME" and r.word(1) not in ("INDEX", "KEY"):
            r.take()
            if not r.accept("TO"):
                r.accept("AS")
            self.renamed_to = r.qualified_name()
        elif r.accept("ALTER"):
            self.alter_column()
        elif r.accept("CONVERT", "TO", "CHARACTER", "SET") or r.accept("CONVERT", "TO", "CHARSET"):
            self.convert()
        else:
            self.table_option()

    def add(self) -> None:
        r = self.r
        if r.accept("SYSTEM", "VERSIONING"):
            self.hidden_row_period = not self.declares_period
            return
        if r.word() == "PERIOD":
            self.declares_period = True
        if r.word() in _NOT_COLUMNS:
            if r.accept("CONSTRAINT") and r.word() != "PRIMARY":
                r.name()  # the constraint's name
            if r.accept("PRIMARY", "KEY"):
                self.key = read_key_columns(r)
            return
        r.accept("COLUMN")
        r.accept("IF", "NOT", "EXISTS")
        if r.is_at(TokenType.L_PAREN):
            r.take()
            while True:
                self.columns.append(self.column_definition())
                self.added.add(self.columns[-1].name.lower())
                if not r.is_at(TokenType.COMMA):
                    break
                r.take()
            if not r.is_at(TokenType.R_PAREN):
                raise self.error("unclosed column list")
            r.take()
            return
        column = self.column_definition()
        if self.find(column.name) >= 0:
            return  # ADD COLUMN IF NOT EXISTS of a column that exists (MariaDB)
        self.place(column, len(self.columns))
        self.added.add(column.name.lower())

    def drop(self) -> None:
        r = self.r
        if r.accept("PRIMARY", "KEY"):
            self.key = []
            return
        if r.accept("SYSTEM", "VERSIONING"):
            self.hidden_row_period = False
            return
        if r.word() in _NOT_COLUMNS:
            return
        r.accept("COLUMN")
        if_exists = r.accept("IF", "EXISTS")
        name = r.name()
        index = self.find(name)
        if index < 0:
            if if_exists:
                return
            raise self.error(f"table {self.table.id} has no column {name!r}")
        del self.columns[index]
        self.key = [k for k in self.key if k.lower() != name.lower()]

    def alter_column(self) -> None:
        r = self.r
        if r.word() in ("INDEX", "KEY", "CHECK", "CONSTRAINT"):
            return
        r.accept("COLUMN")
        name = r.name()
        index = self.existing(name)
        column = self.columns[index]
        if r.accept("SET", "DEFAULT"):
            first = r.i
            r.skip_item()
            self.columns[index] = replace(column, default=r.text(first, r.i - 1))
        elif r.accept("DROP", "DEFAULT"):
            # A nullable column falls back to DEFAULT NULL, as MySQL prints it afterwards.
            self.columns[index] = replace(column, default="NULL" if column.optional else None)

    def convert(self) -> None:
        r = self.r
        charset = r.name().lower()
        collation: str | None = None
        if r.accept("COLLATE"):
            collation = r.name().lower()
        if charset == "default":
            charset = self.charset or charset
        converted: list[MySqlColumn] = []
        for c in self.columns:
            if c.type_name in _TEXT_TYPES:
                # A column this statement defines is made in the new charset: nothing to widen.
                old = charset if c.name.lower() in self.redefined else c.charset or self.charset
                wider = _text_type_for(c.type_name, old, charset)
                c = replace(c, type_name=wider, type_expression=wider, charset=charset, collation=collation)
            converted.append(c)
        self.columns = converted
        self.charset = charset

    def table_option(self) -> None:
        r = self.r
        r.accept("DEFAULT")
        if r.accept("CHARACTER", "SET") or r.accept("CHARSET"):
            if r.is_at(TokenType.EQ):
                r.take()
            self.default_charset(r.name().lower())
        elif r.accept("COLLATE"):
            if r.is_at(TokenType.EQ):
                r.take()
            self.default_charset(r.name().lower().split("_", 1)[0])
        elif r.accept("COMMENT"):
            if r.is_at(TokenType.EQ):
                r.take()
            self.comment = r.take().text

    def default_charset(self, charset: str) -> None:
        """A new table default applies to the columns this statement defines, wherever it says
        so; the text columns the table had keep the character set they had, and now state it."""
        if charset != self.charset:
            self.columns = [
                replace(c, charset=self.charset)
                if c.name.lower() not in self.redefined and c.type_name in _TEXT_TYPES and c.charset is None
                else c
                for c in self.columns
            ]
        self.charset = self.option_charset = charset

    def result(self, database: str) -> MySqlTable:
        table = self.table.with_columns(self.columns)
        table = replace(
            table,
            # A DEFAULT CHARSET option outranks CONVERT TO's charset wherever it stands (MariaDB).
            default_charset=self.option_charset or self.charset,
            comment=self.comment,
            hidden_row_period=self.hidden_row_period,
        )
        if self.renamed_to is not None:
            new_database, new_name = self.renamed_to
            table = replace(table, database=new_database or database, name=new_name)
        return with_primary_key(table, self.key)


def table_name(reader: TokenReader, database: str | None) -> tuple[str, str]:
    """``[db.]name`` at the reader, qualified by the statement's default database."""
    db, name = reader.qualified_name()
    db = db or database
    if not db:
        raise DdlError(
            f"table {name!r} has no database and no default database is in use: {reader.sql.strip()!r}"
        )
    return db, name


def alter_table(
    catalog: SchemaCatalog, sql: str, tokens: list[Token], database: str | None
) -> list[TableChange]:
    r = TokenReader(tokens, 1, sql)
    r.accept("ONLINE")
    r.accept("IGNORE")
    if not r.accept("TABLE"):
        raise DdlError(f"not an ALTER TABLE: {sql.strip()!r}")
    r.accept("IF", "EXISTS")
    db, name = table_name(r, database)
    table = catalog.table(db, name)
    if table is None:
        return []
    if r.accept("WAIT"):
        r.take()
    r.accept("NOWAIT")
    alter = _Alter(table, r)
    while r.peek() is not None and not r.is_at(TokenType.SEMICOLON):
        alter.action()
        if r.is_at(TokenType.COMMA):
            r.take()
        elif r.peek() is not None and not r.is_at(TokenType.SEMICOLON):
            r.take()  # a stray ')' or a partition clause following the actions
    altered = alter.result(database or db)  # an unqualified new name goes to the default database
    if (altered.database, altered.name) != (table.database, table.name):
        catalog.remove(table.database, table.name)
        catalog.put(altered)
        return [TableChange("ALTER", altered.id, altered, previous_id=table.id)]
    catalog.put(altered)
    return [TableChange("ALTER", altered.id, altered)]


def rename_tables(
    catalog: SchemaCatalog, sql: str, tokens: list[Token], database: str | None
) -> list[TableChange]:
    """RENAME TABLE a TO b [, c TO d]: applied left to right, so swaps through a temporary
    name work as they do in MySQL."""
    r = TokenReader(tokens, 2, sql)  # after RENAME TABLE
    r.accept("IF", "EXISTS")
    changes: list[TableChange] = []
    while r.peek() is not None and not r.is_at(TokenType.SEMICOLON):
        old_db, old_name = table_name(r, database)
        if r.accept("WAIT"):
            r.take()
        r.accept("NOWAIT")
        if not r.accept("TO"):
            raise DdlError(f"RENAME TABLE without TO: {sql.strip()!r}")
        new_db, new_name = table_name(r, database)
        table = catalog.remove(old_db, old_name)
        if table is not None:
            renamed = replace(table, database=new_db, name=new_name)
            catalog.put(renamed)
            changes.append(TableChange("ALTER", renamed.id, renamed, previous_id=table.id))
        if r.is_at(TokenType.COMMA):
            r.take()
        elif r.peek() is not None and not r.is_at(TokenType.SEMICOLON):
            raise DdlError(f"unexpected {r.peek().text!r} in RENAME TABLE: {sql.strip()!r}")  # type: ignore[union-attr]
    return changes


def drop_tables(
    catalog: SchemaCatalog, sql: str, tokens: Sequence[Token], database: str | None
) -> list[TableChange]:
    """DROP TABLE[S] [IF EXISTS] a [, b ...] [WAIT n | NOWAIT] [RESTRICT | CASCADE]: a DROP for
    each table the catalog held (DROP TEMPORARY TABLE never reaches here)."""
    r = TokenReader(tokens, 2, sql)  # after DROP TABLE
    r.accept("IF", "EXISTS")
    changes: list[TableChange] = []
    while True:
        dropped = catalog.remove(*table_name(r, database))
        if dropped is not None:
            changes.append(TableChange("DROP", dropped.id, None))
        if not r.is_at(TokenType.COMMA):
            break
        r.take()
    if r.accept("WAIT"):
        r.take()
    r.accept("NOWAIT")
    if (
        not (r.accept("RESTRICT") or r.accept("CASCADE"))
        and r.peek() is not None
        and not r.is_at(TokenType.SEMICOLON)
    ):
        raise DdlError(f"unexpected {r.take().text!r} in DROP TABLE: {sql.strip()!r}")
    return changes
