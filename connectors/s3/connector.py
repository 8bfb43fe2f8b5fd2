"""S3SinkConnector: topics into partitioned objects in an S3 bucket."""

from __future__ import annotations

from collections.abc import Mapping

from connect.api import ConfigIssue, ConnectException, SinkConnector, Task
from connectors.s3.config import S3SinkConfig
from connectors.s3.errors import TransientStoreError
from connectors.s3.task import VERSION, S3SinkTask


class S3SinkConnector(SinkConnector):
    Config = S3SinkConfig
    aliases = ("io.confluent.connect.s3.S3SinkConnector",)

    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        S3SinkConfig.parse(props)
        self.props = dict(props)

    def task_class(self) -> type[Task]:
        return S3SinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props) for _ in range(max_tasks)]

    def stop(self) -> None:
        pass

    def validate(self, props: Mapping[str, str]) -> list[ConfigIssue]:
        """The keys, then whether the bucket exists and the credentials reach it."""
        issues = super().validate(props)
        if issues:
            return issues
        # boto3 is imported here, not with the module: see connectors.s3.errors.
        from connectors.s3.store import Store

        store = Store(S3SinkConfig.parse(props))
        try:
            store.check_bucket()
        except ConnectException as exc:
            key = "s3.bucket.name" if "does not exist" in str(exc) else "aws.access.key.id"
            return [ConfigIssue(key, str(exc))]
        except TransientStoreError as exc:
            return [
                ConfigIssue(
                    "store.url" if props.get("store.url") else "s3.region", f"Could not reach S3: {exc}"
                )
            ]
        finally:
            store.close()
        return []
