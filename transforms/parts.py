"""Which part of a record a transformation works on: Kafka's ``$Key`` and ``$Value`` variants.

Kafka writes most SMTs once and nests two subclasses, ``InsertField$Key`` and
``InsertField$Value``, that say where the operand is. Here the shared logic is an
abstract ``PartTransformation`` and the variants mix in ``Key`` or ``Value``::

    class InsertFieldValue(Value, InsertField):
        aliases = ("org.apache.kafka.connect.transforms.InsertField$Value",)
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

from connect.api import ConnectRecord, RecordColumns, Schema, Transformation


class PartTransformation(Transformation[ConnectRecord]):
    """A transformation of one part (key or value) of a record."""

    #: "key" or "value", for messages.
    part: ClassVar[str]

    @staticmethod
    @abstractmethod
    def schema_of(record: ConnectRecord) -> Schema | None: ...

    @staticmethod
    @abstractmethod
    def value_of(record: ConnectRecord) -> Any: ...

    @staticmethod
    @abstractmethod
    def replace(record: ConnectRecord, schema: Schema | None, value: Any) -> ConnectRecord:
        """The record with this part replaced by ``schema`` and ``value``."""

    @staticmethod
    @abstractmethod
    def columns(batch: RecordColumns[Any]) -> tuple[list[Any], Sequence[Any]]:
        """This part's (schemas, values) columns of a batch."""

    @staticmethod
    @abstractmethod
    def set_columns(batch: RecordColumns[Any], schemas: list[Any], values: Sequence[Any]) -> None:
        """Replace this part's columns."""


class Key:
    """Mixin: the transformation works on the record's key."""

    part: ClassVar[str] = "key"

    @staticmethod
    def schema_of(record: ConnectRecord) -> Schema | None:
        return record.key_schema

    @staticmethod
    def value_of(record: ConnectRecord) -> Any:
        return record.key

    @staticmethod
    def replace(record: ConnectRecord, schema: Schema | None, value: Any) -> ConnectRecord:
        return record.with_key(schema, value)

    @staticmethod
    def columns(batch: RecordColumns[Any]) -> tuple[list[Any], Sequence[Any]]:
        return batch.key_schema, batch.key

    @staticmethod
    def set_columns(batch: RecordColumns[Any], schemas: list[Any], values: Sequence[Any]) -> None:
        batch.key_schema, batch.key = schemas, values


class Value:
    """Mixin: the transformation works on the record's value."""

    part: ClassVar[str] = "value"

    @staticmethod
    def schema_of(record: ConnectRecord) -> Schema | None:
        return record.value_schema

    @staticmethod
    def value_of(record: ConnectRecord) -> Any:
        return record.value

    @staticmethod
    def replace(record: ConnectRecord, schema: Schema | None, value: Any) -> ConnectRecord:
        return record.with_value(schema, value)

    @staticmethod
    def columns(batch: RecordColumns[Any]) -> tuple[list[Any], Sequence[Any]]:
        return batch.value_schema, batch.value

    @staticmethod
    def set_columns(batch: RecordColumns[Any], schemas: list[Any], values: Sequence[Any]) -> None:
        batch.value_schema, batch.value = schemas, values
