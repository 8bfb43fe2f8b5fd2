"""The Elasticsearch contract server: queries."""

from __future__ import annotations

import fnmatch
import ipaddress
import math
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, cast

from tests.contract_servers.elasticsearch.dates import _DEFAULT_DATE_FORMAT, _parse_date, _parse_date_format
from tests.contract_servers.elasticsearch.documents import _flatten
from tests.contract_servers.elasticsearch.errors import EsError, _illegal, _java_str, _search_failure
from tests.contract_servers.elasticsearch.mappings import (
    _FLOAT_LIMITS,
    _INT_RANGES,
    _KEYWORDS,
    _TEXTS,
    _as_list,
    _Field,
    _Object,
)

if TYPE_CHECKING:
    from tests.contract_servers.elasticsearch.indices import _Index

_TOKENS = re.compile(r"\w+")
_Pred = Callable[[str, dict[str, Any]], bool]


def _source_values(source: Any, parts: list[str]) -> list[Any]:
    """Values at a dotted path, through arrays and literal dotted keys alike."""
    if not parts:
        if isinstance(source, list):
            return [v for v in _flatten(source) if v is not None]
        return [] if source is None else [source]
    if isinstance(source, list):
        out: list[Any] = []
        for item in source:
            out.extend(_source_values(item, parts))
        return out
    if not isinstance(source, dict):
        return []
    found: list[Any] = []
    for k in range(1, len(parts) + 1):
        key = ".".join(parts[:k])
        if key in source:
            found.extend(_source_values(source[key], parts[k:]))
    return found


def _normalize(mapper: _Field, value: Any) -> Any:
    """The indexed form of a source value, or None when nothing is indexed for it."""
    kind = mapper.type
    try:
        if kind in _KEYWORDS:
            if isinstance(value, dict | list):
                return None
            text = _java_str(value)
            if mapper.ignore_above is not None and len(text) > mapper.ignore_above:
                return None
            return text
        if kind in _INT_RANGES:
            if isinstance(value, bool) or value == "":
                return None
            return math.trunc(float(value)) if not isinstance(value, int) else value
        if kind in _FLOAT_LIMITS:
            if isinstance(value, bool) or value == "":
                return None
            return float(value)
        if kind == "boolean":
            return value in (True, "true")
        if kind in ("date", "date_nanos"):
            return _parse_date(value, mapper.formats)
        if kind == "ip":
            return ipaddress.ip_address(value)
    except (ValueError, TypeError):
        return None
    return value if not isinstance(value, dict) else None


