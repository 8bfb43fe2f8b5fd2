"""The Schemas view: the worker's /sluiceway/schemas extension reads its Schema Registry (here
the worker's embedded one), and the console lists subjects and shows a line diff between
two versions of one, in headless Chromium."""

from __future__ import annotations

import json

import httpx
from playwright.sync_api import expect

from connect.rest.schemas import registry_url
from connect.runtime.config import WorkerConfig
from sluiceway.embedded import EmbeddedConnect
from tests.console.conftest import Console
from tests.support import unique

V1 = {"type": "record", "name": "Payment", "fields": [{"name": "id", "type": "long"}]}
V2 = {**V1, "fields": [*V1["fields"], {"name": "memo", "type": "string", "default": ""}]}


def registry_of(worker: EmbeddedConnect) -> str:
    url = registry_url(WorkerConfig.model_validate(worker.config_values))
    assert url is not None
    return url


def register(worker: EmbeddedConnect, subject: str, *schemas: dict[str, object]) -> None:
    for schema in schemas:
        r = httpx.post(
            f"{registry_of(worker)}/subjects/{subject}/versions", json={"schema": json.dumps(schema)}
        )
        assert r.status_code == 200, r.text


def test_the_extension_reads_the_registry(worker: EmbeddedConnect) -> None:
    subject = unique("payments") + "-value"
    register(worker, subject, V1, V2)
    listed = {s["subject"]: s for s in worker.request("GET", "/sluiceway/schemas").json()}
    assert listed[subject]["versions"] == [1, 2]
    assert listed[subject]["schema_type"] == "AVRO" and listed[subject]["compatibility"] == "BACKWARD"
    detail = worker.request("GET", f"/sluiceway/schemas/{subject}").json()
    assert [v["version"] for v in detail["versions"]] == [1, 2]
    assert "memo" in detail["versions"][1]["schema"]
    missing = worker.request("GET", "/sluiceway/schemas/nope-value")
    assert missing.status_code == 404 and "nope-value" in missing.json()["message"]


def test_subjects_and_a_diff_between_versions(console: Console, worker: EmbeddedConnect) -> None:
    subject = unique("orders") + "-value"
    register(worker, subject, V1, V2)
    page = console.page
    console.open("#/schemas")
    row = page.locator(f"tr.subject[data-subject='{subject}']")
    expect(row.locator(".versions")).to_have_text("1, 2")
    expect(row.locator(".compatibility")).to_have_text("BACKWARD")
    row.get_by_role("link", name=subject).click()
    detail = page.locator(f"section.schema-detail[data-subject='{subject}']")
    expect(detail.locator(".schema-diff .added", has_text='"name": "memo"')).to_have_count(1)
    expect(detail.locator(".schema-diff .removed")).to_have_count(0)  # only added: a field more
    expect(detail.locator(".schema-text")).to_contain_text("version 2")
    page.select_option("#diff-to", "1")
    expect(detail.locator(".schema-diff .added")).to_have_count(0)
    console.shot("schemas")
    assert console.log.errors == []
