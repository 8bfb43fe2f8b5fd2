"""The offsets endpoints of KIP-875 (``GET|PATCH|DELETE /connectors/{c}/offsets``), the same
for standalone and distributed herders.

Source offsets live in the worker's offset store (a file, or the offsets topic); sink
offsets are the consumer group ``connect-<name>``, read and changed through a consumer of
the group (``connect.api.kafka_groups``: the admin client's group calls can abort the
worker when a broker restarts), and deleted with DeleteGroups. Changes are allowed only
while the connector is STOPPED with no tasks, and the connector's ``alter_offsets`` sees
them first, as in Kafka.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from confluent_kafka import KafkaException
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient

from connect.api.connector import SinkConnector, SourceConnector
from connect.api.errors import ConnectException
from connect.api.kafka_groups import GroupClients, list_groups
from connect.api.records import TopicPartition
from connect.herder.base import NOT_STOPPED, Herder, bad_request
from connect.runtime import clients
from connect.runtime.status import TargetState
from connect.storage.offsets import ConnectorOffsetReader, OffsetStorageWriter


class OffsetsEndpoints(Herder):
    """Mixed into a herder; changes are serialized by the herder's ``_lock``."""

    _lock: asyncio.Lock

    def _is_sink(self, config: Mapping[str, str]) -> bool:
        return issubclass(self.plugins.connector_class(config["connector.class"]), SinkConnector)

    def _admin_settings(self) -> dict[str, Any]:
        cfg = self.worker.config
        return clients.admin_config(
            cfg.bootstrap_servers, "connect-offsets-admin", cfg.client_settings("admin.")
        )

    def _groups(self, settings: Mapping[str, Any]) -> GroupClients:
        # The group's offsets go through a consumer of the group, never the admin client's
        # coordinator-bound calls, which abort the worker when a broker restarts under
        # them (see connect.api.kafka_groups). Settings are the admin client's, as in
        # Kafka Connect, which does this with an admin client.
        return GroupClients(settings, _timeout_s(settings))

    async def connector_offsets(self, name: str) -> list[dict[str, Any]]:
        config = await self.connector_config(name)
        if self._is_sink(config):
            return await self.blocking(self._sink_offsets, name)
        reader = ConnectorOffsetReader(self.worker.offsets_for(name, config), name)
        return [{"partition": p, "offset": o} for p, o in reader.all()]

    def _sink_offsets(self, name: str) -> list[dict[str, Any]]:
        group = f"connect-{name}"
        try:
            with self._groups(self._admin_settings()) as groups:
                committed = groups.committed(group, lambda _topic: True)
        except (KafkaException, TimeoutError) as exc:
            raise ConnectException(f"cannot read the offsets of consumer group {group}: {_why(exc)}") from exc
        return [
            {
                "partition": {"kafka_topic": tp.topic, "kafka_partition": tp.partition},
                "offset": {"kafka_offset": offset},
            }
            for tp, (offset, _) in sorted(committed.items())
        ]

    def _require_stopped(self, name: str) -> None:
        # STOPPED with no task configs left (anywhere in the cluster), nor tasks running here.
        if (
            self.target_state(name) != TargetState.STOPPED
            or self.task_ids(name)
            or self.worker.task_ids(name)
        ):
            raise bad_request(NOT_STOPPED.format(name=name))

    async def alter_offsets(self, name: str, offsets: list[dict[str, Any]]) -> str:
        config = await self.connector_config(name)
        self._require_stopped(name)
        if not offsets:
            raise bad_request("The 'offsets' field must be provided and must not be empty")
        async with self._lock:
            if self._is_sink(config):
                parsed = _parse_sink_offsets(offsets)
                connector = self.plugins.new_connector(config["connector.class"])
                assert isinstance(connector, SinkConnector)
                checked = await self.blocking(connector.alter_offsets, config, parsed)
                await self.blocking(self._alter_sink_offsets, name, parsed)
            else:
                pairs = _parse_source_offsets(offsets)
                connector = self.plugins.new_connector(config["connector.class"])
                assert isinstance(connector, SourceConnector)
                checked = await self.blocking(
                    connector.alter_offsets, config, {tuple(sorted(p.items())): o for p, o in pairs}
                )
                OffsetStorageWriter(self.worker.offsets_for(name, config), name).write(pairs)
        if checked:
            return "The offsets for this connector have been altered successfully"
        return (
            "The Connect framework-managed offsets for this connector have been altered successfully. "
            "However, if this connector manages offsets externally, they will need to be manually altered in "
            "the system that the connector uses."
        )

    def _alter_sink_offsets(self, name: str, offsets: Mapping[TopicPartition, int | None]) -> None:
        group = f"connect-{name}"
        settings = self._admin_settings()
        try:
            with self._groups(settings) as groups:
                commits = {tp: o for tp, o in offsets.items() if o is not None}
                resets = {tp for tp, o in offsets.items() if o is None}
                if resets:
                    # No OffsetDelete in the client: drop the group and commit back what stays.
                    kept = groups.committed(group, lambda _topic: True)
                    _delete_group(AdminClient(settings), group, _timeout_s(settings))
                    commits = {
                        **{tp: o for tp, (o, _) in kept.items() if tp not in resets},
                        **commits,
                    }
                failed = groups.commit(
                    group,
                    [KafkaTopicPartition(tp.topic, tp.partition, o) for tp, o in sorted(commits.items())],
                )
        except (KafkaException, TimeoutError) as exc:
            raise ConnectException(
                f"cannot alter the offsets of consumer group {group}: {_why(exc)}"
            ) from exc
        if failed:
            refused = ", ".join(f"{tp.topic}-{tp.partition}: {tp.error}" for tp in failed)
            raise ConnectException(f"cannot alter the offsets of consumer group {group}: {refused}")

    async def reset_offsets(self, name: str) -> str:
        config = await self.connector_config(name)
        self._require_stopped(name)
        async with self._lock:
            if self._is_sink(config):
                await self.blocking(self._reset_sink_offsets, name)
            else:
                reader = ConnectorOffsetReader(self.worker.offsets_for(name, config), name)
                OffsetStorageWriter(self.worker.offsets_for(name, config), name).write(
                    (p, None) for p, _ in reader.all()
                )
        return (
            "The Connect framework-managed offsets for this connector have been reset successfully. "
            "However, if this connector manages offsets externally, they will need to be manually reset "
            "in the system that the connector uses."
        )

    def _reset_sink_offsets(self, name: str) -> None:
        group = f"connect-{name}"
        settings = self._admin_settings()
        try:
            _delete_group(AdminClient(settings), group, _timeout_s(settings))
        except (KafkaException, TimeoutError) as exc:
            raise ConnectException(f"cannot reset consumer group {group}: {_why(exc)}") from exc


