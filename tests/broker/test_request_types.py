"""Each handler is typed with the request classes of exactly the versions the broker supports.

``broker/protocol/requests.py`` spells those unions out for mypy; these tests keep them equal
to ``SUPPORTED_VERSIONS`` (a version added there must be added to its union, where mypy then
checks the handler against it) and each handler's ``req`` annotation equal to its API's union.
"""

from __future__ import annotations

import typing

import pytest
from kio.index import load_request_schema

from broker.handlers import HANDLERS
from broker.protocol import requests
from broker.protocol.versions import SUPPORTED_VERSIONS, ApiKey


def members(alias: object) -> set[type]:
    args = typing.get_args(alias)
    return set(args) if args else {typing.cast(type, alias)}


@pytest.mark.parametrize("api_key", list(ApiKey), ids=lambda k: k.name)
def test_each_union_holds_the_supported_versions_request_classes(api_key: ApiKey) -> None:
    low, high = SUPPORTED_VERSIONS[api_key]
    wanted = {load_request_schema(api_key, v) for v in range(low, high + 1)}
    assert members(requests.BY_API_KEY[api_key]) == wanted


def test_every_api_key_has_a_union() -> None:
    assert set(requests.BY_API_KEY) == set(SUPPORTED_VERSIONS)


@pytest.mark.parametrize("api_key", sorted(HANDLERS), ids=lambda k: ApiKey(k).name)
def test_each_handler_takes_its_apis_union(api_key: int) -> None:
    handler = HANDLERS[api_key]
    hints = typing.get_type_hints(handler, localns=vars(requests))
    assert members(hints["req"]) == members(requests.BY_API_KEY[api_key]), handler.__qualname__
