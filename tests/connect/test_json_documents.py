"""The raw forms of ``to_connect_batch`` (``ConvertedBatch.is_raw``): ``JsonConverter``'s
"json" and ``StringConverter``'s "text", the checks behind ``SinkRecordBatch.value_runs``;
and ``SinkRecordBatch`` itself.

The check's contract: True only when decoding the same values succeeds and gives
schemaless, non-null values; so whatever bytes come, a True is never followed by a failed
decode. Checked on generated JSON documents, on arbitrary bytes, and on the cases orjson,
msgspec and Jackson disagree about.
"""

from __future__ import annotations

import gc
import json
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connect.api import Converter, RawForm, SinkRecord, SinkRecordBatch, ValueRun
from connect.converters.json import JsonConverter
from connect.converters.string import StringConverter


def raw(c: Converter, form: RawForm, data: list[bytes | None]) -> bool:
    return c.to_connect_batch("t", data).is_raw(form)


def schemaless() -> JsonConverter:
    c = JsonConverter()
    c.configure({"schemas.enable": "false"}, False)
    return c


_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
_documents = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=20,
).filter(lambda d: d is not None)


@settings(max_examples=300, deadline=None)
@given(st.lists(_documents, min_size=1, max_size=8), st.sampled_from([0, 2]))
def test_json_documents_pass_and_decode_to_what_the_converter_reads(docs: list[Any], indent: int) -> None:
    c = schemaless()
    # As orjson writes them, and as Python's json module writes them (spaces, line breaks,
    # \\u escapes): texts differ, documents do not.
    for texts in (
        [orjson.dumps(d) for d in docs],
        [json.dumps(d, indent=indent or None).encode() for d in docs],
    ):
        assert raw(c, "json", texts)
        batch = c.to_connect_batch("t", texts)
        assert list(batch.schemas) == [None] * len(docs)
        assert [orjson.dumps(v) for v in batch.values] == [orjson.dumps(d) for d in docs]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.binary(max_size=40) | st.sampled_from([b"{}", b"[]", b'"x"', b"1", b"null"]), min_size=1))
def test_whatever_passes_the_converter_reads_as_non_null_values(data: list[bytes]) -> None:
    c = schemaless()
    if raw(c, "json", data):
        batch = c.to_connect_batch("t", data)
        assert all(v is not None for v in batch.values)
        assert batch.values == [c.to_connect_data("t", d).value for d in data]


@pytest.mark.parametrize(
    "text",
    [
        b"",  # an empty record: null to the converter
        b"null",
        b"  null\n",
        b'{"a":1',  # truncated
        b'{"a":1}{"b":2}',  # two documents
        b'{"a":1} x',  # trailing bytes
        b"{'a':1}",  # not JSON quoting
        b'{"a":NaN}',  # Jackson's extension, not JSON
        b'{"a":"\xff"}',  # not UTF-8
        b'{"a":"\xed\xa0\x80"}',  # an encoded surrogate: not UTF-8 either
        b'{"a":"\\ud800"}',  # a lone surrogate escape: left to the careful path
        b'{"a":"tab\there"}',  # a raw control character inside a string
        b"[" * 5000 + b"]" * 5000,  # deeper than anything decodes
    ],
)
def test_what_is_not_a_non_null_json_document_does_not_pass(text: bytes) -> None:
    assert not raw(schemaless(), "json", [b'{"ok":1}', text])


def test_none_and_schemas_do_not_pass() -> None:
    assert not raw(schemaless(), "json", [b"{}", None])
    with_schemas = JsonConverter()
    with_schemas.configure({}, False)
    assert not raw(with_schemas, "json", [b'{"schema":null,"payload":{}}'])


def test_numbers_beyond_a_double_pass_and_decode_as_the_converter_decodes_them() -> None:
    c = schemaless()
    texts = [b'{"big":123456789012345678901234567890}', b"[1e400]"]
    assert raw(c, "json", texts)
    assert c.to_connect_batch("t", texts).values == [c.to_connect_data("t", t).value for t in texts]


# -- StringConverter's text form -------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(), min_size=1, max_size=8))
def test_utf8_texts_pass_and_read_as_their_strings(texts: list[str]) -> None:
    c = StringConverter()
    c.configure({}, False)
    data = [t.encode() for t in texts]
    assert raw(c, "text", data)
    assert c.to_connect_batch("t", data).values == texts
    # A lone surrogate's bytes (which Python can write) are not UTF-8.
    assert not raw(c, "text", [*data, "\ud800".encode("utf-8", "surrogatepass")])


