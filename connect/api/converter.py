"""Converters turn Connect data (schema + value) into the bytes of Kafka records and back.

The worker calls ``configure`` once with the converter's settings (the
``key.converter.*``/``value.converter.*`` keys with the prefix removed) and
``is_key``, then ``from_connect_data`` when a source record is written and
``to_connect_data`` when a sink record is read. Both run on the task's thread and
may be called concurrently from different tasks' instances, never on one instance.
Malformed input raises ``DataException`` saying what was wrong.

Example::

    class UpperStringConverter(Converter):
        def from_connect_data(self, topic, schema, value, headers=None):
            return None if value is None else str(value).upper().encode()

        def to_connect_data(self, topic, data, headers=None):
            return SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, None if data is None else data.decode())
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from connect.api.data import Schema, SchemaAndValue
    from connect.api.headers import Headers


class Converter(ABC):
    """Key/value converter (Kafka's ``org.apache.kafka.connect.storage.Converter``)."""

    #: Java class names this converter also answers to, so existing configs load unchanged.
    aliases: ClassVar[tuple[str, ...]] = ()

    def configure(self, configs: Mapping[str, Any], is_key: bool) -> None:  # noqa: B027 - optional hook
        """Called once before use; the default ignores every setting."""

    @abstractmethod
    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        """Serialize a value (described by ``schema``, or schemaless when None) to bytes."""

    @abstractmethod
    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        """Deserialize bytes (None for a null record) to a schema and value."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources; called when the task stops."""


class HeaderConverter(ABC):
    """Header value converter (Kafka's ``org.apache.kafka.connect.storage.HeaderConverter``)."""

    aliases: ClassVar[tuple[str, ...]] = ()

    def configure(self, configs: Mapping[str, Any]) -> None:  # noqa: B027 - optional hook
        """Called once before use."""

    @abstractmethod
    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None: ...

    @abstractmethod
    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue: ...

    def close(self) -> None:  # noqa: B027 - optional hook
        pass
