"""``GET /sluiceway/topics/{name}/records``: a topic's records as the web console shows them,
with Schema Registry-framed keys and values decoded (a Sluiceway extension; Kafka Connect's
API reads no records).

``?partition=P&offset=O&limit=N``: from each partition (or only P), N records (default 20,
at most 500) from offset O, or without O the partition's last N. Each record comes with its
partition, offset, timestamp (and type), headers, key and value. A key or value is shown as:

- ``AVRO``/``JSON``/``PROTOBUF``: Confluent's wire format (magic byte 0, a 4-byte schema
  id) with an id the registry knows, decoded by the worker's own converter for that schema
  type (``io.confluent.connect.avro.AvroConverter``, ...) into Connect data, then rendered
  as the ``JsonConverter`` renders values (``schemas.enable=false``; decimals as numbers);
- ``text``: anything else that is valid UTF-8;
- ``base64``: the rest, and a framed key or value that could not be decoded, which then
  carries the ``error`` (an unknown id, a payload that does not match its schema, no
  converter for its type...): one bad record never fails the request.

Header values are text or base64. Records are read with a consumer built like the worker's
clients (its security settings, then its ``consumer.`` keys) with assign and seek, never
joining a group or committing, within a time bound. The registry is the one the Schemas
page reads (``console.schema.registry.url`` or the embedded one). An unknown topic or
partition answers Kafka Connect's 404 body.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

import orjson
from confluent_kafka import (
    TIMESTAMP_CREATE_TIME,
    TIMESTAMP_LOG_APPEND_TIME,
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    TopicPartition,
)
from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from connect.api import Converter
from connect.api.errors import ConnectException, NotFoundException
from connect.converters.json import JsonConverter
from connect.converters.registry_client import RegistryClient, RegistryClientError
from connect.converters.registry_converter import HEADER, MAGIC, RegistryConverter
from connect.herder.base import Herder
from connect.rest.schemas import registry_url
from connect.rest.topics import SECURITY_PREFIXES, ErrorBody
from connect.runtime import clients
from connect.runtime.config import WorkerConfig
from connect.runtime.plugins import PluginNotFound, Plugins, PluginType

__all__ = ["DEFAULT_LIMIT", "MAX_LIMIT", "Decoder", "converter_factory", "plain", "router", "windows"]

DEFAULT_LIMIT = 20
MAX_LIMIT = 500
CLIENT_ID = "connect-rest-topic-records"
# librdkafka needs a group id even for a consumer that only assigns: this one never joins
# (no subscribe) and never commits, so the group never exists on the broker.
GROUP_ID = "connect-rest-topic-records"
READ_TIMEOUT_S = 10.0
# The registry is asked once per schema id per request; the console should not wait the
# converters' default 30 s of retries for a registry that is away.
REGISTRY_RETRY_MS = 2000

# The registry's schemaType -> Confluent's converter for it, by the class name the worker's
# plugins answer to; used when no registered registry converter declares the type itself.
CONVERTERS = {
    "AVRO": "io.confluent.connect.avro.AvroConverter",
    "JSON": "io.confluent.connect.json.JsonSchemaConverter",
    "PROTOBUF": "io.confluent.connect.protobuf.ProtobufConverter",
}
_TIMESTAMP_TYPES = {TIMESTAMP_CREATE_TIME: "CreateTime", TIMESTAMP_LOG_APPEND_TIME: "LogAppendTime"}

Format = Literal["AVRO", "JSON", "PROTOBUF", "text", "base64"]


class Shown(BaseModel):
    """A key, value or header value as the console shows it."""

    format: Format = Field(
        description="AVRO, JSON or PROTOBUF: decoded through the registry; text: UTF-8; base64: raw bytes."
    )
    data: Any = Field(description="The decoded value as JSON, the text, or the bytes in base64.")
    schema_id: int | None = Field(default=None, description="The registry id in a framed key or value.")
    subjects: list[str] | None = Field(
        default=None, description="The subjects the registry keeps the id under."
    )
    error: str | None = Field(
        default=None, description="Why a framed key or value was not decoded (data: raw bytes)."
    )


class ShownHeader(BaseModel):
    name: str
    value: Shown | None


class TopicRecord(BaseModel):
    partition: int
    offset: int
    timestamp: int | None = Field(description="Milliseconds since the epoch; null if the record has none.")
    timestamp_type: Literal["CreateTime", "LogAppendTime"] | None
    key: Shown | None
    value: Shown | None
    headers: list[ShownHeader]


class PartitionWindow(BaseModel):
    """The offsets of a partition and the range of them that was read."""

    partition: int
    earliest_offset: int | None
    latest_offset: int | None = Field(description="The offset the next record will get.")
    start_offset: int | None = Field(description="The first offset read.")
    end_offset: int | None = Field(description="Reading stopped before this offset.")
    error: str | None = Field(default=None, description="Why the partition was not (fully) read.")


class TopicRecords(BaseModel):
    topic: str
    partitions: list[PartitionWindow]
    records: list[TopicRecord] = Field(description="Ordered by partition, then offset.")


# -- pure: what to read, how to show bytes ------------------------------------------------------


def windows(
    marks: Mapping[int, tuple[int, int]], offset: int | None, limit: int
) -> dict[int, tuple[int, int]]:
    """Per partition, the offsets ``[start, end)`` to read, given its (earliest, latest)
    offsets: ``limit`` records from ``offset`` (moved up to the earliest one kept), or the
    last ``limit`` records. An empty range when there is nothing there."""
    out = {}
    for partition, (earliest, latest) in marks.items():
        start = max(latest - limit, earliest) if offset is None else min(max(offset, earliest), latest)
        out[partition] = (start, min(start + limit, latest))
    return out


def plain(data: bytes) -> Shown:
    """Bytes as UTF-8 text when they are, else base64."""
    try:
        return Shown(format="text", data=data.decode("utf-8"))
    except UnicodeDecodeError:
        return Shown(format="base64", data=base64.b64encode(data).decode("ascii"))


def framed_id(data: bytes) -> int | None:
    """The schema id of bytes in Confluent's wire format, None if they are not."""
    if len(data) < HEADER.size or data[0] != MAGIC:
        return None
    schema_id: int = HEADER.unpack_from(data)[1]
    return schema_id


