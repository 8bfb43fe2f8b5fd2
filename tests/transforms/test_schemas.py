"""The derived-schema cache and the schema helpers the transformations share."""

from __future__ import annotations

from collections import OrderedDict

from hypothesis import given
from hypothesis import strategies as st

from connect.api import Schema, SchemaBuilder
from transforms.schemas import LruCache, copy_basics, struct_builder_like


def test_lru_keeps_the_most_recently_used_keys() -> None:
    cache: LruCache[str, int] = LruCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # a is now the most recent
    cache.put("c", 3)  # evicts b
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (1, None, 3)
    assert len(cache) == 2


def test_a_key_read_through_the_identity_shortcut_is_still_recent() -> None:
    cache: LruCache[str, int] = LruCache(3)
    hot = "hot"
    cache.put(hot, 0)
    computed = 1
    for i in range(10):
        assert cache.get(hot) == 0
        if cache.get(f"k{i}") is None:
            cache.put(f"k{i}", i)
        if cache.get(hot) is None:
            cache.put(hot, 0)
            computed += 1
    assert computed == 1


@given(st.lists(st.tuples(st.booleans(), st.integers(0, 6)), max_size=200))
def test_lru_matches_a_reference_model(ops: list[tuple[bool, int]]) -> None:
    keys = [f"k{i}" for i in range(7)]
    cache: LruCache[str, int] = LruCache(3)
    model: OrderedDict[str, int] = OrderedDict()
    for is_put, i in ops:
        key = keys[i]
        if is_put:
            cache.put(key, i)
            model[key] = i
            model.move_to_end(key)
            if len(model) > 3:
                model.popitem(last=False)
        else:
            expected = model.get(key)
            if expected is not None:
                model.move_to_end(key)
            assert cache.get(key) == expected


def test_equal_schemas_that_are_different_objects_share_an_entry() -> None:
    def make() -> Schema:
        return SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()

    cache: LruCache[Schema, str] = LruCache()
    first, second = make(), make()
    assert first is not second
    cache.put(first, "derived")
    assert cache.get(second) == "derived"


def test_copy_basics_copies_identity_but_not_optionality_or_default() -> None:
    source = (
        SchemaBuilder.struct()
        .name("n")
        .version(3)
        .doc("d")
        .parameter("p", "v")
        .optional()
        .field("a", Schema.INT32_SCHEMA)
        .build()
    )
    copy = copy_basics(source, SchemaBuilder.struct()).build()
    assert (copy.name, copy.version, copy.doc, dict(copy.parameters or {})) == ("n", 3, "d", {"p": "v"})
    assert not copy.optional and not copy.fields
    assert struct_builder_like(source).build().optional
