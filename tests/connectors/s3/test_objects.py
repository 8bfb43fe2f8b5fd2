"""Object keys, and the position the bucket's objects say a topic partition got to."""

from __future__ import annotations

from connectors.s3.objects import PREVIOUS_START, RANGE_END, RANGE_START, Naming, resume_offset

NAMING = Naming("topics", "/", "+", 10, ".json")


def test_keys_are_confluents_layout_and_sort_by_offset() -> None:
    assert NAMING.key("orders", "partition=3", 3, 42) == "topics/orders/partition=3/orders+3+0000000042.json"
    assert Naming("", "/", "+", 4, ".bin").key("t", "a=1/b=2", 0, 7) == "t/a=1/b=2/t+0+0007.bin"
    keys = [NAMING.key("o", "partition=0", 0, o) for o in (9, 10, 100, 2)]
    assert sorted(keys) == [NAMING.key("o", "partition=0", 0, o) for o in (2, 9, 10, 100)]


def test_start_offsets_pick_one_topic_partition_and_extension() -> None:
    keys = [
        "topics/orders/country=DE/orders+0+0000000000.json",
        "topics/orders/country=FR/orders+0+0000000001.json",
        "topics/orders/country=FR/orders+1+0000000005.json",  # another partition
        "topics/orders/country=FR/orders+0+0000000008.json.gz",  # another format
        "topics/orders/country=FR/xorders+0+0000000009.json",  # another topic's name ends alike
        "topics/orders/country=FR/orders+0+0000000012.json",
    ]
    assert NAMING.start_offsets("orders", 0, keys) == {0: keys[0], 1: keys[1], 12: keys[5]}


def meta(table: dict[str, tuple[int, int]], previous: dict[str, int] | None = None):  # type: ignore[no-untyped-def]
    def read(key: str) -> dict[str, str]:
        start, end = table[key]
        out = {RANGE_START: str(start), RANGE_END: str(end)}
        if previous and key in previous:
            out[PREVIOUS_START] = str(previous[key])
        return out

    return read


def test_a_complete_rotation_resumes_after_its_end() -> None:
    objects = {0: "a", 1: "b", 10: "c", 11: "d"}
    ranges = {"a": (0, 9), "b": (0, 9), "c": (10, 19), "d": (10, 19)}
    assert resume_offset(objects, meta(ranges)) == 20


def test_a_rotation_cut_short_before_its_head_resumes_at_its_start() -> None:
    # Rotation 10..19 wrote its non-head object (start 11) but crashed before the head (10).
    objects = {0: "a", 1: "b", 11: "d"}
    ranges = {"a": (0, 9), "b": (0, 9), "d": (10, 19)}
    assert resume_offset(objects, meta(ranges)) == 10


def test_nothing_to_say_without_objects_or_without_our_metadata() -> None:
    assert resume_offset({}, meta({})) is None
    assert resume_offset({5: "x"}, lambda key: {}) is None
    assert resume_offset({5: "x"}, lambda key: {RANGE_START: "five", RANGE_END: "9"}) is None


def test_the_newest_rotation_landed_after_the_one_before_it() -> None:
    # Rotations 0..9 and 10..19 uploaded at once; 10..19 names 0 as its predecessor.
    objects = {0: "a", 10: "b"}
    assert resume_offset(objects, meta({"a": (0, 9), "b": (10, 19)}, {"b": 0})) == 20


def test_a_rotation_that_never_landed_behind_a_newer_one_is_where_it_resumes() -> None:
    # 10..19 is in the bucket, 0..9 (uploading beside it) never got there.
    assert resume_offset({10: "b"}, meta({"b": (10, 19)}, {"b": 0})) == 0
    # The same with earlier rotations in place: 20..29 landed, 10..19 did not.
    objects = {0: "a", 20: "c"}
    assert resume_offset(objects, meta({"a": (0, 9), "c": (20, 29)}, {"c": 10})) == 10


def test_a_newest_rotation_cut_short_with_its_predecessor_missing_resumes_at_the_predecessor() -> None:
    # 20..29 wrote a non-head object (start 21) only; 10..19 never landed.
    objects = {0: "a", 1: "b", 21: "d"}
    ranges = {"a": (0, 9), "b": (0, 9), "d": (20, 29)}
    assert resume_offset(objects, meta(ranges, {"d": 10})) == 10
    # ... and with its predecessor in place, at its own start.
    objects[10] = "c"
    ranges["c"] = (10, 19)
    assert resume_offset(objects, meta(ranges, {"d": 10})) == 20


def test_a_malformed_predecessor_says_nothing() -> None:
    read = lambda key: {RANGE_START: "10", RANGE_END: "19", PREVIOUS_START: "zero"}  # noqa: E731
    assert resume_offset({10: "b"}, read) is None
