"""CREATE TABLE read from sqlglot's tokens into a catalog table.

sqlglot's MySQL parser rejects valid CREATE TABLE text the connector meets: ``FLOAT(7,3)
UNSIGNED``, ``NATIONAL VARCHAR``, ``LONG VARCHAR``, ``CONSTRAINT pk PRIMARY KEY USING BTREE
(...)``, ``SRID``, ``COLUMN_FORMAT``, MariaDB's ``COMPRESSED``; and it falls back to a
``Command`` for the ``PARTITION BY`` and ``WITH SYSTEM VERSIONING`` that ``SHOW CREATE TABLE``
prints inside executable comments. So the statement is read from the tokens: a list of
comma-separated definitions (columns, keys, constraints) between parentheses, then table
options, then partitioning or a SELECT, which change no column.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Final

from sqlglot import Token, TokenType

from connectors.jdbc.mysql.ddl_alter import table_name, with_primary_key
from connectors.jdbc.mysql.ddl_columns import TokenReader, read_column, read_key_columns
from connectors.jdbc.mysql.schema import DdlError, MySqlColumn, MySqlTable, SchemaCatalog, TableChange

__all__ = ["create_table"]

# Definitions that are not columns start with one of these (reserved) words.
_NOT_COLUMNS: Final = frozenset(
    {"PRIMARY", "INDEX", "KEY", "FULLTEXT", "SPATIAL", "UNIQUE", "FOREIGN", "CHECK", "CONSTRAINT"}
)
# Table options are followed by these, which say nothing about columns.
_TAIL: Final = frozenset({"PARTITION", "SELECT", "AS", "IGNORE", "REPLACE", "WITH", "TABLE", "VALUES"})


def create_table(
    catalog: SchemaCatalog, sql: str, tokens: Sequence[Token], database: str | None
) -> list[TableChange]:
    """CREATE [OR REPLACE] TABLE [IF NOT EXISTS] name {(definitions) [options] | [(] LIKE old [)]}."""
    r = TokenReader(tokens, 1, sql)
    r.accept("OR", "REPLACE")
    if not r.accept("TABLE"):
        raise DdlError(f"not a CREATE TABLE: {sql.strip()!r}")
    if_not_exists = r.accept("IF", "NOT", "EXISTS")
    db, name = table_name(r, database)
    if if_not_exists and catalog.table(db, name) is not None:
        return []  # IF NOT EXISTS on an existing table changes nothing
    parenthesised_like = r.is_at(TokenType.L_PAREN) and r.word(1) == "LIKE"
    if parenthesised_like:
        r.take()
    if r.accept("LIKE"):
        source = catalog.table(*table_name(r, database))
        if source is None:
            return []  # a table the catalog does not hold (not captured): nothing to copy
        table = replace(source, database=db, name=name)
    else:
        if not r.is_at(TokenType.L_PAREN):
            raise DdlError(f"CREATE TABLE without a column list: {sql.strip()!r}")
        r.take()
        start = r.i
        columns, key = _definitions(r)
        charset, comment = _options(r)
        charset = charset or catalog.database_charset(db)
        table = with_primary_key(MySqlTable(db, name, tuple(columns), (), charset, comment), key)
        if _has_words(tokens[r.i :], "WITH", "SYSTEM", "VERSIONING"):
            declared = _has_words(tokens[start : r.i], "PERIOD", "FOR", "SYSTEM_TIME")
            table = replace(table, hidden_row_period=not declared)
    catalog.put(table)
    return [TableChange("CREATE", table.id, table)]


def _definitions(r: TokenReader) -> tuple[list[MySqlColumn], list[str]]:
    columns: list[MySqlColumn] = []
    key: list[str] = []
    while True:
        word = r.word()
        if word in _NOT_COLUMNS or (word == "PERIOD" and r.word(1) == "FOR"):
            if word == "CONSTRAINT" and r.word(1) != "PRIMARY":
                r.take()
                r.name()  # the constraint's name
            if r.accept("PRIMARY", "KEY"):
                key = read_key_columns(r)
            r.skip_item()
        else:
            definition = read_column(r.tokens, r.i, r.sql, len(columns) + 1)
            r.i = definition.end
            columns.append(definition.column)
            if definition.primary_key:
                key = [definition.column.name]
        token = r.peek()
        if token is None:
            raise DdlError(f"unclosed column list in {r.sql.strip()!r}")
        r.take()
        if token.token_type == TokenType.R_PAREN:
            break
        if token.token_type != TokenType.COMMA:
            raise DdlError(f"unexpected {token.text!r} at offset {token.start} of {r.sql.strip()!r}")
    if not columns:
        raise DdlError(f"CREATE TABLE without columns: {r.sql.strip()!r}")
    return columns, key


def _options(r: TokenReader) -> tuple[str | None, str | None]:
    """The table's default character set and comment; other options change no column."""
    charset: str | None = None
    collation: str | None = None
    comment: str | None = None
    while r.peek() is not None and not r.is_at(TokenType.SEMICOLON) and r.word() not in _TAIL:
        if r.accept("CHARACTER", "SET") or r.accept("CHARSET"):
            _equals(r)
            charset = r.name().lower()
        elif r.accept("COLLATE"):
            _equals(r)
            collation = r.name().lower()
        elif r.accept("COMMENT"):
            _equals(r)
            comment = r.take().text
        elif r.is_at(TokenType.L_PAREN):
            r.skip_group()
        elif r.is_at(TokenType.R_PAREN):
            raise DdlError(f"unbalanced ')' at offset {r.take().start} of {r.sql.strip()!r}")
        else:
            r.take()
    if charset is None and collation is not None:
        charset = collation.split("_", 1)[0]
    return charset, comment


def _equals(r: TokenReader) -> None:
    if r.is_at(TokenType.EQ):
        r.take()


def _has_words(tokens: Sequence[Token], *words: str) -> bool:
    texts = [t.text.upper() for t in tokens]
    return any(texts[i : i + len(words)] == list(words) for i in range(len(texts)))
