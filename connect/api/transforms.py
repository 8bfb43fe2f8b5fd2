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
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Generic, TypeVar

from connect.api.config import ConfigModel
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

    def close(self) -> None:
        pass


class Predicate(ABC, Generic[R]):
    Config: ClassVar[type[ConfigModel]] = ConfigModel
    aliases: ClassVar[tuple[str, ...]] = ()

    def configure(self, configs: Mapping[str, Any]) -> None:
        self.config = self.Config.parse(configs)

    @abstractmethod
    def test(self, record: R) -> bool: ...

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
