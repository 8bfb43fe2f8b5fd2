"""The text layouts of Kafka's tools, so scripts written against their output keep working.

Each function takes plain values and returns the exact text Kafka's command prints
(tabs, column widths, the leading blank line of the group tables and their trailing
blanks included); the commands only gather the values. Widths follow Kafka's
``printf`` formats: a column is as wide as its longest cell with a minimum (15 for
most), and ``-`` stands for a missing value.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

MISSING = "-"


def _cell(value: object) -> str:
    return MISSING if value is None else str(value)


def _java(value: str | None) -> str:
    """A config value as Java's string concatenation prints it (a sensitive one is null)."""
    return "null" if value is None else value


def _row(cells: Sequence[object], widths: Sequence[int]) -> str:
    """Kafka's ``%-Ns %-Ms ... %s``: every cell but the last padded to its width."""
    padded = [f"{_cell(c):<{w}}" for c, w in zip(cells, widths, strict=False)]
    return " ".join([*padded, *(_cell(c) for c in cells[len(widths) :])])


# --- topics --describe ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PartitionInfo:
    partition: int
    leader: int | None  # None: no leader ("none")
    replicas: Sequence[int]
    isr: Sequence[int]


@dataclass(frozen=True, slots=True)
class TopicInfo:
    name: str
    topic_id: str | None  # Kafka's base64 form; None when the broker has no topic ids
    partitions: Sequence[PartitionInfo]
    configs: Sequence[tuple[str, str | None]]  # the non-default configs, in the broker's order


def topic_description(topic: TopicInfo) -> str:
    """``kafka-topics --describe`` of one topic: a summary line, then one line per partition."""
    parts = sorted(topic.partitions, key=lambda p: p.partition)
    replication = len(parts[0].replicas) if parts else 0
    head = f"Topic: {topic.name}"
    if topic.topic_id:
        head += f"\tTopicId: {topic.topic_id}"
    configs = ",".join(f"{k}={_java(v)}" for k, v in topic.configs)
    head += f"\tPartitionCount: {len(parts)}\tReplicationFactor: {replication}\tConfigs: {configs}"
    lines = [head]
    for p in parts:
        lines.append(
            f"\tTopic: {topic.name}\tPartition: {p.partition}"
            f"\tLeader: {'none' if p.leader is None else p.leader}"
            f"\tReplicas: {','.join(map(str, p.replicas))}\tIsr: {','.join(map(str, p.isr))}"
        )
    return "\n".join(lines) + "\n"


# --- consumer-groups ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OffsetRow:
    """One line of ``--describe --offsets``: a partition the group owns or has an offset for."""

    group: str
    topic: str | None
    partition: int | None
    current_offset: int | None
    log_end_offset: int | None
    consumer_id: str | None
    host: str | None
    client_id: str | None

    @property
    def lag(self) -> int | None:
        if self.current_offset is None or self.current_offset == -1 or self.log_end_offset is None:
            return None
        return self.log_end_offset - self.current_offset


def group_offsets_table(rows: Sequence[OffsetRow]) -> str:
    widths = [
        max([15, *(len(r.group) for r in rows)]),
        max([15, *(len(_cell(r.topic)) for r in rows)]),
        10,
        15,
        15,
        15,
        max([15, *(len(_cell(r.consumer_id)) for r in rows)]),
        max([15, *(len(_cell(r.host)) for r in rows)]),
    ]
    header = ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG"]
    header += ["CONSUMER-ID", "HOST", "CLIENT-ID"]
    lines = [_row(header, widths)]
    for r in rows:
        cells = [r.group, r.topic, r.partition, r.current_offset, r.log_end_offset, r.lag]
        lines.append(_row([*cells, r.consumer_id, r.host, r.client_id], widths))
    return "\n" + "\n".join(lines) + "\n"


@dataclass(frozen=True, slots=True)
class MemberRow:
    group: str
    consumer_id: str
    group_instance_id: str | None
    host: str
    client_id: str
    assignment: Sequence[tuple[str, int]]


def assignment_text(assignment: Iterable[tuple[str, int]]) -> str:
    """Kafka 4's ``topic:0,1;other:2`` form of a member's partitions (``-`` for none)."""
    by_topic: dict[str, list[int]] = {}
    for topic, partition in assignment:
        by_topic.setdefault(topic, []).append(partition)
    if not by_topic:
        return MISSING
    return ";".join(sorted(f"{topic}:{','.join(map(str, sorted(ps)))}" for topic, ps in by_topic.items()))