# -- decoding through the converters ------------------------------------------------------------


@dataclass(frozen=True)
class _Known:
    """What the registry says of an id: its schema type and subjects, or why it says nothing."""

    schema_type: str | None
    subjects: list[str] | None
    error: str | None


# (schema type, settings, is_key) -> a configured converter, None if none reads the type.
ConverterFactory = Callable[[str, Mapping[str, Any], bool], Converter | None]


def converter_factory(plugins: Plugins) -> ConverterFactory:
    """The worker's converter for a schema type: a registry converter plugin that declares
    that ``schema_type``, else the plugin answering to Confluent's class name for the type."""

    def make(schema_type: str, settings: Mapping[str, Any], is_key: bool) -> Converter | None:
        for desc in plugins.descriptors([PluginType.CONVERTER]):
            if (
                issubclass(desc.cls, RegistryConverter)
                and getattr(desc.cls, "schema_type", None) == schema_type
            ):
                converter: Converter = desc.cls()
                converter.configure(settings, is_key)
                return converter
        name = CONVERTERS.get(schema_type)
        if name is None:
            return None
        try:
            return plugins.new_converter(name, settings, is_key)
        except PluginNotFound:
            return None

    return make


class Decoder:
    """Shows keys and values, decoding framed ones with the converter of their schema's type.
    One per request: it keeps what the registry said of each id, and one converter per
    (type, key or value), so a page of records asks the registry once per schema."""

    def __init__(self, registry: str | None, new_converter: ConverterFactory) -> None:
        self._settings = {"schema.registry.url": registry or "", "max.retry.time.ms": REGISTRY_RETRY_MS}
        self._client = RegistryClient(self._settings, timeout_s=5) if registry else None
        self._new_converter = new_converter
        self._known: dict[int, _Known] = {}
        self._unreachable: str | None = None
        self._converters: dict[tuple[str, bool], Converter | str] = {}
        self._json = JsonConverter()
        self._json.configure({"schemas.enable": "false", "decimal.format": "NUMERIC"}, False)

    def show(self, topic: str, data: bytes | None, is_key: bool) -> Shown | None:
        if data is None:
            return None
        schema_id = framed_id(data)
        if schema_id is None:
            return plain(data)
        known = self._know(schema_id)
        raw = base64.b64encode(data).decode("ascii")
        failed = Shown(format="base64", data=raw, schema_id=schema_id, subjects=known.subjects)
        if known.schema_type is None:
            return failed.model_copy(update={"error": known.error})
        converter = self._converter(known.schema_type, is_key)
        if isinstance(converter, str):
            return failed.model_copy(update={"error": converter})
        try:
            connect = converter.to_connect_data(topic, data)
            rendered = self._json.from_connect_data(topic, connect.schema, connect.value)
            value = None if rendered is None else orjson.loads(rendered)
        except Exception as exc:  # a converter's bug must not fail the page: show it on the record
            message = str(exc) if isinstance(exc, ConnectException) else f"{type(exc).__name__}: {exc}"
            return failed.model_copy(update={"error": message})
        return failed.model_copy(update={"format": known.schema_type, "data": value})

    def _know(self, schema_id: int) -> _Known:
        known = self._known.get(schema_id)
        if known is None:
            known = self._ask(schema_id)
            self._known[schema_id] = known
        return known

    def _ask(self, schema_id: int) -> _Known:
        if self._client is None:
            return _Known(
                None,
                None,
                f"framed with schema id {schema_id}, but no Schema Registry is known to this worker: "
                "set console.schema.registry.url (or embedded.schema.registry.listeners)",
            )
        if self._unreachable is not None:
            return _Known(None, None, self._unreachable)
        try:
            found = self._client.schema(schema_id)
        except RegistryClientError as exc:
            return _Known(None, None, f"schema id {schema_id}: {exc}")
        except ConnectException as exc:
            self._unreachable = str(exc)  # not worth asking again for the next id
            return _Known(None, None, self._unreachable)
        try:
            subjects = sorted({str(v["subject"]) for v in self._client.versions_of_id(schema_id)})
        except ConnectException:
            subjects = None  # a registry without the endpoint: the subjects are a nicety
        return _Known(str(found.get("schemaType", "AVRO")), subjects, None)

    def _converter(self, schema_type: str, is_key: bool) -> Converter | str:
        """The converter for the type, or why there is none."""
        key = (schema_type, is_key)
        if key not in self._converters:
            made: Converter | str | None
            try:
                made = self._new_converter(schema_type, self._settings, is_key)
            except ConnectException as exc:
                made = f"{schema_type} schema: its converter cannot start: {exc}"
            if made is None:
                named = CONVERTERS.get(schema_type)
                made = f"no converter for {schema_type} schemas is installed" + (
                    f" ({named})" if named else ""
                )
            self._converters[key] = made
        return self._converters[key]

    def close(self) -> None:
        for converter in self._converters.values():
            if not isinstance(converter, str):
                converter.close()
        if self._client is not None:
            self._client.close()


