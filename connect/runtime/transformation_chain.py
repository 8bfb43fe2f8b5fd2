"""The transformation chain of a connector: SMTs applied in order, each optionally gated
by a predicate (``transforms.<a>.predicate``, inverted by ``.negate``).

A poll goes through the chain as one batch of columns (``connect.api.record_columns``):
stages that offer a batch form (``Transformation.apply_columns``) change the columns
with no record made or copied, the others get records made from the rows, one call each
as in Kafka. A predicate with a batch form (``Predicate.test_columns``) is asked once
per batch, and a topic-only one (``TopicNameMatches``) once per topic. A batch form that
raises leaves the columns as they were, and its stage runs again record by record through
the error handling (``errors.tolerance``, the dead letter queue), so a failing record
is reported exactly as it would be without batches.

What is compiled, and when: the chain's plan (which stages run as batches, which run
record by record together) once per chain, here; each stage's plan for a schema (the
output schema, the field positions it reads and writes) once per input schema, inside
the stage's batch form. A plan per (chain, input schema) for the whole chain would need
every stage's output schema before the data arrives, which several SMTs only know from
the data (Cast to a struct's fields, Flatten, ValueToKey of a schemaless map), and it
would save nothing the per-stage caches do not: a cached plan costs one dict lookup per
stage and batch.

``benchmarks/transforms.py`` measures what this buys: the five-SMT chain against the
same pipeline without it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, TypeVar

from connect.api.record_columns import RecordColumns, StructColumn
from connect.api.records import ConnectRecord
from connect.api.transforms import FunctionTransformation, Predicate, Transformation
from connect.runtime.errors import TOLERATED, RetryWithToleranceOperator, Stage

R = TypeVar("R", bound=ConnectRecord)

_COLUMNS = (
    "records",
    "topic",
    "kafka_partition",
    "key_schema",
    "key",
    "value_schema",
    "value",
    "timestamp",
    "headers",
)


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

    @property
    def has_batch_form(self) -> bool:
        return type(self.transformation).apply_columns is not Transformation.apply_columns


@dataclass(slots=True)
class ChainOutput(Generic[R]):
    """What comes out of the chain for a batch: the surviving rows as columns, the index
    of the input record each row came from, and how many records error tolerance skipped."""

    columns: RecordColumns[R]
    origin: list[int]
    skipped: int


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
        # What apply_batch() walks: a stage with a batch form alone, or a run of stages
        # without one, which go record by record together (one record made per row).
        self._segments: list[tuple[TransformationStage[R] | None, list[TransformationStage[R]]]] = []
        for stage in self.stages:
            if stage.has_batch_form:
                self._segments.append((stage, []))
            elif self._segments and self._segments[-1][0] is None:
                self._segments[-1][1].append(stage)
            else:
                self._segments.append((None, [stage]))

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
                result = _run_tolerated(operator, stage, current, exc, context)
                if result is TOLERATED:
                    return None, True
                out = result
            if out is None:
                return None, False
            current = out
        return current, False

    def apply_batch(
        self,
        records: Sequence[R],
        operator: RetryWithToleranceOperator,
        context: Callable[[R], dict[str, Any]],
    ) -> ChainOutput[R]:
        """The chain over a batch: the same records, in the same order, as ``apply`` record
        by record would give, as columns. ``context(original)`` names a failing record for
        error reports, as ``apply``'s ``context()`` does."""
        batch = RecordColumns(records)
        origin = list(range(len(batch)))
        skipped = 0
        # Whether each row's record still equals its columns: then a record-by-record
        # segment takes the records as they are, with no copy.
        synced = True
        for batch_stage, segment in self._segments:
            if not len(batch):
                break
            if batch_stage is not None:
                if _batch_stage(batch_stage, batch):
                    _compact(batch, origin)
                    synced = False
                    continue
                segment = [batch_stage]
            skipped += _by_record(segment, batch, origin, records, operator, context, synced)
            _compact(batch, origin)
            synced = True
        return ChainOutput(batch, origin, skipped)

    def close(self) -> None:
        closed: set[int] = set()
        for stage in self.stages:
            for obj in (stage.transformation, stage.predicate):
                if obj is not None and id(obj) not in closed:
                    closed.add(id(obj))
                    obj.close()


def _run_tolerated(
    operator: RetryWithToleranceOperator,
    stage: TransformationStage[Any],
    record: Any,
    first_error: Exception,
    context: Callable[[], dict[str, Any]],
) -> Any:
    return operator.execute(
        Stage.TRANSFORMATION,
        stage.class_name,
        partial(stage.apply, record),  # the predicate too: it may be what failed
        first_error=first_error,
        **context(),
    )


