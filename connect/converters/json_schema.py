"""``io.confluent.connect.json.JsonSchemaConverter``: Connect data as JSON documents in
Confluent's wire format (magic byte 0, the schema's 4-byte big-endian registry id, the
JSON text), schemas kept in a Schema Registry as JSON Schemas (``schemaType: JSON``).

Writing, a record's Connect schema becomes a JSON Schema (``JsonSchemaData``), registered
under the subject its strategy names (or looked up, or the subject's latest with
``use.latest.version``); reading, the id in the record names the writer's schema (with
the schemas it references), fetched once and kept, which ``JsonSchemaData`` turns into a
Connect schema, so records from any JSON Schema serializer read (Confluent's Python
``JSONSerializer`` registers plain JSON Schemas). Both directions cache per schema: no
registry call per record.

Settings (Confluent's): those of every registry converter (``registry_converter``), the
data settings ``object.additional.properties`` (true), ``use.optional.for.nonrequired``
(false), ``decimal.format`` (BASE64 or NUMERIC), ``ignore.default.for.nullables`` (false),
and the serde's ``json.fail.invalid.schema`` (false): validate each document against its
schema, writing and reading, and refuse one that does not match.

A null value is written as a tombstone (no bytes), as the AvroConverter writes it, and
a tombstone reads as null; a ``null`` document reads as the schema with a null value.
"""

from __future__ import annotations

import decimal
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import orjson

from connect.api import ConnectException, DataException, Headers, Schema, SchemaAndValue, Type
from connect.api.json_schema import JsonSchemaData
from connect.converters.config_values import config_bool, config_choice
from connect.converters.lazy_modules import import_into
from connect.converters.registry_converter import HEADER, MAGIC, RegistryConverter

if TYPE_CHECKING:
    # Bound by JsonSchemaConverter.configure (lazy_modules): 2.6 MB a worker holds only
    # once it validates a document.
    import jsonschema
    import referencing
    import referencing.exceptions
    import referencing.jsonschema

__all__ = ["JsonSchemaConverter"]

_TO_BYTES = "Converting Kafka Connect data to byte[] failed due to serialization error of topic"


def _exact_number(value: Any) -> Any:
    """orjson's fallback: a ``decimal.Decimal`` (a NUMERIC Decimal) as its exact digits."""
    if isinstance(value, decimal.Decimal):
        return orjson.Fragment(str(value))
    raise TypeError(f"{type(value).__name__} is not JSON")


def _has_decimal(schema: Schema) -> bool:
    """Whether reading needs exact numbers (a Decimal somewhere in the schema)."""
    if schema.name == "org.apache.kafka.connect.data.Decimal":
        return True
    if schema.type is Type.STRUCT:
        return any(_has_decimal(f.schema) for f in schema.fields)
    return any(_has_decimal(s) for s in (schema.key_schema, schema.value_schema) if s is not None)


def _validator(node: Any, referenced: Mapping[str, Any]) -> Any:
    """A jsonschema validator of ``node`` (its draft by ``$schema``, draft-07 without, as
    the registry takes it), the referenced schemas resolvable by name."""
    cls = jsonschema.validators.validator_for(node, default=jsonschema.Draft7Validator)
    spec = referencing.jsonschema.specification_with(
        cls.META_SCHEMA.get("$schema", ""), default=referencing.jsonschema.DRAFT7
    )
    resources = [
        (name, referencing.Resource.from_contents(doc, default_specification=spec))
        for name, doc in referenced.items()
    ]
    return cls(node, registry=referencing.Registry().with_resources(resources))


def _problem(validator: Any, doc: Any) -> str | None:
    """Why ``doc`` does not match the validator's schema (the deepest error, with where), if it does not."""
    try:
        error = jsonschema.exceptions.best_match(validator.iter_errors(doc))
    except referencing.exceptions.Unresolvable as exc:
        return f"the schema's $ref {exc} does not resolve"
    if error is None:
        return None
    where = "/" + "/".join(str(p) for p in error.absolute_path)
    return f"#{where if where != '/' else ''}: {error.message}"


