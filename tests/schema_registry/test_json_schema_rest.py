"""JSON schemas through a real registry on a real broker, judged by Confluent's client and
JSON Schema serializers (``confluent_kafka.schema_registry``) and by
python-schema-registry-client: registering, ids shared between subjects, lookups,
Confluent's refusals (409 naming the rule, 422/42201 with the reason), references between
JSON schemas, and records that round-trip through Confluent's wire format."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from confluent_kafka.schema_registry import Schema, SchemaReference, SchemaRegistryClient, SchemaRegistryError
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from broker.server import EmbeddedBroker
from schema_registry.server import RegistryServer
from tests.schema_registry.support import run_python_schema_registry_client, running_registry

PERSON = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Person",
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "number"}},
    "required": ["name"],
}
# Not BACKWARD-compatible with PERSON: an age of 41.5 no longer reads.
NARROWED = {**PERSON, "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}}


def as_json(schema: Any, references: list[SchemaReference] | None = None) -> Schema:
    return Schema(json.dumps(schema), "JSON", references or [])


@pytest.fixture(scope="module")
def registry(shared_broker: EmbeddedBroker) -> Iterator[RegistryServer]:
    with running_registry(shared_broker.bootstrap) as server:
        yield server


@pytest.fixture
def client(registry: RegistryServer) -> SchemaRegistryClient:
    return SchemaRegistryClient({"url": registry.url})


def test_register_share_ids_and_look_up(client: SchemaRegistryClient, registry: RegistryServer) -> None:
    assert "JSON" in httpx.get(f"{registry.url}/schemas/types").json()
    first = client.register_schema("people-value", as_json(PERSON))
    # the same schema written otherwise (whitespace) under another subject: the same id
    again = client.register_schema("staff-value", Schema(json.dumps(PERSON, indent=2), "JSON"))
    assert again == first
    found = client.lookup_schema("people-value", as_json(PERSON))
    assert (found.schema_id, found.version) == (first, 1)
    fetched = client.get_schema(first)
    assert fetched.schema_type == "JSON" and json.loads(fetched.schema_str or "null") == PERSON
    latest = client.get_latest_version("staff-value")
    assert (latest.schema_id, latest.schema.schema_type) == (first, "JSON")


def test_an_incompatible_evolution_is_refused_with_the_rule(
    client: SchemaRegistryClient, registry: RegistryServer
) -> None:
    client.register_schema("evolve-value", as_json(PERSON))
    widened = {**PERSON, "properties": {**PERSON["properties"], "email": {"type": "string"}}}  # type: ignore[dict-item]
    with pytest.raises(SchemaRegistryError) as exc:  # an optional property in an open model: refused too
        client.register_schema("evolve-value", as_json(widened))
    assert exc.value.http_status_code == 409
    assert "OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL at #/properties/email" in exc.value.error_message
    with pytest.raises(SchemaRegistryError) as exc:
        client.register_schema("evolve-value", as_json(NARROWED))
    assert (exc.value.http_status_code, exc.value.error_code) == (409, 409)
    assert "TYPE_NARROWED at #/properties/age" in exc.value.error_message
    assert client.test_compatibility("evolve-value", as_json(NARROWED)) is False
    compatible = {**PERSON, "required": []}  # a required property no longer required
    assert client.test_compatibility("evolve-value", as_json(compatible)) is True
    client.set_compatibility("evolve-value", "NONE")
    assert client.register_schema("evolve-value", as_json(NARROWED)) > 0
    assert client.get_versions("evolve-value") == [1, 2]


def test_an_invalid_schema_is_refused_with_the_reason(
    client: SchemaRegistryClient, registry: RegistryServer
) -> None:
    bad = {"type": "object", "properties": {"age": {"type": "numeric"}}}
    with pytest.raises(SchemaRegistryError) as exc:
        client.register_schema("bad-value", as_json(bad))
    assert (exc.value.http_status_code, exc.value.error_code) == (422, 42201)
    assert "#/properties/age/type" in exc.value.error_message
    response = httpx.post(
        f"{registry.url}/subjects/bad-value/versions", json={"schema": "{not json", "schemaType": "JSON"}
    )
    assert response.status_code == 422 and response.json()["error_code"] == 42201
    assert "not JSON" in response.json()["message"]


def test_references_between_json_schemas(client: SchemaRegistryClient, registry: RegistryServer) -> None:
    customer = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    client.register_schema("customer", as_json(customer))
    order = {"type": "object", "properties": {"customer": {"$ref": "customer.schema.json"}}}
    ref = SchemaReference("customer.schema.json", "customer", 1)
    order_id = client.register_schema("orders-value", as_json(order, [ref]))
    got = client.get_schema(order_id)
    assert [(r.name, r.subject, r.version) for r in got.references or []] == [
        ("customer.schema.json", "customer", 1)
    ]
    # the order's next version must still read orders whose customer has a string name
    renamed = {"type": "object", "properties": {"name": {"type": "number"}}, "required": ["name"]}
    client.set_compatibility("customer", "NONE")
    client.register_schema("customer", as_json(renamed))
    changed = SchemaReference("customer.schema.json", "customer", 2)
    with pytest.raises(SchemaRegistryError) as exc:
        client.register_schema("orders-value", as_json(order, [changed]))
    assert exc.value.http_status_code == 409
    assert "TYPE_CHANGED at #/properties/customer/properties/name" in exc.value.error_message
    # a $ref to a name no reference gives
    with pytest.raises(SchemaRegistryError) as exc:
        client.register_schema("orphans-value", as_json(order))
    assert (exc.value.http_status_code, exc.value.error_code) == (422, 42201)
    assert "customer.schema.json" in exc.value.error_message


def test_confluents_serializer_and_deserializer_round_trip(client: SchemaRegistryClient) -> None:
    topic = "json-people"
    serializer = JSONSerializer(json.dumps(PERSON), client)  # auto.register.schemas: true
    ctx = SerializationContext(topic, MessageField.VALUE)
    record = {"name": "Ada", "age": 36}
    data = serializer(record, ctx)
    assert data is not None
    registered = client.get_latest_version(f"{topic}-value")
    assert data[0] == 0 and int.from_bytes(data[1:5], "big") == registered.schema_id
    assert JSONDeserializer(None, schema_registry_client=client)(data, ctx) == record
    assert JSONDeserializer(json.dumps(PERSON), schema_registry_client=client)(data, ctx) == record


def test_python_schema_registry_client_registers_and_fetches(
    registry: RegistryServer, tmp_path: Path
) -> None:
    script = textwrap.dedent(
        f"""
        import json
        from schema_registry.client import SchemaRegistryClient, schema
        client = SchemaRegistryClient(url={registry.url!r})
        parsed = schema.JsonSchema({json.dumps(PERSON)!r})
        schema_id = client.register("psrc-value", parsed)
        again = client.register("psrc-other-value", parsed)
        fetched = client.get_by_id(schema_id)
        version = client.check_version("psrc-value", parsed)
        print(json.dumps([schema_id, again, fetched.schema_type, fetched.raw_schema, version.version]))
        """
    )
    result = run_python_schema_registry_client(script, tmp_path)
    assert result.returncode == 0, result.stderr
    schema_id, again, schema_type, raw, version = json.loads(result.stdout)
    assert again == schema_id and schema_type == "JSON" and raw == PERSON and version == 1
