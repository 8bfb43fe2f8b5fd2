"""ByteArrayConverter.from_connect_header_rows (a column of records' header pairs in one
call) answers as from_connect_header value by value, and raises where one value would."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connect.api.data import Schema
from connect.api.errors import DataException
from connect.converters.bytes import ByteArrayConverter

_SCHEMAS = st.sampled_from([None, Schema.BYTES_SCHEMA, Schema.OPTIONAL_BYTES_SCHEMA, Schema.STRING_SCHEMA])
_VALUES = st.one_of(
    st.none(), st.binary(max_size=8), st.text(max_size=3), st.integers(), st.builds(bytearray)
)
_ROWS = st.lists(
    st.one_of(st.none(), st.lists(st.tuples(st.sampled_from(["a", "trace"]), _VALUES), max_size=3)),
    max_size=8,
)


def _normal(rows: Any) -> list[list[tuple[str, Any]] | None]:
    """Rows as the producer sees them: no pairs and an empty list are the same."""
    return [[tuple(p) for p in pairs] if pairs else None for pairs in rows]


@given(_SCHEMAS, _ROWS)
def test_header_rows_are_the_per_value_conversion(schema: Schema | None, rows: list[Any]) -> None:
    c = ByteArrayConverter()
    try:
        expected = [
            [(k, c.from_connect_header("t", k, schema, v)) for k, v in pairs] if pairs else None
            for pairs in rows
        ]
    except DataException:
        with pytest.raises(DataException):
            c.from_connect_header_rows("t", schema, rows)
        return
    got = c.from_connect_header_rows("t", schema, rows)
    assert _normal(got) == _normal(expected)
    # Converted values are bytes, never a bytearray that would compare equal.
    assert all(v is None or type(v) is bytes for pairs in got if pairs for _, v in pairs)


def test_bytes_pass_as_they_are() -> None:
    rows = [[("trace", b"1")], None, [("a", None), ("b", b"")]]
    assert ByteArrayConverter().from_connect_header_rows("t", Schema.OPTIONAL_BYTES_SCHEMA, rows) is rows
