"""TwitterSourceConnector: tweets into a topic, from recent search or the filtered stream."""

from __future__ import annotations

from collections.abc import Mapping

from connect.api import ConfigIssue, SourceConnector, Task
from connectors.twitter.config import TwitterSourceConfig, translate
from connectors.twitter.task import VERSION, TwitterSourceTask


class TwitterSourceConnector(SourceConnector):
    Config = TwitterSourceConfig
    aliases = ("com.github.jcustenborder.kafka.connect.twitter.TwitterSourceConnector",)

    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        TwitterSourceConfig.parse_with_aliases(props)
        self.props = dict(props)

    def task_class(self) -> type[Task]:
        return TwitterSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        # One query or one rule set, and Twitter allows an App one stream connection: one task.
        return [dict(self.props)]

    def stop(self) -> None:
        pass

    def validate(self, props: Mapping[str, str]) -> list[ConfigIssue]:
        return TwitterSourceConfig.issues(translate(props))
