"""connection.url translation (connectors.jdbc.query.urls): pure, no database."""

from __future__ import annotations

import pytest

from connectors.jdbc.query.urls import to_sqlalchemy_url


def rendered(raw: str, user: str | None = None, password: str | None = None) -> str:
    return to_sqlalchemy_url(raw, user, password).url.render_as_string(hide_password=False)


@pytest.mark.parametrize(
    ("jdbc", "expected"),
    [
        ("jdbc:postgresql://db:5432/shop", "postgresql+psycopg://db:5432/shop"),
        ("jdbc:postgresql://db/shop", "postgresql+psycopg://db:5432/shop"),
        ("jdbc:postgresql:shop", "postgresql+psycopg://localhost:5432/shop"),
        (
            "jdbc:postgresql://db:6543/shop?user=app&password=s3cret",
            "postgresql+psycopg://app:s3cret@db:6543/shop",
        ),
        (
            "jdbc:postgresql://db/shop?sslmode=require&ApplicationName=etl&connectTimeout=5",
            "postgresql+psycopg://db:5432/shop?application_name=etl&connect_timeout=5&sslmode=require",
        ),
        ("jdbc:postgresql://db/shop?ssl=true", "postgresql+psycopg://db:5432/shop?sslmode=require"),
        ("jdbc:postgresql://[::1]:5432/shop", "postgresql+psycopg://[::1]:5432/shop"),
        ("jdbc:mysql://db:3306/shop?user=root", "mysql+pymysql://root@db:3306/shop"),
        ("jdbc:mysql://db/shop", "mysql+pymysql://db:3306/shop"),
        (
            "jdbc:mysql://db/shop?characterEncoding=UTF-8&connectTimeout=3000",
            "mysql+pymysql://db:3306/shop?charset=utf8mb4&connect_timeout=3",
        ),
        ("jdbc:mariadb://db:3307/shop?user=u&password=p", "mysql+pymysql://u:p@db:3307/shop"),
        ("jdbc:sqlite:/var/data/test.db", "sqlite:////var/data/test.db"),
        ("jdbc:sqlite:relative.db", "sqlite:///relative.db"),
        ("jdbc:sqlite::memory:", "sqlite://"),
        ("jdbc:sqlite:", "sqlite://"),
    ],
)
def test_jdbc_urls_become_sqlalchemy_urls(jdbc: str, expected: str) -> None:
    assert rendered(jdbc) == expected


def test_sqlite_file_uris_keep_their_parameters() -> None:
    url = to_sqlalchemy_url("jdbc:sqlite:file:/tmp/x.db?mode=ro").url
    assert url.database == "file:/tmp/x.db"
    assert dict(url.query) == {"mode": "ro", "uri": "true"}


def test_percent_encoded_credentials_are_decoded_then_encoded_again() -> None:
    translated = to_sqlalchemy_url("jdbc:postgresql://db/shop?user=app&password=p%40ss%3Aword")
    assert translated.url.username == "app"
    assert translated.url.password == "p@ss:word"


@pytest.mark.parametrize(
    "url",
    [
        "postgresql+psycopg://app@db:5432/shop",
        "postgresql://app@db/shop",
        "mysql+pymysql://root@127.0.0.1:3306/test",
        "sqlite:////tmp/x.db",
        "sqlite://",
    ],
)
def test_sqlalchemy_urls_pass_unchanged(url: str) -> None:
    assert rendered(url) == url


def test_connection_user_and_password_override_the_urls() -> None:
    url = to_sqlalchemy_url("jdbc:postgresql://db/shop?user=a&password=b", "app", "secret").url
    assert (url.username, url.password) == ("app", "secret")
    url = to_sqlalchemy_url("mysql+pymysql://a:b@db/shop", "root", None).url
    assert (url.username, url.password) == ("root", "b")


def test_driver_parameters_without_equivalent_are_reported_not_kept() -> None:
    translated = to_sqlalchemy_url("jdbc:mysql://db/shop?useSSL=false&serverTimezone=UTC&user=x")
    assert translated.ignored == ("useSSL", "serverTimezone")
    assert dict(translated.url.query) == {}
    assert translated.url.username == "x"


def test_connector_j_semicolon_properties_are_read() -> None:
    translated = to_sqlalchemy_url("jdbc:mysql://db/shop;user=x;password=y")
    assert (translated.url.username, translated.url.password, translated.url.database) == ("x", "y", "shop")


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("", "empty"),
        ("jdbc:oracle:thin:@db:1521:orcl", "'oracle' databases are not supported"),
        ("jdbc:sqlserver://db;databaseName=x", "'sqlserver' databases are not supported"),
        ("jdbc:postgresql://a:5432,b:5432/shop", "several hosts"),
        ("jdbc:postgresql://db:notaport/shop", "invalid port"),
        ("jdbc:", "no subprotocol"),
        ("just some text", "neither a JDBC URL"),
    ],
)
def test_bad_urls_say_what_is_wrong(url: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        to_sqlalchemy_url(url)


def test_error_messages_never_show_the_password() -> None:
    with pytest.raises(ValueError) as info:
        to_sqlalchemy_url("jdbc:postgresql://a:1,b:2/shop?password=hunter2")
    assert "hunter2" not in str(info.value)
