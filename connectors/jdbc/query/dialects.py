"""What differs between databases: clock, time zones, timestamp comparisons, table
listing, result metadata and which errors are worth retrying.

One ``DatabaseDialect`` per SQLAlchemy dialect name (``dialect_for``): PostgreSQL,
MySQL/MariaDB and SQLite are tested; any other database SQLAlchemy reaches gets the
generic behaviour (ANSI ``CURRENT_TIMESTAMP``, the default schema's tables, coarse
types for custom queries).

Timestamps are compared in the database as naive values in ``db.timezone``; the
session time zone is set to ``db.timezone`` too, so that PostgreSQL TIMESTAMPTZ and
MySQL TIMESTAMP columns compare (and read back) consistently with naive ones.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy import types as sat
from sqlalchemy.dialects import mysql, postgresql
from sqlalchemy.engine import Connection
from sqlalchemy.sql.elements import ColumnElement

from connectors.jdbc.query.criteria import query_source
from connectors.jdbc.query.tables import TableId, like_pattern
from connectors.jdbc.query.types import ColumnSpec, timestamp_converter

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TableDescription:
    """A table's columns (in order), primary key and auto-increment column."""

    columns: tuple[ColumnSpec, ...]
    primary_key: tuple[str, ...]
    autoincrement: str | None


class DatabaseDialect:
    """The generic behaviour; subclasses adjust it per database."""

    name: ClassVar[str] = "generic"
    #: Schemas holding the database's own catalog, never copied.
    system_schemas: ClassVar[frozenset[str]] = frozenset({"information_schema"})

    # -- sessions and time -------------------------------------------------------------------

    def prepare_session(self, dbapi_connection: Any, zone_name: str, zone: dt.tzinfo) -> None:
        """Called on every new connection: make the session read and compare naive
        timestamps in ``db.timezone``."""

    def clock_statement(self) -> sa.Select[Any]:
        return sa.select(sa.func.current_timestamp())

    def current_time(self, connection: Connection, zone: dt.tzinfo) -> dt.datetime:
        """The database's clock, aware (UTC): the timestamp modes' end bound is taken from
        the database, not from this machine."""
        value = connection.execute(self.clock_statement()).scalar_one()
        return timestamp_converter(zone)(value)

    timestamp_type: ClassVar[sat.TypeEngine[Any]] = sa.DateTime()

    def timestamp_parameter(self, instant: dt.datetime, zone: dt.tzinfo) -> Any:
        """``instant`` as the database compares timestamps: naive, in ``db.timezone``."""
        return instant.astimezone(zone).replace(tzinfo=None)

    def normalize_timestamp(self, expression: ColumnElement[Any]) -> ColumnElement[Any]:
        """A timestamp (a row's column or a parameter) as the database compares it."""
        return expression

    def offset_timestamp(self, value: dt.datetime) -> dt.datetime:
        """A row's timestamp at the precision the database compares it."""
        return value

    # -- tables ------------------------------------------------------------------------------

    def list_tables(
        self,
        connection: Connection,
        *,
        types: frozenset[str] = frozenset({"TABLE"}),
        catalog_pattern: str | None = None,
        schema_pattern: str | None = None,
    ) -> list[TableId]:
        inspector = sa.inspect(connection)
        schemas = self._schemas(inspector, schema_pattern)
        found = []
        for schema in schemas:
            found += [self._table_id(schema, name) for name in _names(inspector, types, schema)]
        return found

    def _schemas(self, inspector: sa.Inspector, pattern: str | None) -> list[str | None]:
        if pattern is None:
            return [None]
        regex = like_pattern(pattern)
        return [
            s for s in inspector.get_schema_names() if s not in self.system_schemas and regex.fullmatch(s)
        ]

    def _table_id(self, schema: str | None, name: str) -> TableId:
        return TableId(None, schema, name)

    def qualifier(self, table: TableId) -> str | None:
        """The SQLAlchemy ``schema`` argument naming where ``table`` lives."""
        return table.schema or table.catalog

    def describe_table(self, connection: Connection, table: TableId) -> TableDescription:
        """Columns, primary key and auto-increment column, by reflection."""
        inspector = sa.inspect(connection)
        schema = self.qualifier(table)
        try:
            reflected = inspector.get_columns(table.name, schema=schema)
            pk = tuple(
                inspector.get_pk_constraint(table.name, schema=schema).get("constrained_columns") or ()
            )
        except sa_exc.NoSuchTableError:
            raise TableMissing(table) from None
        columns = tuple(ColumnSpec(c["name"], c["type"], bool(c["nullable"])) for c in reflected)
        auto = next((c["name"] for c in reflected if c.get("autoincrement") is True), None)
        return TableDescription(columns, pk, auto)

    def table_exists(self, connection: Connection, table: TableId) -> bool:
        return sa.inspect(connection).has_table(table.name, schema=self.qualifier(table))

    # -- custom queries ------------------------------------------------------------------------

    def describe_query(self, connection: Connection, query: str) -> tuple[ColumnSpec, ...]:
        """The columns of ``query``'s results, from an execution that returns no row."""
        stmt: sa.Select[Any] = sa.select(sa.literal_column("*")).select_from(query_source(query)).limit(0)
        result = connection.execute(stmt)
        try:
            return self._describe_cursor(result.cursor, connection.dialect.dbapi)
        finally:
            result.close()

    def _describe_cursor(self, cursor: Any, dbapi: Any) -> tuple[ColumnSpec, ...]:
        return tuple(_generic_column(dbapi, entry) for entry in cursor.description or ())

    # -- errors --------------------------------------------------------------------------------

    def is_permanent(self, error: sa_exc.DBAPIError) -> bool:
        """Whether retrying the statement cannot help (bad SQL, a missing table or column)."""
        return isinstance(error, sa_exc.ProgrammingError)


