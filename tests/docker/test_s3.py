"""The S3 sink's scenarios against LocalStack's S3.

The scenarios are tests/connectors/s3/test_sink.py's own, imported so that they run here
with this module's ``s3_server``: a LocalStack container seen through the surface moto's
server offers (``url``, ``client()``). Faults still come from the fault proxy, which sits
in front of LocalStack just as it sits in front of moto. The credentials scenario needs
moto's IAM checks and stays there."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sluiceway.embedded import EmbeddedConnect
from tests.connectors.s3.conftest import bucket, proxy, s3  # noqa: F401 - the same fixtures, on LocalStack
from tests.connectors.s3.test_sink import (  # noqa: F401 - collected here, against LocalStack
    test_a_missing_bucket_is_refused_at_creation_and_fails_a_running_task,
    test_a_new_consumer_group_resumes_from_the_bucket_not_from_the_start,
    test_an_unreachable_store_keeps_the_task_running_and_commits_nothing_new,
    test_daily_partitions_by_kafka_timestamps_bytes_gzip,
    test_default_partitioner_json_lines_rotated_by_size,
    test_field_partitioner_parquet_with_schemas,
    test_hourly_partitions_by_record_field_rotating_on_record_time,
    test_json_values_are_written_as_their_text_and_values_spanning_lines_compacted,
    test_large_objects_go_up_in_parts,
    test_objects_by_partition_path_hold_each_record_once,
    test_records_a_format_cannot_write_go_to_the_dead_letter_queue,
    test_throttling_5xx_and_dropped_connections_are_retried,
    test_time_based_partitioner_with_a_path_format_and_a_zone,
    test_wall_clock_rotation_commits_a_quiet_partition,
)
from tests.contract_servers.s3 import s3_client
from tests.docker.conftest import docker_or_skip

pytestmark = pytest.mark.docker


class LocalStackS3:
    def __init__(self, container: Any) -> None:
        self.url = container.get_url()

    def client(self) -> Any:
        return s3_client(self.url)


@pytest.fixture(scope="module")
def s3_server() -> Iterator[LocalStackS3]:
    docker_or_skip()
    from testcontainers.community.localstack import LocalStackContainer

    with LocalStackContainer("localstack/localstack:3.8").with_services("s3") as container:
        yield LocalStackS3(container)


@pytest.fixture(scope="module")
def connect(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedConnect]:
    docker_or_skip()
    with EmbeddedConnect(Path(tmp_path_factory.mktemp("s3-docker-worker"))) as c:
        yield c
