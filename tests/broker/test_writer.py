"""The broker's encoders (``broker.protocol.writer``) write exactly the bytes kio's writer
does, for every request and response class of every version the broker speaks, on entities
hypothesis draws from the classes themselves (tagged fields set or not, nulls where the
schema allows them)."""

from __future__ import annotations

import io
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kio.index import load_request_schema, load_response_schema
from kio.serial import entity_writer as kio_entity_writer
from kio.static.primitive import Records

from broker.protocol.versions import SUPPORTED_VERSIONS, ApiKey
from broker.protocol.writer import entity_writer, uvarint

# kio registers strategies for its other types, not for a batch of records.
st.register_type_strategy(Records, st.binary(max_size=40).map(Records))

CLASSES = [
    (f"{ApiKey(key).name}-v{version}-{side}", load(key, version))
    for key, (lo, hi) in sorted(SUPPORTED_VERSIONS.items())
    for version in range(lo, hi + 1)
    for side, load in (("request", load_request_schema), ("response", load_response_schema))
]


def _encoded(writer: Any, entity: Any) -> bytes | type[BaseException]:
    buf = io.BytesIO()
    try:
        writer(buf, entity)
    except Exception as exc:
        return type(exc)
    return buf.getvalue()


@pytest.mark.parametrize(("cls"), [c for _, c in CLASSES], ids=[name for name, _ in CLASSES])
def test_the_same_bytes_as_kio(cls: type) -> None:
    @settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(st.from_type(cls))
    def same(entity: Any) -> None:
        assert _encoded(entity_writer(cls), entity) == _encoded(kio_entity_writer(cls), entity)

    same()


@given(st.integers(0, 2**35))
def test_varints_as_kio_writes_them(n: int) -> None:
    from kio.serial.writers import write_unsigned_varint

    buf = io.BytesIO()
    write_unsigned_varint(buf, n)  # type: ignore[arg-type]
    assert uvarint(n) == buf.getvalue()