def _names(inspector: sa.Inspector, types: frozenset[str], schema: str | None) -> list[str]:
    """The names of the tables (``TABLE``) and views (``VIEW``) in ``schema``."""
    names: list[str] = []
    if "TABLE" in types:
        names += inspector.get_table_names(schema=schema)
    if "VIEW" in types:
        names += inspector.get_view_names(schema=schema)
    return names


class TableMissing(Exception):
    """A table to copy no longer exists (it was dropped or renamed)."""

    def __init__(self, table: TableId) -> None:
        super().__init__(f"table {table.fqn} does not exist")
        self.table = table


def _generic_column(dbapi: Any, entry: Sequence[Any]) -> ColumnSpec:
    """Coarse types from the DB-API's type objects, for databases without a dialect here."""
    code = entry[1]
    t: sat.TypeEngine[Any] = sat.NullType()
    if dbapi is not None and code is not None:
        if code == getattr(dbapi, "NUMBER", None):
            t = sa.Numeric(entry[4], entry[5]) if len(entry) > 5 and entry[4] else sa.Float()
        elif code == getattr(dbapi, "DATETIME", None):
            t = sa.DateTime()
        elif code == getattr(dbapi, "BINARY", None):
            t = sa.LargeBinary()
        elif code == getattr(dbapi, "STRING", None):
            t = sa.String()
    return ColumnSpec(str(entry[0]), t, True)


# -- PostgreSQL -------------------------------------------------------------------------------------

# Built-in type OIDs (fixed in every PostgreSQL release) -> SQLAlchemy types.
_PG_TYPES: dict[int, sat.TypeEngine[Any]] = {
    16: sa.Boolean(),
    17: postgresql.BYTEA(),
    18: sa.CHAR(1),
    19: sa.String(),  # name
    20: sa.BigInteger(),
    21: sa.SmallInteger(),
    23: sa.Integer(),
    25: sa.Text(),
    26: sa.BigInteger(),  # oid: unsigned 32-bit
    114: postgresql.JSON(),
    700: sa.REAL(),
    701: postgresql.DOUBLE_PRECISION(),
    1042: sa.CHAR(),
    1043: sa.VARCHAR(),
    1082: sa.Date(),
    1083: sa.Time(),
    1114: sa.DateTime(),
    1184: sa.DateTime(timezone=True),
    1186: postgresql.INTERVAL(),
    1266: sa.Time(timezone=True),
    2950: sa.Uuid(),
    3802: postgresql.JSONB(),
}


def postgres_column(name: str, oid: int, precision: int | None, scale: int | None) -> ColumnSpec:
    """A query result column of PostgreSQL type ``oid`` (numeric: with its precision and
    scale); other types (arrays, enums, ranges) read as text. Nullability is unknown."""
    if oid == 1700:
        return ColumnSpec(name, sa.Numeric(precision or None, scale if precision else None), True)
    return ColumnSpec(name, _PG_TYPES.get(oid, sat.NullType()), True)


