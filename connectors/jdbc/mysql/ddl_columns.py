"""One MySQL/MariaDB column definition (``name type [attributes]``) read from DDL tokens.

sqlglot finds the column definitions of a statement, but its MySQL dialect normalises the
types the way its transpiler needs, not the way MySQL names them: ``REAL`` becomes FLOAT
(MySQL: DOUBLE), ``LONG`` and ``INT8`` become BIGINT and TINYINT (MySQL: MEDIUMTEXT and
BIGINT), ``TIMESTAMP`` becomes TIMESTAMPTZ, and the original text of a DEFAULT expression is
lost. So the definition itself is read here from sqlglot's tokens (which handle quoting,
escapes and comments), starting at the column name sqlglot located, and ending at the comma
or parenthesis that closes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from sqlglot import Token, TokenType

from connectors.jdbc.mysql.schema import DdlError, MySqlColumn

__all__ = ["JDBC_TYPES", "ColumnDefinition", "TokenReader", "read_column", "read_key_columns", "type_words"]

# java.sql.Types codes, as Debezium's MySQL DDL parser assigns them to each base type.
_BIT, _TINYINT, _SMALLINT, _INTEGER, _BIGINT = -7, -6, 5, 4, -5
_FLOAT, _REAL, _DOUBLE, _DECIMAL = 6, 7, 8, 3
_CHAR, _VARCHAR, _NCHAR, _NVARCHAR = 1, 12, -15, -9
_BINARY, _VARBINARY, _BLOB, _BOOLEAN = -2, -3, 2004, 16
_DATE, _TIME, _TIMESTAMP, _TIMESTAMP_TZ, _OTHER = 91, 92, 93, 2014, 1111

JDBC_TYPES: Final[dict[str, int]] = {
    "BIT": _BIT,
    "BOOLEAN": _BOOLEAN,
    "TINYINT": _SMALLINT,
    "SMALLINT": _SMALLINT,
    "MEDIUMINT": _INTEGER,
    "INT": _INTEGER,
    "BIGINT": _BIGINT,
    "FLOAT": _FLOAT,
    "DOUBLE": _DOUBLE,
    "DECIMAL": _DECIMAL,
    "CHAR": _CHAR,
    "VARCHAR": _VARCHAR,
    "TINYTEXT": _VARCHAR,
    "TEXT": _VARCHAR,
    "MEDIUMTEXT": _VARCHAR,
    "LONGTEXT": _VARCHAR,
    "BINARY": _BINARY,
    "VARBINARY": _VARBINARY,
    "TINYBLOB": _BLOB,
    "BLOB": _BLOB,
    "MEDIUMBLOB": _BLOB,
    "LONGBLOB": _BLOB,
    "DATE": _DATE,
    "TIME": _TIME,
    "DATETIME": _TIMESTAMP,
    "TIMESTAMP": _TIMESTAMP_TZ,
    "YEAR": _INTEGER,
    "ENUM": _CHAR,
    "SET": _CHAR,
    "JSON": _OTHER,
}

# Spelling -> MySQL's base type; two-word spellings are joined by a space.
_ALIASES: Final[dict[str, str]] = {
    "INTEGER": "INT",
    "INT4": "INT",
    "INT1": "TINYINT",
    "INT2": "SMALLINT",
    "INT3": "MEDIUMINT",
    "MIDDLEINT": "MEDIUMINT",
    "INT8": "BIGINT",
    "BOOL": "BOOLEAN",
    "DEC": "DECIMAL",
    "NUMERIC": "DECIMAL",
    "FIXED": "DECIMAL",
    "REAL": "DOUBLE",
    "DOUBLE PRECISION": "DOUBLE",
    "FLOAT8": "DOUBLE",
    "FLOAT4": "FLOAT",
    "CHARACTER": "CHAR",
    "CHARACTER VARYING": "VARCHAR",
    "CHAR VARYING": "VARCHAR",
    "LONG": "MEDIUMTEXT",
    "LONG VARCHAR": "MEDIUMTEXT",
    "LONG VARBINARY": "MEDIUMBLOB",
    "GEOMCOLLECTION": "GEOMETRYCOLLECTION",
}
# NCHAR and friends are CHAR/VARCHAR in MySQL's national character set (utf8mb3).
_NATIONAL: Final[dict[str, str]] = {
    "NCHAR": "CHAR",
    "NATIONAL CHAR": "CHAR",
    "NATIONAL CHARACTER": "CHAR",
    "NVARCHAR": "VARCHAR",
    "NCHAR VARCHAR": "VARCHAR",
    "NCHAR VARYING": "VARCHAR",
    "NATIONAL VARCHAR": "VARCHAR",
    "NATIONAL CHAR VARYING": "VARCHAR",
    "NATIONAL CHARACTER VARYING": "VARCHAR",
}
_AS_BINARY: Final[dict[str, str]] = {
    "CHAR": "BINARY",
    "VARCHAR": "VARBINARY",
    "TINYTEXT": "TINYBLOB",
    "TEXT": "BLOB",
    "MEDIUMTEXT": "MEDIUMBLOB",
    "LONGTEXT": "LONGBLOB",
}
_LENGTH_ONE: Final = frozenset({"CHAR", "BINARY", "BIT"})


@dataclass(frozen=True)
class ColumnDefinition:
    """A column read from DDL, plus what it says beyond the column: an inline PRIMARY KEY."""

    column: MySqlColumn
    primary_key: bool
    end: int  # index of the first token after the definition


class TokenReader:
    """A cursor over one statement's sqlglot tokens, with the statement's text for errors."""

    def __init__(self, tokens: Sequence[Token], index: int, sql: str) -> None:
        self.tokens = tokens
        self.i = index
        self.sql = sql

    def peek(self, ahead: int = 0) -> Token | None:
        j = self.i + ahead
        return self.tokens[j] if j < len(self.tokens) else None

    def word(self, ahead: int = 0) -> str | None:
        """The upper-case keyword at the cursor; None for quoted names, strings and punctuation."""
        token = self.peek(ahead)
        if token is None or token.token_type in _NOT_WORDS:
            return None
        return token.text.upper()

    def at_end(self) -> bool:
        token = self.peek()
        return token is None or token.token_type in (TokenType.COMMA, TokenType.R_PAREN, TokenType.SEMICOLON)

    def take(self) -> Token:
        token = self.peek()
        if token is None:
            raise DdlError(f"DDL ends inside a column definition: {self.sql!r}")
        self.i += 1
        return token

    def accept(self, *words: str) -> bool:
        if all(self.word(k) == w for k, w in enumerate(words)):
            self.i += len(words)
            return True
        return False

    def skip_group(self) -> tuple[int, int]:
        """Skip a parenthesised group; return the index span of the tokens inside it."""
        start = self.i
        if self.peek() is None or self.take().token_type != TokenType.L_PAREN:
            raise DdlError(f"expected '(' at offset {self.tokens[start].start} of {self.sql!r}")
        depth = 1
        while depth:
            token = self.take()
            if token.token_type == TokenType.L_PAREN:
                depth += 1
            elif token.token_type == TokenType.R_PAREN:
                depth -= 1
        return start + 1, self.i - 1

    def name(self) -> str:
        token = self.take()
        if token.token_type in (TokenType.COMMA, TokenType.L_PAREN, TokenType.R_PAREN, TokenType.SEMICOLON):
            raise DdlError(f"expected a name at offset {token.start}, found {token.text!r} in {self.sql!r}")
        return token.text

    def qualified_name(self) -> tuple[str | None, str]:
        """``name`` or ``db.name``: (database or None, name)."""
        first = self.name()
        if self.is_at(TokenType.DOT):
            self.take()
            return first, self.name()
        return None, first

    def is_at(self, token_type: TokenType) -> bool:
        token = self.peek()
        return token is not None and token.token_type == token_type

    def skip_item(self) -> None:
        """Skip to the comma or closing parenthesis that ends the current list item."""
        while not self.at_end():
            if self.is_at(TokenType.L_PAREN):
                self.skip_group()
            else:
                self.take()

    def text(self, first: int, last: int) -> str:
        """The statement's original text of tokens first..last (inclusive)."""
        return self.sql[self.tokens[first].start : self.tokens[last].end + 1]