def _snapshot(batch: RecordColumns[Any]) -> list[Sequence[Any]]:
    # Lists are copied (a batch form may assign their items); other columns, such as a
    # StructColumn, are never changed in place.
    return [c.copy() if type(c) is list else c for c in (getattr(batch, name) for name in _COLUMNS)]


def _rows(column: Sequence[Any], rows: list[int]) -> Sequence[Any]:
    if isinstance(column, StructColumn):
        return column.take(rows)
    return [column[i] for i in rows]


def _restore(batch: RecordColumns[Any], saved: list[Sequence[Any]]) -> None:
    for name, column in zip(_COLUMNS, saved, strict=True):
        setattr(batch, name, column)
    batch.dropped = []


def _batch_stage(stage: TransformationStage[Any], batch: RecordColumns[Any]) -> bool:
    """Run a stage's batch form (on the rows its predicate selects); False when it raised,
    with the columns put back as they were."""
    saved = _snapshot(batch)
    try:
        predicate = stage.predicate
        if predicate is None:
            stage.transformation.apply_columns(batch)
            _check_lengths(stage, batch, len(saved[0]))
            return True
        negate = stage.negate
        rows = [i for i, hit in enumerate(predicate.test_columns(batch)) if hit != negate]
        if len(rows) == len(batch):
            stage.transformation.apply_columns(batch)
            _check_lengths(stage, batch, len(saved[0]))
        elif rows:
            part = _take(batch, rows)
            stage.transformation.apply_columns(part)
            _check_lengths(stage, part, len(rows))
            _put(batch, rows, part)
        return True
    except Exception:
        _restore(batch, saved)
        return False


def _check_lengths(stage: TransformationStage[Any], batch: RecordColumns[Any], n: int) -> None:
    for name in _COLUMNS:
        if len(getattr(batch, name)) != n:
            raise RuntimeError(f"{stage.class_name}.apply_columns left column {name} with a wrong length")


def _by_record(
    stages: list[TransformationStage[Any]],
    batch: RecordColumns[Any],
    origin: list[int],
    inputs: Sequence[Any],
    operator: RetryWithToleranceOperator,
    context: Callable[[Any], dict[str, Any]],
    synced: bool,
) -> int:
    """Run stages record by record, as ``TransformationChain.apply`` does; returns the
    number of records error tolerance skipped."""
    skipped = 0
    steps = [(stage.transformation.apply, stage.predicate, stage.negate, stage) for stage in stages]
    records = batch.records
    for i in range(len(batch)):
        current = records[i] if synced else batch.record(i)
        dropped = False
        for transform, predicate, negate, stage in steps:
            try:
                if predicate is not None and predicate.test(current) == negate:
                    continue
                out = transform(current)
            except Exception as exc:
                out = _run_tolerated(operator, stage, current, exc, partial(context, inputs[origin[i]]))
                if out is TOLERATED:
                    skipped += 1
                    out = None
            if out is None:
                dropped = True
                break
            current = out
        if dropped:
            batch.dropped.append(i)
        elif current is not records[i] or not synced:
            batch.set_record(i, current)
    return skipped


def _compact(batch: RecordColumns[Any], origin: list[int]) -> None:
    """Remove the rows a stage dropped, from every column and from ``origin``."""
    dropped = batch.dropped
    if not dropped:
        return
    gone = set(dropped)
    keep = [i for i in range(len(batch)) if i not in gone]
    for name in _COLUMNS:
        setattr(batch, name, _rows(getattr(batch, name), keep))
    origin[:] = [origin[i] for i in keep]
    batch.dropped = []


def _take(batch: RecordColumns[Any], rows: list[int]) -> RecordColumns[Any]:
    part: RecordColumns[Any] = RecordColumns(())
    for name in _COLUMNS:
        setattr(part, name, _rows(getattr(batch, name), rows))
    return part


def _put(batch: RecordColumns[Any], rows: list[int], part: RecordColumns[Any]) -> None:
    """Write a part's rows back at ``rows``; rows the part dropped are dropped."""
    for name in _COLUMNS:
        column = getattr(batch, name)
        if type(column) is not list:
            column = list(column)
            setattr(batch, name, column)
        for i, value in zip(rows, getattr(part, name), strict=True):
            column[i] = value
    batch.dropped.extend(rows[j] for j in part.dropped)
