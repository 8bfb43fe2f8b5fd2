"""``/sluiceway/topics``: a read-only extension of the REST API that shows topics, their
offsets and the consumer groups reading them (Kafka Connect's API has no topic endpoints).

- ``GET /sluiceway/topics``: every topic with its partitions' earliest and latest offsets.
- ``GET /sluiceway/topics/{name}``: one topic, plus each consumer group with committed
  offsets on it and its lag per partition (``kafka-consumer-groups --describe``'s numbers).

Everything goes through the Kafka protocol with an admin client built like the worker's
own: its ``security.*``/``ssl.*``/``sasl.*`` settings, then its ``admin.``-prefixed keys,
so it reaches the same cluster the same way (Apache Kafka just as well as the embedded
broker). Group offsets are read by a consumer of each group with the same settings (see
``connect.api.kafka_groups``). The client calls block, so they run off the event loop. Errors use Kafka
Connect's body, ``{"error_code": 404, "message": "..."}`` for an unknown topic.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import Future
from typing import Any

from confluent_kafka import ConsumerGroupState, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec  # type: ignore[attr-defined]  # re-exported untyped
from fastapi import APIRouter
from pydantic import BaseModel, Field

from connect.api.errors import ConnectException, NotFoundException
from connect.api.kafka_groups import committed_of_groups, list_groups
from connect.api.records import TopicPartition as GroupPartition
from connect.herder.base import Herder
from connect.runtime import clients
from connect.runtime.config import WorkerConfig

CLIENT_ID = "connect-rest-topics-admin"
# Worker settings that say how to reach the cluster securely; Kafka Connect hands them to
# every client the worker makes. Other top-level worker keys mean nothing to a client.
SECURITY_PREFIXES = ("security.", "ssl.", "sasl.")
_NO_OFFSET = -1001  # librdkafka's OFFSET_INVALID: the group committed nothing there

# Kafka's names of group states (what kafka-consumer-groups prints).
_GROUP_STATES = {
    ConsumerGroupState.UNKNOWN: "Unknown",
    ConsumerGroupState.PREPARING_REBALANCING: "PreparingRebalance",
    ConsumerGroupState.COMPLETING_REBALANCING: "CompletingRebalance",
    ConsumerGroupState.STABLE: "Stable",
    ConsumerGroupState.DEAD: "Dead",
    ConsumerGroupState.EMPTY: "Empty",
}


class PartitionOffsets(BaseModel):
    """A partition's offset range."""

    partition: int
    earliest_offset: int | None = Field(description="The log start offset: the oldest record still kept.")
    latest_offset: int | None = Field(
        description="The log end offset (high watermark): the offset the next record will get."
    )
    error: str | None = Field(None, description="Why the offsets are missing, when the broker did not say.")


class TopicOffsets(BaseModel):
    """A topic and its partitions' offset ranges."""

    name: str
    internal: bool = Field(description="Kafka's own topics, named with a leading '__' (__consumer_offsets).")
    partition_count: int
    partitions: list[PartitionOffsets]


class GroupPartitionLag(BaseModel):
    """Where a consumer group stands in one partition."""

    partition: int
    committed_offset: int | None = Field(description="The group's committed offset; null if none.")
    latest_offset: int | None
    lag: int | None = Field(description="latest_offset - committed_offset; null without a committed offset.")


class GroupLag(BaseModel):
    """A consumer group with committed offsets on the topic."""

    group_id: str
    state: str = Field(description="Kafka's group state: Stable, Empty, PreparingRebalance, ...")
    lag: int = Field(description="The sum of the lag of the partitions with a committed offset.")
    partitions: list[GroupPartitionLag]


class TopicDetail(TopicOffsets):
    """A topic, its offsets, and the consumer groups reading it."""

    consumer_groups: list[GroupLag]


class ErrorBody(BaseModel):
    """Kafka Connect's error body."""

    error_code: int
    message: str


def admin_settings(config: WorkerConfig) -> dict[str, Any]:
    """The admin client settings of the worker: security settings, then ``admin.`` keys."""
    security = {k: str(v) for k, v in (config.model_extra or {}).items() if k.startswith(SECURITY_PREFIXES)}
    return clients.admin_config(
        config.bootstrap_servers, CLIENT_ID, security, config.client_settings("admin.")
    )


