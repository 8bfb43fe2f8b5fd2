"""MySQL/MariaDB DDL statements applied to a ``SchemaCatalog``, the way Debezium replays the binlog.

One binlog QueryEvent holds one statement as the client sent it (a snapshot feeds the
``SHOW CREATE TABLE`` text), possibly with comments and MySQL's ``/*!NNNNN ... */``
executable comments, whose content the server runs and so must be read. Statements are
told apart by sqlglot (``sqlglot.parse(sql, read="mysql")``); what sqlglot models well
(DROP TABLE, TRUNCATE, CREATE/DROP DATABASE, USE, the name and options of CREATE TABLE,
CREATE TABLE ... LIKE) is taken from its tree. Column definitions are read from sqlglot's
tokens (see ``ddl_columns``), and so are the pieces where sqlglot falls back to a
``Command`` or misreads MySQL (RENAME TABLE, most ALTER TABLE forms): see ``ddl_alter``.

Statements that change no table (BEGIN, GRANT, SET, CREATE USER, FLUSH, CREATE INDEX,
views, routines, triggers, temporary tables...) yield nothing; table DDL that cannot be
read raises ``DdlError`` naming the statement.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Final

import sqlglot
from sqlglot import Token, TokenType, exp
from sqlglot.dialects.mysql import MySQL
from sqlglot.errors import SqlglotError

from connectors.jdbc.mysql.ddl_columns import read_column
from connectors.jdbc.mysql.schema import DdlError, MySqlColumn, MySqlTable, SchemaCatalog, TableChange

__all__ = ["apply_ddl", "strip_executable_comments", "tokenize"]


class _MySql(MySQL):
    """sqlglot's MySQL dialect, accepting type names it does not know (POINT, LINESTRING,
    MariaDB's INET6, ...) instead of failing the whole CREATE TABLE; ``ddl_columns`` reads
    the type itself anyway."""

    SUPPORTS_USER_DEFINED_TYPES = True


_DIALECT: Final = _MySql()


def tokenize(sql: str) -> list[Token]:
    try:
        return list(_DIALECT.tokenize(sql))
    except SqlglotError as exc:
        raise DdlError(f"cannot read DDL {sql!r}: {exc}") from exc


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
        words = _words(tokens, 3)
        if words[0] == "USE" and len(tokens) > 1:
            database = tokens[1].text
            continue
        applier = _Statement(catalog, statement, tokens, database)
        changes.extend(applier.apply(words))
    return changes


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
        if first == "CREATE" and "TABLE" in words[1:3] and "TEMPORARY" not in words:
            return self.create_table()
        if first in ("CREATE", "DROP", "ALTER") and words[1] in ("DATABASE", "SCHEMA"):
            return self.database_statement(first)
        if first == "DROP" and words[1] in ("TABLE", "TABLES"):
            return self.drop_tables()
        if first == "ALTER" and "TABLE" in words[1:3]:
            from connectors.jdbc.mysql.ddl_alter import alter_table

            return alter_table(self.catalog, self.sql, self.tokens, self.database)
        if first == "RENAME" and words[1] in ("TABLE", "TABLES"):
            from connectors.jdbc.mysql.ddl_alter import rename_tables

            return rename_tables(self.catalog, self.sql, self.tokens, self.database)
        return []  # TRUNCATE, DML, account, session and routine statements change no table

    def parse(self) -> exp.Expr:
        try:
            parsed = sqlglot.parse(self.sql, read=_DIALECT)
        except SqlglotError as exc:
            raise self.error(f"cannot parse ({exc})") from exc
        if len(parsed) != 1 or parsed[0] is None:
            raise self.error("expected one statement")
        return parsed[0]

    def qualify(self, table: exp.Table) -> tuple[str, str]:
        database = table.db or self.database
        if not database:
            raise self.error(f"table {table.name!r} has no database and no default database is in use")
        return database, table.name

    def create_table(self) -> list[TableChange]:
        tree = self.parse()
        if not isinstance(tree, exp.Create):  # sqlglot's Command: text it could not model
            raise self.error("cannot parse")
        target = tree.this
        schema = target if isinstance(target, exp.Schema) else None
        table_node = target.this if isinstance(target, exp.Schema) else target
        if not isinstance(table_node, exp.Table):
            raise self.error("no table name")
        database, name = self.qualify(table_node)
        existing = self.catalog.table(database, name)
        if existing is not None and tree.args.get("exists"):
            return []  # IF NOT EXISTS on an existing table changes nothing
        properties = tree.args.get("properties")
        like = properties.find(exp.LikeProperty) if properties is not None else None
        if like is None and schema is not None:
            like = schema.find(exp.LikeProperty)
        if like is not None:
            source = self.catalog.table(*self.qualify(like.this))
            if source is None:
                return []  # a table the catalog does not hold (not captured): nothing to copy
            table = MySqlTable(
                database, name, source.columns, source.primary_key, source.default_charset, source.comment
            )
        else:
            if schema is None:
                raise self.error("CREATE TABLE without columns")
            table = self.table_from_schema(database, name, schema, properties)
        self.catalog.put(table)
        return [TableChange("CREATE", table.id, table)]

    def table_from_schema(
        self, database: str, name: str, schema: exp.Schema, properties: exp.Expression | None
    ) -> MySqlTable:
        starts = {token.start: index for index, token in enumerate(self.tokens)}
        columns: list[MySqlColumn] = []
        primary_key: list[str] = []
        for element in schema.expressions:
            if isinstance(element, exp.ColumnDef):
                start = element.this.meta.get("start", -1)
                index = starts.get(start, starts.get(start - 1))  # a quoted name's token starts at its quote
                if index is None:
                    raise self.error(f"cannot locate column {element.name!r}")
                definition = read_column(self.tokens, index, self.sql, len(columns) + 1)
                columns.append(definition.column)
                if definition.primary_key:
                    primary_key = [definition.column.name]
            elif isinstance(element, exp.Identifier | exp.Column):
                raise self.error(f"column {element.name!r} has no type")
            else:
                key = element if isinstance(element, exp.PrimaryKey) else element.find(exp.PrimaryKey)
                if key is not None:
                    primary_key = [_key_part(part) for part in key.expressions]
        charset, comment = _table_options(properties)
        if charset is None:
            charset = self.catalog.database_charset(database)
        table = MySqlTable(database, name, tuple(columns), tuple(primary_key), charset, comment)
        return with_primary_key(table, tuple(primary_key))

    def drop_tables(self) -> list[TableChange]:
        if "TEMPORARY" in _words(self.tokens, 3):
            return []
        tree = self.parse()
        if not isinstance(tree, exp.Drop):
            raise self.error("not a DROP TABLE")
        changes: list[TableChange] = []
        for node in tree.expressions or tree.args.get("tables") or []:
            if isinstance(node, exp.Table):
                dropped = self.catalog.remove(*self.qualify(node))
                if dropped is not None:
                    changes.append(TableChange("DROP", dropped.id, None))
        return changes

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


def _key_part(part: exp.Expression) -> str:
    if isinstance(part, exp.ColumnPrefix | exp.Ordered):
        return _key_part(part.this)
    return part.name


def _table_options(properties: exp.Expression | None) -> tuple[str | None, str | None]:
    charset: str | None = None
    collation: str | None = None
    comment: str | None = None
    for prop in properties.expressions if properties is not None else []:
        if isinstance(prop, exp.CharacterSetProperty):
            charset = prop.name.lower()
        elif isinstance(prop, exp.CollateProperty):
            collation = prop.name.lower()
        elif isinstance(prop, exp.SchemaCommentProperty):
            comment = prop.this.name if isinstance(prop.this, exp.Literal) else prop.this.sql()
    if charset is None and collation is not None:
        charset = collation.split("_", 1)[0]
    return charset, comment


def with_primary_key(table: MySqlTable, key: tuple[str, ...]) -> MySqlTable:
    """``table`` keyed by ``key``, whose columns become NOT NULL as MySQL makes them; key
    names take the columns' spelling."""
    wanted = {k.lower() for k in key}
    columns = [
        c
        if c.name.lower() not in wanted or not c.optional
        else MySqlColumn(**{**c.__dict__, "optional": False})
        for c in table.columns
    ]
    spelled = tuple((table.column(k) or MySqlColumn(k, "", 0)).name for k in key)
    return MySqlTable(
        table.database, table.name, tuple(columns), spelled, table.default_charset, table.comment
    )