# pg_class.relkind -> the table type PgJDBC reports for it.
_PG_RELKINDS = {
    "r": "TABLE",
    "v": "VIEW",
    "p": "PARTITIONED TABLE",
    "m": "MATERIALIZED VIEW",
    "f": "FOREIGN TABLE",
}


class PostgresDialect(DatabaseDialect):
    name = "postgresql"

    def prepare_session(self, dbapi_connection: Any, zone_name: str, zone: dt.tzinfo) -> None:
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("SELECT set_config('TimeZone', %s, false)", (_zone_name(zone_name),))
        finally:
            cursor.close()
        dbapi_connection.commit()  # SET is transactional in PostgreSQL

    def list_tables(
        self,
        connection: Connection,
        *,
        types: frozenset[str] = frozenset({"TABLE"}),
        catalog_pattern: str | None = None,
        schema_pattern: str | None = None,
    ) -> list[TableId]:
        if catalog_pattern is not None:
            database = connection.execute(sa.text("SELECT current_database()")).scalar_one()
            if not like_pattern(catalog_pattern).fullmatch(database):
                return []
        kinds = [kind for kind, name in _PG_RELKINDS.items() if name in types]
        if not kinds:
            return []
        # pg_class rather than SQLAlchemy's lists: those put a partitioned table beside its
        # partitions, and its rows would be copied twice. PgJDBC's (Confluent's) types:
        # partitions are TABLEs, their parent a PARTITIONED TABLE.
        rows = connection.execute(
            sa.text(
                "SELECT n.nspname, c.relname FROM pg_catalog.pg_class c "
                "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
                "WHERE c.relkind = ANY(:kinds) AND n.nspname <> 'information_schema' "
                "AND n.nspname NOT LIKE 'pg\\_%'"
            ),
            {"kinds": kinds},
        ).all()
        regex = like_pattern(schema_pattern) if schema_pattern is not None else None
        return [
            TableId(None, schema, name) for schema, name in rows if regex is None or regex.fullmatch(schema)
        ]

    def _describe_cursor(self, cursor: Any, dbapi: Any) -> tuple[ColumnSpec, ...]:
        out = []
        for entry in cursor.description or ():
            out.append(postgres_column(str(entry[0]), int(entry[1]), entry[4], entry[5]))
        return tuple(out)


# -- MySQL / MariaDB ----------------------------------------------------------------------------------

_MYSQL_NOT_NULL = 1
_MYSQL_UNSIGNED = 32
_MYSQL_ENUM = 256
_MYSQL_SET = 2048
_MYSQL_BINARY_CHARSET = 63
# Error numbers retrying cannot fix (PyMySQL reports some of them as OperationalError).
_MYSQL_PERMANENT = frozenset({1054, 1064, 1146, 1142, 1143, 1049, 1051})


def mysql_column(
    name: str, type_code: int, length: int, scale: int, flags: int = 0, charset: int = 0
) -> ColumnSpec:
    """A query result column from MySQL's protocol metadata (PyMySQL's field packet)."""
    unsigned = bool(flags & _MYSQL_UNSIGNED)
    binary = charset == _MYSQL_BINARY_CHARSET
    t: sat.TypeEngine[Any]
    if type_code == 1:
        t = mysql.TINYINT(display_width=length, unsigned=unsigned)
    elif type_code == 2:
        t = mysql.SMALLINT(unsigned=unsigned)
    elif type_code == 9:
        t = mysql.MEDIUMINT(unsigned=unsigned)
    elif type_code == 3:
        t = mysql.INTEGER(unsigned=unsigned)
    elif type_code == 8:
        t = mysql.BIGINT(unsigned=unsigned)
    elif type_code == 4:
        t = mysql.FLOAT()
    elif type_code == 5:
        t = mysql.DOUBLE()
    elif type_code in (0, 246):
        # The display length counts the digits, the point and (signed) the sign.
        precision = length - (1 if scale > 0 else 0) - (0 if unsigned else 1)
        t = mysql.DECIMAL(precision=max(precision, 1), scale=scale)
    elif type_code == 16:
        t = mysql.BIT(length)
    elif type_code in (10, 14):
        t = sa.Date()
    elif type_code == 11:
        t = sa.Time()
    elif type_code in (7, 12):
        t = sa.DateTime()
    elif type_code == 13:
        t = mysql.YEAR()
    elif type_code == 245:
        t = sa.JSON()
    elif type_code in (15, 249, 250, 251, 252, 253, 254):
        # ENUM and SET values are text even where the column's collation is binary.
        textual = bool(flags & (_MYSQL_ENUM | _MYSQL_SET)) or not binary
        t = sa.String() if textual else sa.LargeBinary()
    elif type_code == 255:
        t = sa.LargeBinary()  # geometry: MySQL's internal binary format
    else:
        t = sat.NullType()
    return ColumnSpec(name, t, not flags & _MYSQL_NOT_NULL)


