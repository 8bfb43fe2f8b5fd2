"""When the demo's pipelines are done, as a condition a pipeline that keeps running can meet.

The bank writer never stops in an interactive demo, so "the outputs equal the database"
is a moving target that a sink one commit behind never reaches. Instead the demo takes a
cut-off: the state of every transaction at one instant. It is done once every one of
those states has arrived at each output, either as itself or as a later state of the
same transaction (a pending transaction settled before the source's next poll is never
seen pending, and needs not be). Changes after the cut-off keep flowing and are shown,
but they are not waited for.

The bank topic holds Avro; once the outputs are done, the demo reads it back with
Confluent's own AvroDeserializer (a judge this project did not write) and checks it
against the cut-off too: every value framed, every state there, and each account's total
equal to the bank's, to the cent; and the file sink's JSON lines are records of the topic.

Pure functions of what was read from the database and the outputs; no I/O.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

Change = tuple[int, str]
"""(transaction id, status): one state of one transaction."""

Row = tuple[int, str, int, int]
"""(transaction id, status, account id, amount in cents): one record of the bank topic."""

# A transaction only moves forward: pending, then settled.
_RANK = {"pending": 0, "settled": 1}


def _rank(status: str) -> int:
    return _RANK.get(status, -1)


@dataclass(frozen=True)
class Cutoff:
    """The bank's state at the instant the demo stops waiting for new writes."""

    changes: frozenset[Change]
    large: frozenset[int]  # ids of transactions of 1,000 or more
    amounts: Mapping[int, tuple[int, int]] = field(default_factory=dict)  # id -> (account, cents)

    def totals(self) -> dict[int, int]:
        """Each account's total, in cents, over the cut-off's transactions."""
        return totals((tid, account, amount) for tid, (account, amount) in self.amounts.items())

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


def cents(amount: object) -> int:
    """An amount (a float, a Decimal or a number's text) in whole cents."""
    return int((Decimal(str(amount)) * 100).to_integral_value())


def totals(amounts: Iterable[tuple[int, int, int]]) -> dict[int, int]:
    """Per account, the sum in cents of (transaction id, account, cents), each id once."""
    by_id = {tid: (account, amount) for tid, account, amount in amounts}
    out: dict[int, int] = {}
    for account, amount in by_id.values():
        out[account] = out.get(account, 0) + amount
    return out


@dataclass(frozen=True)
class TopicRead:
    """The bank topic as Confluent's AvroDeserializer read it, in offset order."""

    rows: tuple[Row, ...]
    # values Confluent's AvroDeserializer could not read: not framed (magic byte 0 and an id
    # registered for the subject) or not Avro of that schema
    unreadable: int


def topic_shortfalls(cutoff: Cutoff, topic: TopicRead, sink_rows: Sequence[Row], final: bool) -> list[str]:
    """What the topic lacks against the cut-off, and where the file sink disagrees with it.

    ``sink_rows`` were read before the topic, so each must be one of its records; ``final``
    (the writer stopped at the cut-off and everything arrived) means the sink holds all of them."""
    said: list[str] = []
    if topic.unreadable:
        said.append(f"{topic.unreadable} values of the topic are not Avro in Confluent's wire format")
    lost = cutoff.missing((row[0], row[1]) for row in topic.rows)
    if lost:
        said.append(f"{len(lost)} of {len(cutoff.changes)} transaction changes are not in the topic")
    in_cutoff = set(cutoff.amounts)
    read = totals((tid, account, amount) for tid, _, account, amount in topic.rows if tid in in_cutoff)
    for account, expected in sorted(cutoff.totals().items()):
        got = read.get(account, 0)
        if got != expected:
            said.append(f"account {account} totals {money(got)} in the topic, {money(expected)} in bank.db")
    extra = Counter(sink_rows) - Counter(topic.rows)
    if extra:
        said.append(f"transactions-out.jsonl has {sum(extra.values())} records the topic does not")
    elif final and len(sink_rows) != len(topic.rows):
        said.append(f"transactions-out.jsonl has {len(sink_rows)} records, the topic {len(topic.rows)}")
    return said


def money(amount: int) -> str:
    """Cents as an amount: 123456 -> 1234.56."""
    return f"{amount // 100}.{amount % 100:02d}"
