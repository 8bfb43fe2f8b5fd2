"""Connectors: the plugins that decide what to copy and split it into tasks.

A connector does not move data itself. The worker creates it, calls ``start`` with
its configuration, asks ``task_configs(max_tasks)`` how to split the work, and runs
one task per returned config (on its own thread, possibly on another worker). Calls
on a connector come from the worker's executor, one at a time, never from the
event loop; they may block briefly (a metadata query) but must return.

A complete source connector::

    class LinesConnector(SourceConnector):
        class Config(ConnectorConfig):
            topic: str = Field(alias="topic")

        def version(self) -> str:
            return "1.0"

        def start(self, props: dict[str, str]) -> None:
            self.props = props

        def task_class(self) -> type[Task]:
            return LinesTask

        def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
            return [dict(self.props)]        # one task does everything

        def stop(self) -> None:
            pass
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from connect.api.config import ConfigIssue, ConfigModel, ConnectorConfig

if TYPE_CHECKING:
    from connect.api.records import TopicPartition
    from connect.api.task import OffsetStorageReader, Task


class ConnectorContext(ABC):
    """What a connector can ask of the framework."""

    @abstractmethod
    def request_task_reconfiguration(self) -> None:
        """Ask the framework to call ``task_configs`` again (the source's shape changed:
        a new table, a dropped file). Safe to call from any thread."""

    @abstractmethod
    def raise_error(self, error: BaseException) -> None:
        """Report an unrecoverable error found on a thread of the connector's own; the
        connector goes FAILED with this error as its trace."""


class SourceConnectorContext(ConnectorContext):
    @abstractmethod
    def offset_storage_reader(self) -> OffsetStorageReader:
        """Committed source offsets of this connector's tasks (for ``task_configs``)."""


class SinkConnectorContext(ConnectorContext):
    pass


class ExactlyOnceSupport(enum.Enum):
    """What ``SourceConnector.exactly_once_support`` answers (KIP-618)."""

    SUPPORTED = "SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"


class ConnectorTransactionBoundaries(enum.Enum):
    """What ``SourceConnector.can_define_transaction_boundaries`` answers (KIP-618)."""

    SUPPORTED = "SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"


class Connector(ABC):
    #: The connector's settings model; the framework validates it and serves it over REST.
    Config: ClassVar[type[ConfigModel]] = ConnectorConfig
    #: Other names this class answers to (Java class names of the connector it replaces).
    aliases: ClassVar[tuple[str, ...]] = ()

    context: ConnectorContext

    def initialize(self, context: ConnectorContext) -> None:
        """Called once, before ``start``."""
        self.context = context

    @abstractmethod
    def version(self) -> str:
        """The connector's version (shown by ``GET /connector-plugins``)."""

    @abstractmethod
    def start(self, props: dict[str, str]) -> None:
        """Begin with this configuration (config provider placeholders already resolved).
        Raise ``ConnectException`` if it cannot work (the connector goes FAILED)."""

    def reconfigure(self, props: dict[str, str]) -> None:
        """A new configuration: by default ``stop`` then ``start``."""
        self.stop()
        self.start(props)

    @abstractmethod
    def task_class(self) -> type[Task]:
        """The Task class that does the copying."""

    @abstractmethod
    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        """Split the work into at most ``max_tasks`` task configurations."""

    @abstractmethod
    def stop(self) -> None:
        """Stop; release what ``start`` acquired. Called from the worker's executor."""

    def validate(self, props: Mapping[str, str]) -> list[ConfigIssue]:
        """Problems with ``props`` beyond what ``Config`` checks field by field (e.g. keys
        that only make sense together). The default checks ``Config``."""
        return self.Config.issues(props)

    @classmethod
    def config_model(cls) -> type[ConfigModel]:
        return cls.Config


class SourceConnector(Connector):
    context: SourceConnectorContext

    def exactly_once_support(self, props: Mapping[str, str]) -> ExactlyOnceSupport | None:
        """Whether this connector can deliver exactly once with this configuration (its
        offsets say exactly where to resume, and a task resumed from them re-reads nothing
        it already returned); None means it does not say. Asked when a connector with
        ``exactly.once.support=required`` is validated."""
        return None

    def can_define_transaction_boundaries(self, props: Mapping[str, str]) -> ConnectorTransactionBoundaries:
        """SUPPORTED when its tasks draw their own transaction boundaries through
        ``SourceTaskContext.transaction_context()`` (``transaction.boundary=connector``)."""
        return ConnectorTransactionBoundaries.UNSUPPORTED

    def alter_offsets(
        self,
        config: Mapping[str, str],
        offsets: Mapping[tuple[tuple[str, Any], ...], Mapping[str, Any] | None],
    ) -> bool:
        """Called before the offsets of a STOPPED connector are changed over REST.

        ``offsets`` maps each source partition (as a sorted tuple of its items) to its
        new offset, or None to reset it. Return True if the connector checked them and
        they are valid; False if it cannot tell (the change still goes ahead); raise to
        refuse the change with the exception's message.
        """
        return False


class SinkConnector(Connector):
    context: SinkConnectorContext

    #: The key holding the topics a sink reads (Kafka's ``SinkConnector.TOPICS_CONFIG``).
    TOPICS_CONFIG: ClassVar[str] = "topics"

    def alter_offsets(self, config: Mapping[str, str], offsets: Mapping[TopicPartition, int | None]) -> bool:
        """Like ``SourceConnector.alter_offsets`` for the consumer offsets of a sink."""
        return False
