"""Converters turn Connect data (schema + value) into the bytes of Kafka records and back.

The worker calls ``configure`` once with the converter's settings (the
``key.converter.*``/``value.converter.*`` keys with the prefix removed) and
``is_key``, then ``from_connect_data`` when a source record is written and
``to_connect_data`` when a sink record is read. Both run on the task's thread and
may be called concurrently from different tasks' instances, never on one instance.
Malformed input raises ``DataException`` saying what was wrong.

A sink worker converts each poll's records of a topic with one ``to_connect_batch``
call. Its default calls ``to_connect_data`` for each value; a converter whose format
can decode many values faster at once (one C call over the batch rather than a
Python call per record) overrides it. Kafka's Converter has no such method: it is
this framework's, optional, and must give what ``to_connect_data`` would.

Example::

    class UpperStringConverter(Converter):
        def from_connect_data(self, topic, schema, value, headers=None):
            return None if value is None else str(value).upper().encode()

        def to_connect_data(self, topic, data, headers=None):
            return SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, None if data is None else data.decode())
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

if TYPE_CHECKING:
    from connect.api.data import Schema, SchemaAndValue
    from connect.api.headers import Headers


class ConvertedBatch(NamedTuple):
    """What ``Converter.to_connect_batch`` returns: record i's schema and value are
    ``schemas[i]`` and ``values[i]`` (two columns, not a SchemaAndValue per record)."""

    schemas: Sequence[Schema | None]
    values: Sequence[Any]


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

    def to_connect_batch(self, topic: str, data: Sequence[bytes | None]) -> ConvertedBatch:
        """``to_connect_data`` of each of ``data``, in order, as two columns.

        Raise (any exception) when one of them cannot be converted: the worker then
        converts that batch one record at a time, so the failing record is named and
        handled by ``errors.tolerance`` as usual.
        """
        converted = [self.to_connect_data(topic, d) for d in data]
        return ConvertedBatch([c.schema for c in converted], [c.value for c in converted])

    def are_json_documents(self, topic: str, data: Sequence[bytes | None]) -> bool:
        """Whether ``to_connect_data`` reads each of ``data`` as a JSON document without a
        schema, the value being the decoded document itself, never null; the default says
        no. Only a converter of schemaless JSON can say yes, having checked that each is
        valid JSON (RFC 8259) in UTF-8 without decoding it: the worker then hands sinks that
        copy JSON the texts themselves (``connect.api.sink_batch``) and decodes a value only
        if something reads it, so a True here must mean ``to_connect_batch`` of the same data
        succeeds."""
        return False

    def are_texts(self, topic: str, data: Sequence[bytes | None]) -> bool:
        """Whether ``to_connect_data`` reads each of ``data`` as the string its bytes
        decode to in UTF-8, never null; the default says no. A string converter says yes
        having checked that each is valid UTF-8: the worker then hands sinks that write
        text the bytes themselves (``connect.api.sink_batch``), so a True here must mean
        ``to_connect_batch`` of the same data succeeds."""
        return False

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
