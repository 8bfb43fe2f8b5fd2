"""The S3 sink: partitioners, formats, the writer and the task against a local S3."""
