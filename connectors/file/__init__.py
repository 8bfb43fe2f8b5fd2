"""Kafka's FileStream connectors: a source that tails a file (or stdin) into a topic, and a
sink that appends records to a file (or stdout). Imports only ``connect.api``."""

from connectors.file.sink import FileStreamSinkConnector, FileStreamSinkTask
from connectors.file.source import FileStreamSourceConnector, FileStreamSourceTask

__all__ = [
    "FileStreamSinkConnector",
    "FileStreamSinkTask",
    "FileStreamSourceConnector",
    "FileStreamSourceTask",
]
