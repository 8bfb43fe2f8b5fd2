"""What the three stores kept in Kafka topics share: a compacted internal topic, created or
checked on start, read to the end and tailed by a ``KafkaBasedLog``, reached with the
worker's client settings. ``KafkaConfigBackingStore``, ``KafkaOffsetBackingStore`` and
``KafkaStatusBackingStore`` differ in their records and their producers, not in this."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar, TypedDict

from connect.api.errors import ConnectException
from connect.storage.kafka_log import KafkaBasedLog
from connect.storage.topic_admin import InternalTopic, ensure_internal_topic


class TopicStoreOptions(TypedDict, total=False):
    """The keywords every topic-backed store takes, with the worker's settings behind them."""

    replication_factor: int  # config/offset/status.storage.replication.factor (-1: the broker's)
    client_settings: Mapping[str, Any] | None  # security and other client settings of the worker
    client_id_base: str  # the log's clients are "<base>configs", "<base>offsets", "<base>statuses"
    topic_settings: Mapping[str, str] | None  # further topic configs for a topic created here
    create_topic: bool  # create the topic when missing (else it must exist), and check its shape
    start_timeout: float  # seconds start() waits for the topic to be read to its end
    read_committed: bool  # read only committed records (exactly-once source support, KIP-618)


class TopicBackedStore(ABC):
    """An internal topic and its log; subclasses say what it is for and read its records."""

    purpose: ClassVar[InternalTopic]
    #: Kafka's message when the worker config names no topic.
    no_topic_message: ClassVar[str]
    #: The log's clients' id, after the worker's ``client_id_base``.
    client_suffix: ClassVar[str]

    def __init__(
        self,
        bootstrap_servers: str,
        topic: str,
        partitions: int,
        producer_config: Mapping[str, Any],
        *,
        replication_factor: int = 3,
        client_settings: Mapping[str, Any] | None = None,
        client_id_base: str = "connect-distributed-",
        topic_settings: Mapping[str, str] | None = None,
        create_topic: bool = True,
        start_timeout: float = 30.0,
        read_committed: bool = False,
    ) -> None:
        if not topic.strip():
            raise ConnectException(self.no_topic_message)
        self.topic = topic
        self.bootstrap_servers = bootstrap_servers
        self.partitions = partitions
        self.replication_factor = replication_factor
        self.client_settings = dict(client_settings or {})
        self.topic_settings = dict(topic_settings or {})
        self.create_topic = create_topic
        self._log = KafkaBasedLog(
            topic,
            bootstrap_servers,
            # The store's own producer settings first, the worker's on top, unless the store
            # must insist on some (idempotence, retries): those are given already merged.
            producer_config=dict(producer_config),
            # Transactions write these topics when exactly-once support is on: a reader must not
            # see what an abort drops (the store's reads then wait for open ones to end).
            consumer_config=(
                {**self.client_settings, "isolation.level": "read_committed"}
                if read_committed
                else self.client_settings
            ),
            on_record=self._on_record,
            client_id=f"{client_id_base}{self.client_suffix}",
            start_timeout=start_timeout,
        )

    def _ensure_topic(self) -> None:
        """Create the topic as its purpose wants it, or check the one that exists."""
        if self.create_topic:
            ensure_internal_topic(
                self.bootstrap_servers,
                self.client_settings,
                self.topic,
                1 if self.purpose.single_partition else self.partitions,
                self.replication_factor,
                self.purpose,
                topic_settings=self.topic_settings,
            )

    @abstractmethod
    def _on_record(self, key: bytes | None, value: bytes | None, partition: int, offset: int) -> None:
        """One record of the topic, in order per partition, on the log's reader thread."""
