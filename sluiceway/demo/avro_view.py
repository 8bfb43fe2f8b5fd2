"""The Avro side of the demo's bank pipeline, seen through Confluent's own clients.

Once the outputs are done the demo asks the worker's embedded Schema Registry, with
Confluent's ``SchemaRegistryClient``, which subjects the AvroConverter registered (their
versions and ids, the value schema's evolution when the writer added a column), reads the
bank topic with a ``confluent_kafka`` consumer and Confluent's ``AvroDeserializer`` (the
framing of one record, byte by byte, and every record's transaction for
``checks.topic_shortfalls``), and shows the registry refusing an incompatible schema
(HTTP 409 and the rule it breaks). Clients this project did not write are the judges: a
record they cannot read is counted, not skipped.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient, SchemaRegistryError
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext, SerializationError
from rich.console import Console

from sluiceway.demo.checks import Row, TopicRead, cents

READ_TIMEOUT_S = 30.0  # the topic is small and local; longer means the broker is gone
REFUSED_FIELD = "risk_score"  # the incompatible change the demo tries: a required field, no default


@dataclass(frozen=True)
class Version:
    version: int
    id: int
    schema: str  # the Avro schema's text


@dataclass(frozen=True)
class Subject:
    name: str
    versions: tuple[Version, ...]


@dataclass(frozen=True)
class Refusal:
    status: int  # HTTP status
    code: int  # Confluent's error_code
    message: str


@dataclass(frozen=True)
class TopicView:
    read: TopicRead
    first_value: bytes | None  # the value of the topic's first record, as it is on the broker


def subjects(url: str) -> list[Subject]:
    client = SchemaRegistryClient({"url": url})
    out = []
    for name in sorted(client.get_subjects()):
        versions = []
        for v in client.get_versions(name):
            registered = client.get_version(name, v)
            assert registered.schema is not None and registered.schema.schema_str is not None
            versions.append(Version(v, int(registered.schema_id or 0), registered.schema.schema_str))
        out.append(Subject(name, tuple(versions)))
    return out


def compatibility(url: str) -> str:
    """The registry's global compatibility level."""
    return str(SchemaRegistryClient({"url": url}).get_compatibility())


def added_fields(old: str, new: str) -> list[tuple[str, Any]]:
    """The fields of record schema ``new`` that ``old`` lacks: (name, its field JSON)."""
    known = {f["name"] for f in json.loads(old).get("fields", [])}
    return [(f["name"], f) for f in json.loads(new).get("fields", []) if f["name"] not in known]


def refuse(url: str, subject: Subject) -> Refusal | None:
    """Register the subject's latest schema plus a required field without a default, which
    BACKWARD compatibility forbids (the new schema cannot read records written before);
    the registry's answer, or None if it accepted it."""
    latest = json.loads(subject.versions[-1].schema)
    latest["fields"] = [*latest["fields"], {"name": REFUSED_FIELD, "type": "int"}]
    client = SchemaRegistryClient({"url": url})
    try:
        client.register_schema(subject.name, Schema(json.dumps(latest), "AVRO"))
    except SchemaRegistryError as exc:
        return Refusal(exc.http_status_code, exc.error_code, exc.error_message)
    return None


def _row(value: Any) -> Row:
    return (int(value["id"]), str(value["status"]), int(value["account_id"]), cents(value["amount"]))


def read_topic(bootstrap: str, topic: str, url: str, value_ids: set[int]) -> TopicView:
    """Every record of ``topic`` up to its end now, values read by Confluent's
    AvroDeserializer; a value not framed with one of ``value_ids`` counts as unreadable."""
    deserialize = AvroDeserializer(SchemaRegistryClient({"url": url}))
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "sluiceway-demo-check",
            "enable.auto.commit": False,
            "logger": None,
        }
    )
    rows: list[Row] = []
    unreadable = 0
    first: bytes | None = None
    try:
        metadata = consumer.list_topics(topic, timeout=10).topics[topic]
        ends: dict[int, int] = {}
        starts = []
        for p in sorted(metadata.partitions):
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
            if high > low:
                ends[p] = high
                starts.append(TopicPartition(topic, p, low))
        consumer.assign(starts)
        deadline = time.monotonic() + READ_TIMEOUT_S
        while ends:
            if time.monotonic() > deadline:
                raise TimeoutError(f"reading {topic} took over {READ_TIMEOUT_S:.0f} s")
            msg = consumer.poll(0.5)
            if msg is None or msg.error() is not None:
                continue
            partition, offset = msg.partition(), msg.offset()
            if partition not in ends or offset is None or offset >= ends[partition]:
                continue
            if offset + 1 == ends[partition]:
                del ends[partition]
            data = msg.value()
            if first is None and isinstance(data, bytes):
                first = data
            framed = (
                isinstance(data, bytes)
                and len(data) > 5
                and data[0] == 0
                and int.from_bytes(data[1:5], "big") in value_ids
            )
            try:
                value = deserialize(data, SerializationContext(topic, MessageField.VALUE)) if framed else None
            except SerializationError:
                value = None
            if isinstance(value, dict):
                rows.append(_row(value))
            else:
                unreadable += 1
    finally:
        consumer.close()
    return TopicView(TopicRead(tuple(rows), unreadable), first)


def show_registry(console: Console, url: str, found: list[Subject], level: str) -> None:
    console.print(f"\n[bold]Schema Registry[/] (embedded in the worker) at {url}, compatibility {level}:")
    for subject in found:
        said = ", ".join(f"version {v.version} = id {v.id}" for v in subject.versions)
        console.print(f"  {subject.name}: {said}", highlight=False)
        for old, new in zip(subject.versions, subject.versions[1:], strict=False):
            for name, spec in added_fields(old.schema, new.schema):
                console.print(
                    f"    version {new.version} adds the field {name!r} ({json.dumps(spec['type'])}, "
                    f"default {json.dumps(spec.get('default'))}) when the table got a column: "
                    f"{level} lets it in, since it reads every older record",
                    highlight=False,
                )


def show_framing(console: Console, topic: str, view: TopicView, found: list[Subject]) -> None:
    data = view.first_value
    if data is None or len(data) < 5:
        return
    schema_id = int.from_bytes(data[1:5], "big")
    named = [f"{s.name} version {v.version}" for s in found for v in s.versions if v.id == schema_id]
    console.print(
        f"The first record's value on {topic!r}: [bold]{data[:1].hex()}[/] {data[1:5].hex(' ')} | "
        f"{data[5:13].hex(' ')} ... (magic byte 0, schema id {schema_id} = "
        f"{', '.join(named) or 'unknown'}, then {len(data) - 5} bytes of Avro)",
        highlight=False,
    )


def show_refusal(console: Console, subject: str, refusal: Refusal | None) -> None:
    if refusal is None:
        console.print(f"[red]The registry accepted a required field without a default under {subject}[/]")
        return
    console.print(
        f"Registering {subject} with a required field {REFUSED_FIELD!r} and no default: refused, "
        f"HTTP {refusal.status}, error_code {refusal.code}:\n  {refusal.message}",
        highlight=False,
    )