class MySqlDialect(DatabaseDialect):
    name = "mysql"
    system_schemas = frozenset({"information_schema", "mysql", "performance_schema", "sys"})

    def prepare_session(self, dbapi_connection: Any, zone_name: str, zone: dt.tzinfo) -> None:
        cursor = dbapi_connection.cursor()
        try:
            try:
                cursor.execute("SET time_zone = %s", (_zone_name(zone_name),))
            except Exception:
                # Named zones need the server's time zone tables; fall back to the zone's
                # current offset (exact for UTC and zones without daylight saving time).
                offset = dt.datetime.now(zone).utcoffset() or dt.timedelta(0)
                minutes = int(offset.total_seconds()) // 60
                sign = "+" if minutes >= 0 else "-"
                fixed = f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
                if zone_name.upper() not in ("UTC", "Z", "GMT"):
                    log.warning(
                        "the server has no time zone tables: using the fixed offset %s for db.timezone=%s",
                        fixed,
                        zone_name,
                    )
                cursor.execute("SET time_zone = %s", (fixed,))
        finally:
            cursor.close()

    def clock_statement(self) -> sa.Select[Any]:
        return sa.select(sa.func.utc_timestamp(sa.literal_column("6")))

    def current_time(self, connection: Connection, zone: dt.tzinfo) -> dt.datetime:
        value = connection.execute(self.clock_statement()).scalar_one()
        return timestamp_converter(dt.UTC)(value)

    def list_tables(
        self,
        connection: Connection,
        *,
        types: frozenset[str] = frozenset({"TABLE"}),
        catalog_pattern: str | None = None,
        schema_pattern: str | None = None,
    ) -> list[TableId]:
        inspector = sa.inspect(connection)
        patterns = [p for p in (catalog_pattern, schema_pattern) if p is not None]
        if patterns:
            regexes = [like_pattern(p) for p in patterns]
            databases = [
                d
                for d in inspector.get_schema_names()
                if d not in self.system_schemas and all(r.fullmatch(d) for r in regexes)
            ]
        else:
            current = inspector.default_schema_name
            databases = [current] if current else []
        return [TableId(d, None, name) for d in databases for name in _names(inspector, types, d)]

    def _describe_cursor(self, cursor: Any, dbapi: Any) -> tuple[ColumnSpec, ...]:
        # PyMySQL keeps the protocol's field packets (flags, charset) beside the DB-API
        # description, which has neither signedness nor binary-ness.
        fields = getattr(getattr(cursor, "_result", None), "fields", None)
        if fields is None:
            return tuple(
                mysql_column(str(e[0]), int(e[1]), int(e[3] or 0), int(e[5] or 0), 0 if e[6] else 1)
                for e in cursor.description or ()
            )
        return tuple(
            mysql_column(
                str(f.name),
                int(f.type_code),
                int(f.length or 0),
                int(f.scale or 0),
                int(f.flags),
                int(f.charsetnr),
            )
            for f in fields
        )

    def is_permanent(self, error: sa_exc.DBAPIError) -> bool:
        args = getattr(error.orig, "args", ())
        code = args[0] if args and isinstance(args[0], int) else None
        return isinstance(error, sa_exc.ProgrammingError) or code in _MYSQL_PERMANENT


# -- SQLite ----------------------------------------------------------------------------------------------

# SQLite keeps timestamps as text; they are compared in this one format (millisecond precision),
# whatever format each row was written in.
SQLITE_TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%f"
_SQLITE_PERMANENT = re.compile(r"no such (table|column)|syntax error|has no column", re.IGNORECASE)


