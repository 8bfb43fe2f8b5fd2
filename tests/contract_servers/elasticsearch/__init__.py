"""An Elasticsearch 8 contract server.

Elasticsearch cannot run where these tests run, so this module serves the part of its REST
API a sink connector touches, with the wire behaviour the official ``elasticsearch`` client
(8.x) and ``helpers.bulk`` rely on: the product header, compatible media types, the error
body shape, bulk item semantics (versions, sequence numbers, conflicts, partial failures),
dynamic and explicit mappings that reject values the way Elasticsearch does, data streams
with the built-in ``logs-*-*`` / ``metrics-*-*`` / ``traces-*-*`` / ``synthetics-*-*``
templates, reads for assertions, basic / API-key authentication and TLS.

Fault injection and observation live beside the real API (``fail_next_requests``,
``reject_next_items``, ``delay``, counters) and under ``/_contract/...`` for a server in
another process; ``python -m tests.contract_servers.elasticsearch`` runs one in the
foreground and prints ``LISTENING <port>`` when it accepts connections.
"""

from tests.contract_servers.elasticsearch.constants import VERSION
from tests.contract_servers.elasticsearch.process import ElasticsearchContractProcess, main
from tests.contract_servers.elasticsearch.server import ElasticsearchContractServer

__all__ = ["VERSION", "ElasticsearchContractProcess", "ElasticsearchContractServer", "main"]
