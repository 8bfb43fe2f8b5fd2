"""The Elasticsearch sink (Confluent's ``ElasticsearchSinkConnector`` keys and semantics),
built on the official ``elasticsearch`` client and importing only ``connect.api``.

- ``config``: the keys; ``documents``: records as bulk actions (ids, external versions,
  JSON); ``mapping``: index mappings from Connect schemas; ``bulk_items``: what each
  bulk answer item means; ``offsets``: what may be committed; ``cluster``: the client;
  ``task``: batching, in-flight requests, retries and backpressure.
"""

from connectors.elasticsearch.connector import ElasticsearchSinkConnector
from connectors.elasticsearch.task import ElasticsearchSinkTask

__all__ = ["ElasticsearchSinkConnector", "ElasticsearchSinkTask"]