def sqlite_milliseconds(moment: dt.datetime) -> dt.datetime:
    """``moment`` at the millisecond SQLite's ``strftime('...%f')`` shows it: the seconds
    rounded half up to the millisecond, at most 59.999 (it does not carry into the minute);
    checked against SQLite itself in the tests."""
    millis = min((moment.second * 1_000_000 + moment.microsecond + 500) // 1000, 59_999)
    return moment.replace(second=0, microsecond=0) + dt.timedelta(milliseconds=millis)


def sqlite_timestamp_text(moment: dt.datetime) -> str:
    """A naive timestamp as text SQLite parses, to the microsecond.

    Parameters are normalized by SQLite in the query (``normalize_timestamp``), like the
    rows they are compared with: its ``strftime`` rounds seconds to the millisecond (with
    a clamp at 59.999), and a truncation here made half of the rows compare later than the
    offset taken from them, so the source read them again on every poll.
    """
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")


class SqliteDialect(DatabaseDialect):
    name = "sqlite"
    timestamp_type = sa.String()

    def clock_statement(self) -> sa.Select[Any]:
        return sa.select(sa.func.strftime(SQLITE_TIMESTAMP_FORMAT, "now"))

    def current_time(self, connection: Connection, zone: dt.tzinfo) -> dt.datetime:
        value = connection.execute(self.clock_statement()).scalar_one()
        return timestamp_converter(dt.UTC)(value)

    def timestamp_parameter(self, instant: dt.datetime, zone: dt.tzinfo) -> Any:
        return sqlite_timestamp_text(instant.astimezone(zone).replace(tzinfo=None))

    def normalize_timestamp(self, expression: ColumnElement[Any]) -> ColumnElement[Any]:
        return sa.func.strftime(sa.literal_column(f"'{SQLITE_TIMESTAMP_FORMAT}'"), expression)

    def offset_timestamp(self, value: dt.datetime) -> dt.datetime:
        # Rows that SQLite compares as one instant must be one instant here too (runs of
        # rows sharing a timestamp are kept together); the queries normalize parameters
        # in SQL, so this needs to agree with SQLite only on grouping.
        return sqlite_milliseconds(value)

    def list_tables(
        self,
        connection: Connection,
        *,
        types: frozenset[str] = frozenset({"TABLE"}),
        catalog_pattern: str | None = None,
        schema_pattern: str | None = None,
    ) -> list[TableId]:
        # SQLite has neither catalogs nor schemas (attached databases are not copied).
        return [TableId(None, None, name) for name in _names(sa.inspect(connection), types, None)]

    def qualifier(self, table: TableId) -> str | None:
        return None

    def describe_table(self, connection: Connection, table: TableId) -> TableDescription:
        described = super().describe_table(connection, table)
        # An INTEGER PRIMARY KEY is the rowid: never null, and assigned increasing values.
        if len(described.primary_key) == 1:
            pk = described.primary_key[0]
            columns = tuple(
                ColumnSpec(c.name, c.type, False) if c.name == pk and isinstance(c.type, sat.Integer) else c
                for c in described.columns
            )
            rowid = any(c.name == pk and isinstance(c.type, sat.Integer) for c in described.columns)
            return TableDescription(columns, described.primary_key, pk if rowid else described.autoincrement)
        return described

    def describe_query(self, connection: Connection, query: str) -> tuple[ColumnSpec, ...]:
        # sqlite3 reports no column types; a temporary view of the query has the declared
        # types of the columns it selects (expressions have none: read as text).
        view = f"sluiceway_describe_{uuid.uuid4().hex}"
        body = query.strip().rstrip(";")
        connection.exec_driver_sql(f'CREATE TEMP VIEW "{view}" AS {body}')
        try:
            reflected = sa.inspect(connection).get_columns(view, schema="temp")
        finally:
            connection.exec_driver_sql(f'DROP VIEW temp."{view}"')
        return tuple(ColumnSpec(c["name"], c["type"], True) for c in reflected)

    def is_permanent(self, error: sa_exc.DBAPIError) -> bool:
        return super().is_permanent(error) or bool(_SQLITE_PERMANENT.search(str(error.orig)))


def _zone_name(name: str) -> str:
    return "UTC" if name.upper() in ("UTC", "Z", "GMT") else name


_DIALECTS: dict[str, type[DatabaseDialect]] = {
    "postgresql": PostgresDialect,
    "mysql": MySqlDialect,
    "mariadb": MySqlDialect,
    "sqlite": SqliteDialect,
}


def dialect_for(name: str) -> DatabaseDialect:
    """The behaviour for SQLAlchemy dialect ``name`` (generic when there is none here)."""
    return _DIALECTS.get(name, DatabaseDialect)()
