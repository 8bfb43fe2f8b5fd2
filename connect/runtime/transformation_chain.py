"""The transformation chain of a connector: SMTs applied in order, each optionally gated
by a predicate (``transforms.<a>.predicate``, inverted by ``.negate``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, TypeVar

from connect.api.records import ConnectRecord
from connect.api.transforms import FunctionTransformation, Predicate, Transformation
from connect.runtime.errors import TOLERATED, RetryWithToleranceOperator, Stage

R = TypeVar("R", bound=ConnectRecord)


@dataclass(slots=True)
class TransformationStage(Generic[R]):
    alias: str
    transformation: Transformation[Any]
    predicate: Predicate[Any] | None = None
    negate: bool = False

    def apply(self, record: R) -> R | None:
        if self.predicate is not None and self.predicate.test(record) == self.negate:
            return record
        result: R | None = self.transformation.apply(record)
        return result

    @property
    def class_name(self) -> str:
        """What error reports name: the class, or ``module:function`` for a plain function."""
        if isinstance(self.transformation, FunctionTransformation):
            fn = self.transformation.fn
            return f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}"
        t = type(self.transformation)
        return f"{t.__module__}.{t.__qualname__}"


class TransformationChain(Generic[R]):
    def __init__(self, stages: Sequence[TransformationStage[R]] = ()) -> None:
        self.stages = list(stages)
        # What apply() walks per record: bound methods looked up once, not per stage call.
        self._steps = [
            (
                stage.transformation.apply,
                None if stage.predicate is None else stage.predicate.test,
                stage.negate,
                stage,
            )
            for stage in self.stages
        ]

    def __bool__(self) -> bool:
        return bool(self.stages)

    def apply(
        self, record: R, operator: RetryWithToleranceOperator, context: Callable[[], dict[str, Any]]
    ) -> tuple[R | None, bool]:
        """(transformed record or None when dropped, whether it was skipped by error tolerance).

        Stages run directly; one that raises is run again through the tolerance
        operator (retries, reporting with ``context()``, maybe skipping the record).
        """
        current: R = record
        for transform, test, negate, stage in self._steps:
            try:
                if test is not None and test(current) == negate:
                    continue  # the predicate says this stage does not apply to this record
                out = transform(current)
            except Exception as exc:
                result = operator.execute(
                    Stage.TRANSFORMATION,
                    stage.class_name,
                    partial(stage.apply, current),  # the predicate too: it may be what failed
                    first_error=exc,
                    **context(),
                )
                if result is TOLERATED:
                    return None, True
                out = result
            if out is None:
                return None, False
            current = out
        return current, False

    def close(self) -> None:
        closed: set[int] = set()
        for stage in self.stages:
            for obj in (stage.transformation, stage.predicate):
                if obj is not None and id(obj) not in closed:
                    closed.add(id(obj))
                    obj.close()
