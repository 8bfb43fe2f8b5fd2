"""Plugins for the REST API tests (tests/connect/test_rest_api.py): connectors that fail on
purpose, on demand, and declare a password.

Loaded by dotted path (``"connector.class": "tests.connect.rest_plugins.MarkerSourceConnector"``);
they import only ``connect.api``. Failures are switched with marker files so a test can make a
connector or its tasks fail, then heal them and check that a restart brings them back:

- ``connector.fail.file``: while this file exists, ``start`` of the connector raises.
- ``task.fail.file``: while this file exists, every ``poll`` of a task raises.

``alter.offsets.result`` is what ``alter_offsets`` answers (Kafka's MonitorableSourceConnector
has the same switch), so both messages of ``PATCH /connectors/{c}/offsets`` can be checked.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any

from connect.api import (
    ConnectException,
    ConnectorConfig,
    Field,
    SecretStr,
    SourceConnector,
    SourceRecord,
    SourceTask,
    Task,
    importance,
)

VERSION = "9.9.9-rest-test"


class MarkerSourceConfig(ConnectorConfig):
    topic: str = Field(
        alias="topic", min_length=1, description="Topic to write to.", json_schema_extra=importance("HIGH")
    )
    password: SecretStr | None = Field(
        None,
        alias="connection.password",
        description="A secret the connector would use to log in somewhere.",
        json_schema_extra=importance("HIGH"),
    )
    connector_fail_file: str | None = Field(
        None, alias="connector.fail.file", description="While this file exists, the connector fails to start."
    )
    task_fail_file: str | None = Field(
        None, alias="task.fail.file", description="While this file exists, every poll of a task fails."
    )
    alter_offsets_result: bool = Field(
        False, alias="alter.offsets.result", description="What alter_offsets answers."
    )


class MarkerSourceConnector(SourceConnector):
    Config = MarkerSourceConfig

    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        config = MarkerSourceConfig.parse(props)
        if config.connector_fail_file and os.path.exists(config.connector_fail_file):
            raise ConnectException(f"connector failing on purpose: {config.connector_fail_file} exists")
        self.props = dict(props)

    def task_class(self) -> type[Task]:
        return MarkerSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props) for _ in range(max_tasks)]

    def stop(self) -> None:
        pass

    def alter_offsets(
        self,
        config: Mapping[str, str],
        offsets: Mapping[tuple[tuple[str, Any], ...], Mapping[str, Any] | None],
    ) -> bool:
        return MarkerSourceConfig.parse(config).alter_offsets_result


class MarkerSourceTask(SourceTask):
    """Produces nothing; fails while the marker file exists."""

    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        self.fail_file = MarkerSourceConfig.parse(props).task_fail_file

    def poll(self) -> list[SourceRecord] | None:
        if self.fail_file and os.path.exists(self.fail_file):
            raise ConnectException(f"task failing on purpose: {self.fail_file} exists")
        time.sleep(0.05)
        return None

    def stop(self) -> None:
        pass
