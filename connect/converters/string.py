"""Kafka's ``StringConverter``: values as text in a configurable encoding.

Configs: ``converter.encoding`` (UTF-8), overridden per direction by
``serializer.encoding`` (writing) and ``deserializer.encoding`` (reading). Java
charset names such as ``UTF-8``, ``ISO-8859-1`` and ``UTF-16`` are understood.
"""

from __future__ import annotations

import codecs
from collections.abc import Mapping, Sequence
from functools import partial
from itertools import repeat
from typing import Any, ClassVar

from connect.api.converter import ConvertedBatch, Converter, HeaderConverter
from connect.api.data import Schema, SchemaAndValue
from connect.api.errors import ConnectException, DataException
from connect.api.headers import Headers

__all__ = ["StringConverter"]


def _encoding(configs: Mapping[str, Any], key: str, default: str) -> str:
    name = str(configs.get(key, default)).strip()
    try:
        codecs.lookup(name)
    except LookupError:
        raise ConnectException(
            f"Invalid value {name} for configuration {key}: unsupported encoding"
        ) from None
    return name


_OPTIONAL_STRING = Schema.OPTIONAL_STRING_SCHEMA
_NULL_STRING = SchemaAndValue(_OPTIONAL_STRING, None)


class StringConverter(Converter, HeaderConverter):
    """Writes ``str(value)`` (booleans as ``true``/``false``); reads text as an optional STRING."""

    aliases: ClassVar[tuple[str, ...]] = ("org.apache.kafka.connect.storage.StringConverter",)

    def __init__(self) -> None:
        self.serializer_encoding = "UTF-8"
        self.deserializer_encoding = "UTF-8"
        self._utf8 = True
        self._reads_utf8 = True

    def configure(self, configs: Mapping[str, Any], is_key: bool | None = None) -> None:
        encoding = _encoding(configs, "converter.encoding", "UTF-8")
        self.serializer_encoding = _encoding(configs, "serializer.encoding", encoding)
        self._utf8 = codecs.lookup(self.serializer_encoding).name == "utf-8"
        self.deserializer_encoding = _encoding(configs, "deserializer.encoding", encoding)
        self._reads_utf8 = codecs.lookup(self.deserializer_encoding).name == "utf-8"

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        if value is None:
            return None
        if type(value) is str and self._utf8:
            return value.encode()  # the common case, kept short: one call per record
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
        try:
            return text.encode(self.serializer_encoding)
        except UnicodeEncodeError as e:
            raise DataException(f"Failed to serialize to a string in {self.serializer_encoding}: {e}") from e

    def from_connect_batch(
        self, topic: str, schemas: Sequence[Schema | None], values: Sequence[Any]
    ) -> list[bytes | None]:
        if self._utf8 and type(values) is list:
            try:
                # Text lines: one C-speed map instead of a call per record
                # (benchmarks/file_pipeline.py); anything but a str goes the per-value way.
                return list(map(str.encode, values))
            except TypeError:
                pass
        return super().from_connect_batch(topic, schemas, values)

    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        if data is None:
            return _NULL_STRING
        try:
            # Consumers hand over bytes: decode them without copying first.
            text = (data if type(data) is bytes else bytes(data)).decode(self.deserializer_encoding)
            return SchemaAndValue(_OPTIONAL_STRING, text)
        except UnicodeDecodeError as e:
            raise DataException(f"Failed to deserialize string in {self.deserializer_encoding}: {e}") from e

    def to_connect_batch(self, topic: str, data: Sequence[bytes | None]) -> ConvertedBatch:
        # Decoded only when a value is read; a sink that writes text asks for the raw form.
        data = list(data)
        return ConvertedBatch(
            decode=partial(self._decode, topic, data), raw={"text": partial(self._are_texts, data)}
        )

    def _decode(self, topic: str, data: list[bytes | None]) -> tuple[Sequence[Schema | None], Sequence[Any]]:
        # One C-level map; a null record (TypeError) or bad bytes go the careful way.
        try:
            values = list(map(bytes.decode, data, repeat(self.deserializer_encoding)))  # type: ignore[arg-type]
        except (TypeError, UnicodeDecodeError):
            careful = super().to_connect_batch(topic, data)
            return careful.schemas, careful.values
        return [_OPTIONAL_STRING] * len(values), values

    def _are_texts(self, data: list[bytes | None]) -> bool:
        """Whether each datum is valid UTF-8 (never null) read as the string it encodes."""
        if not self._reads_utf8:
            return False
        try:
            if all(map(bytes.isascii, data)):  # type: ignore[arg-type]
                return True  # ASCII is UTF-8 (and a None raised TypeError)
            for d in data:
                if not d.isascii():  # type: ignore[union-attr]
                    d.decode()  # type: ignore[union-attr]
        except (UnicodeDecodeError, TypeError, AttributeError):
            return False
        return True

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        return self.from_connect_data(topic, schema, value)

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        return self.to_connect_data(topic, value)
