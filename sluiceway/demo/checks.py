"""When the demo's pipelines are done, as a condition a pipeline that keeps running can meet.

The bank writer never stops in an interactive demo, so "the outputs equal the database"
is a moving target that a sink one commit behind never reaches. Instead the demo takes a
cut-off: the state of every transaction at one instant. It is done once every one of
those states has arrived at each output, either as itself or as a later state of the
same transaction (a pending transaction settled before the source's next poll is never
seen pending, and needs not be). Changes after the cut-off keep flowing and are shown,
but they are not waited for.

Pure functions of what was read from the database and the outputs; no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

Change = tuple[int, str]
"""(transaction id, status): one state of one transaction."""

# A transaction only moves forward: pending, then settled.
_RANK = {"pending": 0, "settled": 1}


def _rank(status: str) -> int:
    return _RANK.get(status, -1)


@dataclass(frozen=True)
class Cutoff:
    """The bank's state at the instant the demo stops waiting for new writes."""

    changes: frozenset[Change]
    large: frozenset[int]  # ids of transactions of 1,000 or more

    def arrived(self, seen: Iterable[Change]) -> frozenset[Change]:
        """The cut-off's states that an output holds, as themselves or superseded."""
        newest: dict[int, int] = {}
        for tid, status in seen:
            rank = _rank(status)
            if rank > newest.get(tid, -1):
                newest[tid] = rank
        return frozenset(c for c in self.changes if newest.get(c[0], -1) >= _rank(c[1]))

    def missing(self, seen: Iterable[Change]) -> frozenset[Change]:
        return self.changes - self.arrived(seen)


@dataclass(frozen=True)
class Outputs:
    """What the demo read from its outputs at one moment."""

    lines_written: int  # lines of the file sink's output
    delivered: frozenset[Change]  # transactions-out.jsonl
    flagged: frozenset[int]  # large-transactions.jsonl
    lake: tuple[tuple[int, str, int], ...]  # (id, status, _offset) of each Spark table row


@dataclass(frozen=True)
class Verdict:
    files: bool
    bank: bool
    large: bool
    lake: bool
    lake_once: bool  # no topic offset twice in the Spark table

    @property
    def done(self) -> bool:
        return self.files and self.bank and self.large and self.lake and self.lake_once


def judge(cutoff: Cutoff, lines_expected: int, out: Outputs) -> Verdict:
    offsets = [row[2] for row in out.lake]
    return Verdict(
        files=out.lines_written >= lines_expected,
        bank=not cutoff.missing(out.delivered),
        large=cutoff.large <= out.flagged,
        lake=not cutoff.missing((row[0], row[1]) for row in out.lake),
        lake_once=len(set(offsets)) == len(offsets),
    )


def shortfalls(cutoff: Cutoff, lines_expected: int, out: Outputs) -> list[str]:
    """What is still missing, one phrase per output, for a failure message."""
    verdict = judge(cutoff, lines_expected, out)
    said: list[str] = []
    if not verdict.files:
        said.append(f"only {out.lines_written} of {lines_expected} order lines reached the output file")
    if not verdict.bank:
        said.append(
            f"{len(cutoff.missing(out.delivered))} of {len(cutoff.changes)} transaction changes "
            f"never reached transactions-out.jsonl (e.g. {_some(cutoff.missing(out.delivered))})"
        )
    if not verdict.large:
        lost = sorted(cutoff.large - out.flagged)
        said.append(f"{len(lost)} large transactions are not in large-transactions.jsonl (ids {lost[:5]})")
    if not verdict.lake:
        lost_lake = cutoff.missing((row[0], row[1]) for row in out.lake)
        said.append(
            f"{len(lost_lake)} of {len(cutoff.changes)} transaction changes are not in the Spark table "
            f"(e.g. {_some(lost_lake)})"
        )
    if not verdict.lake_once:
        said.append("the Spark table holds some topic offsets twice")
    return said


def _some(changes: frozenset[Change]) -> str:
    return ", ".join(f"#{tid} {status}" for tid, status in sorted(changes)[:3])