def group_members_table(rows: Sequence[MemberRow], verbose: bool = False) -> str:
    with_instance = any(r.group_instance_id for r in rows)
    widths = [max([15, *(len(r.group) for r in rows)]), max([15, *(len(r.consumer_id) for r in rows)])]
    header: list[str] = ["GROUP", "CONSUMER-ID"]
    if with_instance:
        widths.append(max([17, *(len(r.group_instance_id or "") for r in rows)]))
        header.append("GROUP-INSTANCE-ID")
    widths += [max([15, *(len(r.host) for r in rows)]), max([15, *(len(r.client_id) for r in rows)]), 15]
    header += ["HOST", "CLIENT-ID", "#PARTITIONS"]
    # Kafka's member format ends with a padded column and a blank: "%-15s ".
    assigned = [assignment_text(r.assignment) for r in rows]
    current_width = max([20, *(len(a) for a in assigned)])

    def line(cells: Sequence[object], extra: Sequence[object]) -> str:
        text = "".join(f"{_cell(c):<{w}} " for c, w in zip(cells, widths, strict=True))
        if verbose:
            text += f"{_cell(extra[0]):<15} {_cell(extra[1]):<{current_width}} {_cell(extra[2]):<15} "
            text += f"{_cell(extra[3]):<20}"
        return text

    lines = [line(header, ["CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT"])]
    for r, current in zip(rows, assigned, strict=True):
        cells: list[object] = [r.group, r.consumer_id]
        if with_instance:
            cells.append(r.group_instance_id or "")
        cells += [r.host, r.client_id, len(r.assignment)]
        # Classic-protocol groups have no member epochs nor target assignments (KIP-848).
        lines.append(line(cells, [None, current, None, None]))
    return "\n" + "\n".join(lines) + "\n"


@dataclass(frozen=True, slots=True)
class GroupStateRow:
    group: str
    coordinator_host: str
    coordinator_port: int
    coordinator_id: int
    assignment_strategy: str
    state: str
    members: int


def group_state_table(row: GroupStateRow) -> str:
    coordinator = f"{row.coordinator_host}:{row.coordinator_port}  ({row.coordinator_id})"
    widths = [max(15, len(row.group)), max(25, len(coordinator)), 20, 20]
    header = _row(["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"], widths)
    values = _row(
        [row.group, coordinator, row.assignment_strategy or MISSING, row.state, row.members], widths
    )
    return f"\n{header}\n{values}\n"


def group_listing_table(groups: Sequence[tuple[str, str]]) -> str:
    """``--list --state``: GROUP and STATE columns."""
    width = max([15, *(len(g) for g, _ in groups)]) + 10
    lines = [f"{'GROUP':<{width}} {'STATE':<20}"]
    lines += [f"{g:<{width}} {s:<20}" for g, s in groups]
    return "\n".join(lines) + "\n"


def reset_plan_table(plan: Sequence[tuple[str, str, int, int]]) -> str:
    """The ``--reset-offsets`` result: (group, topic, partition, new offset) rows."""
    if not plan:
        return "\n"
    widths = [max([15, *(len(g) for g, _, _, _ in plan)]), max([15, *(len(t) for _, t, _, _ in plan)]), 10]
    lines = [_row(["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"], widths)]
    lines += [_row([g, t, p, o], widths) for g, t, p, o in plan]
    return "\n" + "\n".join(lines) + "\n"


# --- configs --describe ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ConfigLine:
    name: str
    value: str | None
    sensitive: bool
    synonyms: Sequence[tuple[str, str, str | None]]  # (source, name, value)


def config_description(
    entity_type: str, entity: str, entries: Sequence[ConfigLine], describe_all: bool
) -> str:
    """``kafka-configs --describe`` of one entity (``entity_type`` plural, as on the command line)."""
    title = f"{'All' if describe_all else 'Dynamic'} configs for {entity_type[:-1]} {entity} are:"
    lines = [title]
    for e in sorted(entries, key=lambda e: e.name):
        synonyms = ", ".join(f"{source}:{name}={_java(value)}" for source, name, value in e.synonyms)
        lines.append(
            f"  {e.name}={_java(e.value)} sensitive={str(e.sensitive).lower()} synonyms={{{synonyms}}}"
        )
    return "\n".join(lines) + "\n"
