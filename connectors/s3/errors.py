"""The sink's own errors, apart from boto3: the task and connector modules import them
while boto3 loads only once a task or a validation talks to a bucket, not when the
worker discovers its plugins."""

from __future__ import annotations


class TransientStoreError(Exception):
    """A request kept failing in a way that may pass: retry the operation later."""
