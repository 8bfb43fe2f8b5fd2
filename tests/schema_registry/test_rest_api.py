"""The registry's REST API against a real broker, judged by Confluent's own Python client
(``confluent_kafka.schema_registry.SchemaRegistryClient``) and by raw HTTP where the
client does not reach (error bodies, content types, query flags): Confluent's documented
behaviour for ids, versions, deletes, configs, modes and compatibility."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from confluent_kafka.schema_registry import Schema, SchemaReference, SchemaRegistryClient, SchemaRegistryError

from broker.server import EmbeddedBroker
from schema_registry.server import RegistryServer
from tests.schema_registry.support import start_registry

V1 = {"type": "record", "name": "Payment", "namespace": "bank", "fields": [{"name": "id", "type": "string"}]}
# BACKWARD-compatible: a new field with a default.
V2 = {**V1, "fields": [*V1["fields"], {"name": "amount", "type": "double", "default": 0.0}]}
# Not BACKWARD-compatible with V2: a new field without a default.
BAD = {**V1, "fields": [*V2["fields"], {"name": "currency", "type": "string"}]}


def avro(schema: Any) -> Schema:
    return Schema(json.dumps(schema), "AVRO")


@pytest.fixture
def registry(shared_broker: EmbeddedBroker) -> Iterator[RegistryServer]:
    server = start_registry(shared_broker.bootstrap)
    yield server
    server.stop()


@pytest.fixture
def client(registry: RegistryServer) -> SchemaRegistryClient:
    return SchemaRegistryClient({"url": registry.url})


def error(exc: pytest.ExceptionInfo[SchemaRegistryError]) -> tuple[int, int]:
    return exc.value.http_status_code, exc.value.error_code


def test_register_and_read_back(client: SchemaRegistryClient, registry: RegistryServer) -> None:
    first = client.register_schema("payments-value", avro(V1))
    assert first == 1
    again = client.register_schema("payments-value", avro(V1))  # the same schema: the same id, no new version
    assert again == first
    second = client.register_schema("payments-value", avro(V2))
    assert second == 2
    assert client.get_versions("payments-value") == [1, 2]
    latest = client.get_latest_version("payments-value")
    assert (latest.version, latest.schema_id) == (2, second)
    assert (
        json.loads(latest.schema.schema_str) == json.loads(json.dumps(V2))
        or "amount" in latest.schema.schema_str
    )
    by_id = client.get_schema(first)
    assert json.loads(by_id.schema_str)["name"] == "Payment"
    found = client.lookup_schema("payments-value", avro(V1))
    assert (found.version, found.schema_id) == (1, first)
    assert client.get_subjects() == ["payments-value"]
    raw = httpx.get(f"{registry.url}/subjects/payments-value/versions/latest")
    assert raw.headers["content-type"] == "application/vnd.schemaregistry.v1+json"
    assert raw.json() == {"subject": "payments-value", "version": 2, "id": 2, "schema": raw.json()["schema"]}
    assert (
        json.loads(httpx.get(f"{registry.url}/subjects/payments-value/versions/1/schema").text)["name"]
        == "Payment"
    )


def test_ids_are_global_and_shared_by_equal_schemas(
    client: SchemaRegistryClient, registry: RegistryServer
) -> None:
    a = client.register_schema("a-value", avro(V1))
    b = client.register_schema("b-value", avro(V1))  # the same schema in another subject: the same id
    c = client.register_schema("c-value", {"type": "string"} and Schema('{"type": "string"}', "AVRO"))
    # Whitespace does not make another schema.
    d = client.register_schema("d-value", Schema(json.dumps(V1, indent=4), "AVRO"))
    assert a == b == d and c == a + 1
    assert httpx.get(f"{registry.url}/schemas/ids/{a}/subjects").json() == ["a-value", "b-value", "d-value"]
    assert httpx.get(f"{registry.url}/schemas/ids/{a}/versions").json() == [
        {"subject": "a-value", "version": 1},
        {"subject": "b-value", "version": 1},
        {"subject": "d-value", "version": 1},
    ]
    assert httpx.get(f"{registry.url}/schemas/ids/{c}").json() == {"schema": '"string"'}
    assert sorted(httpx.get(f"{registry.url}/schemas/types").json()) == ["AVRO", "JSON", "PROTOBUF"]


def test_an_incompatible_schema_is_refused_with_the_rule(
    client: SchemaRegistryClient, registry: RegistryServer
) -> None:
    client.register_schema("p-value", avro(V1))
    client.register_schema("p-value", avro(V2))
    with pytest.raises(SchemaRegistryError) as exc:
        client.register_schema("p-value", avro(BAD))
    assert error(exc) == (409, 409)
    assert "READER_FIELD_MISSING_DEFAULT_VALUE" in exc.value.error_message
    assert "currency" in exc.value.error_message
    assert client.test_compatibility("p-value", avro(BAD)) is False
    assert client.test_compatibility("p-value", avro(V2)) is True
    verbose = httpx.post(
        f"{registry.url}/compatibility/subjects/p-value/versions/latest?verbose=TRUE",
        json={"schema": json.dumps(BAD)},
    ).json()
    assert verbose["is_compatible"] is False and any("currency" in m for m in verbose["messages"])
    # NONE for this subject lets it through; the global level is untouched.
    client.set_compatibility("p-value", "NONE")
    assert client.register_schema("p-value", avro(BAD)) == 3
    assert client.get_compatibility("p-value") == "NONE"
    assert httpx.get(f"{registry.url}/config").json() == {"compatibilityLevel": "BACKWARD"}


def test_transitive_levels_hold_the_schema_to_every_version(
    client: SchemaRegistryClient, registry: RegistryServer
) -> None:
    optional = {
        **V1,
        "fields": [*V1["fields"], {"name": "note", "type": ["null", "string"], "default": None}],
    }
    client.register_schema("t-value", avro(optional))
    client.register_schema("t-value", avro(V1))  # drops "note": a BACKWARD step
    # "note" back as a union with int: version 2 (without it) reads such data, version 1
    # (null or string) does not. FORWARD looks at the latest version only.
    changed = {**V1, "fields": [*V1["fields"], {"name": "note", "type": ["null", "int"], "default": None}]}

    def all_versions() -> bool:
        url = f"{registry.url}/compatibility/subjects/t-value/versions"
        result: bool = httpx.post(url, json={"schema": json.dumps(changed)}).json()["is_compatible"]
        return result

    client.set_compatibility("t-value", "FORWARD")
    assert all_versions() is True
    assert client.test_compatibility("t-value", avro(changed)) is True
    client.set_compatibility("t-value", "FORWARD_TRANSITIVE")
    assert all_versions() is False
    assert client.test_compatibility("t-value", avro(changed)) is True  # against "latest" alone
    with pytest.raises(SchemaRegistryError) as exc:
        client.register_schema("t-value", avro(changed))
    assert error(exc) == (409, 409) and "version 1" in exc.value.error_message


def test_error_codes_and_bodies(client: SchemaRegistryClient, registry: RegistryServer) -> None:
    url = registry.url
    cases = [
        (httpx.get(f"{url}/subjects/nope/versions"), 404, 40401),
        (httpx.get(f"{url}/schemas/ids/999"), 404, 40403),
        (httpx.post(f"{url}/subjects/x-value/versions", json={"schema": "{not json"}), 422, 42201),
        (httpx.post(f"{url}/subjects/x-value/versions", json={"schema": '{"type": "nope"}'}), 422, 42201),
        (httpx.put(f"{url}/config", json={"compatibility": "SIDEWAYS"}), 422, 42203),
        (httpx.put(f"{url}/mode", json={"mode": "SIDEWAYS"}), 422, 42204),
        (httpx.get(f"{url}/config/x-value"), 404, 40408),
        (httpx.get(f"{url}/mode/x-value"), 404, 40409),
    ]
    client.register_schema("x-value", avro(V1))
    cases += [
        (httpx.get(f"{url}/subjects/x-value/versions/7"), 404, 40402),
        (httpx.get(f"{url}/subjects/x-value/versions/zero"), 422, 42202),
        (httpx.post(f"{url}/subjects/x-value", json={"schema": json.dumps(V2)}), 404, 40403),
        (httpx.post(f"{url}/subjects/x-value/versions", content=b"{broken"), 400, 400),
    ]
    for response, status, code in cases:
        assert response.status_code == status, response.text
        body = response.json()
        assert body["error_code"] == code and isinstance(body["message"], str) and body["message"], body
    assert httpx.get(f"{url}/config/x-value?defaultToGlobal=true").json() == {
        "compatibilityLevel": "BACKWARD"
    }


def test_soft_and_permanent_deletes(client: SchemaRegistryClient, registry: RegistryServer) -> None:
    url = registry.url
    first = client.register_schema("d-value", avro(V1))
    client.register_schema("d-value", avro(V2))
    with pytest.raises(SchemaRegistryError) as exc:
        client.delete_version("d-value", 1, permanent=True)  # a permanent delete needs a soft one first
    assert error(exc) == (404, 40407)
    assert client.delete_version("d-value", 1) == 1
    assert client.get_versions("d-value") == [1, 2][1:]
    assert httpx.get(f"{url}/subjects/d-value/versions?deleted=true").json() == [1, 2]
    assert httpx.get(f"{url}/subjects/d-value/versions/1?deleted=true").json()["id"] == first
    assert httpx.get(f"{url}/schemas/ids/{first}").status_code == 200  # a soft delete keeps the id
    with pytest.raises(SchemaRegistryError) as exc:
        client.delete_version("d-value", 1)
    assert error(exc) == (404, 40402)
    assert client.delete_version("d-value", 1, permanent=True) == 1
    assert httpx.get(f"{url}/subjects/d-value/versions?deleted=true").json() == [2]
    assert httpx.get(f"{url}/schemas/ids/{first}").json()["error_code"] == 40403

    # Re-registering after deletes takes the next version number, never a used one, and the
    # next id: the old one went with its last version. (Raw HTTP: the client would answer
    # from its own cache.)
    again = httpx.post(f"{url}/subjects/d-value/versions", json={"schema": json.dumps(V1)})
    assert again.json() == {"id": first + 2}
    assert client.get_versions("d-value") == [2, 3]

    with pytest.raises(SchemaRegistryError) as exc:
        client.delete_subject("d-value", permanent=True)
    assert error(exc) == (404, 40405)
    assert client.delete_subject("d-value") == [2, 3]
    assert client.get_subjects() == []
    assert httpx.get(f"{url}/subjects?deleted=true").json() == ["d-value"]
    assert httpx.get(f"{url}/subjects?deletedOnly=true").json() == ["d-value"]
    with pytest.raises(SchemaRegistryError) as exc:
        client.delete_subject("d-value")
    assert error(exc) == (404, 40404)
    assert client.delete_subject("d-value", permanent=True) == [2, 3]
    assert httpx.get(f"{url}/subjects?deleted=true").json() == []
    # A subject deleted for good starts again at version 1.
    client.register_schema("d-value", avro(V1))
    assert client.get_versions("d-value") == [1]


def test_references(client: SchemaRegistryClient, registry: RegistryServer) -> None:
    address = {
        "type": "record",
        "name": "Address",
        "namespace": "bank",
        "fields": [{"name": "city", "type": "string"}],
    }
    client.register_schema("address", avro(address))
    customer = {
        "type": "record",
        "name": "Customer",
        "namespace": "bank",
        "fields": [{"name": "name", "type": "string"}, {"name": "home", "type": "bank.Address"}],
    }
    ref = SchemaReference("bank.Address", "address", 1)
    schema_id = client.register_schema("customer-value", Schema(json.dumps(customer), "AVRO", [ref]))
    got = client.get_schema(schema_id)
    assert [(r.name, r.subject, r.version) for r in got.references] == [("bank.Address", "address", 1)]
    assert "bank.Address" in got.schema_str and "city" not in got.schema_str  # kept as a reference
    assert httpx.get(f"{registry.url}/subjects/address/versions/1/referencedby").json() == [schema_id]
    response = httpx.delete(f"{registry.url}/subjects/address/versions/1")
    assert response.status_code == 422 and response.json()["error_code"] == 42206
    missing = httpx.post(
        f"{registry.url}/subjects/other-value/versions",
        json={
            "schema": json.dumps(customer),
            "references": [{"name": "bank.Address", "subject": "nope", "version": 1}],
        },
    )
    assert missing.status_code == 422 and missing.json()["error_code"] == 42201


def test_modes(client: SchemaRegistryClient, registry: RegistryServer) -> None:
    url = registry.url
    client.register_schema("m-value", avro(V1))
    assert httpx.get(f"{url}/mode").json() == {"mode": "READWRITE"}
    assert httpx.put(f"{url}/mode/m-value", json={"mode": "READONLY"}).json() == {"mode": "READONLY"}
    refused = httpx.post(f"{url}/subjects/m-value/versions", json={"schema": json.dumps(V2)})
    assert refused.status_code == 422 and refused.json()["error_code"] == 42205
    assert httpx.delete(f"{url}/mode/m-value").json() == {"mode": "READONLY"}
    assert client.register_schema("m-value", avro(V2)) == 2
    # IMPORT keeps the ids it is given, and only on an empty registry unless forced.
    assert httpx.put(f"{url}/mode", json={"mode": "IMPORT"}).json()["error_code"] == 42205
    assert httpx.put(f"{url}/mode?force=true", json={"mode": "IMPORT"}).json() == {"mode": "IMPORT"}
    imported = httpx.post(
        f"{url}/subjects/imported-value/versions", json={"schema": json.dumps(BAD), "id": 100, "version": 5}
    )
    assert imported.json() == {"id": 100}
    assert httpx.get(f"{url}/subjects/imported-value/versions/5").json()["id"] == 100
    httpx.put(f"{url}/mode", json={"mode": "READWRITE"})
    assert client.register_schema("next-value", Schema('{"type": "long"}', "AVRO")) == 101


def test_state_survives_a_restart_and_a_second_instance_sees_it(shared_broker: EmbeddedBroker) -> None:
    topic = f"_schemas-{uuid.uuid4().hex[:8]}"
    first = start_registry(shared_broker.bootstrap, topic)
    try:
        c = SchemaRegistryClient({"url": first.url})
        ids = [c.register_schema("r-value", avro(V1)), c.register_schema("r-value", avro(V2))]
        c.set_compatibility("r-value", "FULL")
        c.delete_version("r-value", 1)
        second = start_registry(shared_broker.bootstrap, topic)
        try:
            c2 = SchemaRegistryClient({"url": second.url})
            assert c2.get_versions("r-value") == [2]
            assert c2.get_schema(ids[0]).schema_str == c.get_schema(ids[0]).schema_str
            assert c2.get_compatibility("r-value") == "FULL"
        finally:
            second.stop()
    finally:
        first.stop()
    again = start_registry(shared_broker.bootstrap, topic)
    try:
        c3 = SchemaRegistryClient({"url": again.url})
        assert c3.get_versions("r-value") == [2]
        v3 = {**V2, "fields": [*V2["fields"], {"name": "memo", "type": "string", "default": ""}]}
        assert c3.register_schema("r-value", avro(v3)) == ids[1] + 1  # FULL-compatible: a default
        assert c3.get_versions("r-value") == [2, 3]
    finally:
        again.stop()


def test_the_topic_is_written_in_confluents_format(shared_broker: EmbeddedBroker) -> None:
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    topic = f"_schemas-{uuid.uuid4().hex[:8]}"
    server = start_registry(shared_broker.bootstrap, topic)
    try:
        c = SchemaRegistryClient({"url": server.url})
        c.register_schema("f-value", avro(V1))
        c.set_compatibility("f-value", "FULL")
    finally:
        server.stop()
    consumer = Consumer(
        {"bootstrap.servers": shared_broker.bootstrap, "group.id": "fmt", "enable.partition.eof": True}
    )
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    records = []
    for _ in range(50):
        m = consumer.poll(1)
        if m is None:
            continue
        if m.error() is not None:
            break
        records.append((m.key(), m.value()))
    consumer.close()
    assert records[0][0] == b'{"keytype":"SCHEMA","subject":"f-value","version":1,"magic":1}'
    value = json.loads(records[0][1])
    assert {k: value[k] for k in ("subject", "version", "id", "deleted")} == {
        "subject": "f-value",
        "version": 1,
        "id": 1,
        "deleted": False,
    }
    assert records[1] == (
        b'{"keytype":"CONFIG","subject":"f-value","magic":0}',
        b'{"compatibilityLevel":"FULL"}',
    )
