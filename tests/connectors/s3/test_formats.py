"""Object formats: JSON lines (plain and gzip), Parquet, raw bytes; deterministic output."""

from __future__ import annotations

import datetime as dt
import decimal
import gzip
import io

import orjson
import pyarrow.parquet as pq
import pytest

from connect.api import DataException, Decimal, Schema, SchemaBuilder, SinkRecord, Struct, Timestamp
from connectors.s3.config import S3SinkConfig
from connectors.s3.formats import make_format

BASE = {
    "s3.bucket.name": "lake",
    "flush.size": "10",
    "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
}
SCHEMA = (
    SchemaBuilder.struct()
    .field("id", Schema.INT64_SCHEMA)
    .field("amount", Decimal.schema(2))
    .field("at", Timestamp.builder().build())
    .build()
)


def fmt(**props: str):  # type: ignore[no-untyped-def]
    return make_format(S3SinkConfig.parse({**BASE, **props}))


def rec(value: object, offset: int = 0, schema: Schema | None = None) -> SinkRecord:
    return SinkRecord("orders", 0, None, None, schema, value, None, None, offset)


def struct(i: int) -> Struct:
    return (
        Struct(SCHEMA)
        .put("id", i)
        .put("amount", decimal.Decimal("1.50"))
        .put("at", dt.datetime(2026, 1, 1, tzinfo=dt.UTC))
    )


def content(finished) -> bytes:  # type: ignore[no-untyped-def]
    data = finished.body.read()
    assert len(data) == finished.size
    return data


def test_json_lines_in_kafkas_json_converter_representation() -> None:
    f = fmt()
    assert (f.extension, f.content_encoding) == (".json", None)
    out = f.open()
    out.append(rec({"a": 1}))
    out.append(rec(struct(7), 1, SCHEMA))
    out.append(rec("text", 2))
    done = out.finish()
    lines = content(done).splitlines()
    assert done.rows == 3
    assert [orjson.loads(x) for x in lines] == [
        {"a": 1},
        {"id": 7, "amount": "AJY=", "at": 1767225600000},  # 150 unscaled, base64 (Kafka's default)
        "text",
    ]
    numeric = fmt(**{"json.decimal.format": "NUMERIC"}).open()
    numeric.append(rec(struct(7), 0, SCHEMA))
    assert orjson.loads(content(numeric.finish()))["amount"] == 1.5


def test_gzip_is_deterministic() -> None:
    f = fmt(**{"s3.compression.type": "gzip"})
    assert (f.extension, f.content_encoding) == (".json.gz", "gzip")
    outputs = []
    for _ in range(2):
        out = f.open()
        for i in range(100):
            out.append(rec({"i": i}, i))
        outputs.append(content(out.finish()))
    assert outputs[0] == outputs[1]
    assert gzip.decompress(outputs[0]).count(b"\n") == 100


def test_bytearray_writes_values_with_the_separator_and_refuses_others() -> None:
    f = fmt(
        **{
            "format.class": "io.confluent.connect.s3.format.bytearray.ByteArrayFormat",
            "format.bytearray.separator": "|",
        }
    )
    assert f.extension == ".bin"
    out = f.open()
    out.append(rec(b"\x00\x01"))
    out.append(rec("é"))
    with pytest.raises(DataException, match=r"orders-0@5 has a dict value; ByteArrayFormat writes bytes"):
        out.append(rec({"no": 1}, 5))
    assert content(out.finish()) == b"\x00\x01|\xc3\xa9|"


def test_parquet_from_structs_and_schemaless_values() -> None:
    f = fmt(**{"format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat"})
    assert f.extension == ".snappy.parquet"
    out = f.open()
    for i in range(5):
        out.append(rec(struct(i), i, SCHEMA))
    table = pq.read_table(io.BytesIO(content(out.finish())))
    assert table.column("id").to_pylist() == [0, 1, 2, 3, 4]
    assert str(table.schema.field("amount").type) == "decimal128(38, 2)"
    plain = fmt(**{"format.class": "ParquetFormat", "parquet.codec": "none"})
    assert plain.extension == ".parquet"
    out = plain.open()
    out.append(rec({"name": "a", "n": 1}))
    out.append(rec({"name": "b", "n": 2}, 1))
    with pytest.raises(DataException, match="Parquet rows are structs or JSON objects"):
        out.append(rec([1, 2], 2))
    assert pq.read_table(io.BytesIO(content(out.finish()))).to_pylist() == [
        {"name": "a", "n": 1},
        {"name": "b", "n": 2},
    ]


