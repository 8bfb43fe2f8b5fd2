"""The broker's encoders (``broker.protocol.writer``) write exactly the bytes kio's writer
does, for every request and response class (and their headers) of every version the broker
speaks, on entities hypothesis draws from the classes themselves (nulls where the schema
allows them), each also with every tagged field at its default: an entity with a tagged
field set is handed to kio's writer whole, so only the default ones test the broker's own
path through classes that have tagged fields."""

from __future__ import annotations

import dataclasses
import io
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kio.index import load_request_schema, load_response_schema
from kio.serial import entity_writer as kio_entity_writer
from kio.serial._implicit_defaults import get_tagged_field_default
from kio.serial._introspect import get_field_tag
from kio.static.primitive import Records

from broker.protocol.versions import SUPPORTED_VERSIONS, ApiKey
from broker.protocol.writer import entity_writer, uvarint

# kio registers strategies for its other types, not for a batch of records.
st.register_type_strategy(Records, st.binary(max_size=40).map(Records))

BODIES = [
    (f"{ApiKey(key).name}-v{version}-{side}", load(key, version))
    for key, (lo, hi) in sorted(SUPPORTED_VERSIONS.items())
    for version in range(lo, hi + 1)
    for side, load in (("request", load_request_schema), ("response", load_response_schema))
]
HEADERS = {
    f"{h.__name__}-{h.__module__.rsplit('.', 2)[-2]}": h
    for h in {cls.__header_schema__ for _, cls in BODIES}  # type: ignore[attr-defined]
}
CLASSES = BODIES + sorted(HEADERS.items())


def _untagged(entity: Any) -> Any:
    """``entity`` with every tagged field, its own and its nested entities', at its default."""
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(entity):
        value = getattr(entity, f.name)
        if get_field_tag(f) is not None:
            changes[f.name] = get_tagged_field_default(f)
        elif dataclasses.is_dataclass(value):
            changes[f.name] = _untagged(value)
        elif isinstance(value, tuple) and value and dataclasses.is_dataclass(value[0]):
            changes[f.name] = tuple(_untagged(v) for v in value)
    return dataclasses.replace(entity, **changes) if changes else entity


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
        for e in (entity, _untagged(entity)):
            assert _encoded(entity_writer(cls), e) == _encoded(kio_entity_writer(cls), e)

    same()


@given(st.integers(0, 2**35))
def test_varints_as_kio_writes_them(n: int) -> None:
    from kio.serial.writers import write_unsigned_varint

    buf = io.BytesIO()
    write_unsigned_varint(buf, n)  # type: ignore[arg-type]
    assert uvarint(n) == buf.getvalue()