_NOT_WORDS: Final = frozenset(
    {
        TokenType.IDENTIFIER, TokenType.STRING, TokenType.NUMBER, TokenType.L_PAREN,
        TokenType.R_PAREN, TokenType.COMMA, TokenType.SEMICOLON, TokenType.BIT_STRING,
        TokenType.HEX_STRING, TokenType.DASH, TokenType.PLUS, TokenType.EQ, TokenType.DOT,
        TokenType.NATIONAL_STRING, TokenType.BYTE_STRING,
    }
)  # fmt: skip


def type_words(words: Sequence[str | None]) -> tuple[str, int]:
    """The longest known spelling of a type at the start of ``words``, and its word count."""
    for count in (3, 2):
        if len(words) >= count and all(words[:count]):
            spelling = " ".join(w for w in words[:count] if w)
            if spelling in _ALIASES or spelling in _NATIONAL:
                return spelling, count
    return words[0] or "", 1


def read_column(tokens: Sequence[Token], index: int, sql: str, position: int) -> ColumnDefinition:
    """Read the column definition whose name is ``tokens[index]``."""
    r = TokenReader(tokens, index, sql)
    name = r.name()
    first = r.word()
    if first is None:
        raise DdlError(f"column {name!r} has no type in {sql!r}")
    spelling, words = type_words([first, r.word(1), r.word(2)])
    r.i += words
    charset: str | None = None
    unsigned = zerofill = auto_increment = primary_key = generated = False
    optional = True
    if spelling in _NATIONAL:
        type_name, charset = _NATIONAL[spelling], "utf8mb3"
    elif spelling == "SERIAL":
        # SERIAL = BIGINT UNSIGNED NOT NULL AUTO_INCREMENT UNIQUE
        type_name, unsigned, optional, auto_increment = "BIGINT", True, False, True
    else:
        type_name = _ALIASES.get(spelling, spelling)
    length: int | None = None
    scale: int | None = None
    enum_values: tuple[str, ...] = ()
    if r.is_at(TokenType.L_PAREN):
        inner_first, inner_last = r.skip_group()
        params = [
            tokens[k] for k in range(inner_first, inner_last) if tokens[k].token_type != TokenType.COMMA
        ]
        if type_name in ("ENUM", "SET"):
            enum_values = tuple(t.text for t in params)
        else:
            numbers = [_int(t, sql) for t in params]
            length = numbers[0] if numbers else None
            scale = numbers[1] if len(numbers) > 1 else None
    if type_name == "FLOAT" and length is not None and scale is None:
        # FLOAT(p) picks FLOAT or DOUBLE by precision and keeps no (M,D).
        type_name = "DOUBLE" if length > 24 else "FLOAT"
        length = None
    if type_name == "DECIMAL" and length is None:
        length, scale = 10, 0
    elif type_name == "DECIMAL" and scale is None:
        scale = 0
    if type_name in _LENGTH_ONE and length is None:
        length = 1
    collation: str | None = None
    default: str | None = None
    comment: str | None = None
    on_update: str | None = None
    while not r.at_end():
        if r.accept("UNSIGNED"):
            unsigned = True
        elif r.accept("ZEROFILL"):
            unsigned = zerofill = True
        elif r.accept("SIGNED") or r.accept("NULL") or r.accept("VISIBLE") or r.accept("INVISIBLE"):
            pass
        elif r.accept("NOT", "NULL"):
            optional = False
        elif r.accept("CHARACTER", "SET") or r.accept("CHARSET"):
            _equals(r)
            charset = r.name().lower()
        elif r.accept("ASCII"):
            charset = "latin1"
        elif r.accept("UNICODE"):
            charset = "ucs2"
        elif r.accept("BYTE"):
            type_name = _AS_BINARY.get(type_name, type_name)
        elif r.accept("BINARY"):
            pass  # CHAR(n) BINARY: the _bin collation of the column's charset, still text
        elif r.accept("COLLATE"):
            _equals(r)
            collation = r.name().lower()
        elif r.accept("DEFAULT"):
            default = _expression(r)
        elif r.accept("ON", "UPDATE"):
            on_update = _expression(r)
        elif r.accept("AUTO_INCREMENT"):
            auto_increment = True
        elif r.accept("PRIMARY", "KEY") or r.accept("KEY"):
            primary_key, optional = True, False
        elif r.accept("UNIQUE"):
            r.accept("KEY")
        elif r.accept("COMMENT"):
            _equals(r)
            comment = r.take().text
        elif r.accept("GENERATED", "ALWAYS", "AS") or r.accept("AS"):
            if r.is_at(TokenType.L_PAREN):
                generated = True
                r.skip_group()
            elif r.accept("ROW"):
                r.take()  # MariaDB's system-versioning ROW START / ROW END: written by the server
        elif r.accept("SERIAL", "DEFAULT", "VALUE"):
            # = NOT NULL AUTO_INCREMENT UNIQUE
            optional, auto_increment = False, True
        elif r.accept("CHECK"):
            r.skip_group()
        elif r.accept("REFERENCES"):
            # An inline foreign key (MySQL ignores it); its ON UPDATE is not the column's.
            r.qualified_name()
            if r.is_at(TokenType.L_PAREN):
                r.skip_group()
            while True:
                if r.accept("MATCH"):
                    r.take()  # FULL | PARTIAL | SIMPLE
                elif r.accept("ON", "DELETE") or r.accept("ON", "UPDATE"):
                    if not (r.accept("SET") or r.accept("NO")):
                        r.take()  # RESTRICT | CASCADE
                    else:
                        r.take()  # NULL | DEFAULT | ACTION
                else:
                    break
        elif r.word() in ("FIRST", "AFTER"):
            break  # ALTER TABLE's column position; the statement reader takes it
        elif r.is_at(TokenType.L_PAREN):
            r.skip_group()
        else:
            r.take()  # VIRTUAL, STORED, STORAGE DISK, COLUMN_FORMAT FIXED, SRID n, ...: no bearing
    if charset is None and collation is not None:
        charset = collation.split("_", 1)[0]
    if charset == "binary" and type_name in _AS_BINARY:
        # MySQL creates text in the binary character set as the binary string type.
        type_name, charset, collation = _AS_BINARY[type_name], None, None
    if type_name == "BOOLEAN":
        length = None
    if default is None and optional and not generated and not auto_increment:
        # MySQL gives a nullable column without DEFAULT an explicit DEFAULT NULL (and MariaDB
        # prints it for every type), so the model is the same from either DDL.
        default = "NULL"
    column = MySqlColumn(
        name=name,
        type_name=type_name,
        position=position,
        length=length,
        scale=scale,
        unsigned=unsigned and type_name not in ("BOOLEAN",),
        optional=optional,
        auto_increment=auto_increment,
        default=default,
        enum_values=enum_values,
        charset=charset,
        jdbc_type=JDBC_TYPES.get(type_name, _OTHER),
        zerofill=zerofill,
        collation=collation,
        comment=comment,
        generated=generated,
        on_update=on_update,
        type_expression=type_name,
    )
    return ColumnDefinition(column, primary_key, r.i)


