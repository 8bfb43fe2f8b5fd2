"""Kafka Connect's CORS keys turned into CORSMiddleware options (Jetty's defaults)."""

from __future__ import annotations

import re

from connect.rest.cors import ALLOWED_HEADERS, cors_options


def test_no_origin_means_no_cors() -> None:
    assert cors_options("", "") is None
    assert cors_options(" , ", "PUT") is None


def test_any_origin_with_jetty_default_methods() -> None:
    options = cors_options("*", "")
    assert options is not None
    assert options["allow_origins"] == ["*"]
    assert options["allow_methods"] == ["GET", "POST", "HEAD"]
    assert options["allow_credentials"] is True
    assert "Authorization" in options["allow_headers"] and set(ALLOWED_HEADERS) == set(
        options["allow_headers"]
    )
    assert "allow_origin_regex" not in options


def test_listed_origins_methods_and_wildcards() -> None:
    options = cors_options("https://ui.example.com, https://*.corp.example", "get, put,DELETE")
    assert options is not None
    assert options["allow_origins"] == ["https://ui.example.com"]
    assert options["allow_methods"] == ["GET", "PUT", "DELETE"]
    pattern = re.compile(options["allow_origin_regex"])
    assert pattern.fullmatch("https://a.corp.example")
    assert pattern.fullmatch("https://a.b.corp.example")
    assert not pattern.fullmatch("https://corpXexample")  # the dot is literal
    assert not pattern.fullmatch("http://a.corp.example")


def test_a_star_among_origins_allows_all() -> None:
    options = cors_options("https://ui.example.com,*", "")
    assert options is not None and options["allow_origins"] == ["*"]
