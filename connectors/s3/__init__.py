"""The S3 sink (Confluent's ``S3SinkConnector`` keys and semantics) on boto3, importing only
``connect.api``.

- ``config``: the keys; ``partitioners``: directories and record times; ``formats``: JSON
  lines, Parquet, raw bytes; ``objects``: keys and recovery from the bucket; ``store``:
  boto3 with retries; ``writer``: one topic partition's objects and rotations; ``task``.
"""

from connectors.s3.connector import S3SinkConnector
from connectors.s3.task import S3SinkTask

__all__ = ["S3SinkConnector", "S3SinkTask"]