def _timeout_s(settings: Mapping[str, Any]) -> float:
    """How long a group call may wait: the admin client's ``request.timeout.ms``
    (Kafka's default, 30 s)."""
    return float(settings.get("request.timeout.ms", 30_000)) / 1000


def _delete_group(admin: AdminClient, group: str, timeout_s: float) -> None:
    """DeleteGroups for ``group``, if the cluster lists it.

    DeleteGroups is the one group call with no consumer equivalent, and a coordinator-bound
    admin request: a broker connection dropping while it is in flight can abort the whole
    worker (librdkafka#4605, see connect.api.kafka_groups; it showed when requests timed
    out against a stopped broker). So it is sent only right after a ListGroups round trip
    (not coordinator-bound) showed the cluster answering and the group there, never to a
    cluster that is not answering. The risk left: the broker going away during the
    DeleteGroups round trip itself (FindCoordinator, then the request: milliseconds on a
    broker that just answered), in an operator's DELETE, or PATCH with null offsets, of a
    stopped sink's offsets; rare and never polled, unlike the reads.
    """
    if group not in list_groups(admin, timeout_s):
        return  # nothing to delete (Kafka Connect answers the same either way)
    try:
        admin.delete_consumer_groups([group], request_timeout=timeout_s)[group].result(timeout_s)
    except KafkaException as exc:
        if "GROUP_ID_NOT_FOUND" not in str(exc):
            raise


def _why(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError) or not exc.args:
        return "no answer from the cluster"
    return str(exc.args[0])


def _parse_sink_offsets(offsets: list[dict[str, Any]]) -> dict[TopicPartition, int | None]:
    out: dict[TopicPartition, int | None] = {}
    for entry in offsets:
        partition = entry.get("partition")
        if not isinstance(partition, dict) or set(partition) != {"kafka_topic", "kafka_partition"}:
            raise bad_request(
                "Sink connector offsets must have a 'partition' with exactly 'kafka_topic' and "
                "'kafka_partition'"
            )
        topic, number = partition["kafka_topic"], partition["kafka_partition"]
        if (
            not isinstance(topic, str)
            or not isinstance(number, int)
            or isinstance(number, bool)
            or number < 0
        ):
            raise bad_request("'kafka_topic' must be a string and 'kafka_partition' a non-negative integer")
        offset = entry.get("offset")
        if offset is None:
            out[TopicPartition(topic, number)] = None
            continue
        if not isinstance(offset, dict) or set(offset) != {"kafka_offset"}:
            raise bad_request(
                "Sink connector offsets must have an 'offset' with exactly 'kafka_offset', or null"
            )
        value = offset["kafka_offset"]
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise bad_request("'kafka_offset' must be a non-negative integer")
        out[TopicPartition(topic, number)] = value
    return out


def _parse_source_offsets(
    offsets: list[dict[str, Any]],
) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    out = []
    for entry in offsets:
        partition = entry.get("partition")
        if not isinstance(partition, dict) or not partition:
            raise bad_request("Each entry needs a non-empty 'partition' object")
        offset = entry.get("offset")
        if offset is not None and not isinstance(offset, dict):
            raise bad_request("'offset' must be an object or null")
        out.append((partition, offset))
    return out