class JsonSchemaConverter(RegistryConverter):
    aliases: ClassVar[tuple[str, ...]] = ("io.confluent.connect.json.JsonSchemaConverter",)
    schema_type: ClassVar[str] = "JSON"

    def __init__(self) -> None:
        super().__init__()
        self.data = JsonSchemaData()
        self.fail_invalid = False
        # Connect schema -> (its JSON Schema text, its validator with json.fail.invalid.schema)
        self._writers: dict[Schema, tuple[str, Any]] = {}
        # id -> validator of the subject's latest schema (use.latest.version with validation)
        self._latest_validators: dict[int, Any] = {}
        # (id, topic) -> (Connect schema, whether numbers must be read exactly, validator or None)
        self._readers: dict[tuple[int, str], tuple[Schema, bool, Any]] = {}

    def configure(self, configs: Mapping[str, Any], is_key: bool | None = None) -> None:
        super().configure(configs, is_key)
        import_into(globals(), "jsonschema", "referencing.jsonschema", "referencing.exceptions")
        decimal_format = config_choice(configs, "decimal.format", "BASE64", ("BASE64", "NUMERIC"))
        self.data = JsonSchemaData(
            allow_additional_properties=config_bool(configs, "object.additional.properties", True),
            use_optional_for_nonrequired=config_bool(configs, "use.optional.for.nonrequired", False),
            decimal_format="NUMERIC" if decimal_format == "NUMERIC" else "BASE64",
            ignore_default_for_nullables=config_bool(configs, "ignore.default.for.nullables", False),
        )
        self.fail_invalid = config_bool(configs, "json.fail.invalid.schema", False)

    # -- Connect -> bytes -------------------------------------------------------------------------

    def _writer(self, schema: Schema) -> tuple[str, Any]:
        with self._lock:
            known = self._writers.get(schema)
        if known is not None:
            return known
        node = self.data.from_connect_schema(schema)
        text = orjson.dumps(node, default=_exact_number).decode()
        entry = (text, _validator(node, {}) if self.fail_invalid else None)
        with self._lock:
            self._writers[schema] = entry
        return entry

    def _latest_validator(self, schema_id: int, latest: dict[str, Any]) -> Any:
        with self._lock:
            known = self._latest_validators.get(schema_id)
        if known is None:
            node, referenced = self._schema_documents(latest)
            known = _validator(node, referenced)
            with self._lock:
                self._latest_validators[schema_id] = known
        return known

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        if value is None and (schema is None or schema.optional or schema.default_value is None):
            return None  # a tombstone stays one
        if schema is None:
            raise DataException(
                f"{_TO_BYTES} {topic}: the JsonSchemaConverter needs a schema to write the {self.part}"
            )
        try:
            text, validator = self._writer(schema)
            schema_id, latest = self.writer_id(self.subject(topic, schema.name), text)
            doc = self.data.from_connect_value(schema, value)
            if self.fail_invalid:
                if latest is not None:
                    validator = self._latest_validator(schema_id, latest)
                problem = _problem(validator, doc)
                if problem is not None:
                    raise DataException(f"the {self.part} does not match its JSON Schema: {problem}")
            payload = orjson.dumps(doc, default=_exact_number)
        except orjson.JSONEncodeError as exc:
            raise DataException(f"{_TO_BYTES} {topic}: {exc}") from None
        except DataException as exc:
            raise DataException(f"{_TO_BYTES} {topic}: {exc}") from None
        return HEADER.pack(MAGIC, schema_id) + payload

    # -- bytes -> Connect -------------------------------------------------------------------------

    def _schema_documents(self, found: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
        """The schema of a registry answer as JSON, and the schemas it references (and
        they reference), by reference name."""
        node = json.loads(found["schema"])
        referenced: dict[str, Any] = {}
        pending = list(found.get("references") or [])
        while pending:
            ref = pending.pop()
            name = str(ref["name"])
            if name in referenced:
                continue
            version = self.client.version(str(ref["subject"]), int(ref["version"]))
            referenced[name] = json.loads(version["schema"])
            pending.extend(version.get("references") or [])
        return node, referenced

    def _reader(self, schema_id: int, topic: str) -> tuple[Schema, bool, Any]:
        with self._lock:
            known = self._readers.get((schema_id, topic))
        if known is not None:
            return known
        try:
            found = self.fetch_writer(schema_id)
            node, referenced = self._schema_documents(found)
            title = node.get("title") if isinstance(node, dict) else None
            version = self.registry_version(topic, schema_id, title if isinstance(title, str) else None)
            connect = self.data.to_connect_schema(node, referenced, version)
            validator = _validator(node, referenced) if self.fail_invalid else None
        except ConnectException as exc:
            if not isinstance(exc, DataException):
                raise  # the registry unreachable: not the record's fault
            raise self.read_error(topic, f"schema {schema_id}: {exc}") from None
        except (ValueError, KeyError, TypeError, jsonschema.exceptions.SchemaError) as exc:
            raise self.read_error(
                topic, f"schema {schema_id} from the registry is not a usable JSON Schema: {exc}"
            ) from None
        entry = (connect, _has_decimal(connect), validator)
        with self._lock:
            self._readers[(schema_id, topic)] = entry
        return entry

    def _read(self, topic: str, data: bytes) -> SchemaAndValue:
        schema_id = self.unframe(topic, data)
        connect, exact, validator = self._reader(schema_id, topic)
        payload = data[HEADER.size :]
        try:
            if exact:
                doc = json.loads(payload, parse_float=decimal.Decimal)
            else:
                try:
                    doc = orjson.loads(payload)
                except orjson.JSONDecodeError:
                    doc = json.loads(payload)  # what orjson refuses and JSON allows (integers past 64 bits)
        except (ValueError, UnicodeDecodeError) as exc:
            raise self.read_error(topic, f"the payload of schema {schema_id} is not JSON: {exc}") from None
        try:
            if validator is not None:
                problem = _problem(validator, doc)
                if problem is not None:
                    raise DataException(f"the document does not match schema {schema_id}: {problem}")
            value = self.data.to_connect_value(connect, doc)
        except DataException as exc:
            raise self.read_error(topic, str(exc)) from None
        return SchemaAndValue(connect, value)

    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        if data is None:
            return SchemaAndValue(None, None)
        return self._read(topic, data)
