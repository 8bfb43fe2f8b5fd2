"""The ``--reset-offsets`` planner of ``consumer-groups``: which offset each partition gets.

Pure logic, no I/O: the command fetches each partition's earliest, latest and committed
offsets (and, for a time-based reset, the first offset at or after the timestamp), and
``plan_reset`` turns them and the chosen scenario into new offsets, exactly as Kafka's
``GroupOffsetsResetter``:

- ``--to-earliest`` / ``--to-latest``: the log start / log end offset;
- ``--to-current``: the committed offset, or the log end for a partition without one;
- ``--shift-by N``: committed + N (a partition without a committed offset is an error);
- ``--to-offset N``: N;
- ``--to-datetime`` / ``--by-duration``: the first offset at or after the time, or the log
  end when no record is that recent (with a warning).

Requested offsets (shift-by, to-offset) are clamped to ``[earliest, latest]`` with a
warning, as Kafka does, so a reset never points outside the log.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

TopicPartitionKey = tuple[str, int]  # (topic, partition)


class ResetError(ValueError):
    """A reset that cannot be planned (Kafka raises an IllegalArgumentException)."""


@dataclass(frozen=True, slots=True)
class ToEarliest:
    pass


@dataclass(frozen=True, slots=True)
class ToLatest:
    pass


@dataclass(frozen=True, slots=True)
class ToCurrent:
    pass


@dataclass(frozen=True, slots=True)
class ShiftBy:
    by: int


@dataclass(frozen=True, slots=True)
class ToOffset:
    offset: int


@dataclass(frozen=True, slots=True)
class ToTimestamp:
    """``--to-datetime`` and ``--by-duration`` both end up as a millisecond timestamp."""

    timestamp_ms: int


ResetSpec = ToEarliest | ToLatest | ToCurrent | ShiftBy | ToOffset | ToTimestamp


@dataclass(frozen=True, slots=True)
class PartitionOffsets:
    """What the planner knows of one partition.

    ``at_timestamp`` is the broker's answer to ListOffsets for the spec's timestamp
    (``None``: no record that recent); only time-based specs need it.
    """

    earliest: int
    latest: int
    committed: int | None = None
    at_timestamp: int | None = None


@dataclass(frozen=True, slots=True)
class ResetPlan:
    offsets: dict[TopicPartitionKey, int]
    warnings: list[str] = field(default_factory=list)


def _label(tp: TopicPartitionKey) -> str:
    return f"{tp[0]}-{tp[1]}"  # Kafka's TopicPartition.toString()


def _clamp(tp: TopicPartitionKey, offset: int, known: PartitionOffsets, warnings: list[str]) -> int:
    if offset > known.latest:
        warnings.append(
            f"New offset ({offset}) is higher than latest offset for topic partition {_label(tp)}. "
            f"Value will be set to {known.latest}."
        )
        return known.latest
    if offset < known.earliest:
        warnings.append(
            f"New offset ({offset}) is lower than earliest offset for topic partition {_label(tp)}. "
            f"Value will be set to {known.earliest}."
        )
        return known.earliest
    return offset


def plan_reset(spec: ResetSpec, partitions: Mapping[TopicPartitionKey, PartitionOffsets]) -> ResetPlan:
    """New offsets of ``partitions`` (in their sorted order) for ``spec``."""
    warnings: list[str] = []
    out: dict[TopicPartitionKey, int] = {}
    for tp in sorted(partitions):
        known = partitions[tp]
        match spec:
            case ToEarliest():
                out[tp] = known.earliest
            case ToLatest():
                out[tp] = known.latest
            case ToCurrent():
                out[tp] = known.committed if known.committed is not None else known.latest
            case ShiftBy(by=by):
                if known.committed is None:
                    raise ResetError(
                        f"Cannot shift offset for partition {_label(tp)} "
                        "since there is no current committed offset"
                    )
                out[tp] = _clamp(tp, known.committed + by, known, warnings)
            case ToOffset(offset=offset):
                out[tp] = _clamp(tp, offset, known, warnings)
            case ToTimestamp():
                if known.at_timestamp is None:
                    warnings.append(
                        f"Partition {tp[1]} from topic {tp[0]} is empty. Falling back to latest known offset."
                    )
                    out[tp] = known.latest
                else:
                    out[tp] = known.at_timestamp
    return ResetPlan(out, warnings)


def parse_topic_partitions(arg: str) -> tuple[str, list[int] | None]:
    """``--topic`` of a reset: ``T`` (every partition) or ``T:0,2`` (those partitions)."""
    if ":" not in arg:
        return arg, None
    parts = arg.split(":")
    if len(parts) != 2 or not parts[0]:
        raise ResetError(f"Invalid topic arg '{arg}', expected topic name and partitions")
    topic, listed = parts
    partitions: list[int] = []
    for item in listed.split(","):
        try:
            partitions.append(int(item))
        except ValueError:
            raise ResetError(f"Invalid partition '{item}' specified in topic arg '{arg}'") from None
    return topic, partitions