# -- reading --------------------------------------------------------------------------------------


def consumer_settings(config: WorkerConfig) -> dict[str, Any]:
    """A consumer like the worker's: its security settings, then its ``consumer.`` keys."""
    security = {k: str(v) for k, v in (config.model_extra or {}).items() if k.startswith(SECURITY_PREFIXES)}
    settings = clients.consumer_config(
        config.bootstrap_servers, GROUP_ID, CLIENT_ID, security, config.client_settings("consumer.")
    )
    # Ours, whatever consumer.* says: read only, and say where each partition ends.
    settings.update({"group.id": GROUP_ID, "enable.auto.commit": False, "enable.partition.eof": True})
    return settings


@contextmanager
def _consumer(settings: Mapping[str, Any]) -> Iterator[Consumer]:
    consumer = Consumer(dict(settings))
    try:
        yield consumer
    finally:
        consumer.close()


def _next(consumer: Consumer, wait_s: float) -> list[Message]:
    """What the consumer holds now, or else the next message to come within ``wait_s``
    (``consume(n, timeout)`` would wait the whole timeout for a batch of n)."""
    held = consumer.consume(500, timeout=0)
    if held:
        return held
    one = consumer.poll(min(wait_s, 0.5))
    return [] if one is None else [one]


def read(
    settings: Mapping[str, Any],
    topic: str,
    partition: int | None,
    offset: int | None,
    limit: int,
    timeout_s: float = READ_TIMEOUT_S,
) -> tuple[list[PartitionWindow], list[Message]]:
    """The partitions' windows and the messages in them, in partition and offset order."""
    where = str(settings.get("bootstrap.servers", ""))
    deadline = time.monotonic() + timeout_s
    with _consumer(settings) as consumer:
        # All topics, never one by name: naming a missing topic may create it on a broker
        # with auto.create.topics.enable.
        try:
            metadata = consumer.list_topics(timeout=timeout_s)
        except KafkaException as exc:
            raise ConnectException(f"cannot list the topics on {where}: {exc.args[0]}") from exc
        found = metadata.topics.get(topic)
        if found is None or (found.error is not None and not found.partitions):
            raise NotFoundException(f"Topic {topic} not found.")
        partitions = sorted(found.partitions)
        if partition is not None:
            if partition not in partitions:
                raise NotFoundException(f"Partition {partition} of topic {topic} not found.")
            partitions = [partition]
        marks: dict[int, tuple[int, int]] = {}
        problems: dict[int, str] = {}
        for p in partitions:
            try:
                low, high = consumer.get_watermark_offsets(
                    TopicPartition(topic, p), timeout=max(deadline - time.monotonic(), 0.1), cached=False
                )
                marks[p] = (int(low), int(high))
            except KafkaException as exc:  # one partition without a leader must not hide the rest
                problems[p] = str(exc.args[0])
        ranges = windows(marks, offset, limit)
        pending = {p: end for p, (start, end) in ranges.items() if start < end}
        got: dict[int, list[Message]] = {p: [] for p in pending}
        if pending:
            consumer.assign([TopicPartition(topic, p, ranges[p][0]) for p in pending])
        while pending and time.monotonic() < deadline:
            for message in _next(consumer, max(deadline - time.monotonic(), 0)):
                p = message.partition()
                if p is None or p not in pending:
                    continue
                error = message.error()
                if error is not None:
                    if error.code() == KafkaError._PARTITION_EOF:
                        del pending[p]  # fewer records than offsets (compacted, transaction markers)
                    else:
                        problems[p] = error.str()
                        del pending[p]
                    continue
                at = message.offset() or 0
                if at < pending[p]:
                    got[p].append(message)
                if at >= pending[p] - 1:
                    del pending[p]
        for p in pending:
            problems.setdefault(p, f"not read to its end within {timeout_s:g} s")
    shown = [
        PartitionWindow(
            partition=p,
            earliest_offset=marks[p][0] if p in marks else None,
            latest_offset=marks[p][1] if p in marks else None,
            start_offset=ranges[p][0] if p in ranges else None,
            end_offset=ranges[p][1] if p in ranges else None,
            error=problems.get(p),
        )
        for p in partitions
    ]
    return shown, [m for p in sorted(got) for m in got[p]]


