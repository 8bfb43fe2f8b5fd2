"""PROTOBUF schemas through a real registry on a real broker, judged by Confluent's client
and Protobuf serializers (``confluent_kafka.schema_registry``): registering .proto text
(one id under two subjects, lookups), Confluent's refusals (409 naming the rule, 422 with
protoc's message), references between .proto files, records that ProtobufSerializer
writes (auto-registering its base64 descriptors) and ProtobufDeserializer reads back,
and ``format=serialized``."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc_tools  # type: ignore[import-untyped]
import httpx
import pytest
from confluent_kafka.schema_registry import Schema, SchemaReference, SchemaRegistryClient, SchemaRegistryError
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from grpc_tools import protoc

from broker.server import EmbeddedBroker
from schema_registry.server import RegistryServer
from tests.schema_registry.support import running_registry

ORDER = """syntax = "proto3";
package shop;

message Order {
  int64 id = 1;
  string note = 2;
  map<string, int32> quantities = 3;
}
"""
# Not BACKWARD-compatible with ORDER: a note written as a string does not read as a double.
ORDER_NOTE_DOUBLE = ORDER.replace("string note = 2;", "double note = 2;")
ORDER_WITH_TOTAL = ORDER.replace("  map<", "  optional sint64 total = 4;\n  map<")

CUSTOMER = """syntax = "proto3";
package crm;
message Customer { string name = 1; }
"""
INVOICE = """syntax = "proto3";
package billing;
import "crm/customer.proto";
import "google/protobuf/timestamp.proto";
message Invoice {
  crm.Customer customer = 1;
  google.protobuf.Timestamp issued = 2;
  oneof amount { int64 cents = 3; string text = 4; }
}
"""


def proto(text: str, references: list[SchemaReference] | None = None) -> Schema:
    return Schema(text, "PROTOBUF", references or [])


@pytest.fixture(scope="module")
def registry(shared_broker: EmbeddedBroker) -> Iterator[RegistryServer]:
    with running_registry(shared_broker.bootstrap) as server:
        yield server


@pytest.fixture
def client(registry: RegistryServer) -> SchemaRegistryClient:
    return SchemaRegistryClient({"url": registry.url})


def test_register_share_ids_and_look_up(client: SchemaRegistryClient, registry: RegistryServer) -> None:
    assert "PROTOBUF" in httpx.get(f"{registry.url}/schemas/types").json()
    first = client.register_schema("orders-value", proto(ORDER))
    # the same schema written otherwise (whitespace, a comment) under another subject: the same id
    again = client.register_schema("orders2-value", proto("// orders\n" + " ".join(ORDER.split())))
    assert again == first
    found = client.lookup_schema("orders-value", proto(ORDER))
    assert (found.schema_id, found.version) == (first, 1)
    fetched = client.get_schema(first)
    assert fetched.schema_type == "PROTOBUF"
    assert "message Order {" in (fetched.schema_str or "") and "map<string, int32> quantities = 3;" in (
        fetched.schema_str or ""
    )
    latest = client.get_latest_version("orders2-value")
    assert (latest.schema_id, latest.schema.schema_type) == (first, "PROTOBUF")


def test_an_incompatible_evolution_is_refused_with_the_rule(client: SchemaRegistryClient) -> None:
    client.register_schema("evolve-value", proto(ORDER))
    with pytest.raises(SchemaRegistryError) as exc:
        client.register_schema("evolve-value", proto(ORDER_NOTE_DOUBLE))
    assert (exc.value.http_status_code, exc.value.error_code) == (409, 409)
    assert "FIELD_SCALAR_KIND_CHANGED at #/Order/2" in exc.value.error_message
    assert client.test_compatibility("evolve-value", proto(ORDER_NOTE_DOUBLE)) is False
    assert client.test_compatibility("evolve-value", proto(ORDER_WITH_TOTAL)) is True
    assert client.register_schema("evolve-value", proto(ORDER_WITH_TOTAL)) > 0


def test_a_schema_protoc_refuses_is_422_with_protocs_message(client: SchemaRegistryClient) -> None:
    with pytest.raises(SchemaRegistryError) as exc:
        client.register_schema("broken-value", proto('syntax = "proto3";\nmessage A {\n  strin x = 1;\n}\n'))
    assert (exc.value.http_status_code, exc.value.error_code) == (422, 42201)
    assert '3:3: "strin" is not defined.' in exc.value.error_message
    with pytest.raises(SchemaRegistryError) as exc:  # an import nobody gave
        client.register_schema("broken-value", proto(INVOICE))
    assert (exc.value.http_status_code, exc.value.error_code) == (422, 42201)
    assert "crm/customer.proto: File not found." in exc.value.error_message


def test_references_are_imports_of_other_subjects(client: SchemaRegistryClient) -> None:
    client.register_schema("crm/customer.proto", proto(CUSTOMER))
    refs = [SchemaReference("crm/customer.proto", "crm/customer.proto", 1)]
    invoice_id = client.register_schema("invoices-value", proto(INVOICE, refs))
    fetched = client.get_schema(invoice_id)
    assert [(r.name, r.subject, r.version) for r in fetched.references or []] == [
        ("crm/customer.proto", "crm/customer.proto", 1)
    ]
    assert "  .crm.Customer customer = 1;\n" in (fetched.schema_str or "")


# -- Confluent's serializers --------------------------------------------------------------------


def compiled(tmp_path: Path, files: dict[str, str]) -> dict[str, descriptor_pb2.FileDescriptorProto]:
    """The files compiled by protoc (grpc_tools), imports included."""
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    out = tmp_path / "set.pb"
    include = Path(grpc_tools.__file__).parent / "_proto"
    args = ["protoc", f"-I{tmp_path}", f"-I{include}", "--include_imports", f"--descriptor_set_out={out}"]
    assert protoc.main([*args, *files]) == 0
    found = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    return {f.name: f for f in found.file}


def message_class(files: dict[str, descriptor_pb2.FileDescriptorProto], name: str) -> Any:
    pool = descriptor_pool.DescriptorPool()
    for f in files.values():  # protoc lists imports first
        pool.Add(f)  # type: ignore[no-untyped-call]
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(name))  # type: ignore[no-untyped-call]


def test_protobuf_serializer_registers_and_the_deserializer_reads_back(
    client: SchemaRegistryClient, registry: RegistryServer, tmp_path: Path
) -> None:
    files = compiled(tmp_path, {"crm/customer.proto": CUSTOMER, "billing/invoice.proto": INVOICE})
    invoice_class = message_class(files, "billing.Invoice")
    invoice = invoice_class(cents=1250)
    invoice.customer.name = "Ada"
    invoice.issued.seconds, invoice.issued.nanos = 1_700_000_000, 5
    ctx = SerializationContext("bills", MessageField.VALUE)

    serializer = ProtobufSerializer(invoice_class, client)
    data = serializer(invoice, ctx)
    assert data is not None and data[0] == 0
    schema_id = int.from_bytes(data[1:5], "big")
    # the descriptors became .proto text: the dependency under its file name, then the invoice
    registered = client.get_latest_version("bills-value")
    assert registered.schema_id == schema_id
    assert [r.name for r in registered.schema.references or []] == ["crm/customer.proto"]
    assert "message Invoice {" in (registered.schema.schema_str or "")
    assert "message Customer {" in (client.get_latest_version("crm/customer.proto").schema.schema_str or "")

    read = ProtobufDeserializer(invoice_class, {"use.deprecated.format": False})(data, ctx)
    assert read == invoice

    # format=serialized: the registered descriptor back (the file's name is the registry's)
    sent = files["billing/invoice.proto"]
    for path in (f"schemas/ids/{schema_id}", "subjects/bills-value/versions/latest"):
        body = httpx.get(f"{registry.url}/{path}", params={"format": "serialized"}).json()
        served = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(body["schema"]))
        served.name = sent.name
        assert served == sent, path
    raw = httpx.get(f"{registry.url}/schemas/ids/{schema_id}/schema", params={"format": "serialized"})
    assert descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(raw.text)).package == "billing"


def test_format_is_ignored_by_other_schema_types(
    client: SchemaRegistryClient, registry: RegistryServer
) -> None:
    avro_id = client.register_schema("plain-value", Schema('"string"', "AVRO"))
    body = httpx.get(f"{registry.url}/schemas/ids/{avro_id}", params={"format": "serialized"}).json()
    assert body == {"schema": '"string"'}
