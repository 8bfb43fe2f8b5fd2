"""How instances find the primary and forward writes to it (``schema_registry.election``,
``rest._forward``): the primary's URL is the election group's committed offset metadata,
and a write is forwarded at most once."""

from __future__ import annotations

import json
import uuid

import httpx
from confluent_kafka import Consumer, TopicPartition

from broker.server import EmbeddedBroker
from schema_registry.rest import FORWARDED_HEADER
from tests.schema_registry.support import start_registry

SCHEMA = json.dumps({"type": "record", "name": "R", "fields": [{"name": "id", "type": "long"}]})


def test_the_primary_announces_its_url_as_the_groups_committed_offset_and_writes_are_forwarded_once(
    shared_broker: EmbeddedBroker,
) -> None:
    shared = {
        "kafkastore.topic": f"_schemas-{uuid.uuid4().hex[:8]}",
        "schema.registry.group.id": f"sr-{uuid.uuid4().hex[:8]}",
    }
    primary = start_registry(shared_broker.bootstrap, **shared)
    follower = start_registry(shared_broker.bootstrap, **shared, **{"leader.eligibility": "false"})
    try:
        assert primary.election.is_primary and not follower.election.is_primary
        assert follower.election.primary_url(fresh=True) == primary.url

        # What any consumer of the group reads: offset 0 of the store's partition, the URL
        # in its metadata.
        reader = Consumer(
            {"bootstrap.servers": shared_broker.bootstrap, "group.id": shared["schema.registry.group.id"]}
        )
        try:
            (tp,) = reader.committed([TopicPartition(shared["kafkastore.topic"], 0)], timeout=30)
        finally:
            reader.close()
        assert (tp.offset, json.loads(tp.metadata or "")) == (0, {"url": primary.url})

        url = "/subjects/s-value/versions"
        # A write to the follower is the primary's.
        through = httpx.post(follower.url + url, json={"schema": SCHEMA}, timeout=60)
        assert (through.status_code, through.json()) == (200, {"id": 1})
        # A write another instance forwarded is never forwarded again: the follower says it
        # is not the primary (and the sender asks the election again); the primary takes it.
        hop = {FORWARDED_HEADER: "http://127.0.0.1:1"}
        refused = httpx.post(follower.url + url, json={"schema": SCHEMA}, headers=hop, timeout=60)
        assert refused.status_code == 500
        assert refused.json()["error_code"] == 50004
        taken = httpx.post(primary.url + url, json={"schema": SCHEMA}, headers=hop, timeout=60)
        assert (taken.status_code, taken.json()) == (200, {"id": 1})
    finally:
        follower.stop()
        primary.stop()
