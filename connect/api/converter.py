"""Converters turn Connect data (schema + value) into the bytes of Kafka records and back.

The worker calls ``configure`` once with the converter's settings (the
``key.converter.*``/``value.converter.*`` keys with the prefix removed) and
``is_key``, then ``from_connect_data`` when a source record is written and
``to_connect_data`` when a sink record is read. Both run on the task's thread and
may be called concurrently from different tasks' instances, never on one instance.
Malformed input raises ``DataException`` saying what was wrong.

A sink worker converts each poll's records of a topic with one ``to_connect_batch``
call, the converter's one batch method. Its default calls ``to_connect_data`` for each
value; a converter whose format can decode many values faster at once (one C call over
the batch rather than a Python call per record) overrides it, and may decode only when
a value is read and offer the data as they are to sinks that copy them
(``ConvertedBatch``). Kafka's Converter has no such method: it is this framework's,
optional, and must give what ``to_connect_data`` would.

Example::

    class UpperStringConverter(Converter):
        def from_connect_data(self, topic, schema, value, headers=None):
            return None if value is None else str(value).upper().encode()

        def to_connect_data(self, topic, data, headers=None):
            return SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, None if data is None else data.decode())
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from connect.api.sink_batch import RawForm

if TYPE_CHECKING:
    from connect.api.data import Schema, SchemaAndValue
    from connect.api.headers import Headers


class ConvertedBatch:
    """What ``Converter.to_connect_batch`` returns: record i's schema and value are
    ``schemas[i]`` and ``values[i]`` (two columns, not a SchemaAndValue per record).

    A converter may leave the decoding until a value is read: give ``decode``, which
    returns both columns (and may raise, as ``to_connect_batch`` may), instead of them.
    It may also say in which raw form the data already are the values, through ``raw``:
    a check per form, asked only if a sink asks for values in that form
    (``SinkRecordBatch.value_runs``). A check that says yes promises that each value is
    exactly the datum read in that form (``"json"``: one JSON document, never null, the
    value being it decoded without a schema; ``"text"``: valid UTF-8, the value being
    the string), so decoding cannot fail and the sink may copy the bytes.
    """

    __slots__ = ("_decode", "_raw", "_schemas", "_values")

    def __init__(
        self,
        schemas: Sequence[Schema | None] | None = None,
        values: Sequence[Any] | None = None,
        *,
        decode: Callable[[], tuple[Sequence[Schema | None], Sequence[Any]]] | None = None,
        raw: Mapping[RawForm, Callable[[], bool]] | None = None,
    ) -> None:
        if (schemas is None or values is None) and decode is None:
            raise ValueError("a ConvertedBatch needs its schemas and values, or a decode function")
        self._schemas = schemas
        self._values = values
        self._decode = decode
        self._raw = raw

    def _decoded(self) -> None:
        assert self._decode is not None
        self._schemas, self._values = self._decode()
        self._decode = None

    @property
    def schemas(self) -> Sequence[Schema | None]:
        if self._schemas is None:
            self._decoded()
        assert self._schemas is not None
        return self._schemas

    @property
    def values(self) -> Sequence[Any]:
        if self._values is None:
            self._decoded()
        assert self._values is not None
        return self._values

    def is_raw(self, form: RawForm) -> bool:
        """Whether the data are the values in ``form`` (see the class's description)."""
        check = None if self._raw is None else self._raw.get(form)
        return check is not None and check()

    def __iter__(self) -> Iterator[Sequence[Any]]:
        return iter((self.schemas, self.values))


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

    def from_connect_batch(
        self, topic: str, schemas: Sequence[Schema | None], values: Sequence[Any]
    ) -> list[bytes | None]:
        """``from_connect_data`` of each value, in order: what a source worker calls for a
        poll's records of a topic. The default calls it per value; a converter that can
        write many at once (``values`` may be a ``StructColumn``, structs held column-wise)
        overrides it. Raise (any exception) when one cannot be converted: the worker then
        converts that batch one record at a time, where the failing record is named and
        handled by ``errors.tolerance`` as usual."""
        convert = self.from_connect_data
        return [convert(topic, s, v) for s, v in zip(schemas, values, strict=True)]

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

    def from_connect_header_rows(
        self, topic: str, schema: Schema | None, rows: Sequence[Sequence[tuple[str, Any]] | None]
    ) -> Sequence[Sequence[tuple[str, Any]] | None]:
        """The batch form of ``from_connect_header``: every record's header pairs of a
        column whose values are all of ``schema`` (a ``SourceRecordBatch``'s ``headers``),
        as ``(key, bytes or None)`` pairs; a record with no headers stays None. By default
        value by value; a converter may override it with a faster equal answer."""
        convert = self.from_connect_header
        return [[(k, convert(topic, k, schema, v)) for k, v in pairs] if pairs else None for pairs in rows]

    def close(self) -> None:  # noqa: B027 - optional hook
        pass