@settings(max_examples=500, deadline=None)
@given(st.lists(st.binary(max_size=20) | st.none(), min_size=1))
def test_whatever_passes_as_text_reads_as_those_strings(data: list[bytes | None]) -> None:
    c = StringConverter()
    c.configure({"converter.encoding": "UTF-8"}, False)
    if raw(c, "text", data):
        assert None not in data
        assert c.to_connect_batch("t", data).values == [d.decode() for d in data]  # type: ignore[union-attr]
    else:
        assert None in data or any(_undecodable(d) for d in data)


def _undecodable(d: bytes | None) -> bool:
    try:
        d.decode()  # type: ignore[union-attr]
    except (UnicodeDecodeError, AttributeError):
        return True
    return False


def test_only_a_utf8_string_converter_vouches_for_text() -> None:
    latin = StringConverter()
    latin.configure({"deserializer.encoding": "ISO-8859-1"}, False)
    assert not raw(latin, "text", [b"plain"])  # the same bytes would read as other strings
    utf8 = StringConverter()
    utf8.configure({"converter.encoding": "utf8"}, False)
    assert raw(utf8, "text", [b"plain", "é".encode()])
    assert not raw(schemaless(), "text", [b"plain"])  # JsonConverter offers JSON only


# -- SinkRecordBatch -----------------------------------------------------------------------


def _batch(made: list[int], forms: tuple[str, ...] = ("json",)) -> SinkRecordBatch:
    runs = [("t", 0, [5, 6, 9], [b"1", b"2", b"3"]), ("t", 1, [0, 1], [b"4", b"5"])]

    def make() -> list[SinkRecord]:
        made.append(1)
        return [
            SinkRecord("t", p, None, None, None, int(text), kafka_offset=o)
            for _, p, offsets, texts in runs
            for o, text in zip(offsets, texts, strict=True)
        ]

    return SinkRecordBatch(runs, make, lambda form: form in forms)


def test_a_batch_makes_its_records_once_and_only_when_one_is_read() -> None:
    made: list[int] = []
    batch = _batch(made)
    runs = batch.value_runs("json")
    assert runs is not None and batch.value_runs("text") is None
    assert len(batch) == 5 and bool(batch)  # known without making them, once a raw form is
    assert [len(r) for r in runs] == [3, 2]
    assert [list(r.offsets) for r in runs] == [[5, 6, 9], [0, 1]]
    assert not batch.records_made and made == []
    assert [r.value for r in batch] == [1, 2, 3, 4, 5]
    assert batch[3].kafka_offset == 0 and batch[-1].value == 5
    assert [r.value for r in runs[1].records] == [4, 5]
    assert [r.kafka_offset for r in runs[0].records] == [5, 6, 9]
    assert made == [1]


def test_the_length_of_a_batch_without_a_raw_form_is_that_of_its_records() -> None:
    """Error tolerance may skip records while making them: the length is what was made."""
    made: list[int] = []
    batch = SinkRecordBatch([("t", 0, [1, 2], [b"x", b"y"])], lambda: made.append(1) or [], lambda f: False)
    assert len(batch) == 0 and made == [1]
    assert batch.value_runs("json") is None


def test_a_batch_refuses_runs_that_do_not_add_up() -> None:
    with pytest.raises(ValueError, match="2 offsets and 1 texts"):
        SinkRecordBatch([("t", 0, [1, 2], [b"{}"])], list, lambda f: True)


def test_a_run_says_where_it_is() -> None:
    runs = _batch([]).value_runs("json")
    assert runs is not None
    run = runs[0]
    assert isinstance(run, ValueRun) and run.form == "json"
    assert (run.topic, run.partition) == ("t", 0)
    assert repr(run) == "ValueRun(json, t-0, 3 records from offset 5)"


def test_records_made_elsewhere_offer_no_raw_form() -> None:
    records = [SinkRecord("t", 0, None, None, None, "a", kafka_offset=1)]
    batch = SinkRecordBatch.of(records)
    assert list(batch) == records and len(batch) == 1
    assert batch.value_runs("json") is None and batch.value_runs("text") is None
    assert repr(SinkRecordBatch.of(())) == "SinkRecordBatch(0 records, made, in 0 runs)"


@pytest.mark.parametrize("form", ["json", "text"])
def test_a_batch_and_its_runs_are_freed_without_the_cycle_collector(form: RawForm) -> None:
    """A batch kept alive by a reference cycle keeps a poll's messages alive until the
    cyclic collector runs, and every collection then traverses them: that made the
    worker's consume() 1.7 times slower."""
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        records = [SinkRecord("t", 0, None, None, None, v, kafka_offset=v) for v in (1, 2)]
        batch = SinkRecordBatch([("t", 0, [1, 2], [b"1", b"2"])], lambda: records, lambda f: f == form)
        runs = batch.value_runs(form)
        assert runs is not None and len(runs) == 1 and list(runs[0].records) == records
        del batch, runs
        gc.collect()
        assert [o for o in gc.garbage if isinstance(o, SinkRecordBatch | ValueRun)] == []
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