class TopicReader:
    """Blocking reads of topic metadata and offsets through one admin client, and of
    group offsets through a consumer of each group."""

    def __init__(self, settings: Mapping[str, Any], timeout_s: float = 30.0) -> None:
        self._settings = dict(settings)
        self._admin = AdminClient(self._settings)
        self._timeout = timeout_s
        self._where = str(settings.get("bootstrap.servers", ""))

    def topics(self) -> list[TopicOffsets]:
        partitions = self._partitions()
        offsets = self._offsets([(t, p) for t, ps in partitions.items() for p in ps])
        return [_topic(name, ps, offsets) for name, ps in sorted(partitions.items())]

    def topic(self, name: str) -> TopicDetail:
        partitions = self._partitions()
        if name not in partitions:
            raise NotFoundException(f"Topic {name} not found.")
        offsets = self._offsets([(name, p) for p in partitions[name]])
        summary = _topic(name, partitions[name], offsets)
        groups = self._groups(name, partitions[name], offsets)
        return TopicDetail(**summary.model_dump(), consumer_groups=groups)

    # -- the admin calls ------------------------------------------------------------------

    def _partitions(self) -> dict[str, list[int]]:
        # All topics, never one by name: a metadata request naming a missing topic may
        # create it on a broker with auto.create.topics.enable.
        try:
            metadata = self._admin.list_topics(timeout=self._timeout)
        except KafkaException as exc:
            raise ConnectException(f"cannot list the topics on {self._where}: {exc.args[0]}") from exc
        return {
            name: sorted(t.partitions)
            for name, t in metadata.topics.items()
            if t.error is None or t.partitions  # a topic being deleted answers with an error
        }

    def _offsets(self, partitions: list[tuple[str, int]]) -> dict[tuple[str, int], PartitionOffsets]:
        if not partitions:
            return {}
        ends: dict[str, dict[tuple[str, int], Future[Any]]] = {}
        specs = (("earliest", OffsetSpec.earliest()), ("latest", OffsetSpec.latest()))  # type: ignore[no-untyped-call]
        for end, spec in specs:
            asked = self._admin.list_offsets(
                {TopicPartition(t, p): spec for t, p in partitions}, request_timeout=self._timeout
            )
            ends[end] = {(tp.topic, tp.partition): f for tp, f in asked.items()}
        out: dict[tuple[str, int], PartitionOffsets] = {}
        for t, p in partitions:
            found: dict[str, int | None] = {}
            problem: str | None = None
            for end, futures in ends.items():
                try:
                    found[end] = int(futures[(t, p)].result(self._timeout).offset)
                except (KafkaException, TimeoutError) as exc:
                    # One partition without a leader (being created, say) must not hide the rest.
                    found[end] = None
                    problem = str(exc.args[0]) if exc.args else type(exc).__name__
            out[(t, p)] = PartitionOffsets(
                partition=p, earliest_offset=found["earliest"], latest_offset=found["latest"], error=problem
            )
        return out

    def _groups(
        self, topic: str, partitions: list[int], offsets: Mapping[tuple[str, int], PartitionOffsets]
    ) -> list[GroupLag]:
        try:
            listed = list_groups(self._admin, self._timeout)
        except (KafkaException, TimeoutError) as exc:
            raise _unanswered(f"list groups on {self._where}", exc, self._timeout) from exc
        # A consumer of each group reads its offsets, never the admin client's OffsetFetch:
        # that one can abort the worker when a broker restarts under it, and the console
        # polls this (connect.api.kafka_groups).
        asked = [GroupPartition(topic, p) for p in partitions]
        try:
            found = committed_of_groups(self._settings, sorted(listed), asked, self._timeout)
        except (KafkaException, TimeoutError) as exc:
            raise _unanswered(f"read the offsets of the groups on {self._where}", exc, self._timeout) from exc
        out: list[GroupLag] = []
        for group_id, state in sorted(listed.items()):
            committed = {tp.partition: o for tp, (o, _) in found[group_id].items()}
            if not committed:
                continue  # a group that reads other topics, or a Connect workers' group
            rows = [_lag(p, committed.get(p), offsets[(topic, p)].latest_offset) for p in partitions]
            total = sum(r.lag for r in rows if r.lag is not None)
            name = _GROUP_STATES.get(state, str(state))
            out.append(GroupLag(group_id=group_id, state=name, lag=total, partitions=rows))
        return out


def _unanswered(what: str, exc: BaseException, timeout_s: float) -> ConnectException:
    if isinstance(exc, TimeoutError) or not exc.args:
        return ConnectException(f"cannot {what}: no answer in {timeout_s:g} s")
    return ConnectException(f"cannot {what}: {exc.args[0]}")


def _topic(
    name: str, partitions: list[int], offsets: Mapping[tuple[str, int], PartitionOffsets]
) -> TopicOffsets:
    return TopicOffsets(
        name=name,
        internal=name.startswith("__"),
        partition_count=len(partitions),
        partitions=[offsets[(name, p)] for p in partitions],
    )


def _lag(partition: int, committed: int | None, latest: int | None) -> GroupPartitionLag:
    lag = None if committed is None or latest is None else max(latest - committed, 0)
    return GroupPartitionLag(partition=partition, committed_offset=committed, latest_offset=latest, lag=lag)


def router(herder: Herder) -> APIRouter:
    """The ``/sluiceway/topics`` routes of a worker."""

    def make() -> TopicReader:
        # A client per request: the routes are read now and then, and a client kept open
        # would outlive the worker (the REST server runs without lifespan events).
        settings = admin_settings(herder.worker.config)
        # The admin client's request.timeout.ms (Kafka's default, 30 s) bounds each call.
        return TopicReader(settings, float(settings.get("request.timeout.ms", 30_000)) / 1000)

    api = APIRouter(prefix="/sluiceway", tags=["Sluiceway extensions"])

    @api.get(
        "/topics",
        summary="Topics with their partitions' earliest and latest offsets (Sluiceway extension)",
        response_model=list[TopicOffsets],
    )
    async def list_topics() -> list[TopicOffsets]:
        return await herder.blocking(lambda: make().topics())

    @api.get(
        "/topics/{name}",
        summary="A topic's offsets and its consumer groups' lag (Sluiceway extension)",
        response_model=TopicDetail,
        responses={404: {"model": ErrorBody, "description": "No topic of that name"}},
    )
    async def get_topic(name: str) -> TopicDetail:
        return await herder.blocking(lambda: make().topic(name))

    return api
