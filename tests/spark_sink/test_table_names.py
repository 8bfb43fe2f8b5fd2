"""Unit tests of the pure half of the Spark sink's commit log (``spark_sink.table_log``):
file and manifest names, and manifests as text. No Spark, no file system."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connect.api import ConnectException
from connect.api.records import TopicPartition
from spark_sink import table_log
from spark_sink.table_log import (
    COMMITS,
    MANIFEST_VERSION,
    Manifest,
    data_file_name,
    is_data_file,
    manifest_path,
    spark_extension,
    tp_dir,
)

LONG_MAX = 2**63 - 1
UUID = "3f2b9c4e-8d1a-4c5b-9e7f-0a1b2c3d4e5f"
PROPERTY = settings(max_examples=50, deadline=None)

# -- names -------------------------------------------------------------------------------


def test_tp_dir_and_manifest_path() -> None:
    tp = TopicPartition("orders", 0)
    assert tp_dir(tp) == "_sluiceway/commits/orders+0"
    assert tp_dir(tp).startswith(COMMITS + "/")
    # The module docstring's example.
    assert manifest_path(tp, 50000) == "_sluiceway/commits/orders+0/00000000000000050000.json"
    assert (
        manifest_path(TopicPartition("a.b-c_d", 12), 0)
        == "_sluiceway/commits/a.b-c_d+12/" + "0" * 20 + ".json"
    )
    assert manifest_path(tp, LONG_MAX) == f"_sluiceway/commits/orders+0/0{LONG_MAX}.json"


@pytest.mark.parametrize(
    "tp",
    [
        TopicPartition("orders", 0),
        TopicPartition("a+b", 7),
        TopicPartition("x+1", 123),
        TopicPartition("_t", 2),
    ],
)
def test_tp_dir_names_parse_back(tp: TopicPartition) -> None:
    # committed_partitions reads partitions back from these directory names.
    m = table_log._TP_DIR.match(tp_dir(tp).rsplit("/", 1)[1])
    assert m is not None
    assert TopicPartition(m["topic"], int(m["partition"])) == tp


def test_data_file_name_zero_pads_offsets_and_sequence() -> None:
    name = data_file_name(TopicPartition("orders", 0), 0, 49999, 0, ".snappy.parquet")
    assert name == "part-orders+0+00000000000000000000+00000000000000049999-00000.snappy.parquet"
    name = data_file_name(TopicPartition("t", 3), 7, LONG_MAX, 12, ".json.gz")
    assert name == f"part-t+3+00000000000000000007+0{LONG_MAX}-00012.json.gz"
    assert (
        data_file_name(TopicPartition("t", 3), 7, 8, 0, "")
        == "part-t+3+00000000000000000007+00000000000000000008-00000"
    )


def test_data_file_name_of_a_hidden_looking_topic_is_still_visible() -> None:
    name = data_file_name(TopicPartition("_internal", 0), 0, 1, 0, ".parquet")
    assert name.startswith("part-_internal+0+")
    assert is_data_file(name)


def test_data_file_names_sort_by_offset() -> None:
    tp = TopicPartition("orders", 1)
    starts = [LONG_MAX - 5, 0, 10, 9, 100, 99, 1_000_000, 2**31, 2**40]
    names = [data_file_name(tp, s, s + 4 if s < LONG_MAX - 4 else LONG_MAX, 0, ".parquet") for s in starts]
    assert sorted(names) == [names[starts.index(s)] for s in sorted(starts)]
    # Within a range, by sequence number.
    seqs = [data_file_name(tp, 10, 20, seq, ".parquet") for seq in (10, 2, 0, 99999, 100)]
    assert sorted(seqs) == [data_file_name(tp, 10, 20, seq, ".parquet") for seq in (0, 2, 10, 100, 99999)]


@PROPERTY
@given(st.lists(st.integers(0, LONG_MAX), min_size=1, max_size=20, unique=True))
def test_property_data_file_and_manifest_names_sort_by_start_offset(starts: list[int]) -> None:
    tp = TopicPartition("t", 0)
    by_name = sorted(starts, key=lambda s: data_file_name(tp, s, s, 0, ".parquet"))
    assert by_name == sorted(starts)
    by_manifest = sorted(starts, key=lambda s: manifest_path(tp, s))
    assert by_manifest == sorted(starts)


@pytest.mark.parametrize(
    ("file_name", "extension"),
    [
        (f"part-00000-{UUID}-c000.snappy.parquet", ".snappy.parquet"),
        (f"part-00003-{UUID}-c000.json.gz", ".json.gz"),
        (f"part-00000-{UUID}-c000.json", ".json"),
        (f"part-00000-{UUID}-c000.csv", ".csv"),
        (f"part-00000-{UUID}-c000.zstd.parquet", ".zstd.parquet"),
        (f"part-00000-{UUID}-c000.snappy.orc", ".snappy.orc"),
        (f"part-00000-{UUID}-c000.txt.bz2", ".txt.bz2"),
        (f"part-00000-{UUID}-c000", ""),
        ("", ""),
    ],
)
def test_spark_extension(file_name: str, extension: str) -> None:
    assert spark_extension(file_name) == extension
    if extension:
        # What a publish does with it: the final name keeps the codec readers pick by.
        final = data_file_name(TopicPartition("t", 0), 0, 9, 0, spark_extension(file_name))
        assert final.endswith(extension)
        assert spark_extension(final) == extension


@pytest.mark.parametrize(
    ("name", "visible"),
    [
        (f"part-00000-{UUID}-c000.snappy.parquet", True),
        ("part-orders+0+00000000000000000000+00000000000000049999-00000.snappy.parquet", True),
        ("data.json.gz", True),
        ("_SUCCESS", False),
        ("_sluiceway", False),
        ("_committed_123", False),
        ("_temporary", False),
        (".hidden", False),
        (f".part-00000-{UUID}-c000.snappy.parquet.crc", False),
        (f"part-00000-{UUID}-c000.snappy.parquet.crc", False),
        (".", False),
    ],
)
def test_is_data_file(name: str, visible: bool) -> None:
    assert is_data_file(name) is visible


# -- manifests ---------------------------------------------------------------------------


def _manifest() -> Manifest:
    return Manifest(
        TopicPartition("orders", 4),
        100,
        199,
        (
            (
                "_sluiceway/staging/task-0/b1/part-00000-x-c000.snappy.parquet",
                "part-orders+4+...-00000.snappy.parquet",
            ),
            ("_sluiceway/staging/task-0/b1/k=1/part-00001-x.parquet", "k=1/part-orders+4+...-00001.parquet"),
        ),
        "_sluiceway/staging/task-0/b1",
    )


def test_manifest_encode_decode_round_trip() -> None:
    m = _manifest()
    text = m.encode()
    data = json.loads(text)
    assert data["version"] == MANIFEST_VERSION
    assert data["topic"] == "orders" and data["partition"] == 4
    assert (data["start"], data["end"]) == (100, 199)
    assert Manifest.decode(text, "somewhere") == m


def test_manifest_without_files_or_staging_round_trips() -> None:
    m = Manifest(TopicPartition("t", 0), 0, LONG_MAX, ())
    assert Manifest.decode(m.encode(), "x") == m
    assert Manifest.decode(m.encode(), "x").staging == ""


def test_manifest_written_without_staging_decodes_with_empty_staging() -> None:
    data = json.loads(_manifest().encode())
    del data["staging"]
    assert Manifest.decode(json.dumps(data), "x").staging == ""


@PROPERTY
@given(
    st.text(min_size=1, max_size=20),
    st.integers(0, 2**31 - 1),
    st.integers(0, LONG_MAX),
    st.integers(0, LONG_MAX),
    st.lists(st.tuples(st.text(max_size=30), st.text(max_size=30)), max_size=5),
    st.text(max_size=30),
)
def test_property_manifest_round_trip(
    topic: str, partition: int, start: int, end: int, files: list[tuple[str, str]], staging: str
) -> None:
    m = Manifest(TopicPartition(topic, partition), start, end, tuple(files), staging)
    assert Manifest.decode(m.encode(), "p") == m


@pytest.mark.parametrize(
    "text",
    [
        "",
        "not json",
        "{",
        '{"version": 1, "topic": "t", "partition": 0, "start": 0}',  # no end, no files
        '{"version": 1, "topic": "t", "partition": "zero", "start": 0, "end": 1, "files": []}',
        '{"version": 1, "topic": "t", "partition": 0, "start": 0, "end": 1, "files": [["only one"]]}',
        '{"version": 1, "topic": "t", "partition": 0, "start": 0, "end": 1, "files": [["a", "b", "c"]]}',
        '{"version": 1, "topic": "t", "partition": 0, "start": 0, "end": 1, "files": 5}',
        '{"version": 1, "topic": "t", "partition": null, "start": 0, "end": 1, "files": []}',
    ],
)
def test_manifest_decode_of_garbage_names_the_path(text: str) -> None:
    where = "hdfs://nn/warehouse/orders/_sluiceway/commits/t+0/00000000000000000000.json"
    with pytest.raises(ConnectException, match="unreadable") as info:
        Manifest.decode(text, where)
    assert where in str(info.value)


@pytest.mark.parametrize("version", [0, 2, None, "1"])
def test_manifest_decode_of_another_version_names_the_path_and_version(version: object) -> None:
    data = json.loads(_manifest().encode())
    data["version"] = version
    with pytest.raises(ConnectException, match="version") as info:
        Manifest.decode(json.dumps(data), "/tables/orders/m.json")
    assert "/tables/orders/m.json" in str(info.value)
    assert repr(version) in str(info.value)


def test_manifest_decode_without_version() -> None:
    data = json.loads(_manifest().encode())
    del data["version"]
    with pytest.raises(ConnectException, match="version"):
        Manifest.decode(json.dumps(data), "p")


@pytest.mark.parametrize("text", ["[]", "null", "42", '"text"', "[1, 2]"])
def test_manifest_decode_of_json_that_is_not_an_object(text: str) -> None:
    with pytest.raises(ConnectException, match=r"p/m\.json"):
        Manifest.decode(text, "p/m.json")
