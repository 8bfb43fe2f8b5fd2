"""How the worker serves the console: ``/ui`` and ``/ui/`` answer the page, the assets are
served with their types, and the page loads nothing from anywhere but the worker (it must
work offline, with no CDN)."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from sluiceway.embedded import EmbeddedConnect
from tests.console.conftest import Console


@pytest.mark.parametrize("path", ["/ui", "/ui/"])
def test_ui_answers_the_page(worker: EmbeddedConnect, path: str) -> None:
    r = worker.request("GET", path)

    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/html")
    assert '<script type="module" src="/ui/main.js">' in r.text
    assert r.headers["cache-control"] == "no-cache"


@pytest.mark.parametrize(
    ("asset", "media_type"),
    [("main.js", "text/javascript"), ("console.css", "text/css"), ("favicon.svg", "image/svg+xml")],
)
def test_assets_are_served_with_their_types(worker: EmbeddedConnect, asset: str, media_type: str) -> None:
    r = worker.request("GET", f"/ui/{asset}")

    assert r.status_code == 200
    assert r.headers["content-type"].startswith(media_type)
    assert r.headers["cache-control"] == "no-cache"


def test_a_missing_asset_is_kafka_connects_404(worker: EmbeddedConnect) -> None:
    r = worker.request("GET", "/ui/no-such-file.js")

    assert r.status_code == 404
    assert r.json() == {"error_code": 404, "message": "HTTP 404 Not Found"}


def test_the_console_is_not_in_the_openapi_document(worker: EmbeddedConnect) -> None:
    paths = worker.request("GET", "/openapi.json").json()["paths"]

    assert not [p for p in paths if p.startswith("/ui")]


def test_every_request_of_the_page_goes_to_the_worker(console: Console) -> None:
    origins: set[str] = set()
    console.page.on("request", lambda request: origins.add(urlsplit(request.url).netloc))

    for route, ready in [
        ("", ".connector-list :is(article, p.empty)"),
        ("#/connectors/new", "#plugin option >> nth=1"),
        ("#/topics", ".topic-list :is(table, p.empty)"),
        ("#/loggers", "table.loggers-table"),
    ]:
        console.open(route)
        console.page.wait_for_selector(ready, state="attached")

    assert origins == {urlsplit(console.url).netloc}
    assert console.log.errors == []
