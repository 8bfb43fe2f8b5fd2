"""``sluiceway consumer-groups``: Kafka's ``kafka-consumer-groups.sh`` over the Kafka protocol.

- ``--list`` (with ``--state [STATES]``: a GROUP/STATE table, optionally filtered);
- ``--describe --group G`` (or ``--all-groups``): offsets and lag per partition, or
  ``--members`` / ``--state``, in Kafka's column layouts;
- ``--reset-offsets``: one scenario (``--to-earliest``, ``--to-latest``, ``--to-current``,
  ``--shift-by``, ``--to-offset``, ``--to-datetime``, ``--by-duration``) over
  ``--topic T[:P,...]`` or ``--all-topics``; a dry run prints the plan unless
  ``--execute`` is given; a group with active members is refused, as in Kafka;
- ``--delete --group G``.

The plan itself is computed by ``offset_reset.plan_reset`` from offsets fetched here.

Committed offsets are read and reset through a consumer of the group that never joins it
(``connect.api.kafka_groups.GroupClients``), not the admin client's
``list_consumer_group_offsets``/``alter_consumer_group_offsets``: librdkafka aborts the
process when one of its coordinator-bound admin requests meets a dropped connection
(confluentinc/librdkafka#4605). Describing members and states and deleting groups have no
consumer equivalent and stay on the admin client. Topics deleted since the group committed
are not listed (a consumer asks for the partitions of the topics that exist).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from confluent_kafka import ConsumerGroupState, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec  # type: ignore[attr-defined]  # re-exported untyped

from connect.api.kafka_groups import GroupClients
from sluiceway.broker_tools.kafka_clients import (
    EXIT_ERROR,
    EXIT_OK,
    ConnectionErrors,
    ToolError,
    add_bootstrap_argument,
    build,
    client_config,
    error_code,
    error_text,
    librdkafka_settings,
    reach_cluster,
    read_properties_file,
    run_command,
    wait,
    warn,
)
from sluiceway.broker_tools.layouts import (
    GroupStateRow,
    MemberRow,
    OffsetRow,
    group_listing_table,
    group_members_table,
    group_offsets_table,
    group_state_table,
    reset_plan_table,
)
from sluiceway.broker_tools.offset_reset import (
    PartitionOffsets,
    ResetError,
    ResetSpec,
    ShiftBy,
    ToCurrent,
    ToEarliest,
    ToLatest,
    ToOffset,
    TopicPartitionKey,
    ToTimestamp,
    parse_topic_partitions,
    plan_reset,
)
from sluiceway.broker_tools.time_specs import parse_datetime_ms, parse_duration_ns, timestamp_before

# confluent-kafka's group states -> Kafka's names (GroupState.toString()).
STATE_NAMES = {
    ConsumerGroupState.STABLE: "Stable",
    ConsumerGroupState.EMPTY: "Empty",
    ConsumerGroupState.DEAD: "Dead",
    ConsumerGroupState.PREPARING_REBALANCING: "PreparingRebalance",
    ConsumerGroupState.COMPLETING_REBALANCING: "CompletingRebalance",
    ConsumerGroupState.UNKNOWN: "Unknown",
}
_STATES_BY_NAME = {
    name.lower(): state for state, name in STATE_NAMES.items() if state != ConsumerGroupState.UNKNOWN
}
ACTIONS = ("list", "describe", "delete", "reset_offsets")
SCENARIOS = ("to_earliest", "to_latest", "to_current", "shift_by", "to_offset", "to_datetime", "by_duration")
DEFAULT_TIMEOUT_MS = 5000


def build_parser(prog: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog, description="List, describe and delete consumer groups, and reset their offsets."
    )
    add_bootstrap_argument(p)
    p.add_argument("--command-config", metavar="FILE", help="properties file of admin client settings")
    p.add_argument(
        "--timeout",
        type=int,
        default=DEFAULT_TIMEOUT_MS,
        metavar="MS",
        help=f"timeout of each request to the cluster (default {DEFAULT_TIMEOUT_MS})",
    )
    actions = p.add_mutually_exclusive_group()
    actions.add_argument("--list", action="store_true", help="list all consumer groups")
    actions.add_argument(
        "--describe", action="store_true", help="describe groups: offsets and lag by default"
    )
    actions.add_argument("--delete", action="store_true", help="delete groups without active members")
    actions.add_argument(
        "--reset-offsets", action="store_true", help="reset the committed offsets of a group"
    )
    p.add_argument("--group", action="append", default=[], help="the consumer group (repeatable)")
    p.add_argument("--all-groups", action="store_true", help="apply to every consumer group")
    p.add_argument(
        "--topic",
        action="append",
        default=[],
        metavar="TOPIC[:P,...]",
        help="topic (and partitions) to reset",
    )
    p.add_argument("--all-topics", action="store_true", help="reset every topic the group has offsets for")
    p.add_argument("--offsets", action="store_true", help="with --describe: offsets and lag (the default)")
    p.add_argument("--members", action="store_true", help="with --describe: the group's members")
    p.add_argument(
        "--state",
        nargs="?",
        const="",
        metavar="STATES",
        help="with --describe: the group's state; with --list: show states, or only groups in STATES "
        "(comma separated)",
    )
    p.add_argument("--verbose", action="store_true", help="with --describe --members: assignments")
    scenarios = p.add_mutually_exclusive_group()
    scenarios.add_argument("--to-earliest", action="store_true", help="reset to the earliest offset")
    scenarios.add_argument("--to-latest", action="store_true", help="reset to the latest offset")
    scenarios.add_argument(
        "--to-current", action="store_true", help="reset to the current (committed) offset"
    )
    scenarios.add_argument(
        "--shift-by", type=int, metavar="N", help="shift the committed offset by N (may be negative)"
    )
    scenarios.add_argument("--to-offset", type=int, metavar="N", help="reset to offset N")
    scenarios.add_argument(
        "--to-datetime",
        metavar="YYYY-MM-DDTHH:mm:SS.sss",
        help="reset to the first offset at or after this time",
    )
    scenarios.add_argument("--by-duration", metavar="PnDTnHnMnS", help="reset to the offsets this long ago")
    run_mode = p.add_mutually_exclusive_group()
    run_mode.add_argument("--dry-run", action="store_true", help="only print the plan (the default)")
    run_mode.add_argument("--execute", action="store_true", help="reset the offsets")
    return p


def _check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> str:
    chosen = [a for a in ACTIONS if getattr(args, a)]
    if len(chosen) != 1:
        parser.error("Command must include exactly one action: --list, --describe, --delete, --reset-offsets")
    action = chosen[0]
    if action != "list" and not args.group and not args.all_groups:
        parser.error(f"Option [{action.replace('_', '-')}] takes one of these options: [all-groups], [group]")
    if args.group and args.all_groups:
        parser.error("Option [group] can't be used with option [all-groups]")
    if (
        action == "describe"
        and sum(bool(x) for x in (args.offsets, args.members, args.state is not None)) > 1
    ):
        parser.error("Option [describe] takes at most one of these options: [members], [offsets], [state]")
    scenario_given = [s for s in SCENARIOS if getattr(args, s) not in (None, False)]
    if action == "reset_offsets":
        if not scenario_given:
            parser.error(
                "Option [reset-offsets] requires one of the following scenarios: [to-earliest], [to-latest], "
                "[to-current], [shift-by], [to-offset], [to-datetime], [by-duration]"
            )
        if not args.topic and not args.all_topics:
            parser.error("One of the reset scopes should be defined: --all-topics, --topic.")
        if args.topic and args.all_topics:
            parser.error("Option [topic] can't be used with option [all-topics]")
    else:
        for option in [
            *scenario_given,
            *(o for o in ("dry_run", "execute", "all_topics") if getattr(args, o)),
        ]:
            parser.error(f"Option [{option.replace('_', '-')}] can only be used with [reset-offsets]")
        if args.topic:
            parser.error("Option [topic] can only be used with [reset-offsets]")
    if (args.members or args.offsets or args.verbose) and action != "describe":
        parser.error("Options [members], [offsets] and [verbose] are only for [describe]")
    if args.state is not None and action not in ("describe", "list"):
        parser.error("Option [state] is only for [describe] and [list]")
    if args.timeout <= 0:
        parser.error("--timeout must be positive")
    return action


def reset_spec(args: argparse.Namespace, now_ms: int) -> ResetSpec:
    """The scenario of ``--reset-offsets``; the time ones resolve to a timestamp now."""
    if args.to_earliest:
        return ToEarliest()
    if args.to_latest:
        return ToLatest()
    if args.to_current:
        return ToCurrent()
    if args.shift_by is not None:
        return ShiftBy(args.shift_by)
    if args.to_offset is not None:
        return ToOffset(args.to_offset)
    try:
        if args.to_datetime is not None:
            return ToTimestamp(parse_datetime_ms(args.to_datetime))
        return ToTimestamp(timestamp_before(now_ms, parse_duration_ns(args.by_duration)))
    except ValueError as exc:
        raise ToolError(str(exc), bare=True) from None


def _state_name(state: Any) -> str:
    return STATE_NAMES.get(state, "Unknown")


class GroupCommand:
    def __init__(self, args: argparse.Namespace, action: str) -> None:
        self.args = args
        self.action = action
        self.timeout = args.timeout / 1000
        props = read_properties_file(args.command_config, "--command-config") if args.command_config else {}
        self.errors = ConnectionErrors()
        config = client_config(args.bootstrap_server, librdkafka_settings(props), self.errors)
        self.admin = build(AdminClient, config, "admin client")
        self.groups = GroupClients(config, self.timeout)
        self.failed = False
        self.partitions: dict[str, int] = {}

    def run(self) -> int:
        metadata = reach_cluster(self.admin, self.args.bootstrap_server, self.errors, self.timeout)
        self.partitions = {name: len(t.partitions) for name, t in metadata.topics.items() if t.error is None}
        try:
            getattr(self, f"{self.action}_groups")()
        finally:
            self.groups.close()
        return EXIT_ERROR if self.failed else EXIT_OK

    def _error(self, message: str) -> None:
        print(f"\nError: {message}", file=sys.stderr)
        self.failed = True

    # --- queries -------------------------------------------------------------------

    def _listed_groups(self, states: set[Any] | None = None) -> list[tuple[str, str]]:
        kwargs: dict[str, Any] = {"request_timeout": self.timeout}
        if states:
            kwargs["states"] = states
        result = wait(self.admin.list_consumer_groups(**kwargs), self.timeout, "list groups")
        for err in result.errors:
            warn(f"listing groups: {err}")
        return sorted((g.group_id, _state_name(g.state)) for g in result.valid)

    def _group_ids(self) -> list[str]:
        if self.args.all_groups:
            return [g for g, _ in self._listed_groups()]
        return sorted(set(self.args.group))

    def _describe(self, groups: Sequence[str]) -> dict[str, Any]:
        futures = self.admin.describe_consumer_groups(list(groups), request_timeout=self.timeout)
        return {g: wait(futures[g], self.timeout, f"describe group {g}") for g in groups}

    def _committed(self, group: str) -> dict[TopicPartitionKey, int]:
        try:
            committed = self.groups.committed(group, lambda _topic: True)
        except KafkaException as exc:
            raise _timed_out(exc, f"offsets of group {group}", self.timeout) from None
        return {(tp.topic, tp.partition): offset for tp, (offset, _metadata) in committed.items()}

    def _log_offsets(
        self, partitions: Iterable[TopicPartitionKey], spec: Any
    ) -> dict[TopicPartitionKey, int | None]:
        """ListOffsets for each partition: the offset, or None where the broker has none."""
        wanted = {TopicPartition(t, p): spec for t, p in partitions}
        if not wanted:
            return {}
        futures = self.admin.list_offsets(wanted, request_timeout=self.timeout)
        out: dict[TopicPartitionKey, int | None] = {}
        for tp, future in futures.items():
            try:
                offset = wait(future, self.timeout, f"offsets of {tp.topic}-{tp.partition}").offset
            except KafkaException:
                offset = -1
            out[(tp.topic, tp.partition)] = offset if offset >= 0 else None
        return out

    def _announce_state(self, group: str, state: str) -> bool:
        """Kafka's notes on a group's state; False when there is nothing to show."""
        if state == "Dead":
            self._error(f"Consumer group '{group}' does not exist.")
            return False
        if state == "Empty":
            print(f"\nConsumer group '{group}' has no active members.", file=sys.stderr)
        elif state in ("PreparingRebalance", "CompletingRebalance"):
            print(f"\nWarning: Consumer group '{group}' is rebalancing.", file=sys.stderr)
        return True

    # --- actions ---------------------------------------------------------------------------

    def list_groups(self) -> None:
        if self.args.state is None:
            for group, _ in self._listed_groups():
                print(group)
            return
        states: set[Any] = set()
        for name in filter(None, (s.strip() for s in self.args.state.split(","))):
            state = _STATES_BY_NAME.get(name.lower())
            if state is None:
                valid = ", ".join(STATE_NAMES[s] for s in _STATES_BY_NAME.values())
                raise ToolError(
                    f"Invalid state list '{self.args.state}'. Valid states are: {valid}", bare=True
                )
            states.add(state)
        sys.stdout.write(group_listing_table(self._listed_groups(states)))

    def describe_groups(self) -> None:
        groups = self._group_ids()
        described = self._describe(groups)
        for group in groups:
            desc = described[group]
            state = _state_name(desc.state)
            if self.args.members:
                self._describe_members(group, state, desc)
            elif self.args.state is not None:
                if self._announce_state(group, state):
                    c = desc.coordinator
                    sys.stdout.write(
                        group_state_table(
                            GroupStateRow(
                                group, c.host, c.port, c.id, desc.partition_assignor, state, len(desc.members)
                            )
                        )
                    )
            else:
                self._describe_offsets(group, state, desc)

    def _describe_members(self, group: str, state: str, desc: Any) -> None:
        rows = [
            MemberRow(
                group=group,
                consumer_id=m.member_id,
                group_instance_id=m.group_instance_id,
                host=m.host,
                client_id=m.client_id,
                assignment=[(tp.topic, tp.partition) for tp in m.assignment.topic_partitions],
            )
            for m in desc.members
        ]
        if self._announce_state(group, state) and rows:
            sys.stdout.write(group_members_table(rows, self.args.verbose))

    def _describe_offsets(self, group: str, state: str, desc: Any) -> None:
        committed = self._committed(group)
        owned: list[tuple[Any, list[TopicPartitionKey]]] = []
        # As Kafka: members with more partitions first, then partitions only the offsets know.
        members = sorted(
            (m for m in desc.members if m.assignment.topic_partitions),
            key=lambda m: -len(m.assignment.topic_partitions),
        )
        for m in members:
            owned.append((m, sorted((tp.topic, tp.partition) for tp in m.assignment.topic_partitions)))
        assigned = {tp for _, tps in owned for tp in tps}
        unowned = sorted(tp for tp in committed if tp not in assigned)
        log_end = self._log_offsets([*assigned, *unowned], OffsetSpec.latest())  # type: ignore[no-untyped-call]
        rows: list[OffsetRow] = []
        for m, tps in owned:
            rows += [
                OffsetRow(
                    group, t, p, committed.get((t, p)), log_end.get((t, p)), m.member_id, m.host, m.client_id
                )
                for t, p in tps
            ]
        rows += [
            OffsetRow(group, t, p, committed[(t, p)], log_end.get((t, p)), None, None, None)
            for t, p in unowned
        ]
        if self._announce_state(group, state) and rows:
            sys.stdout.write(group_offsets_table(rows))

    def delete_groups(self) -> None:
        groups = self._group_ids()
        futures = self.admin.delete_consumer_groups(groups, request_timeout=self.timeout)
        failed: dict[str, str] = {}
        for group in groups:
            try:
                wait(futures[group], self.timeout, f"delete group {group}")
            except KafkaException as exc:
                failed[group] = error_text(exc)
        succeeded = [g for g in groups if g not in failed]
        if not failed:
            print(f"Deletion of requested consumer groups ({quoted_list(succeeded)}) was successful.")
            return
        self._error("Deletion of some consumer groups failed:")
        for group, reason in failed.items():
            print(f"* Group '{group}' could not be deleted due to: {reason}", file=sys.stderr)
        if succeeded:
            print(f"\nThese consumer groups were deleted successfully: {quoted_list(succeeded)}")

    def reset_offsets_groups(self) -> None:
        if not self.args.execute and not self.args.dry_run:
            warn(
                "No action will be performed as the --execute option is missing. "
                "Add --dry-run to say that is what you want, or --execute to reset the offsets."
            )
        spec = reset_spec(self.args, int(time.time() * 1000))
        groups = self._group_ids()
        described = self._describe(groups)
        plan: list[tuple[str, str, int, int]] = []
        for group in groups:
            state = _state_name(described[group].state)
            if state not in ("Empty", "Dead"):
                self._error(
                    f"Assignments can only be reset if the group '{group}' is inactive, "
                    f"but the current state is {state}."
                )
                continue
            new_offsets = self._plan_group(group, spec)
            if self.args.execute and new_offsets:
                try:
                    refused = self.groups.commit(
                        group, [TopicPartition(t, p, o) for (t, p), o in new_offsets.items()]
                    )
                except KafkaException as exc:
                    raise _timed_out(exc, f"reset offsets of group {group}", self.timeout) from None
                errors = [f"{tp.topic}-{tp.partition}: {tp.error.str()}" for tp in refused if tp.error]
                if errors:
                    raise ToolError(
                        f"resetting the offsets of group '{group}' failed for {', '.join(errors)}"
                    )
            plan += [(group, t, p, o) for (t, p), o in new_offsets.items()]
        sys.stdout.write(reset_plan_table(plan))

    def _partitions_to_reset(
        self, group: str, committed: Mapping[TopicPartitionKey, int]
    ) -> list[TopicPartitionKey]:
        if self.args.all_topics:
            return sorted(committed)
        out: list[TopicPartitionKey] = []
        for arg in self.args.topic:
            try:
                topic, listed = parse_topic_partitions(arg)
            except ResetError as exc:
                raise ToolError(str(exc), bare=True) from None
            count = self.partitions.get(topic)
            if count is None:
                raise ToolError(f"Topic '{topic}' does not exist")
            if listed is None:
                out += [(topic, p) for p in range(count)]
                continue
            missing = [f"{topic}-{p}" for p in listed if not 0 <= p < count]
            if missing:
                raise ToolError(f'The partitions "{",".join(missing)}" do not exist')
            out += [(topic, p) for p in listed]
        return sorted(set(out))

    def _plan_group(self, group: str, spec: ResetSpec) -> dict[TopicPartitionKey, int]:
        committed = self._committed(group)
        partitions = self._partitions_to_reset(group, committed)
        earliest = self._log_offsets(partitions, OffsetSpec.earliest())  # type: ignore[no-untyped-call]
        latest = self._log_offsets(partitions, OffsetSpec.latest())  # type: ignore[no-untyped-call]
        at_time: dict[TopicPartitionKey, int | None] = {}
        if isinstance(spec, ToTimestamp):
            at_time = self._log_offsets(partitions, OffsetSpec.for_timestamp(spec.timestamp_ms))
        known: dict[TopicPartitionKey, PartitionOffsets] = {}
        for tp in partitions:
            low, high = earliest.get(tp), latest.get(tp)
            if low is None or high is None:
                raise ToolError(f"Error getting the offsets of topic partition {tp[0]}-{tp[1]}")
            known[tp] = PartitionOffsets(low, high, committed.get(tp), at_time.get(tp))
        try:
            plan = plan_reset(spec, known)
        except ResetError as exc:
            raise ToolError(str(exc), bare=True) from None
        for message in plan.warnings:
            warn(message)
        return plan.offsets


def _timed_out(exc: KafkaException, what: str, timeout_s: float) -> Exception:
    """A consumer's timeout as the admin calls' ``wait`` words it; other errors as they are."""
    if error_code(exc) == KafkaError._TIMED_OUT:
        return ToolError(f"{what}: no answer from the cluster within {timeout_s:g} s")
    return exc


def quoted_list(groups: Sequence[str]) -> str:
    return ", ".join(f"'{g}'" for g in groups)


def main(argv: list[str] | None = None, prog: str = "sluiceway consumer-groups") -> int:
    parser = build_parser(prog)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    action = _check_arguments(parser, args)
    return run_command(
        lambda: GroupCommand(args, action).run(), "Error: Executing consumer group command failed due to "
    )


if __name__ == "__main__":
    sys.exit(main())
