"""The Elasticsearch sink: pure parts, then the task against the contract server."""
