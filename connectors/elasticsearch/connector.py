"""ElasticsearchSinkConnector: topics into Elasticsearch indices or data streams."""

from __future__ import annotations

from collections.abc import Mapping

from connect.api import ConfigIssue, ConnectException, SinkConnector, Task
from connectors.elasticsearch.config import ElasticsearchSinkConfig
from connectors.elasticsearch.errors import TransientError
from connectors.elasticsearch.task import VERSION, ElasticsearchSinkTask

#: The oldest Elasticsearch whose bulk API and data streams the sink relies on.
_MIN_MAJOR = 7


class ElasticsearchSinkConnector(SinkConnector):
    Config = ElasticsearchSinkConfig
    aliases = ("io.confluent.connect.elasticsearch.ElasticsearchSinkConnector",)

    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        ElasticsearchSinkConfig.parse(props)
        self.props = dict(props)

    def task_class(self) -> type[Task]:
        return ElasticsearchSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props) for _ in range(max_tasks)]

    def stop(self) -> None:
        pass

    def validate(self, props: Mapping[str, str]) -> list[ConfigIssue]:
        """The keys, then (as Confluent's sink does) whether the cluster answers and is new enough."""
        issues = super().validate(props)
        if issues:
            return issues
        config = ElasticsearchSinkConfig.parse(props)
        # The client is imported here, not with the module: see connectors.elasticsearch.errors.
        from connectors.elasticsearch.cluster import Cluster

        try:
            cluster = Cluster(config)
        except ConnectException as exc:  # TLS files that cannot be read
            return [ConfigIssue("elastic.https.ssl.truststore.location", str(exc))]
        try:
            info = cluster.info()
        except (TransientError, ConnectException) as exc:
            key = "connection.password" if "credentials" in str(exc) else "connection.url"
            return [ConfigIssue(key, f"Could not connect to Elasticsearch: {exc}")]
        finally:
            cluster.close()
        number = str((info.get("version") or {}).get("number", "0"))
        try:
            major = int(number.split(".", 1)[0])
        except ValueError:
            major = 0
        if major < _MIN_MAJOR:
            return [
                ConfigIssue(
                    "connection.url", f"Elasticsearch {number} is too old: {_MIN_MAJOR}.x or newer is needed"
                )
            ]
        if config.is_data_stream and major < 8 and number < "7.9":
            return [
                ConfigIssue("data.stream.type", f"Elasticsearch {number} has no data streams (7.9 or newer)")
            ]
        return []