def _headers(message: Message) -> list[tuple[str, Any]]:
    found = message.headers() or []
    # A consumed message's headers are a list (names may repeat); the stubs allow a dict too.
    return list(found.items() if isinstance(found, dict) else found)


def _as_bytes(raw: str | bytes) -> bytes:
    return raw.encode("utf-8") if isinstance(raw, str) else bytes(raw)


def record(decoder: Decoder, topic: str, message: Message) -> TopicRecord:
    kind, stamp = message.timestamp()
    key = message.key()
    value = message.value()
    return TopicRecord(
        partition=message.partition() or 0,
        offset=message.offset() or 0,
        timestamp=stamp if kind in _TIMESTAMP_TYPES else None,
        timestamp_type=_TIMESTAMP_TYPES.get(kind),  # type: ignore[arg-type]
        key=decoder.show(topic, key if isinstance(key, bytes) else None, True),
        value=decoder.show(topic, value if isinstance(value, bytes) else None, False),
        headers=[
            ShownHeader(name=name, value=None if raw is None else plain(_as_bytes(raw)))
            for name, raw in _headers(message)
        ],
    )


def router(herder: Herder) -> APIRouter:
    """The ``/sluiceway/topics/{name}/records`` route of a worker."""
    api = APIRouter(prefix="/sluiceway", tags=["Sluiceway extensions"])

    def records(name: str, partition: int | None, offset: int | None, limit: int) -> TopicRecords:
        config = herder.worker.config
        shown, messages = read(consumer_settings(config), name, partition, offset, min(limit, MAX_LIMIT))
        decoder = Decoder(registry_url(config), converter_factory(herder.plugins))
        try:
            return TopicRecords(
                topic=name, partitions=shown, records=[record(decoder, name, m) for m in messages]
            )
        finally:
            decoder.close()

    @api.get(
        "/topics/{name}/records",
        summary="A topic's records, Schema Registry-framed ones decoded (Sluiceway extension)",
        response_model=TopicRecords,
        responses={404: {"model": ErrorBody, "description": "No topic or partition of that name"}},
    )
    async def get_records(
        name: str,
        partition: int | None = Query(None, ge=0, description="Only this partition (default: all)."),
        offset: int | None = Query(None, ge=0, description="The first offset (default: the last `limit`)."),
        limit: int = Query(DEFAULT_LIMIT, ge=1, description=f"Records per partition, at most {MAX_LIMIT}."),
    ) -> TopicRecords:
        return await herder.blocking(lambda: records(name, partition, offset, limit))

    return api
