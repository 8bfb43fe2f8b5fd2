"""The Elasticsearch contract server: documents."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import orjson

from tests.contract_servers.elasticsearch.constants import _MISSING
from tests.contract_servers.elasticsearch.dates import _DYNAMIC_DATE_PARSER, _parse_date, _parse_date_format
from tests.contract_servers.elasticsearch.errors import EsError, _java_str, _MappingError
from tests.contract_servers.elasticsearch.mappings import (
    _DEFAULT_DYNAMIC_TYPE,
    _NUMERIC_TEXT,
    _OBJECT_VALUED,
    _build_mapper,
    _count_fields,
    _Field,
    _fill_placeholders,
    _Malformed,
    _Mapper,
    _Mapping,
    _Object,
    _template_matches,
)

if TYPE_CHECKING:
    from collections.abc import Iterable

    from tests.contract_servers.elasticsearch.indices import _Index


class _Doc:
    __slots__ = ("ignored", "seq_no", "source", "version")

    def __init__(self, version: int, seq_no: int, source: dict[str, Any], ignored: list[str] | None) -> None:
        self.version = version
        self.seq_no = seq_no
        self.source = source
        self.ignored = ignored


def _first_value(value: list[Any]) -> Any:
    for item in value:
        if isinstance(item, list):
            found = _first_value(item)
            if found is not _MISSING:
                return found
        elif item is not None:
            return item
    return _MISSING


def _flatten(value: list[Any]) -> Iterable[Any]:
    for item in value:
        if isinstance(item, list):
            yield from _flatten(item)
        else:
            yield item


class _DocParse:
    """Checks one document against an index's mapping, collecting dynamic mapping updates.

    Updates stay pending until ``commit`` so a refused document leaves the mapping as it was;
    ``pending`` overlays additions to objects already in the mapping, new objects are built
    in place since nothing else can see them yet."""

    __slots__ = ("doc_id", "fresh", "ignored", "index", "new_fields", "pending", "raw", "source")

    def __init__(self, index: _Index, doc_id: str, raw: bytes | None, source: dict[str, Any]) -> None:
        self.index = index
        self.doc_id = doc_id
        self.raw = raw
        self.source = source
        self.pending: dict[tuple[int, str], _Mapper] | None = None
        self.fresh: list[tuple[_Object, str, _Mapper, int]] = []
        self.new_fields = 0
        self.ignored: list[str] | None = None

    # -- locations and errors: only on the failure path

    def _raw(self) -> bytes:
        if self.raw is None:
            self.raw = orjson.dumps(self.source)
        return self.raw

    def _loc(self, key: str, at_value: bool) -> str:
        raw = self._raw()
        needle = orjson.dumps(key)
        start = raw.find(needle)
        if start < 0:
            return "1:1"
        if not at_value:
            return f"1:{start + 1}"
        pos = start + len(needle)
        while pos < len(raw) and raw[pos : pos + 1] in (b" ", b"\t", b"\r", b":"):
            pos += 1
        return f"1:{pos + 1}"

    def _doc_error(self, reason: str, caused_by: dict[str, Any] | None = None) -> EsError:
        return EsError(400, "document_parsing_exception", reason, caused_by=caused_by)

    def _failed(self, key: str, path: str, kind: str, value: Any, cause: dict[str, Any]) -> EsError:
        return self._doc_error(
            f"[{self._loc(key, True)}] failed to parse field [{path}] of type [{kind}] in document with id "
            f"'{self.doc_id}'. Preview of field's value: '{_java_str(value)}'",
            cause,
        )

    # -- walking

    def run(self) -> None:
        mapping = self.index.mapping
        self._walk(mapping.root, self.source, "", mapping.root.dynamic or "true")
        if self.index.data_stream is not None:
            self._check_timestamp()
        if self.new_fields:
            self._check_field_limit()

    def _lookup(self, obj: _Object, key: str) -> _Mapper | None:
        if self.pending is not None:
            pending = self.pending.get((id(obj), key))
            if pending is not None:
                return pending
        return obj.properties.get(key)

    def _walk(self, obj: _Object, doc: dict[str, Any], prefix: str, dynamic: str) -> None:
        properties = obj.properties
        for key, value in doc.items():
            if "." in key or not key or key.isspace():
                self._dotted(obj, key, value, prefix, dynamic)
                continue
            mapper = properties.get(key) if self.pending is None else self._lookup(obj, key)
            # The common case, a mapped scalar, without the general path's calls.
            if type(mapper) is _Field and not mapper.special:
                kind = type(value)
                if kind is str or kind is int or kind is float or kind is bool:
                    check = mapper.check
                    if check is not None:
                        try:
                            check(mapper, value)
                        except _Malformed:
                            self._leaf(mapper, key, value, prefix + key)
                            continue
                    if mapper.sub_checks:
                        self._leaf(mapper, key, value, prefix + key)
                    continue
            self._field(obj, key, value, prefix, dynamic)

    def _dotted(self, obj: _Object, key: str, value: Any, prefix: str, dynamic: str) -> None:
        if not key or key.isspace():
            raise self._doc_error(f"[{self._loc(key, False)}] field name cannot be an empty string")
        parts = key.split(".")
        if any(not part or part.isspace() for part in parts):
            raise self._doc_error(
                f"[{self._loc(key, False)}] object field starting or ending with a [.] makes object "
                f"resolution ambiguous: [{key}]"
            )
        for part in parts[:-1]:
            child = self._lookup(obj, part)
            if child is None:
                if dynamic == "strict":
                    raise self._strict(part, prefix)
                if dynamic != "true":
                    return
                child = _Object()
                self._register(obj, part, child)
            elif isinstance(child, _Field):
                raise self._doc_error(
                    f"[{self._loc(key, False)}] Could not dynamically add mapping for field [{prefix}{key}]. "
                    f"Existing mapping for [{prefix}{part}] must be of type object but found [{child.type}]."
                )
            if not child.enabled:
                return
            dynamic = child.dynamic or dynamic
            prefix += part + "."
            obj = child
        self._field(obj, parts[-1], value, prefix, dynamic)

    def _strict(self, key: str, prefix: str) -> EsError:
        within = prefix[:-1] if prefix else "_doc"
        return EsError(
            400,
            "strict_dynamic_mapping_exception",
            f"[{self._loc(key, False)}] mapping set to strict, dynamic introduction of [{key}] within "
            f"[{within}] is not allowed",
        )

    def _field(self, obj: _Object, key: str, value: Any, prefix: str, dynamic: str) -> None:
        mapper = self._lookup(obj, key)
        if mapper is None:
            if dynamic == "strict":
                raise self._strict(key, prefix)
            if dynamic != "true" or value is None:
                return
            mapper = self._dynamic(obj, key, value, prefix)
            if mapper is None:
                return
        if isinstance(mapper, _Object):
            self._object_value(mapper, key, value, prefix + key, dynamic)
        elif mapper.type == "constant_keyword":
            self._constant(obj, key, mapper, value, prefix + key)
        elif type(value) is list:
            path = prefix + key
            for item in _flatten(value):
                if item is not None:
                    self._leaf(mapper, key, item, path)
        elif value is not None:
            self._leaf(mapper, key, value, prefix + key)

    def _object_value(self, obj: _Object, key: str, value: Any, path: str, dynamic: str) -> None:
        if not obj.enabled:
            return
        dynamic = obj.dynamic or dynamic
        if type(value) is dict:
            self._walk(obj, value, path + ".", dynamic)
            return
        items = _flatten(value) if type(value) is list else (value,)
        for item in items:
            if type(item) is dict:
                self._walk(obj, item, path + ".", dynamic)
            elif item is not None:
                raise self._doc_error(
                    f"[{self._loc(key, True)}] object mapping for [{path}] tried to parse field [{key}] as "
                    "object, but found a concrete value"
                )

    def _leaf(self, field: _Field, key: str, value: Any, path: str) -> None:
        if type(value) is dict:
            if field.type in _OBJECT_VALUED:
                return
            raise self._failed(
                key,
                path,
                field.type,
                value,
                {
                    "type": "illegal_state_exception",
                    "reason": f"Can't get text on a START_OBJECT at {self._loc(key, True)}",
                },
            )
        check = field.check
        if check is not None:
            try:
                check(field, value)
            except _Malformed as bad:
                if field.ignore_malformed:
                    if self.ignored is None:
                        self.ignored = []
                    if path not in self.ignored:
                        self.ignored.append(path)
                    return
                raise self._failed(key, path, field.type, value, bad.cause) from None
        if field.sub_checks:
            for sub_name, sub in field.fields.items():
                self._leaf(sub, key, value, f"{path}.{sub_name}")

    def _constant(self, obj: _Object, key: str, field: _Field, value: Any, path: str) -> None:
        for item in _flatten(value) if type(value) is list else (value,):
            if item is None:
                continue
            text = _java_str(item)
            if field.const is None:
                updated = _Field(field.type, {**field.defn, "value": text})
                updated.const = text
                self._register(obj, key, updated, replaces=True)
                field = updated
            elif field.const != text:
                raise self._failed(
                    key,
                    path,
                    field.type,
                    item,
                    {
                        "type": "illegal_argument_exception",
                        "reason": f"[constant_keyword] field [{path}] only accepts values that are equal to "
                        f"the value defined in the mappings [{field.const}], but got [{text}]",
                    },
                )

    def _dynamic(self, obj: _Object, key: str, value: Any, prefix: str) -> _Mapper | None:
        sample = _first_value(value) if type(value) is list else value
        if sample is _MISSING:
            return None
        mapping = self.index.mapping
        kind = self._detect(sample, mapping)
        path = prefix + key
        defn: Any = None
        for _name, body in mapping.templates:
            if _template_matches(body, key, path, kind):
                if "runtime" in body:
                    return None
                defn = _fill_placeholders(body["mapping"], key, _DEFAULT_DYNAMIC_TYPE[kind])
                if "type" not in defn and kind != "object":
                    defn = {"type": _DEFAULT_DYNAMIC_TYPE[kind], **defn}
                break
        mapper: _Mapper
        if defn is None:
            if kind == "object":
                mapper = _Object()
            elif kind == "string":
                mapper = _build_mapper(key, _DYNAMIC_TEXT, path, self.index.opts)
            elif kind == "date" and mapping.params.get("dynamic_date_formats") is not None:
                formats = "||".join(str(f) for f in mapping.params["dynamic_date_formats"])
                mapper = _build_mapper(key, {"type": "date", "format": formats}, path, self.index.opts)
            else:
                mapper = _build_mapper(key, {"type": _DEFAULT_DYNAMIC_TYPE[kind]}, path, self.index.opts)
        else:
            try:
                mapper = _build_mapper(key, defn, path, self.index.opts)
            except _MappingError as exc:
                raise self._doc_error(f"[{self._loc(key, False)}] failed to parse: {exc}") from None
        self._register(obj, key, mapper)
        return mapper

    def _detect(self, sample: Any, mapping: _Mapping) -> str:
        kind = type(sample)
        if kind is str:
            # Elasticsearch only tries its date formats on strings that could be dates.
            if mapping.date_detection and ("-" in sample or ":" in sample or "/" in sample):
                formats = mapping.params.get("dynamic_date_formats")
                parsers = (
                    [_DYNAMIC_DATE_PARSER]
                    if formats is None
                    else [p for f in formats for p in _parse_date_format(f)]
                )
                if _parse_date(sample, parsers) is not None:
                    return "date"
            if mapping.numeric_detection and _NUMERIC_TEXT.fullmatch(sample):
                try:
                    int(sample)
                    return "long"
                except ValueError:
                    return "double"
            return "string"
        if kind is bool:
            return "boolean"
        if kind is int:
            return "long"
        if kind is float:
            return "double"
        return "object"

    def _register(self, obj: _Object, key: str, mapper: _Mapper, replaces: bool = False) -> None:
        added = 0 if replaces else _count_fields(mapper)
        self.new_fields += added
        if self.pending is None:
            self.pending = {}
        self.pending[(id(obj), key)] = mapper
        self.fresh.append((obj, key, mapper, added))

    def _check_timestamp(self) -> None:
        value = self.source.get("@timestamp")
        values = [v for v in _flatten(value) if v is not None] if isinstance(value, list) else [value]
        if value is None or not values:
            end = f"1:{len(self._raw())}"
            raise self._doc_error(
                f"[{end}] failed to parse: data stream timestamp field [@timestamp] is missing",
                {
                    "type": "illegal_argument_exception",
                    "reason": "data stream timestamp field [@timestamp] is missing",
                },
            )
        if len(values) > 1:
            raise self._doc_error(
                f"[{self._loc('@timestamp', True)}] failed to parse: data stream timestamp field "
                "[@timestamp] encountered multiple values",
                {
                    "type": "illegal_argument_exception",
                    "reason": "data stream timestamp field [@timestamp] encountered multiple values",
                },
            )

    def _check_field_limit(self) -> None:
        index = self.index
        limit = index.total_fields_limit
        if index.field_count + self.new_fields <= limit:
            return
        if not index.ignore_dynamic_beyond_limit:
            added = self.new_fields
            reason = f"Limit of total fields [{limit}] has been exceeded while adding new fields [{added}]"
            raise self._doc_error(
                f"[{self._loc(next(iter(self.source), ''), False)}] failed to parse: {reason}",
                {"type": "illegal_argument_exception", "reason": reason},
            )
        budget = limit - index.field_count
        kept: list[tuple[_Object, str, _Mapper, int]] = []
        for entry in self.fresh:
            if entry[3] <= budget:
                budget -= entry[3]
                kept.append(entry)
        self.fresh = kept
        self.new_fields = sum(entry[3] for entry in kept)

    def commit(self) -> None:
        for obj, key, mapper, _added in self.fresh:
            obj.properties[key] = mapper
        if self.new_fields:
            self.index.field_count += self.new_fields


_DYNAMIC_TEXT: Final = {"type": "text", "fields": {"keyword": {"type": "keyword", "ignore_above": 256}}}


def _same(a: Any, b: Any) -> bool:
    """JSON equality without Python's ``1 == 1.0 == True``, as Elasticsearch's noop check compares."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _merge_source(old: dict[str, Any], changes: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """Partial-update merge: objects merge recursively, anything else replaces (never in place)."""
    out = dict(old)
    changed = False
    for key, value in changes.items():
        current = out.get(key, _MISSING)
        if type(value) is dict and type(current) is dict:
            merged, sub_changed = _merge_source(current, value)
            if sub_changed:
                out[key] = merged
                changed = True
        elif current is _MISSING or not _same(current, value):
            out[key] = value
            changed = True
    return out, changed
