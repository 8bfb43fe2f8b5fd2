"""``connection.url``: JDBC URLs (Confluent's configs) and SQLAlchemy URLs, as SQLAlchemy URLs.

A pure translation, no I/O::

    >>> to_sqlalchemy_url("jdbc:postgresql://db:5432/shop?user=app&sslmode=require").url
    postgresql+psycopg://app@db:5432/shop?sslmode=require

- ``jdbc:postgresql://host[:port]/db`` → ``postgresql+psycopg`` (psycopg 3);
- ``jdbc:mysql://…`` and ``jdbc:mariadb://…`` → ``mysql+pymysql``;
- ``jdbc:sqlite:/path/to.db`` → ``sqlite:////path/to.db``; ``jdbc:sqlite::memory:`` → ``sqlite://``;
- anything else with a ``://`` is taken as a SQLAlchemy URL, unchanged.

``user`` and ``password`` query parameters become the URL's credentials; the
``connection.user`` / ``connection.password`` keys override both. JDBC driver
parameters with a libpq or PyMySQL equivalent are carried over (``sslmode``,
``ApplicationName``, ``connectTimeout``, ...); the others cannot be honoured and are
reported in ``ignored`` so the connector can say so in its log.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote, urlsplit

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

POSTGRES_DRIVER = "postgresql+psycopg"
MYSQL_DRIVER = "mysql+pymysql"

# JDBC driver parameter -> (libpq / PyMySQL parameter, how to convert the value).
_PG_PARAMS: dict[str, str] = {
    "sslmode": "sslmode",
    "sslcert": "sslcert",
    "sslkey": "sslkey",
    "sslrootcert": "sslrootcert",
    "applicationname": "application_name",
    "connecttimeout": "connect_timeout",  # seconds in both
    "logintimeout": "connect_timeout",
    "options": "options",
    "targetservertype": "target_session_attrs",
}
_MYSQL_PARAMS: dict[str, str] = {
    "characterencoding": "charset",
    "connecttimeout": "connect_timeout",  # milliseconds in Connector/J, seconds in PyMySQL
}


@dataclass(frozen=True, slots=True)
class TranslatedUrl:
    """The SQLAlchemy URL, and the JDBC parameters it could not carry over."""

    url: URL
    ignored: tuple[str, ...] = ()


def to_sqlalchemy_url(raw: str, user: str | None = None, password: str | None = None) -> TranslatedUrl:
    """Translate ``connection.url`` (JDBC or SQLAlchemy) into a SQLAlchemy URL.

    ``user`` and ``password`` (``connection.user`` / ``connection.password``), when not
    None, replace whatever the URL carries. Raises ``ValueError`` saying what is wrong.
    """
    text = raw.strip()
    if not text:
        raise ValueError("the URL is empty")
    if text.startswith("jdbc:"):
        translated = _from_jdbc(text[len("jdbc:") :])
    else:
        try:
            translated = TranslatedUrl(make_url(text))
        except ArgumentError as exc:
            raise ValueError(
                f"{_shown(text)} is neither a JDBC URL (jdbc:postgresql://..., jdbc:mysql://..., "
                f"jdbc:sqlite:...) nor a SQLAlchemy URL (postgresql+psycopg://...): {exc}"
            ) from None
    url = translated.url
    if user is not None:
        url = url.set(username=user)
    if password is not None:
        url = url.set(password=password)
    return TranslatedUrl(url, translated.ignored)


def _shown(text: str) -> str:
    """The URL for a message, without a password in it."""
    try:
        return make_url(text).render_as_string(hide_password=True)
    except ArgumentError:
        return text.split("?", 1)[0] if "password" in text.lower() else text


def _from_jdbc(rest: str) -> TranslatedUrl:
    subprotocol, sep, tail = rest.partition(":")
    if not sep:
        raise ValueError(f"jdbc:{rest} has no subprotocol (expected jdbc:<database>:...)")
    subprotocol = subprotocol.lower()
    if subprotocol == "sqlite":
        return TranslatedUrl(_sqlite(tail))
    if subprotocol == "postgresql":
        return _network(tail, POSTGRES_DRIVER, 5432, _PG_PARAMS, subprotocol)
    if subprotocol in ("mysql", "mariadb"):
        return _network(tail, MYSQL_DRIVER, 3306, _MYSQL_PARAMS, subprotocol)
    raise ValueError(
        f"JDBC URLs of {subprotocol!r} databases are not supported; give a SQLAlchemy URL for "
        "the database instead (for example mssql+pyodbc://... or oracle+oracledb://...) with "
        "its Python driver installed"
    )


def _sqlite(tail: str) -> URL:
    # sqlite-jdbc: jdbc:sqlite:<path>, jdbc:sqlite::memory:, jdbc:sqlite:file:<path>?<uri params>
    if tail in ("", ":memory:"):
        return URL.create("sqlite")
    if tail.startswith("file:"):
        # SQLAlchemy passes the query's other parameters on in the file: URI it opens.
        path, _, params = tail.partition("?")
        return URL.create("sqlite", database=path, query={**dict(parse_qsl(params)), "uri": "true"})
    path, _, _query = tail.partition("?")  # sqlite-jdbc pragmas (?journal_mode=...) have no equivalent
    return URL.create("sqlite", database=unquote(path))


def _network(
    tail: str, driver: str, default_port: int, known: dict[str, str], subprotocol: str
) -> TranslatedUrl:
    if not tail.startswith("//"):
        # jdbc:postgresql:database (local server, default port)
        name, _, params = tail.partition("?")
        tail = f"//localhost/{name}" + (f"?{params}" if params else "")
    parts = urlsplit(f"{subprotocol}:{tail}")
    if "," in parts.netloc:
        raise ValueError(
            f"jdbc:{subprotocol} URLs with several hosts (failover lists) are not supported; name one host"
        )
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"jdbc:{subprotocol} URL has an invalid port in {parts.netloc!r}") from None
    user = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password else None
    query: dict[str, str] = {}
    ignored: list[str] = []
    # Connector/J also takes ;-separated properties after the path.
    path, _, props = parts.path.partition(";")
    pairs = parse_qsl(parts.query, keep_blank_values=True) + parse_qsl(props.replace(";", "&"))
    for key, value in pairs:
        lowered = key.lower()
        if lowered == "user":
            user = value
        elif lowered == "password":
            password = value
        elif lowered == "ssl" and driver == POSTGRES_DRIVER:
            if value.lower() == "true":
                query.setdefault("sslmode", "require")
        elif lowered in known:
            target = known[lowered]
            if driver == MYSQL_DRIVER and target == "connect_timeout":
                value = str(max(1, round(int(value) / 1000))) if value.isdigit() else value
            if driver == MYSQL_DRIVER and target == "charset" and value.lower() in ("utf8", "utf-8"):
                value = "utf8mb4"
            query[target] = value
        else:
            ignored.append(key)
    database = unquote(path.lstrip("/")) or None
    url = URL.create(
        driver,
        username=user,
        password=password,
        host=parts.hostname or "localhost",
        port=port if port is not None else default_port,
        database=database,
        query=query,
    )
    return TranslatedUrl(url, tuple(ignored))