class _QueryCompiler:
    def __init__(self, index: _Index) -> None:
        self.index = index

    def compile(self, query: Any) -> _Pred:
        if not isinstance(query, dict) or not query:
            raise EsError(400, "parsing_exception", "[_na] query malformed, must start with start_object")
        if len(query) != 1:
            first = next(iter(query))
            raise EsError(
                400,
                "parsing_exception",
                f"[{first}] malformed query, expected [END_OBJECT] but found [FIELD_NAME]",
                extra={"line": 1, "col": 1},
            )
        ((name, body),) = query.items()
        handler = getattr(self, "_q_" + name, None)
        if handler is None:
            if name in _KNOWN_UNSUPPORTED_QUERIES:
                raise _illegal(f"[{name}] queries are not supported by the Elasticsearch contract server")
            raise EsError(400, "parsing_exception", f"unknown query [{name}]", extra={"line": 1, "col": 1})
        return cast(_Pred, handler(body))

    # -- helpers

    def _field_body(self, kind: str, body: Any) -> tuple[str, Any]:
        if not isinstance(body, dict):
            raise EsError(
                400, "parsing_exception", f"[{kind}] query malformed, no start_object after query name"
            )
        fields = [k for k in body if k not in ("boost", "_name")]
        if len(fields) != 1:
            raise EsError(
                400,
                "parsing_exception",
                f"[{kind}] query doesn't support multiple fields, found [{', '.join(fields)}]",
            )
        return fields[0], body[fields[0]]

    def _values(self, path: str) -> tuple[_Field | None, Callable[[dict[str, Any]], list[Any]]]:
        mapper, source_path = self.index.mapping.lookup(path)
        parts = source_path.split(".")
        field = mapper if isinstance(mapper, _Field) else None
        return field, lambda source: _source_values(source, parts)

    def _matcher(self, path: str, wanted: list[Any], case_insensitive: bool = False) -> _Pred:
        if path == "_id":
            ids = {_java_str(w) for w in wanted}
            return lambda doc_id, _source: doc_id in ids
        if path == "_index":
            names = {_java_str(w) for w in wanted}
            hit = self.index.name in names or (self.index.data_stream in names)
            return lambda _doc_id, _source: hit
        field, values = self._values(path)
        if field is None:
            return lambda _doc_id, _source: False
        if field.type in _TEXTS:
            terms = {_java_str(w) for w in wanted}
            return lambda _doc_id, source: any(
                t in terms for v in values(source) for t in _TOKENS.findall(_java_str(v).lower())
            )
        targets = {_normalize(field, w) for w in wanted} - {None}
        if field.type in _INT_RANGES:
            targets = {t for t in targets if float(t).is_integer()}
        if case_insensitive and field.type in _KEYWORDS:
            lowered = {str(t).lower() for t in targets}
            return lambda _doc_id, source: any(
                str(_normalize(field, v)).lower() in lowered
                for v in values(source)
                if _normalize(field, v) is not None
            )
        return lambda _doc_id, source: any(_normalize(field, v) in targets for v in values(source))

    # -- queries

    def _q_match_all(self, body: Any) -> _Pred:
        return lambda _doc_id, _source: True

    def _q_match_none(self, body: Any) -> _Pred:
        return lambda _doc_id, _source: False

    def _q_term(self, body: Any) -> _Pred:
        path, spec = self._field_body("term", body)
        if isinstance(spec, dict):
            if "value" not in spec:
                raise EsError(400, "parsing_exception", "[term] query does not support [value] missing")
            return self._matcher(path, [spec["value"]], bool(spec.get("case_insensitive")))
        if isinstance(spec, list):
            raise EsError(400, "parsing_exception", "[term] query does not support array of values")
        return self._matcher(path, [spec])

    def _q_terms(self, body: Any) -> _Pred:
        path, spec = self._field_body("terms", body)
        if not isinstance(spec, list):
            raise EsError(400, "parsing_exception", "[terms] query does not support [" + path + "]")
        return self._matcher(path, spec)

    def _q_ids(self, body: Any) -> _Pred:
        values = body.get("values") if isinstance(body, dict) else None
        if not isinstance(values, list):
            raise EsError(400, "parsing_exception", "[ids] query malformed, values must be an array")
        return self._matcher("_id", values)

    def _q_exists(self, body: Any) -> _Pred:
        if not isinstance(body, dict) or "field" not in body:
            raise EsError(400, "parsing_exception", "[exists] must be provided with a [field]")
        path = str(body["field"])
        mapper, source_path = self.index.mapping.lookup(path)
        if mapper is None:
            return lambda _doc_id, _source: False
        parts = source_path.split(".")
        if isinstance(mapper, _Object):
            return lambda _doc_id, source: bool(_source_values(source, parts))
        field = mapper
        return lambda _doc_id, source: any(
            _normalize(field, v) is not None for v in _source_values(source, parts)
        )

    def _q_match(self, body: Any) -> _Pred:
        path, spec = self._field_body("match", body)
        operator = "or"
        if isinstance(spec, dict):
            operator = str(spec.get("operator", "or")).lower()
            spec = spec.get("query")
        field, values = self._values(path)
        if field is None or field.type not in _TEXTS:
            return self._matcher(path, [spec])
        wanted = set(_TOKENS.findall(_java_str(spec).lower()))
        if not wanted:
            return lambda _doc_id, _source: False

        def pred(_doc_id: str, source: dict[str, Any]) -> bool:
            tokens = {t for v in values(source) for t in _TOKENS.findall(_java_str(v).lower())}
            return wanted <= tokens if operator == "and" else bool(wanted & tokens)

        return pred

    def _q_prefix(self, body: Any) -> _Pred:
        path, spec = self._field_body("prefix", body)
        prefix = _java_str(spec.get("value") if isinstance(spec, dict) else spec)
        field, values = self._values(path)
        if field is None:
            return lambda _doc_id, _source: False
        if field.type in _TEXTS:
            return lambda _doc_id, source: any(
                t.startswith(prefix) for v in values(source) for t in _TOKENS.findall(_java_str(v).lower())
            )
        return lambda _doc_id, source: any(
            str(_normalize(field, v)).startswith(prefix) for v in values(source)
        )

    def _q_wildcard(self, body: Any) -> _Pred:
        path, spec = self._field_body("wildcard", body)
        pattern = _java_str(spec.get("value", spec.get("wildcard")) if isinstance(spec, dict) else spec)
        field, values = self._values(path)
        if field is None:
            return lambda _doc_id, _source: False
        return lambda _doc_id, source: any(
            fnmatch.fnmatchcase(str(_normalize(field, v)), pattern) for v in values(source)
        )

    def _q_range(self, body: Any) -> _Pred:
        path, spec = self._field_body("range", body)
        if not isinstance(spec, dict):
            raise EsError(
                400, "parsing_exception", "[range] query malformed, no start_object after field name"
            )
        field, values = self._values(path)
        if field is None:
            return lambda _doc_id, _source: False
        bounds: list[tuple[str, Any]] = []
        for op in ("gt", "gte", "lt", "lte"):
            if spec.get(op) is None:
                continue
            raw = spec[op]
            if field.type in ("date", "date_nanos"):
                formats = _parse_date_format(str(spec["format"])) if "format" in spec else field.formats
                bound = (
                    _date_math(raw)
                    if isinstance(raw, str) and raw.startswith("now")
                    else _parse_date(raw, formats)
                )
                if bound is None:
                    raise _search_failure(
                        self.index.name,
                        EsError(
                            400,
                            "parse_exception",
                            f"failed to parse date field [{raw}] with format "
                            f"[{field.defn.get('format', _DEFAULT_DATE_FORMAT)}]",
                        ),
                    )
            else:
                bound = _normalize(field, raw)
            bounds.append((op, bound))

        def within(value: Any) -> bool:
            if value is None:
                return False
            try:
                for op, bound in bounds:
                    if (
                        (op == "gt" and not value > bound)
                        or (op == "gte" and not value >= bound)
                        or (op == "lt" and not value < bound)
                        or (op == "lte" and not value <= bound)
                    ):
                        return False
            except TypeError:
                return False
            return True

        return lambda _doc_id, source: any(within(_normalize(field, v)) for v in values(source))

    def _q_bool(self, body: Any) -> _Pred:
        if not isinstance(body, dict):
            raise EsError(
                400, "parsing_exception", "[bool] query malformed, no start_object after query name"
            )

        def clauses(key: str) -> list[_Pred]:
            return [self.compile(q) for q in _as_list(body.get(key))]

        must = clauses("must") + clauses("filter")
        must_not = clauses("must_not")
        should = clauses("should")
        minimum = body.get("minimum_should_match")
        if minimum is None:
            need = 0 if must else (1 if should else 0)
        else:
            text = str(minimum)
            need = int(len(should) * int(text[:-1]) / 100) if text.endswith("%") else int(text)
            if need < 0:
                need = max(len(should) + need, 0)

        def pred(doc_id: str, source: dict[str, Any]) -> bool:
            if not all(p(doc_id, source) for p in must):
                return False
            if any(p(doc_id, source) for p in must_not):
                return False
            return need == 0 or sum(1 for p in should if p(doc_id, source)) >= need

        return pred

    def _q_constant_score(self, body: Any) -> _Pred:
        if not isinstance(body, dict) or "filter" not in body:
            raise EsError(400, "parsing_exception", "[constant_score] requires a 'filter' element")
        return self.compile(body["filter"])


_KNOWN_UNSUPPORTED_QUERIES: Final = frozenset(
    {
        "query_string",
        "simple_query_string",
        "multi_match",
        "match_phrase",
        "match_phrase_prefix",
        "fuzzy",
        "regexp",
        "nested",
        "has_child",
        "has_parent",
        "geo_distance",
        "geo_bounding_box",
        "script",
        "script_score",
        "function_score",
        "knn",
        "more_like_this",
        "dis_max",
        "boosting",
    }
)


def _date_math(text: str) -> int | None:
    """``now`` with ``+N``/``-N`` units (rounding with ``/`` is not supported)."""
    match = re.fullmatch(r"now((?:[+-]\d+[yMwdhHms])*)", text)
    if not match:
        return None
    millis = int(time.time() * 1000)
    units = {"y": 365 * 86_400_000, "M": 30 * 86_400_000, "w": 7 * 86_400_000, "d": 86_400_000}
    units.update({"h": 3_600_000, "H": 3_600_000, "m": 60_000, "s": 1000})
    for sign, amount, unit in re.findall(r"([+-])(\d+)([yMwdhHms])", match.group(1)):
        millis += (1 if sign == "+" else -1) * int(amount) * units[unit]
    return millis
