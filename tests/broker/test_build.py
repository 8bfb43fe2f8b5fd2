"""``broker.protocol.build``: a response built with a field name that no version of its entity
has fails in tests (``SLUICEWAY_STRICT_ENTITIES=1``, set by tests/conftest.py) instead of
silently taking the field's default."""

from __future__ import annotations

import dataclasses

import pytest
from kio.schema.describe_configs.v1.response import DescribeConfigsResourceResult
from kio.schema.list_offsets.v1.request import ListOffsetsTopic
from kio.schema.metadata.v12.response import MetadataResponseTopic

from broker.protocol.build import build, known_names


def test_the_suite_runs_strict() -> None:
    import os

    assert os.environ.get("SLUICEWAY_STRICT_ENTITIES") == "1"


def test_a_misspelt_response_field_fails() -> None:
    with pytest.raises(TypeError, match="has no field is_default"):
        build(DescribeConfigsResourceResult, name="x", value="1", is_default=True)


def test_a_field_of_another_version_is_fine() -> None:
    # topic_id is not in every Metadata version's topics: a handler describes all at once.
    assert "topic_id" in known_names(MetadataResponseTopic)
    built = build(MetadataResponseTopic, name="t", is_internal=False, partitions=[])
    assert built.name == "t"


def test_a_field_only_other_versions_have_is_fine_and_a_misspelt_one_next_to_it_fails() -> None:
    # The check looks at the class's own fields first and at every version only when a name
    # is not among them (importing every version is most of a test broker's start-up).
    from kio.schema.metadata.v0.response import MetadataResponseTopic as V0Topic

    assert "topic_id" not in {f.name for f in dataclasses.fields(V0Topic)}
    built = build(V0Topic, name="t", topic_id=None, partitions=[])
    assert built.name == "t"
    with pytest.raises(TypeError, match="has no field topic_idd"):
        build(V0Topic, name="t", topic_idd=None, partitions=[])


def test_requests_may_name_the_fields_of_every_version() -> None:
    built = build(ListOffsetsTopic, name="t", topic="t", partitions=[])
    assert built.name == "t"
