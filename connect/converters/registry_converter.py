"""What every Schema Registry converter (Avro, Protobuf, JSON Schema) shares: Confluent's
wire framing (magic byte 0, the schema's 4-byte big-endian registry id, then the
payload), the subject a record's schema goes under, and the id a writer schema gets
(registered, looked up, or the subject's latest), cached per (subject, schema) so that
converting calls the registry once per schema, not per record.

Settings (Confluent's serde configs): ``schema.registry.url`` (required; a comma list),
``auto.register.schemas`` (true), ``use.latest.version`` (false),
``latest.compatibility.strict`` (true: with ``use.latest.version``, a record is written
with the latest schema only if that schema can read data of the record's own schema),
``normalize.schemas`` (false), ``key.subject.name.strategy`` / ``value.subject.name.strategy``
(TopicNameStrategy, RecordNameStrategy, TopicRecordNameStrategy, by short or Java class
name), and the client's (``registry_client``).
"""

from __future__ import annotations

import struct
import threading
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from connect.api import ConnectException, Converter, DataException
from connect.converters.config_values import config_bool
from connect.converters.registry_client import RegistryClient

__all__ = ["HEADER", "MAGIC", "RegistryConverter"]

MAGIC = 0
HEADER = struct.Struct(">bI")

_STRATEGIES = {
    "topicnamestrategy": "topic",
    "recordnamestrategy": "record",
    "topicrecordnamestrategy": "topic_record",
}


def _strategy(value: Any) -> str:
    short = str(value or "TopicNameStrategy").rsplit(".", 1)[-1].lower()
    if short not in _STRATEGIES:
        raise ConnectException(
            f"subject name strategy {value}: expected TopicNameStrategy, RecordNameStrategy or "
            "TopicRecordNameStrategy"
        )
    return _STRATEGIES[short]


class RegistryConverter(Converter):
    """A converter whose records carry a registry schema id. Subclasses name their
    ``schema_type`` (as the registry spells it) and do the encoding."""

    schema_type: ClassVar[str]

    def __init__(self) -> None:
        self._client: RegistryClient | None = None
        self.is_key = False
        self.auto_register = True
        self.use_latest = False
        self.latest_strict = True
        self.normalize = False
        self.strategy = "topic"
        self._lock = threading.Lock()
        # (subject, schema text) -> (id, the latest version's registry JSON with use.latest.version)
        self._ids: dict[tuple[str, str], tuple[int, dict[str, Any] | None]] = {}

    def configure(self, configs: Mapping[str, Any], is_key: bool | None = None) -> None:
        self.is_key = bool(is_key)
        self._client = RegistryClient(configs)
        self.auto_register = config_bool(configs, "auto.register.schemas", True)
        self.use_latest = config_bool(configs, "use.latest.version", False)
        self.latest_strict = config_bool(configs, "latest.compatibility.strict", True)
        self.normalize = config_bool(configs, "normalize.schemas", False)
        self.strategy = _strategy(
            configs.get("key.subject.name.strategy" if self.is_key else "value.subject.name.strategy")
        )

    @property
    def part(self) -> str:
        return "key" if self.is_key else "value"

    @property
    def client(self) -> RegistryClient:
        if self._client is None:
            raise ConnectException(f"{type(self).__name__} used before configure()")
        return self._client

    def subject(self, topic: str, record_name: str | None) -> str:
        """The subject a schema goes under, by the configured strategy (``record_name``:
        the schema's fully qualified name, which the record strategies need)."""
        suffix = "-" + self.part
        if self.strategy == "topic":
            return topic + suffix
        if not record_name:
            raise DataException(
                f"{self.strategy.replace('_', '')} subject name strategy needs a named schema; "
                f"topic {topic}'s {self.part} schema has no name"
            )
        return record_name if self.strategy == "record" else f"{topic}-{record_name}"

    def writer_id(
        self, subject: str, text: str, references: Sequence[Mapping[str, Any]] = ()
    ) -> tuple[int, dict[str, Any] | None]:
        """The id records written with schema ``text`` under ``subject`` carry: registered
        (``auto.register.schemas``) or looked up; with ``use.latest.version`` the subject's
        latest version, returned too, since then it is the schema the bytes must be
        written with."""
        key = (subject, text)
        with self._lock:
            known = self._ids.get(key)
        if known is not None:
            return known
        client = self.client
        if self.use_latest:
            latest = client.latest(subject)
            if self.latest_strict:
                problems = self.latest_cannot_read(latest, text)
                if problems:
                    raise DataException(
                        f"the latest schema of {subject} (id {latest['id']}) cannot read data written "
                        f"with the record's schema: {'; '.join(problems)}. Set "
                        "latest.compatibility.strict=false to disable this check"
                    )
            known = (int(latest["id"]), latest)
        elif self.auto_register:
            known = (
                client.register(
                    subject, text, self.schema_type, normalize=self.normalize, references=references
                ),
                None,
            )
        else:
            known = (client.lookup(subject, text, self.schema_type, references), None)
        with self._lock:
            self._ids[key] = known
        return known

    def latest_cannot_read(self, latest: dict[str, Any], text: str) -> list[str]:
        """Why the subject's ``latest`` version (the registry's JSON) cannot read data
        written with schema ``text`` (``latest.compatibility.strict``); a converter whose
        type has a reader/writer check overrides this. By default nothing is checked."""
        return []

    @staticmethod
    def read_error(topic: str, reason: str) -> DataException:
        """A record of ``topic`` that does not read, in the words of Kafka's converters."""
        return DataException(
            "Converting byte[] to Kafka Connect data failed due to serialization error of topic "
            f"{topic}: {reason}"
        )

    def unframe(self, topic: str, data: bytes) -> int:
        """The schema id ``data`` carries (its payload starts at ``HEADER.size``)."""
        if len(data) < HEADER.size or data[0] != MAGIC:
            raise self.read_error(
                topic,
                f"Unknown magic byte! (the {self.part} does not start with 0 and a "
                "4-byte schema id: not written by a Schema Registry serializer)",
            )
        schema_id: int = HEADER.unpack_from(data)[1]
        return schema_id

    def registry_version(self, topic: str, schema_id: int, record_name: str | None) -> int | None:
        """The version the record's subject (by the configured strategy) gave ``schema_id``:
        Confluent's converters make it the Connect schema's version unless the schema
        carries its own (``connect.version``), and storage sinks' ``schema.compatibility``
        orders schemas by it. None when the id is not registered under that subject."""
        try:
            subject = self.subject(topic, record_name)
        except DataException:
            return None
        for entry in self.client.versions_of_id(schema_id):
            if entry.get("subject") == subject:
                return int(entry["version"])
        return None

    def fetch_writer(self, schema_id: int) -> dict[str, Any]:
        """The registry's JSON for ``schema_id``, refused unless it is of this converter's type."""
        found = self.client.schema(schema_id)
        found_type = found.get("schemaType", "AVRO")
        if found_type != self.schema_type:
            raise DataException(f"schema {schema_id} is {found_type}, not {self.schema_type}")
        return found

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
