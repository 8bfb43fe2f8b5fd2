"""The sink's own errors, apart from the client: the task and connector modules import them
while the Elasticsearch client (and pyarrow, which it imports) loads only once a task or a
validation talks to a cluster, not when the worker discovers its plugins."""

from __future__ import annotations


class TransientError(Exception):
    """A request failed in a way that may pass: retry it after a backoff."""
