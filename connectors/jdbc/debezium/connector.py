"""The connector half of a Debezium CDC connector: it validates the configuration and runs one task.

A database's change log (a replication slot, a binlog) is one ordered stream, which one reader
consumes, so Debezium's PostgreSQL and MySQL connectors run one task whatever ``tasks.max``
says, handing it the connector's own configuration.
"""

from __future__ import annotations

from connect.api import SourceConnector

__all__ = ["SingleTaskConnector"]


class SingleTaskConnector(SourceConnector):
    """Parses ``Config`` at start (bad keys fail the connector, not its task) and configures one
    task with the connector's properties. Subclasses name ``Config``, the task class and the
    version, and say why their events are exactly-once."""

    def start(self, props: dict[str, str]) -> None:
        self.config = self.Config.parse(props)
        self.props = dict(props)

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props)]

    def stop(self) -> None:
        pass