def test_parquet_refuses_records_that_do_not_fit_when_the_object_is_made() -> None:
    out = fmt(**{"format.class": "ParquetFormat"}).open()
    out.append(rec({"n": 1}, 0))
    out.append(rec({"n": "not a number"}, 1))
    out.append(rec({"n": 3}, 2))
    done = out.finish()
    assert done.rows == 2
    assert [(r.kafka_offset, "n" in reason) for r, reason in done.rejected] == [(1, True)]
    assert pq.read_table(io.BytesIO(content(done))).column("n").to_pylist() == [1, 3]


def test_an_object_of_refused_records_has_nothing_to_upload() -> None:
    out = fmt().open()
    done = out.finish()
    assert (done.rows, done.size) == (0, 0)


def test_json_texts_become_lines_as_they_are_mixed_with_encoded_records() -> None:
    f = fmt()
    assert f.copies_json_text
    out = f.open()
    out.append(rec({"a": 1}))
    assert out.extend_texts([b'{ "b" : 2 }', b"[1.5e2]", '"é"'.encode()]) == 3
    assert out.extend([rec({"c": 3}, 4)])
    done = out.finish()
    assert done.rows == 5
    assert content(done) == b'{"a":1}\n{ "b" : 2 }\n[1.5e2]\n"\xc3\xa9"\n{"c":3}\n'


@pytest.mark.parametrize("bad", [b'{\n"b":2}', b'{"b":2}\r', b'{"b":\r\n2}'])
def test_json_texts_are_taken_up_to_one_spanning_lines(bad: bytes) -> None:
    out = fmt().open()
    assert out.extend_texts([b'{"a":1}']) == 1
    assert out.extend_texts([b'{"ok":true}', bad, b'{"ok":false}']) == 1
    assert out.extend_texts([bad, b'{"ok":false}']) == 0
    assert out.extend_texts([]) == 0
    done = out.finish()
    assert done.rows == 2
    assert content(done) == b'{"a":1}\n{"ok":true}\n'


def test_gzipped_json_texts_and_formats_that_do_not_copy_json() -> None:
    out = fmt(**{"s3.compression.type": "gzip"}).open()
    assert out.extend_texts([b'{"a":1}', b'{"b":2}']) == 2
    assert gzip.decompress(content(out.finish())) == b'{"a":1}\n{"b":2}\n'
    for other in (
        fmt(**{"format.class": "io.confluent.connect.s3.format.bytearray.ByteArrayFormat"}),
        fmt(**{"format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat"}),
    ):
        assert not other.copies_json_text
        assert other.open().extend_texts([b'{"a":1}']) == 0


def test_avro_container_files_deterministic_in_each_codec() -> None:
    import fastavro

    for codec in ("null", "deflate", "snappy", "bzip2", "xz", "zstandard"):
        f = fmt(**{"format.class": "io.confluent.connect.s3.format.avro.AvroFormat", "avro.codec": codec})
        assert f.extension == ".avro"
        outs = []
        for _ in range(2):
            out = f.open()
            for i in range(3):
                out.append(rec(struct(i), i, SCHEMA))
            done = out.finish()
            assert done.rows == 3
            outs.append(content(done))
        assert outs[0] == outs[1], codec  # the same records, the same object
        reader = fastavro.reader(io.BytesIO(outs[0]))
        assert reader.codec == codec
        assert [r["id"] for r in reader] == [0, 1, 2]
        rows = list(fastavro.reader(io.BytesIO(outs[0])))
        assert rows[0]["amount"] == decimal.Decimal("1.50")
        assert rows[0]["at"] == dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def test_avro_files_hold_one_schema_and_need_one() -> None:
    f = fmt(**{"format.class": "io.confluent.connect.s3.format.avro.AvroFormat"})
    out = f.open()
    out.append(rec(struct(1), 0, SCHEMA))
    other = SchemaBuilder.struct().field("id", Schema.INT64_SCHEMA).build()
    with pytest.raises(DataException, match="holds records of one schema"):
        out.append(rec(Struct(other).put("id", 1), 1, other))  # the writer starts the next file instead
    with pytest.raises(DataException, match="has no value schema"):
        out.append(rec({"id": 1}, 2))
    assert out.extend([rec(struct(2), 3, SCHEMA), rec(struct(3), 4, SCHEMA)])
    assert not out.extend([rec(struct(4), 5, SCHEMA), rec(Struct(other).put("id", 1), 6, other)])
    assert out.finish().rows == 3


def test_avro_with_gzip_on_top_is_refused() -> None:
    problems = S3SinkConfig.problems(
        {
            **BASE,
            "format.class": "io.confluent.connect.s3.format.avro.AvroFormat",
            "s3.compression.type": "gzip",
        }
    )
    assert [p.key for p in problems] == ["s3.compression.type"]
