"""Where Spark plans a read with ``value.format`` / ``key.format`` (``avro``, ``json-schema``,
``protobuf``): the reader schemas, fetched from the Schema Registry once, and the
DataFrame's columns they give. JSON Schema and Protobuf reader schemas become Connect
schemas through ``registry_formats``; the rest of this docstring tells Avro's way.

- The *reader schema* of the value is the latest version of ``value.subject`` (default:
  TopicNameStrategy's ``<topic>-value``) or the schema ``value.schema.id`` names; the key's
  likewise. It is fixed here, for the whole read or streaming query, as ABRiS and
  Confluent's deserializer with a reader schema fix it; records written with other
  versions are resolved into it where they are read (``registry_values``).
- Types: Avro -> Connect with ``connect.api.avro.AvroData`` (Confluent's AvroData mapping),
  Connect -> Arrow with ``connect.api.arrow.arrow_type`` (the Spark sink's mapping), Arrow ->
  Spark with pyspark's own conversion; so a topic reads as the same Spark types through the
  sink and through this source. Logical types AvroData does not map (``timestamp-micros``,
  ``uuid``...) are their base types.
- Columns: Spark's Kafka columns with the key typed, a record value's fields in place of
  ``value`` (``value.columns=fields``, the default) or one typed ``value`` column
  (``value.columns=struct``, what ``from_avro`` gives), and, with ``mode=PERMISSIVE``, the
  ``_corrupt_record`` column ``struct<key binary, value binary, error string>``.

The plan holds only texts, so Spark can pickle it to its executors.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError
from google.protobuf.message import DecodeError
from pyspark.sql.pandas.types import from_arrow_type
from pyspark.sql.types import BinaryType, DataType, StringType, StructField, StructType

from connect.api import DataException, Schema
from connect.api.arrow import arrow_type
from connect.api.avro import AvroData
from spark_sink.reader.options import Assign, OptionError, ReaderOptions, Subscribe
from spark_sink.reader.registry_formats import connect_schema_of, is_known_file
from spark_sink.reader.registry_options import FieldFormat, Format, RegistryOptions

Side = Literal["key", "value"]


# ---------------------------------------------------------------------------------------
# The plan: reader schemas, fixed where Spark plans the read.


@dataclass(frozen=True)
class FieldPlan:
    """The reader schema of the key or the value. Picklable: only texts."""

    side: Side
    schema_id: int
    #: The schema's text (Avro's or JSON Schema's JSON, Protobuf's base64 serialized
    #: FileDescriptorProto), and those of the schemas it references (dependencies first).
    schema: str
    referenced: tuple[str, ...] = ()
    subject: str | None = None
    format: Format = "avro"
    #: JSON Schema: the reference names of ``referenced`` (a ``$ref`` names one).
    reference_names: tuple[str, ...] = ()

    def describe(self) -> str:
        by = f"subject '{self.subject}'" if self.subject else "option '" + self.side + ".schema.id'"
        return f"schema id {self.schema_id} ({by})"


@dataclass(frozen=True)
class DecodePlan:
    key: FieldPlan | None
    value: FieldPlan | None
    options: RegistryOptions
    include_headers: bool

    @property
    def url(self) -> str:
        return self.options.client["url"]


def registry_client(options: RegistryOptions) -> SchemaRegistryClient:
    try:
        return SchemaRegistryClient(dict(options.client))
    except ValueError as exc:
        raise OptionError(f"Option 'schema.registry.url' and its settings: {exc}") from None


def plan_decoding(opts: ReaderOptions) -> DecodePlan | None:
    """Fetch the reader schemas the options name (None when nothing is decoded); OptionError
    for a subject or id the registry does not have, or a schema Spark cannot hold."""
    reg = opts.registry
    if reg is None:
        return None
    client = registry_client(reg)
    key = _plan_field(client, reg, opts, "key", reg.key) if reg.key else None
    value = _plan_field(client, reg, opts, "value", reg.value) if reg.value else None
    plan = DecodePlan(key, value, reg, opts.include_headers)
    spark_schema(plan)  # mapping problems and column clashes fail here, where load() is called
    return plan


def _plan_field(
    client: SchemaRegistryClient, reg: RegistryOptions, opts: ReaderOptions, side: Side, fmt: FieldFormat
) -> FieldPlan:
    url = reg.client["url"]
    # Protobuf's reader schema is its serialized descriptor: no .proto parser needed here.
    serialized = "serialized" if fmt.format == "protobuf" else None
    names: list[str] = []
    try:
        if fmt.schema_id is not None:
            schema = client.get_schema(fmt.schema_id, fmt=serialized)
            schema_id, subject = fmt.schema_id, None
        else:
            subject = fmt.subject or f"{_single_topic(opts, side)}-{side}"
            registered = client.get_latest_version(subject, fmt=serialized)
            schema, schema_id = registered.schema, int(registered.schema_id or 0)
        kind = schema.schema_type or "AVRO"
        if kind != _KINDS[fmt.format]:
            where = f"subject '{subject}'" if subject else f"schema id {schema_id}"
            raise OptionError(
                f"Option '{side}.format' is {fmt.format} but {where} holds a {kind} schema in the Schema "
                f"Registry at {url}"
            )
        if fmt.format == "json-schema":
            pairs = named_references(client, schema.references or [])
            names, referenced = [n for n, _ in pairs], [t for _, t in pairs]
        elif fmt.format == "protobuf":
            referenced = referenced_files(client, schema.references or [])
        else:
            referenced = referenced_schemas(client, schema.references or [])
    except SchemaRegistryError as exc:
        raise _plan_error(exc, side, fmt, url) from None
    except OptionError:
        raise
    except Exception as exc:  # the client's HTTP errors (connection refused, TLS, timeouts)
        raise RuntimeError(
            f"Cannot read the {side}'s schema from the Schema Registry at {url} (option "
            f"'schema.registry.url'): {type(exc).__name__}: {exc}"
        ) from None
    return FieldPlan(
        side, schema_id, str(schema.schema_str), tuple(referenced), subject, fmt.format, tuple(names)
    )


#: The registry's schemaType of each format.
_KINDS = {"avro": "AVRO", "json-schema": "JSON", "protobuf": "PROTOBUF"}


def _plan_error(exc: SchemaRegistryError, side: Side, fmt: FieldFormat, url: str) -> Exception:
    if exc.error_code == 40401 or (exc.http_status_code == 404 and fmt.schema_id is None):
        option = (
            f"'{side}.subject'"
            if fmt.subject
            else f"'{side}.subject' (default: TopicNameStrategy's <topic>-{side})"
        )
        return OptionError(
            f"The Schema Registry at {url} has no subject for the {side}: {exc.error_message} "
            f"(option {option})"
        )
    if exc.http_status_code == 404:
        return OptionError(
            f"The Schema Registry at {url} has no schema id {fmt.schema_id}: {exc.error_message} "
            f"(option '{side}.schema.id')"
        )
    return RuntimeError(f"The Schema Registry at {url} failed: HTTP {exc.http_status_code}: {exc}")


def _single_topic(opts: ReaderOptions, side: Side) -> str:
    strategy = opts.strategy
    topics: set[str] = set()
    if isinstance(strategy, Subscribe):
        topics = set(strategy.topics)
    elif isinstance(strategy, Assign):
        topics = {t for t, _ in strategy.partitions}
    if len(topics) != 1:
        raise OptionError(
            f"Option '{side}.subject' or '{side}.schema.id' must be given to decode the {side} when "
            f"more than one topic (or a pattern) is read: TopicNameStrategy's subject <topic>-{side} "
            f"names one reader schema per topic"
        )
    return next(iter(topics))


def referenced_schemas(
    client: SchemaRegistryClient, refs: Sequence[Any], seen: set[tuple[str, int]] | None = None
) -> list[str]:
    """The texts of referenced schemas, each after those it references itself."""
    seen = set() if seen is None else seen
    out: list[str] = []
    for ref in refs:
        marker = (str(ref.subject), int(ref.version))
        if marker in seen:
            continue
        seen.add(marker)
        registered = client.get_version(ref.subject, ref.version)
        out.extend(referenced_schemas(client, registered.schema.references or [], seen))
        out.append(str(registered.schema.schema_str))
    return out


def named_references(
    client: SchemaRegistryClient, refs: Sequence[Any], seen: set[str] | None = None
) -> list[tuple[str, str]]:
    """JSON Schema: (reference name, text) of referenced schemas and those they reference."""
    seen = set() if seen is None else seen
    out: list[tuple[str, str]] = []
    for ref in refs:
        if str(ref.name) in seen:
            continue
        seen.add(str(ref.name))
        registered = client.get_version(ref.subject, ref.version)
        out.extend(named_references(client, registered.schema.references or [], seen))
        out.append((str(ref.name), str(registered.schema.schema_str)))
    return out


def referenced_files(
    client: SchemaRegistryClient, refs: Sequence[Any], seen: set[str] | None = None
) -> list[str]:
    """Protobuf: the serialized (base64) files a schema imports, each after those it imports;
    the files every pool has built in are not fetched."""
    seen = set() if seen is None else seen
    out: list[str] = []
    for ref in refs:
        name = str(ref.name)
        if name in seen or is_known_file(name):
            continue
        seen.add(name)
        registered = client.get_version(ref.subject, ref.version, fmt="serialized")
        out.extend(referenced_files(client, registered.schema.references or [], seen))
        out.append(str(registered.schema.schema_str))
    return out


def fetch_writer(
    client: SchemaRegistryClient,
    url: str,
    schema_id: int,
    references: Callable[[SchemaRegistryClient, Any], list[str]],
    fmt: str | None = None,
) -> tuple[Any, list[str]] | str:
    """A writer id's schema (``fmt``: the registry's format) and what ``references`` fetches
    for it, or, when the registry does not know the id, why not (the record's fault). The
    registry failing or unreachable is not the record's fault: a RuntimeError fails the read."""
    try:
        schema = client.get_schema(schema_id, fmt=fmt)
        return schema, references(client, schema)
    except SchemaRegistryError as exc:
        if exc.http_status_code != 404:
            raise RuntimeError(
                f"The Schema Registry at {url} failed to give schema id {schema_id}: {exc}"
            ) from None
        return f"schema id {schema_id} is unknown to the Schema Registry at {url}"
    except Exception as exc:  # the client's HTTP errors (connection refused, TLS, timeouts)
        raise RuntimeError(
            f"Cannot read schema id {schema_id} from the Schema Registry at {url}: "
            f"{type(exc).__name__}: {exc}"
        ) from None


# ---------------------------------------------------------------------------------------
# Types: Avro -> Connect (AvroData) -> Arrow (the sink's mapping) -> Spark.


def _nodes(schema: str, referenced: Sequence[str]) -> tuple[Any, dict[str, Any]]:
    """The Avro JSON of a schema and of its referenced named types by full name."""
    named: dict[str, Any] = {}
    for text in referenced:
        node = json.loads(text)
        if isinstance(node, dict) and "name" in node:
            name = str(node["name"])
            full = name if "." in name or not node.get("namespace") else f"{node['namespace']}.{name}"
            named[full] = node
    return json.loads(schema), named


def connect_schema(field: FieldPlan) -> Schema:
    if field.format != "avro":
        return connect_schema_of(field.format, field.schema, field.reference_names, field.referenced)
    node, named = _nodes(field.schema, field.referenced)
    return AvroData().to_connect_schema(node, named)


def _spark_type(field: FieldPlan) -> DataType:
    try:
        arrow = arrow_type(connect_schema(field))
    except (DataException, ValueError, KeyError, TypeError, DecodeError) as exc:
        raise OptionError(
            f"The {field.side}'s {field.describe()} has no Spark type (option '{field.side}.format'): {exc}"
        ) from None
    return from_arrow_type(arrow, prefer_timestamp_ntz=False)


def _corrupt_type() -> StructType:
    return StructType(
        [
            StructField("key", BinaryType()),
            StructField("value", BinaryType()),
            StructField("error", StringType()),
        ]
    )


def spark_schema(plan: DecodePlan) -> StructType:
    """The source's columns with decoding: Spark's Kafka columns, the key typed, the value's
    fields (or the value as one typed column), and the corrupt record column (PERMISSIVE)."""
    # Imported here: source imports this module.
    from spark_sink.reader.source import kafka_schema

    base = kafka_schema(plan.include_headers)
    fields: list[StructField] = []
    for f in base.fields:
        if f.name == "key" and plan.key is not None:
            fields.append(StructField("key", _spark_type(plan.key)))
        elif f.name == "value" and plan.value is not None:
            typ = _spark_type(plan.value)
            if plan.options.value_columns == "fields" and isinstance(typ, StructType):
                fields.extend(StructField(v.name, v.dataType) for v in typ.fields)
            else:
                fields.append(StructField("value", typ))
        else:
            fields.append(f)
    if plan.options.mode == "PERMISSIVE":
        fields.append(StructField(plan.options.corrupt_column, _corrupt_type()))
    _check_unique(fields, plan)
    return StructType(fields)


def _check_unique(fields: list[StructField], plan: DecodePlan) -> None:
    seen: set[str] = set()
    for f in fields:
        # Spark resolves column names case-insensitively by default.
        low = f.name.lower()
        if low in seen:
            raise OptionError(
                f"The value's field '{f.name}' has the name of another column of the sluiceway source; set "
                f"option 'value.columns' to 'struct' to read the value as one struct column 'value' (or "
                f"'{plan.options.corrupt_column}': option 'columnNameOfCorruptRecord')"
            )
        seen.add(low)
