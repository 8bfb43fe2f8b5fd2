"""Single message transforms and predicates.

A transformation reshapes one record at a time (``apply`` returns the new record, or
None to drop it); a predicate decides whether a transformation applies to a record.
Both are configured from the connector's ``transforms.<alias>.*`` and
``predicates.<alias>.*`` keys (prefix removed) and run on the task's thread.

A complete transformation::

    class UpperCaseValue(Transformation[R]):
        def apply(self, record: R) -> R | None:
            if record.value is None:
                return record
            return record.new_record(value=str(record.value).upper())

Plain functions work too: ``transforms.up.type=mypackage.module:upper`` where
``upper(record)`` returns a record or None; the runtime wraps them in
``FunctionTransformation``.

The runtime runs the chain over a whole poll as columns (``connect.api.record_columns``).
A transformation may add a batch form, ``apply_columns``, that changes the columns in
place with no record made per row; without one, ``apply`` is called per record. The same
holds for predicates and ``test_columns``. Both are optional and change no result, only
the cost.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Generic, TypeVar

from connect.api.config import ConfigModel
from connect.api.record_columns import RecordColumns
from connect.api.records import ConnectRecord

R = TypeVar("R", bound=ConnectRecord)


class Transformation(ABC, Generic[R]):
    Config: ClassVar[type[ConfigModel]] = ConfigModel
    aliases: ClassVar[tuple[str, ...]] = ()

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Called once with this transform's settings; the default validates ``Config``
        and keeps it as ``self.config``."""
        self.config = self.Config.parse(configs)

    @abstractmethod
    def apply(self, record: R) -> R | None:
        """The transformed record, or None to drop it."""

    def apply_columns(self, batch: RecordColumns[R]) -> None:
        """The batch form: what ``apply`` does to each row, done to the columns in place
        (rows to drop go into ``batch.dropped``). This default calls ``apply`` per row;
        the runtime calls ``apply`` per record itself unless a subclass overrides this."""
        for i in range(len(batch)):
            out = self.apply(batch.record(i))
            if out is None:
                batch.dropped.append(i)
            else:
                batch.set_record(i, out)

    def close(self) -> None:
        pass


class Predicate(ABC, Generic[R]):
    Config: ClassVar[type[ConfigModel]] = ConfigModel
    aliases: ClassVar[tuple[str, ...]] = ()

    def configure(self, configs: Mapping[str, Any]) -> None:
        self.config = self.Config.parse(configs)

    @abstractmethod
    def test(self, record: R) -> bool: ...

    def test_columns(self, batch: RecordColumns[R]) -> list[bool]:
        """The batch form: ``test`` of every row. Override it to decide once per batch or
        per topic what ``test`` decides per record."""
        return [self.test(batch.record(i)) for i in range(len(batch))]

    def close(self) -> None:
        pass


class FunctionTransformation(Transformation[R]):
    """A plain ``record -> record | None`` function used as a transformation."""

    def __init__(self, fn: Callable[[R], R | None]) -> None:
        self.fn = fn

    def configure(self, configs: Mapping[str, Any]) -> None:
        pass

    def apply(self, record: R) -> R | None:
        return self.fn(record)
