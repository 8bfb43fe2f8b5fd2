"""The topic view's records in headless Chromium: a value written by Confluent's
``AvroSerializer`` is shown decoded, with its format and schema id as a badge, pretty or
compact; a framed value the registry cannot decode shows why, and paging within a
partition moves the window."""

from __future__ import annotations

from playwright.sync_api import expect

from sluiceway.embedded import EmbeddedConnect
from tests.console.conftest import Console
from tests.console.test_topic_records import UNKNOWN_ID, produce_samples
from tests.support import unique

expect.set_options(timeout=30_000)


def test_topic_view_shows_a_decoded_avro_value(console: Console, worker: EmbeddedConnect) -> None:
    topic = unique("shown")
    registry = produce_samples(worker, topic)
    value_id = registry.get_latest_version(f"{topic}-value").schema_id
    page = console.page
    console.open(f"#/topics/{topic}")

    avro = page.locator('table.records-table tr.record[data-offset="0"] td.record-value')
    expect(avro.locator(".badge.format")).to_have_text(f"AVRO #{value_id}")
    expect(avro.locator("pre.json")).to_contain_text('"payee": "Zoë"')  # pretty: one field a line
    unknown = page.locator('tr.record[data-offset="3"] td.record-value')
    expect(unknown.locator(".decode-error")).to_contain_text(f"Schema {UNKNOWN_ID} not found")
    console.shot("records")

    page.uncheck("#records-pretty")
    expect(avro.locator("pre.json")).to_contain_text('"payee":"Zoë"')

    page.select_option("#records-partition", "0")
    page.select_option("#records-limit", "10")
    page.fill("#records-offset", "2")
    page.get_by_role("button", name="Show").click()
    expect(page.locator("tr.record")).to_have_count(2)  # offsets 2 and 3
    page.get_by_role("button", name="Older").click()
    expect(page.locator("tr.record")).to_have_count(4)  # from the earliest offset, 0
    expect(page.locator("tr.record").first).to_have_attribute("data-offset", "0")
    assert console.log.errors == []