def read_key_columns(r: TokenReader) -> list[str]:
    """The column names of an index's ``[USING x] (key_part, ...)``; a key part may carry a
    prefix length or an order (``name(10) DESC``)."""
    while not r.is_at(TokenType.L_PAREN):
        if r.at_end():
            raise DdlError(f"key without columns in {r.sql.strip()!r}")
        r.take()  # USING BTREE
    first, last = r.skip_group()
    names: list[str] = []
    depth = 0
    expect_name = True
    for token in r.tokens[first:last]:
        if token.token_type == TokenType.L_PAREN:
            depth += 1
        elif token.token_type == TokenType.R_PAREN:
            depth -= 1
        elif token.token_type == TokenType.COMMA and depth == 0:
            expect_name = True
        elif expect_name and depth == 0:
            names.append(token.text)
            expect_name = False
    return names


def _int(token: Token, sql: str) -> int:
    try:
        return int(token.text)
    except ValueError:
        raise DdlError(
            f"expected a number, found {token.text!r} at offset {token.start} of {sql!r}"
        ) from None


def _equals(r: TokenReader) -> None:
    token = r.peek()
    if token is not None and token.token_type == TokenType.EQ:
        r.take()


def _expression(r: TokenReader) -> str:
    """The original text of one DEFAULT / ON UPDATE expression."""
    first = r.i
    token = r.peek()
    if token is None:
        raise DdlError(f"DEFAULT without a value in {r.sql!r}")
    if token.token_type == TokenType.L_PAREN:
        r.skip_group()
    elif token.token_type in (TokenType.DASH, TokenType.PLUS) or token.token_type == TokenType.INTRODUCER:
        r.take()
        r.take()
    else:
        r.take()
        after = r.peek()
        if after is not None and after.token_type == TokenType.L_PAREN and token.token_type not in _NOT_WORDS:
            r.skip_group()  # a function call: current_timestamp(3), uuid(), nextval(s)
    return r.text(first, r.i - 1)
