"""``JdbcSourceConnector``: finds the tables to copy and spreads them over the tasks.

Also answers to Confluent's class name ``io.confluent.connect.jdbc.JdbcSourceConnector``,
so existing configurations run unchanged. ``start`` connects once (retrying per
``connection.attempts``), so wrong credentials or an unreachable database fail the
connector at once with the driver's message. In table mode a background monitor
re-lists the tables every ``table.poll.interval.ms`` and asks for new task configs
when tables appear or disappear.

Tasks get the connector's keys plus ``tables`` (their share, contiguous runs of the
sorted table list, as Confluent groups them); with a custom ``query`` there is one
task; with no table found, one idle task until tables appear.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping

from sqlalchemy import exc as sa_exc

from connect.api import ConnectException, ExactlyOnceSupport, SourceConnector, Task
from connectors.jdbc.query.config import JdbcSourceConfig
from connectors.jdbc.query.database import Database, Stopped, describe_error
from connectors.jdbc.query.monitor import TableMonitor
from connectors.jdbc.query.tables import TableId, encode_tables, group_contiguous, select_tables
from connectors.jdbc.query.task import TABLES_CONFIG, VERSION, JdbcSourceTask

log = logging.getLogger(__name__)


class JdbcSourceConnector(SourceConnector):
    """Copies database tables (or one query) into topics, one topic per table.

    Minimal configuration::

        connector.class=io.confluent.connect.jdbc.JdbcSourceConnector
        connection.url=jdbc:postgresql://db:5432/shop
        connection.user=app
        connection.password=...
        mode=timestamp+incrementing
        timestamp.column.name=updated_at
        incrementing.column.name=id
        topic.prefix=shop-

    See ``JdbcSourceConfig`` for every key and ``connectors.jdbc.query.criteria`` for
    what each mode can and cannot see.
    """

    Config = JdbcSourceConfig
    aliases = ("io.confluent.connect.jdbc.JdbcSourceConnector",)

    config: JdbcSourceConfig

    def __init__(self) -> None:
        self.props: dict[str, str] = {}
        self.database: Database | None = None
        self.monitor: TableMonitor | None = None
        self._stopping = threading.Event()

    def version(self) -> str:
        return VERSION

    def task_class(self) -> type[Task]:
        return JdbcSourceTask

    def exactly_once_support(self, props: Mapping[str, str]) -> ExactlyOnceSupport:
        # The incrementing and timestamp modes resume after the exact row their offset names;
        # bulk mode copies the whole table again on every poll.
        mode = (props.get("mode") or "").strip()
        supported = mode in ("incrementing", "timestamp", "timestamp+incrementing")
        return ExactlyOnceSupport.SUPPORTED if supported else ExactlyOnceSupport.UNSUPPORTED

    def start(self, props: dict[str, str]) -> None:
        self.props = dict(props)
        self.config = config = JdbcSourceConfig.parse(props)
        translated = config.url()
        if translated.ignored:
            log.warning(
                "connection.url parameters with no Python equivalent are ignored: %s", translated.ignored
            )
        self._stopping = threading.Event()
        self.database = Database.from_config(config, self._stopping)
        try:
            with self.database.connect():
                pass
            if config.query:
                return
            tables = self._find_tables()
        except Stopped:
            return
        except sa_exc.SQLAlchemyError as exc:
            raise ConnectException(
                f"cannot list the tables of {self.database.shown_url}: {describe_error(exc)}"
            ) from exc
        log.info("copying %d table(s): %s", len(tables), ", ".join(t.fqn for t in tables))
        self.monitor = TableMonitor(
            self._find_tables,
            config.table_poll_interval_ms / 1000,
            self.context.request_task_reconfiguration,
            self.context.raise_error,
            tables,
        )
        self.monitor.start()

    def _find_tables(self) -> list[TableId]:
        assert self.database is not None
        config = self.config
        with self.database.engine.connect() as connection:
            found = self.database.dialect.list_tables(
                connection,
                types=config.types,
                catalog_pattern=config.catalog_pattern,
                schema_pattern=config.schema_pattern,
            )
        return select_tables(found, config.include_tables, config.exclude_tables)

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        if self.config.query:
            return [{**self.props, TABLES_CONFIG: ""}]
        tables = self.monitor.tables() if self.monitor is not None else []
        if not tables:
            log.warning("no tables to copy were found: one idle task waits for some to appear")
            return [{**self.props, TABLES_CONFIG: encode_tables([])}]
        groups = group_contiguous(tables, min(len(tables), max_tasks))
        return [{**self.props, TABLES_CONFIG: encode_tables(group)} for group in groups]

    def stop(self) -> None:
        self._stopping.set()
        monitor, self.monitor = self.monitor, None
        if monitor is not None:
            monitor.stop()
        database, self.database = self.database, None
        if database is not None:
            database.close()
