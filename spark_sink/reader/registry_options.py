"""The "sluiceway" source's options for decoding Schema Registry-framed keys and values
(pure: no I/O). Names are those Spark and Kafka users know: Confluent's serde settings
(``schema.registry.url``, ``basic.auth.user.info``, ``basic.auth.credentials.source``),
``key.format`` / ``value.format`` (``avro``, ``json-schema``, ``protobuf``) with
``<side>.subject`` / ``<side>.schema.id`` for the reader schema, and ``from_avro``'s
``mode`` (FAILFAST, the default, or PERMISSIVE; from_avro refuses DROPMALFORMED too)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from spark_sink.reader.options import REGISTRY_OPTIONS, OptionError, choice, non_negative_int

# Decoding Schema Registry-framed records: the names of Confluent's serde settings, and
# from_avro's ``mode``.
_KEY_FORMAT = "key.format"
_VALUE_FORMAT = "value.format"
_REGISTRY_URL = "schema.registry.url"
_USER_INFO = "basic.auth.user.info"
_CREDENTIALS_SOURCE = "basic.auth.credentials.source"
_KEY_SUBJECT = "key.subject"
_VALUE_SUBJECT = "value.subject"
_KEY_SCHEMA_ID = "key.schema.id"
_VALUE_SCHEMA_ID = "value.schema.id"
_PARSE_MODE = "mode"
_VALUE_COLUMNS = "value.columns"
_CORRUPT_COLUMN = "columnNameOfCorruptRecord"
#: schema.registry.<setting> -> the setting of confluent-kafka's SchemaRegistryClient.
REGISTRY_CLIENT_OPTIONS = {
    "schema.registry.basic.auth.user.info": "basic.auth.user.info",
    "schema.registry.ssl.ca.location": "ssl.ca.location",
    "schema.registry.ssl.certificate.location": "ssl.certificate.location",
    "schema.registry.ssl.key.location": "ssl.key.location",
    "schema.registry.ssl.key.password": "ssl.key.password",
}

Format = Literal["avro", "json-schema", "protobuf"]
ParseMode = Literal["FAILFAST", "PERMISSIVE"]


@dataclass(frozen=True)
class FieldFormat:
    """How the key or the value is decoded: its format, and where its reader schema comes from
    (a subject's latest version, or a schema id; neither: TopicNameStrategy's subject)."""

    format: Format
    subject: str | None = None
    schema_id: int | None = None


@dataclass(frozen=True)
class RegistryOptions:
    """``key.format`` / ``value.format`` and the Schema Registry client settings."""

    key: FieldFormat | None
    value: FieldFormat | None
    #: confluent-kafka SchemaRegistryClient settings (``url``, ``basic.auth.user.info``, ``ssl.*``).
    client: Mapping[str, str]
    #: from_avro's: FAILFAST (the default) fails the read on a record that does not decode;
    #: PERMISSIVE reads it as nulls and keeps its bytes in the corrupt record column.
    mode: ParseMode = "FAILFAST"
    #: "fields": a record value's fields are columns; "struct": one ``value`` column.
    value_columns: Literal["fields", "struct"] = "fields"
    corrupt_column: str = "_corrupt_record"


#: The format names users give (Confluent's and Spark's spellings) -> the format.
_FORMATS: dict[str, Format] = {
    "avro": "avro",
    "json-schema": "json-schema",
    "jsonschema": "json-schema",
    "json_sr": "json-schema",
    "protobuf": "protobuf",
}


def _field_format(opts: Mapping[str, str], side: str) -> FieldFormat | None:
    fmt_name, subject_name, id_name = (
        (_KEY_FORMAT, _KEY_SUBJECT, _KEY_SCHEMA_ID)
        if side == "key"
        else (_VALUE_FORMAT, _VALUE_SUBJECT, _VALUE_SCHEMA_ID)
    )
    raw = opts.get(fmt_name)
    subject = opts.get(subject_name)
    schema_id = non_negative_int(opts, id_name)
    if raw is None:
        given = [n for n in (subject_name, id_name) if n in opts]
        if given:
            raise OptionError(
                f"Option '{given[0]}' needs option '{fmt_name}' (avro, json-schema or protobuf)"
            )
        return None
    word = raw.strip().lower()
    fmt = _FORMATS.get(word)
    if fmt is None:
        raise OptionError(
            f"Option '{fmt_name}' must be 'avro', 'json-schema' or 'protobuf' (Schema Registry-framed), "
            f"got '{raw}'"
        )
    if subject is not None and schema_id is not None:
        raise OptionError(f"Options '{subject_name}' and '{id_name}': give only one")
    if subject is not None and not subject.strip():
        raise OptionError(f"Option '{subject_name}' is empty")
    return FieldFormat(fmt, subject.strip() if subject is not None else None, schema_id)


def parse_registry_options(opts: Mapping[str, str]) -> RegistryOptions | None:
    """``opts`` with lower-cased names; None when neither the key nor the value is decoded."""
    key, value = _field_format(opts, "key"), _field_format(opts, "value")
    if key is None and value is None:
        given = [n for n in REGISTRY_OPTIONS if n.lower() in opts]
        if given:
            raise OptionError(
                f"Option '{given[0]}' is only used to decode registry-framed records: set "
                f"'{_VALUE_FORMAT}' or '{_KEY_FORMAT}' (avro, json-schema or protobuf)"
            )
        return None
    url = (opts.get(_REGISTRY_URL) or "").strip()
    if not url:
        raise OptionError(f"Option '{_REGISTRY_URL}' must be specified to decode registry-framed records")
    client = {"url": url}
    for option, setting in REGISTRY_CLIENT_OPTIONS.items():
        if option in opts:
            client[setting] = opts[option]
    source = choice(opts, _CREDENTIALS_SOURCE, ("user_info", "url", "sasl_inherit"), "user_info")
    if source == "sasl_inherit":
        raise OptionError(
            f"Option '{_CREDENTIALS_SOURCE}': SASL_INHERIT is not supported; use USER_INFO with "
            f"'{_USER_INFO}' or URL with the credentials in '{_REGISTRY_URL}'"
        )
    user_info = opts.get(_USER_INFO)
    if user_info is not None:
        if source == "url":
            raise OptionError(
                f"Option '{_USER_INFO}' is set but '{_CREDENTIALS_SOURCE}' is URL: give the credentials "
                "one way"
            )
        client["basic.auth.user.info"] = user_info
    if "basic.auth.user.info" in client and ":" not in client["basic.auth.user.info"]:
        raise OptionError(f"Option '{_USER_INFO}' must be <username>:<password>")
    if (opts.get(_PARSE_MODE) or "").strip().lower() == "dropmalformed":
        # As from_avro: a stream of records has no "drop" that would not lose offsets silently.
        raise OptionError(
            f"Option '{_PARSE_MODE}': DROPMALFORMED is not supported; acceptable modes are PERMISSIVE "
            "and FAILFAST"
        )
    mode = choice(opts, _PARSE_MODE, ("failfast", "permissive"), "failfast")
    columns = choice(opts, _VALUE_COLUMNS, ("fields", "struct"), "fields")
    corrupt = (opts.get(_CORRUPT_COLUMN.lower()) or "_corrupt_record").strip()
    if not corrupt:
        raise OptionError(f"Option '{_CORRUPT_COLUMN}' is empty")
    return RegistryOptions(
        key=key,
        value=value,
        client=client,
        mode="PERMISSIVE" if mode == "permissive" else "FAILFAST",
        value_columns="struct" if columns == "struct" else "fields",
        corrupt_column=corrupt,
    )
