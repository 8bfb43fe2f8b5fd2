"""The Elasticsearch sink's scenarios against a real Elasticsearch 8 container.

The scenarios are tests/connectors/elasticsearch/test_sink.py's own, imported so that
they run here with this module's ``es``: the container, seen through the same small
surface the contract server offers (``url``, ``documents``, ``mapping``,
and ``stop``/``start``, which pause and resume the container).
Scenarios that inject faults only a contract server can (429s on demand, slow answers)
stay there."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sluiceway.embedded import EmbeddedConnect
from tests.connectors.elasticsearch.test_sink import (  # noqa: F401 - collected here, against the container
    test_a_malformed_document_fails_the_task_by_default_and_warn_skips_it,
    test_a_topic_router_picks_the_index,
    test_an_index_that_cannot_be_created_yet_makes_put_retriable,
    test_an_unreachable_cluster_keeps_the_task_retrying_and_commits_nothing_it_did_not_ack,
    test_data_stream,
    test_keys_as_ids_with_external_versions_keep_the_newest_value,
    test_malformed_documents_go_to_the_dead_letter_queue_with_the_reason,
    test_schemas_become_the_index_mapping,
    test_tombstones_delete_and_upserts_merge,
    test_tweets_are_indexed_once_each_and_offsets_follow,
)
from tests.docker.conftest import docker_or_skip

pytestmark = pytest.mark.docker


class RealElasticsearch:
    def __init__(self, container: Any) -> None:
        from elasticsearch import Elasticsearch

        self.container = container
        self.url = container.get_url()
        self.client = Elasticsearch(self.url, request_timeout=30)

    def documents(self, index: str) -> dict[str, Any]:
        from elasticsearch import NotFoundError, helpers

        try:
            self.client.indices.refresh(index=index)
            return {h["_id"]: h["_source"] for h in helpers.scan(self.client, index=index)}
        except NotFoundError:
            return {}

    def mapping(self, index: str) -> dict[str, Any]:
        body = self.client.indices.get_mapping(index=index).body
        return dict(next(iter(body.values()))["mappings"])

    def stop(self) -> None:
        self.container.get_wrapped_container().pause()

    def start(self) -> None:
        self.container.get_wrapped_container().unpause()


@pytest.fixture(scope="module")
def _container() -> Iterator[Any]:
    docker_or_skip()
    from testcontainers.community.elasticsearch import ElasticSearchContainer

    with ElasticSearchContainer("docker.elastic.co/elasticsearch/elasticsearch:8.15.3", mem_limit="1g") as c:
        yield c


@pytest.fixture
def es(_container: Any) -> RealElasticsearch:
    return RealElasticsearch(_container)


@pytest.fixture(scope="module")
def connect(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedConnect]:
    docker_or_skip()
    with EmbeddedConnect(Path(tmp_path_factory.mktemp("es-docker-worker"))) as c:
        yield c
