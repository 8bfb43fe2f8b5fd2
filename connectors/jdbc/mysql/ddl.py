"""MySQL/MariaDB DDL statements applied to a ``SchemaCatalog``, the way Debezium replays the binlog.

One binlog QueryEvent holds one statement as the client sent it (the snapshot feeds the
``SHOW CREATE TABLE`` text), possibly with comments and MySQL's ``/*!NNNNN ... */``
executable comments, whose content the server runs and so must be read.

sqlglot's MySQL dialect tokenizes: quoting, escapes, comments and statement boundaries are
its job. Its parser is not used: on the statements that matter here it rejects valid MySQL
(``FLOAT UNSIGNED``, ``NATIONAL VARCHAR``, ``PRIMARY KEY USING BTREE``, ``DROP TABLE t WAIT
3``), falls back to an opaque ``Command`` (RENAME TABLE, ``ALTER TABLE ... ADD (a, b)``,
``CONVERT TO CHARACTER SET``, ``PARTITION BY`` after a CREATE TABLE) or renames column types
(``REAL`` -> FLOAT, ``LONG`` -> BIGINT). The table statements are flat lists of
comma-separated definitions or actions, so they are read from the tokens: ``ddl_create``,
``ddl_alter`` (ALTER, RENAME, DROP) and ``ddl_columns`` (one column definition).

Statements that change no table (BEGIN, GRANT, SET, CREATE USER, FLUSH, CREATE INDEX,
TRUNCATE, views, routines, triggers, temporary tables...) yield nothing; table DDL that cannot
be read raises ``DdlError`` naming the statement.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Final

from sqlglot import Token, TokenType
from sqlglot.dialects.mysql import MySQL
from sqlglot.errors import SqlglotError

from connectors.jdbc.mysql.ddl_alter import alter_table, drop_tables, rename_tables, table_name
from connectors.jdbc.mysql.ddl_columns import TokenReader
from connectors.jdbc.mysql.ddl_create import create_table
from connectors.jdbc.mysql.schema import DdlError, SchemaCatalog, TableChange

__all__ = ["apply_ddl", "strip_executable_comments", "tokenize", "truncated_tables"]


_DIALECT: Final = MySQL()


def tokenize(sql: str) -> list[Token]:
    """sqlglot's tokens of ``sql``, one per word: sqlglot joins some keyword pairs into one
    token ("PRIMARY KEY", "DOUBLE PRECISION"), which the token readers take word by word."""
    try:
        tokens = _DIALECT.tokenize(sql)
        if tokens and tokens[0].token_type in _COMMANDS:
            # sqlglot keeps the text after a "command" word (RENAME, ...) as one string
            # token; the readers need its words.
            rest = tokens[0].end + 1
            tokens = [tokens[0]] + [
                Token(t.token_type, t.text, t.line, t.col, t.start + rest, t.end + rest, t.comments)
                for t in _DIALECT.tokenize(sql[rest:])
            ]
    except SqlglotError as exc:
        raise DdlError(f"cannot read DDL {sql!r}: {exc}") from exc
    out: list[Token] = []
    for token in tokens:
        if " " not in token.text or token.token_type in _QUOTED:
            out.append(token)
            continue
        for word in re.finditer(r"\S+", sql[token.start : token.end + 1]):
            start = token.start + word.start()
            out.append(
                Token(
                    TokenType.VAR, word.group(), token.line, token.col, start, start + len(word.group()) - 1
                )
            )
    return out


_COMMANDS: Final = frozenset(MySQL.Tokenizer.COMMANDS)
_QUOTED: Final = frozenset({TokenType.STRING, TokenType.IDENTIFIER, TokenType.NATIONAL_STRING})


def strip_executable_comments(sql: str) -> str:
    """Unwrap ``/*!NNNNN text */`` (and MariaDB's ``/*M!NNNNNN text */``) into ``text``,
    which the server executes; offsets are kept by blanking the markers. Quoted text is left
    alone."""
    out = list(sql)
    i, n = 0, len(sql)
    while i < n:
        ch = sql[i]
        if ch in "'\"`":
            i = _skip_quoted(sql, i)
            continue
        if sql.startswith("/*!", i) or sql.startswith("/*M!", i):
            j = i + (3 if sql[i + 2] == "!" else 4)
            while j < n and sql[j].isdigit():
                j += 1
            for k in range(i, j):
                out[k] = " "
            end = _find_comment_end(sql, j)
            if end < 0:
                break
            out[end] = out[end + 1] = " "
            i = j
            continue
        if sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        if ch == "#" or (sql.startswith("--", i) and (i + 2 == n or sql[i + 2].isspace())):
            end = sql.find("\n", i)  # a line comment: a quote in it opens no string
            i = n if end < 0 else end + 1
            continue
        i += 1
    return "".join(out)


def _skip_quoted(sql: str, i: int) -> int:
    quote, j, n = sql[i], i + 1, len(sql)
    while j < n:
        if sql[j] == "\\" and quote != "`":
            j += 2
            continue
        if sql[j] == quote:
            if j + 1 < n and sql[j + 1] == quote:
                j += 2
                continue
            return j + 1
        j += 1
    return n


def _find_comment_end(sql: str, i: int) -> int:
    n = len(sql)
    while i < n:
        if sql[i] in "'\"`":
            i = _skip_quoted(sql, i)
            continue
        if sql.startswith("*/", i):
            return i
        i += 1
    return -1


def _statements(sql: str) -> Iterator[str]:
    """The statements of one QueryEvent: split at top-level semicolons, except a routine,
    trigger or event definition, whose body holds semicolons of its own."""
    tokens = tokenize(sql)
    if _is_routine(tokens):
        yield sql
        return
    start = 0
    for token in tokens:
        if token.token_type == TokenType.SEMICOLON:
            yield sql[start : token.start]
            start = token.end + 1
    yield sql[start:]


_ROUTINES: Final = frozenset({"PROCEDURE", "FUNCTION", "TRIGGER", "EVENT", "VIEW", "AGGREGATE"})


def _is_routine(tokens: Sequence[Token]) -> bool:
    words = [
        t.text.upper() for t in tokens[:12] if t.token_type not in (TokenType.STRING, TokenType.IDENTIFIER)
    ]
    return bool(words) and words[0] == "CREATE" and any(w in _ROUTINES for w in words)


def _words(tokens: Sequence[Token], count: int) -> list[str]:
    return [t.text.upper() if t.token_type != TokenType.IDENTIFIER else "" for t in tokens[:count]]


def apply_ddl(catalog: SchemaCatalog, ddl: str, default_database: str | None) -> list[TableChange]:
    """Apply every statement of ``ddl`` to ``catalog``; see ``SchemaCatalog.apply``."""
    changes: list[TableChange] = []
    database = default_database
    for statement in _statements(strip_executable_comments(ddl)):
        tokens = tokenize(statement)
        if not tokens:
            continue
        words = _words(tokens, 4)
        if words[0] == "USE" and len(tokens) > 1:
            database = tokens[1].text
            continue
        applier = _Statement(catalog, statement, tokens, database)
        changes.extend(applier.apply(words))
    return changes


def truncated_tables(ddl: str, default_database: str | None) -> list[tuple[str, str]]:
    """The (database, table) of each ``TRUNCATE [TABLE] name`` in ``ddl``: TRUNCATE changes no
    schema but empties a table, which Debezium reports as a truncate (``op: t``) event."""
    found: list[tuple[str, str]] = []
    database = default_database
    for statement in _statements(strip_executable_comments(ddl)):
        tokens = tokenize(statement)
        words = _words(tokens, 2)
        if words and words[0] == "USE" and len(tokens) > 1:
            database = tokens[1].text
        elif words and words[0] == "TRUNCATE":
            reader = TokenReader(tokens, 2 if words[1:] == ["TABLE"] else 1, statement)
            found.append(table_name(reader, database))
    return found


class _Statement:
    def __init__(self, catalog: SchemaCatalog, sql: str, tokens: list[Token], database: str | None) -> None:
        self.catalog = catalog
        self.sql = sql  # unstripped: token offsets index it
        self.tokens = tokens
        self.database = database

    def error(self, why: str) -> DdlError:
        return DdlError(f"{why} in DDL statement {self.sql.strip()!r}")

    def apply(self, words: list[str]) -> list[TableChange]:
        first = words[0]
        if first == "CREATE" and "TABLE" in words[1:4] and "TEMPORARY" not in words:
            return create_table(self.catalog, self.sql, self.tokens, self.database)
        if first in ("CREATE", "DROP", "ALTER") and words[1] in ("DATABASE", "SCHEMA"):
            return self.database_statement(first)
        if first == "DROP" and words[1] in ("TABLE", "TABLES"):  # not DROP TEMPORARY TABLE
            return drop_tables(self.catalog, self.sql, self.tokens, self.database)
        if first == "ALTER" and "TABLE" in words[1:4]:
            return alter_table(self.catalog, self.sql, self.tokens, self.database)
        if first == "RENAME" and words[1] in ("TABLE", "TABLES"):
            return rename_tables(self.catalog, self.sql, self.tokens, self.database)
        return []  # TRUNCATE, DML, account, session and routine statements change no table

    def database_statement(self, verb: str) -> list[TableChange]:
        words = [t.text for t in self.tokens if t.token_type != TokenType.EQ]
        upper = [w.upper() for w in words]
        rest = 2
        if upper[rest : rest + 2] == ["IF", "EXISTS"]:
            rest += 2
        elif upper[rest : rest + 3] == ["IF", "NOT", "EXISTS"]:
            rest += 3
        if rest >= len(words):
            raise self.error("no database name")
        database = words[rest]
        if verb == "DROP":
            return [TableChange("DROP", t.id, None) for t in self.catalog.drop_database(database)]
        charset = _charset_option(upper, words)
        if verb == "CREATE" or charset is not None:
            self.catalog.add_database(database, charset or self.catalog.database_charset(database))
        return []


def _charset_option(upper: list[str], words: list[str]) -> str | None:
    for i, word in enumerate(upper[:-1]):
        if word == "CHARSET" or (word == "SET" and i > 0 and upper[i - 1] == "CHARACTER"):
            return words[i + 1].lower()
    for i, word in enumerate(upper[:-1]):
        if word == "COLLATE":
            return words[i + 1].lower().split("_", 1)[0]
    return None
