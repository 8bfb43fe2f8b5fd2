"""An Elasticsearch 8 contract server.

Elasticsearch cannot run where these tests run, so this module serves the part of its REST
API a sink connector touches, with the wire behaviour the official ``elasticsearch`` client
(8.x) and ``helpers.bulk`` rely on: the product header, compatible media types, the error
body shape, bulk item semantics (versions, sequence numbers, conflicts, partial failures),
dynamic and explicit mappings that reject values the way Elasticsearch does, data streams
with the built-in ``logs-*-*`` / ``metrics-*-*`` / ``traces-*-*`` / ``synthetics-*-*``
templates, reads for assertions, basic / API-key authentication and TLS.

Fault injection and observation live beside the real API (``fail_next_requests``,
``reject_next_items``, ``delay``, counters) and under ``/_contract/...`` for a server in
another process; ``python -m tests.contract_servers.elasticsearch`` runs one in the
foreground and prints ``LISTENING <port>`` when it accepts connections.
"""

from __future__ import annotations

import argparse
import base64
import calendar
import contextlib
import fnmatch
import gzip
import hmac
import ipaddress
import math
import os
import re
import socket
import ssl
import subprocess
import sys
import threading
import time
import traceback
import urllib.request
import zlib
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from http import HTTPStatus
from pathlib import Path
from typing import Any, Final, Self, cast
from urllib.parse import parse_qsl, unquote, urlsplit

import orjson

from tests.contract_servers._http import (
    BackgroundServer,
    ContractHandler,
    ContractHTTPServer,
    Lifecycle,
    end_process,
    listening_port,
    serve_until_signalled,
)

__all__ = ["ElasticsearchContractProcess", "ElasticsearchContractServer", "main"]

VERSION: Final = "8.15.0"
_LUCENE: Final = "9.11.1"
_VERSION_ID: Final = "8512000"
_SHARDS: Final = {"total": 2, "successful": 1, "failed": 0}
_NOOP_SHARDS: Final = {"total": 0, "successful": 0, "failed": 0}
_SEARCH_SHARDS: Final = {"total": 1, "successful": 1, "skipped": 0, "failed": 0}
_MAX_ID_BYTES: Final = 512
_MAX_INDEX_NAME_BYTES: Final = 255
_MAX_RESULT_WINDOW: Final = 10_000
_DEFAULT_TOTAL_FIELDS: Final = 1000
_DEFAULT_GC_DELETES_S: Final = 60.0
_MISSING: Final = object()
_ROOT = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------------------------
# errors


class EsError(Exception):
    """An Elasticsearch exception: answers a whole request, or one bulk item."""

    def __init__(
        self,
        status: int,
        type_: str,
        reason: str,
        *,
        caused_by: dict[str, Any] | None = None,
        extra: dict[str, Any] | None = None,
        root_cause: list[dict[str, Any]] | None = None,
        headers: Sequence[tuple[str, str]] = (),
    ) -> None:
        super().__init__(reason)
        self.status = status
        self.type = type_
        self.reason = reason
        self.caused_by = caused_by
        self.extra = extra or {}
        self.root_cause = root_cause
        self.headers = headers

    def error_object(self) -> dict[str, Any]:
        obj: dict[str, Any] = {"type": self.type, "reason": self.reason, **self.extra}
        if self.caused_by is not None:
            obj["caused_by"] = self.caused_by
        return obj

    def body(self) -> dict[str, Any]:
        root = self.root_cause
        if root is None:
            root = [{"type": self.type, "reason": self.reason, **self.extra}]
        return {"error": {"root_cause": root, **self.error_object()}, "status": self.status}


class _PlainError(Exception):
    """Errors Elasticsearch reports as ``{"error": "<text>", "status": N}`` (REST layer)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _illegal(reason: str, caused_by: dict[str, Any] | None = None) -> EsError:
    return EsError(400, "illegal_argument_exception", reason, caused_by=caused_by)


def _index_not_found(name: str) -> EsError:
    return EsError(
        404,
        "index_not_found_exception",
        f"no such index [{name}]",
        extra={"resource.type": "index_or_alias", "resource.id": name, "index_uuid": "_na_", "index": name},
    )


def _shard_extra(index: _Index) -> dict[str, Any]:
    return {"index_uuid": index.uuid, "shard": "0", "index": index.name}


def _conflict(index: _Index, reason: str) -> EsError:
    return EsError(409, "version_conflict_engine_exception", reason, extra=_shard_extra(index))


def _search_failure(index: str, cause: EsError) -> EsError:
    """Query-time errors come back wrapped the way a one-shard search reports them."""
    return EsError(
        cause.status,
        "search_phase_execution_exception",
        "all shards failed",
        root_cause=[cause.error_object()],
        extra={
            "phase": "query",
            "grouped": True,
            "failed_shards": [
                {"shard": 0, "index": index, "node": "contract", "reason": cause.error_object()}
            ],
        },
        caused_by=cause.error_object(),
    )


def _token_name(value: Any) -> str:
    if isinstance(value, dict):
        return "START_OBJECT"
    if isinstance(value, list):
        return "START_ARRAY"
    if isinstance(value, str):
        return "VALUE_STRING"
    if isinstance(value, bool):
        return "VALUE_BOOLEAN"
    if value is None:
        return "VALUE_NULL"
    return "VALUE_NUMBER"


def _java_str(value: Any) -> str:
    """How Elasticsearch prints a parsed value in messages (Java's ``toString``)."""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={_java_str(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_java_str(v) for v in value) + "]"
    return str(value)


def _bool_param(value: Any, name: str) -> bool:
    if value is True or value in ("true", ""):
        return True
    if value is False or value == "false":
        return False
    raise _illegal(f"Failed to parse value [{value}] as only [true] or [false] are allowed.")


class _MappingError(Exception):
    """A mapping definition Elasticsearch would refuse (``mapper_parsing_exception``)."""


class _Drop(Exception):
    """Close the connection without answering (the server is going away)."""


# --------------------------------------------------------------------------------------------
# dates

_DateParser = Callable[[str], int | None]
_EPOCH_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_abbr) if m}
_MONTHS.update({m.lower(): i for i, m in enumerate(calendar.month_name) if m})
_JAVA_PATTERN_LETTERS = frozenset("GuyDMLdQqYwWEecFaBhKkHmsSAnNVvzOXxZp")


_MONTH_DAYS: Final = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _epoch_day(year: int, month: int, day: int) -> int | None:
    """Days since 1970-01-01 of a proleptic Gregorian date, None when the date does not exist
    (plain arithmetic: ``datetime`` and ``timegm`` cost too much per document)."""
    if not 1 <= month <= 12 or day < 1:
        return None
    if day > _MONTH_DAYS[month]:
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        if not (month == 2 and leap and day == 29):
            return None
    shifted = year - (month <= 2)
    era = shifted // 400
    year_of_era = shifted - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146097 + day_of_era - 719468


def _to_millis(groups: dict[str, str | None]) -> int | None:
    try:
        year = groups.get("y")
        if year is None:
            short = groups.get("yy")
            year_n = 2000 + int(short) if short is not None else 1970
        else:
            year_n = int(year)
        month_text = groups.get("Mn")
        month = _MONTHS.get(month_text.lower(), 0) if month_text is not None else int(groups.get("M") or 1)
        day = int(groups.get("d") or 1)
        hour = int(groups.get("H") or 0)
        if groups.get("h") is not None:
            hour = int(groups["h"] or 0) % 12
            if (groups.get("a") or "").upper() == "PM":
                hour += 12
        minute = int(groups.get("m") or 0)
        second = int(groups.get("s") or 0)
    except (ValueError, TypeError):
        return None
    days = _epoch_day(year_n, month, day)
    if days is None or hour > 23 or minute > 59 or second > 59:
        return None
    millis = ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000
    fraction = groups.get("f")
    if fraction:
        millis += int((fraction + "000")[:3])
    zone = groups.get("z")
    if zone and zone not in ("Z", "z"):
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        offset = int(digits[:2]) * 60 + (int(digits[2:4]) if len(digits) >= 4 else 0)
        millis -= sign * offset * 60_000
    return millis


def _regex_parser(pattern: str) -> _DateParser:
    compiled = re.compile(pattern)

    def parse(text: str) -> int | None:
        match = compiled.fullmatch(text)
        return _to_millis(match.groupdict()) if match else None

    return parse


def _epoch_parser(scale: int) -> _DateParser:
    def parse(text: str) -> int | None:
        if not _EPOCH_NUMBER.fullmatch(text):
            return None
        return int(float(text) * scale) if "." in text else int(text) * scale

    return parse


_ZONE = r"(?P<z>Z|[+-]\d{2}(?::?\d{2})?)"
_STRICT_OPTIONAL_TIME = (
    r"(?P<y>\d{4})(?:-(?P<M>\d{2})(?:-(?P<d>\d{2})(?:T(?P<H>\d{2})(?::(?P<m>\d{2})"
    r"(?::(?P<s>\d{2})(?:[.,](?P<f>\d{1,9}))?)?)?" + _ZONE + r"?)?)?)?"
)
_LENIENT_OPTIONAL_TIME = (
    r"(?P<y>[+-]?\d{1,9})(?:-(?P<M>\d{1,2})(?:-(?P<d>\d{1,2})(?:T(?P<H>\d{1,2})(?::(?P<m>\d{1,2})"
    r"(?::(?P<s>\d{1,2})(?:[.,](?P<f>\d{1,9}))?)?)?" + _ZONE + r"?)?)?)?"
)
_YMD = r"(?P<y>\d{4})-(?P<M>\d{2})-(?P<d>\d{2})"
_NAMED_DATE_FORMATS: dict[str, _DateParser] = {
    "epoch_millis": _epoch_parser(1),
    "epoch_second": _epoch_parser(1000),
    "strict_date_optional_time": _regex_parser(_STRICT_OPTIONAL_TIME),
    "strict_date_optional_time_nanos": _regex_parser(_STRICT_OPTIONAL_TIME),
    "date_optional_time": _regex_parser(_LENIENT_OPTIONAL_TIME),
    "iso8601": _regex_parser(_LENIENT_OPTIONAL_TIME),
    "strict_date": _regex_parser(_YMD),
    "date": _regex_parser(_YMD),
    "strict_year_month_day": _regex_parser(_YMD),
    "year_month_day": _regex_parser(_YMD),
    "strict_date_time": _regex_parser(
        _YMD + r"T(?P<H>\d{2}):(?P<m>\d{2}):(?P<s>\d{2})[.,](?P<f>\d{1,9})" + _ZONE
    ),
    "date_time": _regex_parser(_YMD + r"T(?P<H>\d{2}):(?P<m>\d{2}):(?P<s>\d{2})[.,](?P<f>\d{1,9})" + _ZONE),
    "strict_date_time_no_millis": _regex_parser(_YMD + r"T(?P<H>\d{2}):(?P<m>\d{2}):(?P<s>\d{2})" + _ZONE),
    "date_time_no_millis": _regex_parser(_YMD + r"T(?P<H>\d{2}):(?P<m>\d{2}):(?P<s>\d{2})" + _ZONE),
    "strict_date_hour_minute_second": _regex_parser(_YMD + r"T(?P<H>\d{2}):(?P<m>\d{2}):(?P<s>\d{2})"),
    "date_hour_minute_second": _regex_parser(_YMD + r"T(?P<H>\d{2}):(?P<m>\d{2}):(?P<s>\d{2})"),
    "strict_date_hour_minute_second_millis": _regex_parser(
        _YMD + r"T(?P<H>\d{2}):(?P<m>\d{2}):(?P<s>\d{2})\.(?P<f>\d{3})"
    ),
    "strict_year_month": _regex_parser(r"(?P<y>\d{4})-(?P<M>\d{2})"),
    "year_month": _regex_parser(r"(?P<y>\d{4})-(?P<M>\d{2})"),
    "strict_year": _regex_parser(r"(?P<y>\d{4})"),
    "year": _regex_parser(r"(?P<y>\d{4})"),
    "basic_date": _regex_parser(r"(?P<y>\d{4})(?P<M>\d{2})(?P<d>\d{2})"),
    "basic_date_time": _regex_parser(
        r"(?P<y>\d{4})(?P<M>\d{2})(?P<d>\d{2})T(?P<H>\d{2})(?P<m>\d{2})(?P<s>\d{2})\.(?P<f>\d{3})" + _ZONE
    ),
    "basic_date_time_no_millis": _regex_parser(
        r"(?P<y>\d{4})(?P<M>\d{2})(?P<d>\d{2})T(?P<H>\d{2})(?P<m>\d{2})(?P<s>\d{2})" + _ZONE
    ),
}
_DEFAULT_DATE_FORMAT: Final = "strict_date_optional_time||epoch_millis"


class _UnsupportedPattern(Exception):
    pass


def _java_pattern_regex(pattern: str) -> str:
    """A regex for the common subset of Java ``DateTimeFormatter`` patterns.

    Raises ``ValueError`` for letters Java does not know and ``_UnsupportedPattern`` for
    letters it knows but this translation does not (such formats accept any string)."""
    out: list[str] = []
    seen: set[str] = set()
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "'":
            end = pattern.find("'", i + 1)
            if end < 0:
                raise ValueError("Pattern ends with an incomplete string literal: " + pattern)
            literal = pattern[i + 1 : end] or "'"
            out.append(re.escape(literal))
            i = end + 1
            continue
        if ch == "[":
            out.append("(?:")
            i += 1
            continue
        if ch == "]":
            out.append(")?")
            i += 1
            continue
        if not ch.isascii() or not ch.isalpha():
            out.append(re.escape(ch))
            i += 1
            continue
        run = 1
        while i + run < n and pattern[i + run] == ch:
            run += 1
        i += run
        if ch not in _JAVA_PATTERN_LETTERS:
            raise ValueError(f"Unknown pattern letter: {ch}")

        def group(name: str, body: str) -> str:
            if name in seen:
                return f"(?:{body})"
            seen.add(name)
            return f"(?P<{name}>{body})"

        if ch in "yu":
            out.append(
                group("yy", r"\d{2}") if run == 2 else group("y", r"\d{4,9}" if run >= 4 else r"\d{1,9}")
            )
        elif ch in "ML":
            if run >= 3:
                out.append(group("Mn", r"[A-Za-z]{3,9}"))
            else:
                out.append(group("M", r"\d{2}" if run == 2 else r"\d{1,2}"))
        elif ch in "dHmsk":
            name = {"d": "d", "H": "H", "k": "H", "m": "m", "s": "s"}[ch]
            out.append(group(name, r"\d{2}" if run == 2 else r"\d{1,2}"))
        elif ch in "hK":
            out.append(group("h", r"\d{2}" if run == 2 else r"\d{1,2}"))
        elif ch == "S":
            out.append(group("f", rf"\d{{{run}}}"))
        elif ch == "a":
            out.append(group("a", r"[AaPp][Mm]"))
        elif ch in "Xx":
            zone = r"[+-]\d{2}:\d{2}" if run >= 3 else r"[+-]\d{2}(?:\d{2})?"
            out.append(group("z", ("Z|" if ch == "X" else "") + zone))
        elif ch == "Z":
            out.append(group("z", r"Z|[+-]\d{2}:?\d{2}"))
        elif ch == "E":
            out.append(r"[A-Za-z]{3,9}")
        elif ch in "zVO":
            out.append(r"[A-Za-z0-9_/+\-:]+")
        else:
            raise _UnsupportedPattern(ch)
    return "".join(out)


def _parse_date_format(spec: str) -> tuple[_DateParser, ...]:
    """``format`` of a date field: named formats and Java patterns joined with ``||``."""
    parsers: list[_DateParser] = []
    for part in spec.split("||"):
        name = part.strip()
        named = _NAMED_DATE_FORMATS.get(name)
        if named is not None:
            parsers.append(named)
            continue
        try:
            parsers.append(_regex_parser(_java_pattern_regex(name)))
        except _UnsupportedPattern:
            parsers.append(lambda text: 0 if text else None)
        except (ValueError, re.error) as exc:
            raise _MappingError(f"Invalid format: [{spec}]: {exc}") from None
    return tuple(parsers)


_DEFAULT_DATE_PARSERS: Final = _parse_date_format(_DEFAULT_DATE_FORMAT)
_DYNAMIC_DATE_PARSER: Final = _NAMED_DATE_FORMATS["strict_date_optional_time"]


def _parse_date(value: Any, parsers: Sequence[_DateParser]) -> int | None:
    if isinstance(value, bool) or value is None or isinstance(value, dict | list):
        return None
    text = value if isinstance(value, str) else str(value)
    for parse in parsers:
        millis = parse(text)
        if millis is not None:
            return millis
    return None


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


# --------------------------------------------------------------------------------------------
# mappings


class _Malformed(Exception):
    """A value that does not fit its field: the ``caused_by`` of the document failure."""

    def __init__(self, cause_type: str, reason: str) -> None:
        super().__init__(reason)
        self.cause = {"type": cause_type, "reason": reason}


_INT_RANGES: Final = {
    "long": (-(2**63), 2**63 - 1, "a long"),
    "integer": (-(2**31), 2**31 - 1, "an integer"),
    "short": (-(2**15), 2**15 - 1, "a short"),
    "byte": (-(2**7), 2**7 - 1, "a byte"),
    "unsigned_long": (0, 2**64 - 1, "an unsigned_long"),
}
_FLOAT_LIMITS: Final = {
    "double": 1.7976931348623157e308,
    "float": 3.4028234663852886e38,
    "half_float": 65504.0,
    "scaled_float": 1.7976931348623157e308,
}
_KEYWORDS: Final = frozenset({"keyword", "constant_keyword", "wildcard", "version"})
_TEXTS: Final = frozenset({"text", "match_only_text", "search_as_you_type", "annotated_text"})
# Types whose values may be JSON objects (points, shapes, ranges, feature maps...).
_OBJECT_VALUED: Final = frozenset(
    {
        "flattened",
        "geo_point",
        "geo_shape",
        "point",
        "shape",
        "integer_range",
        "long_range",
        "float_range",
        "double_range",
        "date_range",
        "ip_range",
        "histogram",
        "aggregate_metric_double",
        "rank_features",
        "sparse_vector",
        "join",
        "percolator",
        "completion",
        "semantic_text",
    }
)
_KNOWN_TYPES: Final = frozenset(
    set(_INT_RANGES)
    | set(_FLOAT_LIMITS)
    | _KEYWORDS
    | _TEXTS
    | _OBJECT_VALUED
    | {
        "date",
        "date_nanos",
        "boolean",
        "binary",
        "ip",
        "dense_vector",
        "rank_feature",
        "alias",
        "token_count",
        "counted_keyword",
        "murmur3",
        "object",
        "nested",
    }
)
# ``ignore_malformed`` only applies to these (as in Elasticsearch).
_MALFORMABLE: Final = frozenset(
    set(_INT_RANGES) | set(_FLOAT_LIMITS) | {"date", "date_nanos", "ip", "geo_point"}
)
_NUMERIC_TEXT = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*")
_BASE64 = re.compile(r"[A-Za-z0-9+/\s]*={0,2}\s*")


class _Field:
    """A leaf field mapping; ``defn`` is what ``GET _mapping`` shows for it."""

    __slots__ = (
        "check",
        "coerce",
        "const",
        "defn",
        "fields",
        "formats",
        "ignore_above",
        "ignore_malformed",
        "special",
        "sub_checks",
        "type",
    )

    def __init__(self, type_: str, defn: dict[str, Any]) -> None:
        self.type = type_
        self.defn = defn
        self.check: Callable[[_Field, Any], None] | None = _CHECKS.get(type_)
        self.formats: tuple[_DateParser, ...] = _DEFAULT_DATE_PARSERS
        self.fields: dict[str, _Field] = {}
        self.ignore_malformed = False
        self.coerce = True
        self.ignore_above: int | None = None
        self.const: str | None = None
        # constant_keyword may update the mapping, so it always takes the general path
        self.special = type_ == "constant_keyword"
        # whether a multi-field can refuse a value its parent accepted (a text field's keyword cannot)
        self.sub_checks = False


class _Object:
    """An ``object`` / ``nested`` mapping (the root is one too)."""

    __slots__ = ("dynamic", "enabled", "extra", "nested", "properties")

    def __init__(self, nested: bool = False) -> None:
        self.nested = nested
        self.properties: dict[str, _Field | _Object] = {}
        self.dynamic: str | None = None
        self.enabled = True
        self.extra: dict[str, Any] = {}


_Mapper = _Field | _Object


def _check_integer(field: _Field, value: Any) -> None:
    kind = type(value)
    if kind is int:
        number = value
    elif kind is float:
        if not field.coerce and not value.is_integer():
            raise _Malformed("illegal_argument_exception", f"Value [{value}] has a decimal part")
        number = math.trunc(value)
    elif kind is str:
        if not value:
            return
        if not _NUMERIC_TEXT.fullmatch(value):
            raise _Malformed("illegal_argument_exception", f'For input string: "{value}"')
        if not field.coerce:
            raise _Malformed("illegal_argument_exception", f"[coerce] is false, cannot parse [{value}]")
        try:
            number = int(value)
        except ValueError:
            as_float = float(value)
            if not math.isfinite(as_float):
                raise _Malformed("illegal_argument_exception", f'For input string: "{value}"') from None
            number = math.trunc(as_float)
    else:
        raise _Malformed("illegal_argument_exception", f'For input string: "{_java_str(value)}"')
    low, high, name = _INT_RANGES[field.type]
    if not low <= number <= high:
        raise _Malformed("illegal_argument_exception", f"Value [{value}] is out of range for {name}")


def _check_float(field: _Field, value: Any) -> None:
    kind = type(value)
    if kind is int or kind is float:
        number = float(value)
    elif kind is str:
        if not value:
            return
        if not _NUMERIC_TEXT.fullmatch(value):
            raise _Malformed("number_format_exception", f'For input string: "{value}"')
        if not field.coerce:
            raise _Malformed("illegal_argument_exception", f"[coerce] is false, cannot parse [{value}]")
        number = float(value)
    else:
        raise _Malformed("number_format_exception", f'For input string: "{_java_str(value)}"')
    if not math.isfinite(number) or abs(number) > _FLOAT_LIMITS[field.type]:
        raise _Malformed(
            "illegal_argument_exception", f"[{field.type}] supports only finite values, but got [{value}]"
        )


def _check_boolean(field: _Field, value: Any) -> None:
    if value is True or value is False or value in ("true", "false", ""):
        return
    raise _Malformed(
        "illegal_argument_exception",
        f"Failed to parse value [{_java_str(value)}] as only [true] or [false] are allowed.",
    )


def _check_date(field: _Field, value: Any) -> None:
    if _parse_date(value, field.formats) is None:
        spec = field.defn.get("format", _DEFAULT_DATE_FORMAT)
        raise _Malformed(
            "illegal_argument_exception",
            f"failed to parse date field [{_java_str(value)}] with format [{spec}]",
        )


def _check_ip(field: _Field, value: Any) -> None:
    if isinstance(value, str):
        try:
            ipaddress.ip_address(value)
            return
        except ValueError:
            pass
    raise _Malformed("illegal_argument_exception", f"'{_java_str(value)}' is not an IP string literal.")


def _check_binary(field: _Field, value: Any) -> None:
    if not isinstance(value, str) or not _BASE64.fullmatch(value):
        raise _Malformed("illegal_argument_exception", "Illegal base64 character")


def _check_number_only(field: _Field, value: Any) -> None:
    if type(value) not in (int, float):
        raise _Malformed(
            "illegal_argument_exception", f"[{field.type}] expects numbers, got [{_java_str(value)}]"
        )


_CHECKS: dict[str, Callable[[_Field, Any], None]] = {
    **dict.fromkeys(_INT_RANGES, _check_integer),
    **dict.fromkeys(_FLOAT_LIMITS, _check_float),
    "boolean": _check_boolean,
    "date": _check_date,
    "date_nanos": _check_date,
    "ip": _check_ip,
    "binary": _check_binary,
    "dense_vector": _check_number_only,
    "rank_feature": _check_number_only,
}


class _MapOpts:
    """Index-level defaults a field mapping inherits."""

    __slots__ = ("coerce", "ignore_malformed")

    def __init__(self, ignore_malformed: bool = False, coerce: bool = True) -> None:
        self.ignore_malformed = ignore_malformed
        self.coerce = coerce


def _dynamic_value(value: Any, where: str) -> str:
    if value is True or value == "true":
        return "true"
    if value is False or value == "false":
        return "false"
    if value in ("strict", "runtime"):
        return str(value)
    raise _MappingError(f"Unknown value [{_java_str(value)}] for [dynamic] on [{where}]")


def _build_mapper(name: str, defn: Any, path: str, opts: _MapOpts) -> _Mapper:
    if not isinstance(defn, dict):
        raise _MappingError(
            f"Expected map for property [fields] on field [{path}] but got a {type(defn).__name__}"
        )
    kind = defn.get("type")
    if kind is None or kind in ("object", "nested"):
        obj = _Object(nested=kind == "nested")
        for key, value in defn.items():
            if key == "properties":
                if not isinstance(value, dict):
                    raise _MappingError(f"Expected map for property [properties] on field [{path}]")
                for child, child_defn in value.items():
                    _add_property(obj, child, child_defn, path + ".", opts)
            elif key == "dynamic":
                obj.dynamic = _dynamic_value(value, path)
            elif key == "enabled":
                obj.enabled = bool(_bool_param(value, "enabled"))
            elif key != "type":
                obj.extra[key] = value
        return obj
    if not isinstance(kind, str) or kind not in _KNOWN_TYPES:
        raise _MappingError(f"No handler for type [{kind}] declared on field [{name}]")
    if kind == "scaled_float" and "scaling_factor" not in defn:
        raise _MappingError(f"Field [scaling_factor] is required on field [{name}]")
    field = _Field(kind, dict(defn))
    if kind in ("date", "date_nanos") and "format" in defn:
        field.formats = _parse_date_format(str(defn["format"]))
    if kind in _MALFORMABLE:
        field.ignore_malformed = bool(_bool_param(defn.get("ignore_malformed", opts.ignore_malformed), "x"))
    field.coerce = bool(_bool_param(defn.get("coerce", opts.coerce), "coerce"))
    if "ignore_above" in defn:
        field.ignore_above = int(defn["ignore_above"])
    if kind == "constant_keyword" and defn.get("value") is not None:
        field.const = str(defn["value"])
    subs = defn.get("fields")
    if subs is not None:
        if not isinstance(subs, dict):
            raise _MappingError(f"Expected map for property [fields] on field [{name}]")
        for sub_name, sub_defn in subs.items():
            sub = _build_mapper(sub_name, sub_defn, f"{path}.{sub_name}", opts)
            if isinstance(sub, _Object):
                raise _MappingError(f"Type [{sub_defn.get('type', 'object')}] cannot be used in multi field")
            field.fields[sub_name] = sub
            field.sub_checks = field.sub_checks or sub.check is not None or sub.sub_checks
    return field


def _add_property(obj: _Object, key: str, defn: Any, prefix: str, opts: _MapOpts) -> None:
    """Adds ``key`` to ``obj``; dotted names become object paths, as Elasticsearch expands them."""
    if not key or not key.strip():
        raise _MappingError("field name cannot be an empty string")
    parts = key.split(".")
    if any(not part for part in parts):
        raise _MappingError(f"field name [{key}] cannot contain only dots or empty path segments")
    for part in parts[:-1]:
        child = obj.properties.get(part)
        if child is None:
            child = _Object()
            obj.properties[part] = child
        elif isinstance(child, _Field):
            raise _MappingError(f"can't merge a non object mapping [{prefix}{part}] with an object mapping")
        obj = child
        prefix += part + "."
    leaf = parts[-1]
    mapper = _build_mapper(leaf, defn, prefix + leaf, opts)
    existing = obj.properties.get(leaf)
    if existing is None:
        obj.properties[leaf] = mapper
    else:
        _merge_mapper(obj, leaf, existing, mapper, prefix + leaf, replace=True)


_UPDATABLE_PARAMS: Final = frozenset({"ignore_above", "meta", "ignore_malformed", "fields", "type"})


def _merge_mapper(parent: _Object, key: str, old: _Mapper, new: _Mapper, path: str, *, replace: bool) -> None:
    """Merges ``new`` into ``parent.properties[key]`` (currently ``old``).

    ``replace`` (template composition) lets later definitions win, as composable templates
    do; otherwise the rules of the put-mapping API apply."""
    if isinstance(old, _Object) and isinstance(new, _Object):
        if old.nested != new.nested and not replace:
            first, second = ("nested", "non-nested") if old.nested else ("non-nested", "nested")
            raise _MappingError(f"can't merge a {second} mapping [{path}] with a {first} mapping")
        if old.enabled != new.enabled and not replace:
            raise _MappingError(f"the [enabled] parameter can't be updated for the object mapping [{path}]")
        if replace:
            old.nested = new.nested
            old.enabled = new.enabled
        if new.dynamic is not None:
            old.dynamic = new.dynamic
        old.extra.update(new.extra)
        for child, mapper in new.properties.items():
            current = old.properties.get(child)
            if current is None:
                old.properties[child] = mapper
            else:
                _merge_mapper(old, child, current, mapper, f"{path}.{child}", replace=replace)
        return
    if replace:
        parent.properties[key] = new
        return
    if isinstance(old, _Object) or isinstance(new, _Object):
        raise _MappingError(f"can't merge a non object mapping [{path}] with an object mapping")
    if old.type != new.type:
        raise _MappingError(f"mapper [{path}] cannot be changed from type [{old.type}] to [{new.type}]")
    conflicts = [
        f"Cannot update parameter [{param}] from [{_java_str(old.defn.get(param))}] to [{_java_str(value)}]"
        for param, value in new.defn.items()
        if param not in _UPDATABLE_PARAMS and old.defn.get(param) != value
    ]
    if conflicts:
        raise _MappingError(
            f"Mapper for [{path}] conflicts with existing mapper:\n\t" + "\n\t".join(conflicts)
        )
    merged_defn = {**old.defn, **{k: v for k, v in new.defn.items() if k != "fields"}}
    fields = dict(old.fields)
    for sub_name, sub in new.fields.items():
        current_sub = fields.get(sub_name)
        if current_sub is not None and current_sub.type != sub.type:
            raise _MappingError(
                f"mapper [{path}.{sub_name}] cannot be changed from type [{current_sub.type}] to [{sub.type}]"
            )
        fields[sub_name] = sub
    if fields:
        merged_defn["fields"] = {
            name: {
                **(old.defn.get("fields") or {}).get(name, {}),
                **(new.defn.get("fields") or {}).get(name, {}),
            }
            for name in fields
        }
    merged = _Field(old.type, merged_defn)
    for slot in ("formats", "ignore_malformed", "coerce", "const", "check", "special"):
        setattr(merged, slot, getattr(new, slot))
    merged.ignore_above = new.ignore_above if new.ignore_above is not None else old.ignore_above
    merged.fields = fields
    merged.sub_checks = any(sub.check is not None or sub.sub_checks for sub in fields.values())
    parent.properties[key] = merged


def _render_mapper(mapper: _Mapper) -> dict[str, Any]:
    if isinstance(mapper, _Field):
        return mapper.defn
    out: dict[str, Any] = {}
    if mapper.nested:
        out["type"] = "nested"
    if mapper.dynamic is not None:
        out["dynamic"] = mapper.dynamic
    if not mapper.enabled:
        out["enabled"] = False
    out.update(mapper.extra)
    if mapper.properties:
        out["properties"] = {k: _render_mapper(mapper.properties[k]) for k in sorted(mapper.properties)}
    return out or {"type": "object"}


def _count_fields(mapper: _Mapper) -> int:
    if isinstance(mapper, _Field):
        return 1 + len(mapper.fields)
    return 1 + sum(_count_fields(child) for child in mapper.properties.values())


def _copy_mapper(mapper: _Mapper) -> _Mapper:
    if isinstance(mapper, _Field):
        return mapper  # fields are replaced, never changed in place
    copy = _Object(mapper.nested)
    copy.dynamic, copy.enabled, copy.extra = mapper.dynamic, mapper.enabled, dict(mapper.extra)
    copy.properties = {k: _copy_mapper(v) for k, v in mapper.properties.items()}
    return copy


_ROOT_PARAMS: Final = frozenset(
    {
        "dynamic",
        "date_detection",
        "numeric_detection",
        "dynamic_templates",
        "dynamic_date_formats",
        "_source",
        "_meta",
        "_routing",
        "_data_stream_timestamp",
        "runtime",
        "subobjects",
        "_field_names",
        "enabled",
    }
)


class _Mapping:
    """An index's mapping: the root object plus root-only parameters."""

    def __init__(self) -> None:
        self.root = _Object()
        self.params: dict[str, Any] = {}
        self.date_detection = True
        self.numeric_detection = False
        self.templates: list[tuple[str, dict[str, Any]]] = []

    def copy(self) -> _Mapping:
        other = _Mapping()
        root = _copy_mapper(self.root)
        assert isinstance(root, _Object)
        other.root = root
        other.params = dict(self.params)
        other.date_detection, other.numeric_detection = self.date_detection, self.numeric_detection
        other.templates = list(self.templates)
        return other

    def apply(self, defn: Any, opts: _MapOpts, *, replace: bool) -> None:
        """Merges a mapping definition in (put-mapping rules unless ``replace``)."""
        if not isinstance(defn, dict):
            raise _MappingError("Expected map for [mappings]")
        if "_doc" in defn and len(defn) == 1 and isinstance(defn["_doc"], dict):
            raise _MappingError(
                "The mapping definition cannot be nested under a type [_doc] unless include_type_name is "
                "set to true."
            )
        incoming = _Object()
        for key, value in defn.items():
            if key == "properties":
                if not isinstance(value, dict):
                    raise _MappingError("Expected map for property [properties]")
                for child, child_defn in value.items():
                    _add_property(incoming, child, child_defn, "", opts)
            elif key == "dynamic":
                self.root.dynamic = _dynamic_value(value, "_doc")
                self.params["dynamic"] = self.root.dynamic
            elif key == "date_detection":
                self.date_detection = _bool_param(value, key)
                self.params[key] = self.date_detection
            elif key == "numeric_detection":
                self.numeric_detection = _bool_param(value, key)
                self.params[key] = self.numeric_detection
            elif key == "dynamic_templates":
                self.templates = _parse_dynamic_templates(value)
                self.params[key] = value
            elif key in _ROOT_PARAMS:
                self.params[key] = value
            else:
                raise _MappingError(f"Root mapping definition has unsupported parameters:  [{key} : {value}]")
        for child, mapper in incoming.properties.items():
            current = self.root.properties.get(child)
            if current is None:
                self.root.properties[child] = mapper
            else:
                _merge_mapper(self.root, child, current, mapper, child, replace=replace)

    def render(self) -> dict[str, Any]:
        out = dict(self.params)
        if self.root.properties:
            out["properties"] = {
                k: _render_mapper(self.root.properties[k]) for k in sorted(self.root.properties)
            }
        return out

    def field_count(self) -> int:
        return sum(_count_fields(m) for m in self.root.properties.values())

    def lookup(self, path: str) -> tuple[_Mapper | None, str]:
        """The mapper of ``path`` (multi-fields included) and the source path its values come from."""
        parts = path.split(".")
        current: _Mapper = self.root
        for i, part in enumerate(parts):
            if isinstance(current, _Field):
                if i == len(parts) - 1 and part in current.fields:
                    return current.fields[part], ".".join(parts[:i])
                return None, path
            child = current.properties.get(part)
            if child is None:
                return None, path
            current = child
        return current, path


def _parse_dynamic_templates(value: Any) -> list[tuple[str, dict[str, Any]]]:
    if not isinstance(value, list):
        raise _MappingError("Dynamic template syntax error. An array of named objects is expected.")
    out: list[tuple[str, dict[str, Any]]] = []
    for entry in value:
        if not isinstance(entry, dict) or len(entry) != 1:
            raise _MappingError("Dynamic template syntax error. An array of named objects is expected.")
        ((name, body),) = entry.items()
        if not isinstance(body, dict) or not isinstance(body.get("mapping", body.get("runtime")), dict):
            raise _MappingError(f"Dynamic template [{name}] must have a [mapping] object")
        out.append((name, body))
    return out


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _template_matches(body: dict[str, Any], key: str, path: str, kind: str) -> bool:
    types = _as_list(body.get("match_mapping_type"))
    if types and "*" not in types and kind not in types:
        return False
    if kind in _as_list(body.get("unmatch_mapping_type")):
        return False

    def any_match(patterns: list[Any], text: str, regex: bool) -> bool:
        if regex:
            return any(re.fullmatch(str(p), text) for p in patterns)
        return any(fnmatch.fnmatchcase(text, str(p)) for p in patterns)

    regex = body.get("match_pattern") == "regex"
    if "match" in body and not any_match(_as_list(body["match"]), key, regex):
        return False
    if "unmatch" in body and any_match(_as_list(body["unmatch"]), key, regex):
        return False
    if "path_match" in body and not any_match(_as_list(body["path_match"]), path, False):
        return False
    return not ("path_unmatch" in body and any_match(_as_list(body["path_unmatch"]), path, False))


def _fill_placeholders(value: Any, name: str, dynamic_type: str) -> Any:
    if isinstance(value, str):
        return value.replace("{name}", name).replace("{dynamic_type}", dynamic_type)
    if isinstance(value, dict):
        return {k: _fill_placeholders(v, name, dynamic_type) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill_placeholders(v, name, dynamic_type) for v in value]
    return value


_DEFAULT_DYNAMIC_TYPE: Final = {
    "string": "text",
    "long": "long",
    "double": "float",
    "boolean": "boolean",
    "date": "date",
    "object": "object",
}


# --------------------------------------------------------------------------------------------
# documents


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


# --------------------------------------------------------------------------------------------
# indices, data streams and templates


def _new_uuid() -> str:
    return base64.urlsafe_b64encode(os.urandom(16)).rstrip(b"=").decode()


def _setting_text(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return [_setting_text(v) for v in value]
    if value is None:
        return None
    return str(value)


def _flatten_settings(settings: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(settings, dict):
        raise EsError(400, "settings_exception", "Failed to load settings from [settings]")
    out: dict[str, Any] = {}
    for key, value in settings.items():
        if isinstance(value, dict):
            out.update(_flatten_settings(value, f"{prefix}{key}."))
        else:
            full = f"{prefix}{key}"
            out[full if full.startswith("index.") else "index." + full] = _setting_text(value)
    return out


def _nest_settings(flat: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in flat.items():
        node = out
        parts = key.split(".")
        for part in parts[:-1]:
            nxt = node.setdefault(part, {})
            if not isinstance(nxt, dict):
                break
            node = nxt
        else:
            node[parts[-1]] = value
    return out


def _time_setting_seconds(text: str) -> float:
    match = re.fullmatch(r"(-?\d+(?:\.\d+)?)(nanos|micros|ms|s|m|h|d)?", text.strip())
    if not match:
        raise _illegal(f"failed to parse setting [index.gc_deletes] with value [{text}] as a time value")
    scale = {"nanos": 1e-9, "micros": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600, "d": 86400}
    return float(match.group(1)) * scale[match.group(2) or "ms"]


def _validate_index_name(name: str) -> None:
    def bad(why: str) -> EsError:
        return EsError(
            400,
            "invalid_index_name_exception",
            f"Invalid index name [{name}], {why}",
            extra={"index_uuid": "_na_", "index": name},
        )

    if any(ch in name for ch in '\\/*?"<>| ,'):
        raise bad('must not contain the following characters [ , ", *, \\, <, |, ,, >, /, ?]')
    if not name:
        raise bad("must not be empty")
    if "#" in name:
        raise bad("must not contain '#'")
    if ":" in name:
        raise bad("must not contain ':'")
    if name[0] in "_-+":
        raise bad("must not start with '_', '-', or '+'")
    size = len(name.encode())
    if size > _MAX_INDEX_NAME_BYTES:
        raise bad(f"index name is too long, ({size} > {_MAX_INDEX_NAME_BYTES})")
    if name in (".", ".."):
        raise bad("must not be '.' or '..'")
    if name.lower() != name:
        raise bad("must be lowercase")


class _Index:
    def __init__(
        self, name: str, settings: dict[str, Any], mapping: _Mapping, data_stream: str | None
    ) -> None:
        self.name = name
        self.uuid = _new_uuid()
        self.created_ms = int(time.time() * 1000)
        self.data_stream = data_stream
        self.docs: dict[str, _Doc] = {}
        self.tombstones: dict[str, tuple[int, int, float]] = {}
        self.seq_no = -1
        self.settings: dict[str, Any] = {
            "index.number_of_shards": "1",
            "index.number_of_replicas": "1",
            "index.routing.allocation.include._tier_preference": "data_content",
            **settings,
            "index.provided_name": name,
            "index.creation_date": str(self.created_ms),
            "index.uuid": self.uuid,
            "index.version.created": _VERSION_ID,
        }
        self.mapping = mapping
        self.opts = _MapOpts()
        self.total_fields_limit = _DEFAULT_TOTAL_FIELDS
        self.ignore_dynamic_beyond_limit = False
        self.gc_deletes = _DEFAULT_GC_DELETES_S
        self.apply_settings()
        self.field_count = mapping.field_count()

    def apply_settings(self) -> None:
        flat = self.settings
        self.opts = _MapOpts(
            ignore_malformed=flat.get("index.mapping.ignore_malformed") == "true",
            coerce=flat.get("index.mapping.coerce", "true") != "false",
        )
        try:
            self.total_fields_limit = int(flat.get("index.mapping.total_fields.limit", _DEFAULT_TOTAL_FIELDS))
        except ValueError:
            raise _illegal("Failed to parse value for setting [index.mapping.total_fields.limit]") from None
        self.ignore_dynamic_beyond_limit = (
            flat.get("index.mapping.total_fields.ignore_dynamic_beyond_limit") == "true"
        )
        self.gc_deletes = _time_setting_seconds(str(flat.get("index.gc_deletes", "60s")))
        shards = flat.get("index.number_of_shards", "1")
        if not str(shards).isdigit() or not 1 <= int(shards) <= 1024:
            raise _illegal(
                f"Failed to parse value [{shards}] for setting [index.number_of_shards] must be >= 1"
            )

    def next_seq(self) -> int:
        self.seq_no += 1
        return self.seq_no

    def tombstone(self, doc_id: str, now: float) -> tuple[int, int, float] | None:
        """A delete is remembered for ``index.gc_deletes`` (versions continue from it)."""
        entry = self.tombstones.get(doc_id)
        if entry is not None and now - entry[2] > self.gc_deletes:
            del self.tombstones[doc_id]
            return None
        return entry

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "aliases": {},
            "mappings": self.mapping.render(),
            "settings": _nest_settings(self.settings),
        }
        if self.data_stream is not None:
            out["data_stream"] = self.data_stream
        return out


class _Template:
    def __init__(self, name: str, body: dict[str, Any], builtin: bool = False) -> None:
        self.name = name
        self.body = body
        self.builtin = builtin
        patterns = body.get("index_patterns")
        self.patterns: list[str] = [patterns] if isinstance(patterns, str) else list(patterns or [])
        self.priority = int(body.get("priority") or 0)
        self.data_stream = body.get("data_stream")
        self.composed_of: list[str] = list(body.get("composed_of") or [])
        self.ignore_missing: list[str] = list(body.get("ignore_missing_component_templates") or [])

    def matches(self, name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self.patterns)


class _DataStream:
    def __init__(self, name: str, template: str) -> None:
        self.name = name
        self.template = template
        self.indices: list[_Index] = []
        self.generation = 0

    @property
    def write_index(self) -> _Index:
        return self.indices[-1]

    def describe(self, meta: Any) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "timestamp_field": {"name": "@timestamp"},
            "indices": [
                {"index_name": i.name, "index_uuid": i.uuid, "prefer_ilm": True, "managed_by": "Unmanaged"}
                for i in self.indices
            ],
            "generation": self.generation,
            "status": "GREEN",
            "template": self.template,
            "next_generation_managed_by": "Unmanaged",
            "prefer_ilm": True,
            "hidden": False,
            "system": False,
            "allow_custom_routing": False,
            "replicated": False,
            "rollover_on_write": False,
        }
        if meta is not None:
            out["_meta"] = meta
        return out


def _builtin_components() -> dict[str, dict[str, Any]]:
    """Simplified versions of the component templates behind Elasticsearch's built-in data
    stream templates: what matters to a writer (field types, strings as keywords, no date
    detection, lenient logs) is kept; lifecycle and pipelines beyond ``@timestamp`` are not."""

    def kind_mappings(kind: str) -> dict[str, Any]:
        return {
            "date_detection": False,
            "properties": {
                "@timestamp": {"type": "date"},
                "data_stream": {
                    "properties": {
                        "type": {"type": "constant_keyword", "value": kind},
                        "dataset": {"type": "constant_keyword"},
                        "namespace": {"type": "constant_keyword"},
                    }
                },
            },
        }

    ecs_templates = [
        {"ecs_timestamp": {"match": "@timestamp", "mapping": {"type": "date", "ignore_malformed": False}}},
        {
            "ecs_message_match_only_text": {
                "path_match": ["message", "*.message"],
                "unmatch_mapping_type": "object",
                "mapping": {"type": "match_only_text"},
            }
        },
        {
            "ecs_ip": {
                "path_match": ["ip", "*.ip", "*_ip"],
                "match_mapping_type": "string",
                "mapping": {"type": "ip"},
            }
        },
        {
            "all_strings_to_keywords": {
                "match_mapping_type": "string",
                "mapping": {"type": "keyword", "ignore_above": 1024},
            }
        },
    ]
    beyond_limit = {"index": {"mapping": {"total_fields": {"ignore_dynamic_beyond_limit": True}}}}
    out: dict[str, dict[str, Any]] = {
        "data-streams@mappings": {"template": {"mappings": {"properties": {"@timestamp": {"type": "date"}}}}},
        "ecs@mappings": {"template": {"mappings": {"dynamic_templates": ecs_templates}}},
        "logs@settings": {
            "template": {
                "settings": {
                    "index": {
                        "lifecycle": {"name": "logs"},
                        "codec": "best_compression",
                        "default_pipeline": "logs@default-pipeline",
                        "mapping": {
                            "ignore_malformed": True,
                            "total_fields": {"ignore_dynamic_beyond_limit": True},
                        },
                    }
                }
            }
        },
        "metrics@settings": {"template": {"settings": {**beyond_limit, "index.lifecycle.name": "metrics"}}},
        "traces@settings": {"template": {"settings": {"index.lifecycle.name": "traces"}}},
        "synthetics@settings": {"template": {"settings": {"index.lifecycle.name": "synthetics"}}},
    }
    for kind in ("logs", "metrics", "traces", "synthetics"):
        out[f"{kind}@mappings"] = {"template": {"mappings": kind_mappings(kind)}}
    return out


def _builtin_templates() -> dict[str, _Template]:
    out: dict[str, _Template] = {}
    for kind in ("logs", "metrics", "traces", "synthetics"):
        body = {
            "index_patterns": [f"{kind}-*-*"],
            "priority": 100,
            "data_stream": {"hidden": False, "allow_custom_routing": False},
            "composed_of": [f"{kind}@mappings", f"{kind}@settings", f"{kind}@custom", "ecs@mappings"],
            "ignore_missing_component_templates": [f"{kind}@custom"],
            "allow_auto_create": True,
            "_meta": {"description": f"default {kind} template installed by x-pack", "managed": True},
        }
        out[kind] = _Template(kind, body, builtin=True)
    return out


def _expand_mapping_props(defn: dict[str, Any]) -> dict[str, Any]:
    """Dotted property names as nested objects, so template layers merge field by field."""
    props = defn.get("properties")
    if not isinstance(props, dict):
        return defn
    expanded: dict[str, Any] = {}
    for key, value in props.items():
        parts = key.split(".")
        node = expanded
        for part in parts[:-1]:
            holder = node.setdefault(part, {"properties": {}})
            node = holder.setdefault("properties", {})
        node[parts[-1]] = _expand_mapping_props(value) if isinstance(value, dict) else value
    return {**defn, "properties": expanded}


def _merge_mapping_layers(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        if key == "properties" and isinstance(value, dict) and isinstance(out.get("properties"), dict):
            props = dict(out["properties"])
            for name, defn in value.items():
                old = props.get(name)
                if (
                    isinstance(old, dict)
                    and isinstance(defn, dict)
                    and "properties" in old
                    and "properties" in defn
                ):
                    props[name] = _merge_mapping_layers(old, defn)
                else:
                    props[name] = defn
            out["properties"] = props
        elif key == "dynamic_templates" and isinstance(value, list) and isinstance(out.get(key), list):
            names = {next(iter(t)) for t in value if isinstance(t, dict) and t}
            out[key] = [
                t for t in out[key] if not (isinstance(t, dict) and t and next(iter(t)) in names)
            ] + value
        else:
            out[key] = value
    return out


# --------------------------------------------------------------------------------------------
# bulk requests


class _BadSource:
    __slots__ = ("col", "message")

    def __init__(self, message: str, col: int) -> None:
        self.message = message
        self.col = col


class _Op:
    __slots__ = (
        "action",
        "id",
        "if_primary_term",
        "if_seq_no",
        "index",
        "pipeline",
        "raw",
        "require_alias",
        "source",
        "version",
        "version_type",
    )

    def __init__(self, action: str) -> None:
        self.action = action
        self.index: str | None = None
        self.id: str | None = None
        self.version: int | None = None
        self.version_type = "internal"
        self.if_seq_no: int | None = None
        self.if_primary_term: int | None = None
        self.pipeline: str | None = None
        self.require_alias = False
        self.source: Any = _MISSING
        self.raw: bytes | None = None


_BULK_META: Final = frozenset(
    {
        "_index",
        "_id",
        "routing",
        "version",
        "version_type",
        "if_seq_no",
        "if_primary_term",
        "pipeline",
        "retry_on_conflict",
        "require_alias",
        "require_data_stream",
        "dynamic_templates",
        "_source",
        "list_executed_pipelines",
    }
)
_VERSION_TYPES: Final = {
    "internal": "internal",
    "external": "external",
    "external_gt": "external",
    "external_gte": "external_gte",
}
_UPDATE_KEYS: Final = frozenset(
    {"doc", "upsert", "doc_as_upsert", "script", "scripted_upsert", "detect_noop", "_source", "lang"}
)


def _id_text(value: Any) -> str | None:
    if value is None:
        return None
    return _java_str(value)


def _parse_meta(op: _Op, meta: dict[str, Any], line: int, default_index: str | None) -> None:
    op.index = default_index
    for key, value in meta.items():
        if key not in _BULK_META:
            raise _illegal(f"Action/metadata line [{line}] contains an unknown parameter [{key}]")
        if isinstance(value, dict | list) and key not in ("dynamic_templates", "_source"):
            raise _illegal(
                f"Malformed action/metadata line [{line}], expected a simple value for field [{key}] but "
                f"found [{_token_name(value)}]"
            )
        try:
            if key == "_index":
                op.index = _id_text(value)
            elif key == "_id":
                op.id = _id_text(value)
            elif key == "version":
                op.version = int(value)
            elif key == "version_type":
                version_type = _VERSION_TYPES.get(str(value))
                if version_type is None:
                    raise _illegal(f"No version type match [{value}]")
                op.version_type = version_type
            elif key == "if_seq_no":
                op.if_seq_no = int(value)
            elif key == "if_primary_term":
                op.if_primary_term = int(value)
            elif key == "pipeline":
                op.pipeline = _id_text(value)
            elif key == "require_alias":
                op.require_alias = _bool_param(value, key)
        except (TypeError, ValueError):
            raise EsError(
                400, "x_content_parse_exception", f"[1:1] failed to parse field [{key}] with value [{value}]"
            ) from None


def _parse_bulk(body: bytes, default_index: str | None) -> list[_Op]:
    if not body:
        raise EsError(400, "parse_exception", "request body is required")
    if body[-1:] != b"\n":
        raise _illegal("The bulk request must be terminated by a newline [\\n]")
    lines = body.split(b"\n")
    last = len(lines) - 1
    loads = orjson.loads
    ops: list[_Op] = []
    i = 0
    while i < last:
        line = lines[i]
        i += 1
        if not line.strip():
            continue
        try:
            action_line = loads(line)
        except orjson.JSONDecodeError as exc:
            raise EsError(400, "x_content_parse_exception", f"[1:{exc.colno}] {exc.msg}") from None
        if type(action_line) is not dict:
            raise _illegal(
                f"Malformed action/metadata line [{i}], expected START_OBJECT but found "
                f"[{_token_name(action_line)}]"
            )
        if len(action_line) != 1:
            found = "END_OBJECT" if not action_line else "FIELD_NAME"
            expected = "FIELD_NAME" if not action_line else "END_OBJECT"
            raise _illegal(f"Malformed action/metadata line [{i}], expected {expected} but found [{found}]")
        ((action, meta),) = action_line.items()
        if action not in ("index", "create", "update", "delete"):
            raise _illegal(
                f"Malformed action/metadata line [{i}], expected field [create], [delete], [index] or "
                f"[update] but found [{action}]"
            )
        if type(meta) is not dict:
            raise _illegal(
                f"Malformed action/metadata line [{i}], expected START_OBJECT but found [{_token_name(meta)}]"
            )
        op = _Op(action)
        size = len(meta)
        index_name = meta.get("_index", default_index)
        doc_id = meta.get("_id")
        # Most action lines carry only _index and/or _id, as strings: no per-key loop for them.
        if (
            size == ("_index" in meta) + ("_id" in meta)
            and (index_name is None or type(index_name) is str)
            and (doc_id is None or type(doc_id) is str)
        ):
            op.index = index_name
            op.id = doc_id
        else:
            _parse_meta(op, meta, i, default_index)
        if action != "delete" and i < last:
            raw = lines[i]
            i += 1
            if action == "update":
                op.source = _parse_update_body(raw)
            else:
                op.raw = raw
                try:
                    op.source = loads(raw)
                except orjson.JSONDecodeError as exc:
                    op.source = _BadSource(exc.msg, exc.colno)
        ops.append(op)
    return ops


def _parse_update_body(raw: bytes) -> dict[str, Any]:
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise EsError(400, "x_content_parse_exception", f"[1:{exc.colno}] {exc.msg}") from None
    if type(body) is not dict:
        raise EsError(
            400,
            "x_content_parse_exception",
            "[1:1] [UpdateRequest] Expected START_OBJECT but was: " + _token_name(body),
        )
    for key, value in body.items():
        if key not in _UPDATE_KEYS:
            raise EsError(400, "x_content_parse_exception", f"[1:2] [UpdateRequest] unknown field [{key}]")
        if key in ("doc", "upsert") and type(value) is not dict:
            raise EsError(
                400, "x_content_parse_exception", f"[1:2] [UpdateRequest] failed to parse field [{key}]"
            )
    return body


def _validate_ops(ops: list[_Op]) -> None:
    errors: list[str] = []
    if not ops:
        errors.append("no requests added")
    for op in ops:
        if op.index is None:
            errors.append("index is missing")
        if op.id is None and op.action in ("update", "delete"):
            errors.append("id is missing")
        if op.id is not None:
            if not op.id:
                errors.append("if _id is specified it must not be empty")
            elif len(op.id.encode()) > _MAX_ID_BYTES:
                size = len(op.id.encode())
                errors.append(f"id [{op.id}] is too long, must be no longer than 512 bytes but was: {size}")
        if op.source is _MISSING and op.action != "delete":
            errors.append("script or doc is missing" if op.action == "update" else "source is missing")
        if op.action == "update":
            if op.version_type != "internal":
                errors.append(f"version type [{op.version_type.upper()}] is not supported by the update API")
            elif op.version is not None:
                errors.append("can't provide version in update request")
            elif isinstance(op.source, dict) and "doc" not in op.source and "script" not in op.source:
                errors.append("script or doc is missing")
        else:
            if op.version_type != "internal":
                if op.action == "create":
                    errors.append("create operations only support internal versioning. use index instead")
                if op.version is None or op.version < 0:
                    version = -3 if op.version is None else op.version
                    errors.append(
                        f"illegal version value [{version}] for version type [{op.version_type.upper()}]"
                    )
            elif op.version is not None:
                errors.append(
                    "internal versioning can not be used for optimistic concurrency control. Please use "
                    "`if_seq_no` and `if_primary_term` instead"
                )
        if op.if_seq_no is not None and (op.version_type != "internal" or op.version is not None):
            errors.append("compare and write operations can not use versioning")
        if op.if_seq_no is not None and op.if_primary_term is None:
            errors.append("ifSeqNo is set, but primary term is [0]")
        if op.if_primary_term is not None and op.if_seq_no is None:
            errors.append(f"ifSeqNo is unassigned, but primary term is [{op.if_primary_term}]")
    if errors:
        listed = "".join(f"{n}: {message};" for n, message in enumerate(errors, 1))
        raise EsError(400, "action_request_validation_exception", f"Validation Failed: {listed}")


# --------------------------------------------------------------------------------------------
# queries


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


# --------------------------------------------------------------------------------------------
# the cluster: state and operations (callers hold the lock)


class _Cluster:
    def __init__(self) -> None:
        self.indices: dict[str, _Index] = {}
        self.data_streams: dict[str, _DataStream] = {}
        self.templates: dict[str, _Template] = _builtin_templates()
        self.components: dict[str, dict[str, Any]] = _builtin_components()
        self._id_prefix = os.urandom(7)
        self._id_counter = 0

    # -- ids

    def new_id(self) -> str:
        self._id_counter += 1
        raw = self._id_prefix + self._id_counter.to_bytes(8, "big")
        return base64.urlsafe_b64encode(raw[-15:]).decode()

    # -- templates

    def match_template(self, name: str) -> _Template | None:
        best: _Template | None = None
        for template in self.templates.values():
            if template.matches(name) and (best is None or template.priority > best.priority):
                best = template
        return best

    def template_layers(self, template: _Template) -> tuple[dict[str, Any], dict[str, Any]]:
        """Settings (flat) and mappings of a composable template, components first."""
        settings: dict[str, Any] = {}
        mappings: dict[str, Any] = {}
        layers = [self.components[c] for c in template.composed_of if c in self.components]
        layers.append(template.body)
        for layer in layers:
            inner = layer.get("template") or {}
            if inner.get("settings"):
                settings.update(_flatten_settings(inner["settings"]))
            if inner.get("mappings"):
                mappings = _merge_mapping_layers(mappings, _expand_mapping_props(inner["mappings"]))
        return settings, mappings

    def put_template(self, name: str, body: Any) -> None:
        if not isinstance(body, dict):
            raise EsError(400, "parse_exception", "request body is required")
        patterns = body.get("index_patterns")
        if not patterns:
            raise EsError(
                400,
                "action_request_validation_exception",
                "Validation Failed: 1: index patterns are missing;",
            )
        template = _Template(name, body)
        missing = [
            c for c in template.composed_of if c not in self.components and c not in template.ignore_missing
        ]
        if missing:
            raise EsError(
                400,
                "invalid_index_template_exception",
                f"index_template [{name}] invalid, cause [index template [{name}] specifies component "
                f"templates {missing} that do not exist]",
            )
        settings, mappings = self.template_layers(template)
        self._build_mapping(mappings, settings, "Failed to parse mapping: ")
        self.templates[name] = template

    def put_component(self, name: str, body: Any) -> None:
        if not isinstance(body, dict) or not isinstance(body.get("template"), dict):
            raise EsError(
                400, "action_request_validation_exception", "Validation Failed: 1: template is required;"
            )
        inner = body["template"]
        self._build_mapping(
            _expand_mapping_props(inner.get("mappings") or {}),
            _flatten_settings(inner.get("settings") or {}),
            "Failed to parse mapping: ",
        )
        self.components[name] = body

    # -- indices

    def _build_mapping(self, mappings: Any, settings: dict[str, Any], prefix: str) -> _Mapping:
        mapping = _Mapping()
        opts = _MapOpts(
            ignore_malformed=settings.get("index.mapping.ignore_malformed") == "true",
            coerce=settings.get("index.mapping.coerce", "true") != "false",
        )
        try:
            mapping.apply(mappings or {}, opts, replace=True)
        except _MappingError as exc:
            reason = str(exc)
            raise EsError(
                400,
                "mapper_parsing_exception",
                prefix + reason,
                caused_by={"type": "mapper_parsing_exception", "reason": reason},
            ) from None
        except EsError as exc:
            raise EsError(
                400, "mapper_parsing_exception", prefix + exc.reason, caused_by=exc.error_object()
            ) from None
        return mapping

    def create_index(
        self,
        name: str,
        body: dict[str, Any] | None,
        template: _Template | None = None,
        data_stream: str | None = None,
    ) -> _Index:
        body = body or {}
        for key in body:
            if key not in ("settings", "mappings", "aliases"):
                raise EsError(400, "parse_exception", f"unknown key [{key}] for create index")
        if body.get("aliases"):
            raise _illegal("aliases are not supported by the Elasticsearch contract server")
        settings: dict[str, Any] = {}
        mappings: dict[str, Any] = {}
        if template is not None:
            settings, mappings = self.template_layers(template)
        if body.get("settings"):
            settings.update(_flatten_settings(body["settings"]))
        if body.get("mappings"):
            mappings = _merge_mapping_layers(mappings, _expand_mapping_props(body["mappings"]))
        if data_stream is not None:
            settings["index.hidden"] = "true"
            mappings = _merge_mapping_layers(
                {"_data_stream_timestamp": {"enabled": True}, "properties": {"@timestamp": {"type": "date"}}},
                mappings,
            )
            timestamp = mappings["properties"].get("@timestamp")
            if isinstance(timestamp, dict) and settings.get("index.mapping.ignore_malformed") == "true":
                # the data stream timestamp never ignores malformed values
                mappings["properties"]["@timestamp"] = {**timestamp, "ignore_malformed": False}
        mapping = self._build_mapping(mappings, settings, "Failed to parse mapping: ")
        index = _Index(name, settings, mapping, data_stream)
        if index.field_count > index.total_fields_limit:
            raise _illegal(f"Limit of total fields [{index.total_fields_limit}] has been exceeded")
        self.indices[name] = index
        return index

    def create_index_api(self, name: str, body: Any) -> dict[str, Any]:
        _validate_index_name(name)
        if body is not None and not isinstance(body, dict):
            raise EsError(400, "parse_exception", "request body must be an object")
        existing = self.indices.get(name)
        if existing is not None:
            raise EsError(
                400,
                "resource_already_exists_exception",
                f"index [{name}/{existing.uuid}] already exists",
                extra={"index_uuid": existing.uuid, "index": name},
            )
        if name in self.data_streams:
            raise EsError(
                400,
                "resource_already_exists_exception",
                f"data stream [{name}] already exists",
                extra={"index_uuid": "_na_", "index": name},
            )
        template = self.match_template(name)
        if template is not None and template.data_stream is not None:
            raise _illegal(
                f"cannot create index with name [{name}], because it matches with template [{template.name}] "
                "that creates data streams only, use create data stream api instead"
            )
        self.create_index(name, body, template)
        return {"acknowledged": True, "shards_acknowledged": True, "index": name}

    def resolve(self, expression: str, *, allow_missing: bool = False) -> list[_Index]:
        """Indices named by a read expression: names, data streams, comma lists, wildcards."""
        out: dict[str, _Index] = {}
        for part in expression.split(","):
            part = part.strip()
            if not part:
                continue
            if part in ("_all", "*") or "*" in part:
                pattern = "*" if part == "_all" else part
                for name, candidate in self.indices.items():
                    if (
                        candidate.data_stream is None
                        and not name.startswith(".")
                        and fnmatch.fnmatchcase(name, pattern)
                    ):
                        out[name] = candidate
                for ds_name, each in self.data_streams.items():
                    if fnmatch.fnmatchcase(ds_name, pattern):
                        out.update((i.name, i) for i in each.indices)
                continue
            stream = self.data_streams.get(part)
            if stream is not None:
                out.update((i.name, i) for i in stream.indices)
                continue
            index = self.indices.get(part)
            if index is None:
                if allow_missing:
                    continue
                raise _index_not_found(part)
            out[part] = index
        return list(out.values())

    def single_index(self, name: str) -> _Index:
        if name in self.data_streams:
            raise _illegal(
                f"The provided expression [{name}] matches a data stream, specify the corresponding concrete "
                "indices instead."
            )
        index = self.indices.get(name)
        if index is None:
            raise _index_not_found(name)
        return index

    def delete_index(self, expression: str) -> dict[str, Any]:
        targets: list[_Index] = []
        for name in expression.split(","):
            if "*" in name or name == "_all":
                raise _illegal("Wildcard expressions or all indices are not allowed")
            index = self.single_index(name)
            if index.data_stream is not None:
                stream = self.data_streams[index.data_stream]
                if stream.write_index is index:
                    raise _illegal(
                        f"index [{name}] is the write index for data stream [{stream.name}] and cannot be "
                        "deleted"
                    )
            targets.append(index)
        for index in targets:
            del self.indices[index.name]
            if index.data_stream is not None:
                self.data_streams[index.data_stream].indices.remove(index)
        return {"acknowledged": True}

    def put_mapping(self, expression: str, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise EsError(400, "parse_exception", "request body is required")
        indices = self.resolve(expression)
        staged: list[tuple[_Index, _Mapping]] = []
        for index in indices:
            mapping = index.mapping.copy()
            try:
                mapping.apply(_expand_mapping_props(body), index.opts, replace=False)
            except _MappingError as exc:
                reason = str(exc)
                kind = (
                    "mapper_parsing_exception"
                    if reason.startswith(("No handler", "Root mapping"))
                    else "illegal_argument_exception"
                )
                raise EsError(400, kind, reason) from None
            count = mapping.field_count()
            if count > index.total_fields_limit:
                raise _illegal(f"Limit of total fields [{index.total_fields_limit}] has been exceeded")
            staged.append((index, mapping))
        for index, mapping in staged:
            index.mapping = mapping
            index.field_count = mapping.field_count()
        return {"acknowledged": True}

    def put_settings(self, expression: str, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise EsError(400, "parse_exception", "request body is required")
        updates = _flatten_settings(
            body.get("settings", body) if isinstance(body.get("settings"), dict) else body
        )
        static = sorted(k for k in updates if k in ("index.number_of_shards", "index.codec", "index.mode"))
        if static:
            listed = ", ".join(static)
            raise _illegal(f"Can't update non dynamic settings [[{listed}]] for open indices")
        for index in self.resolve(expression):
            for key, value in updates.items():
                if value is None:
                    index.settings.pop(key, None)
                else:
                    index.settings[key] = value
            index.apply_settings()
        return {"acknowledged": True}

    # -- data streams

    def create_data_stream(self, name: str) -> _DataStream:
        for why, bad in (
            ("must be lowercase", name.lower() != name),
            ("must not contain '#'", "#" in name),
            ("must not contain ':'", ":" in name),
            ("must not start with '_', '-', or '+'", bool(name) and name[0] in "_-+"),
            ("must not start with '.ds-'", name.startswith(".ds-")),
        ):
            if bad:
                raise _illegal(f"data_stream [{name}] {why}")
        _validate_index_name(name)
        if name in self.data_streams:
            raise EsError(400, "resource_already_exists_exception", f"data_stream [{name}] already exists")
        if name in self.indices:
            raise EsError(
                400,
                "resource_already_exists_exception",
                f"index [{name}/{self.indices[name].uuid}] already exists",
            )
        template = self.match_template(name)
        if template is None:
            raise _illegal(f"no matching index template found for data stream [{name}]")
        if template.data_stream is None:
            raise _illegal(
                f"matching index template [{template.name}] for data stream [{name}] has no data stream "
                "template"
            )
        stream = _DataStream(name, template.name)
        self.data_streams[name] = stream
        self.roll_over(stream)
        return stream

    def roll_over(self, stream: _DataStream) -> _Index:
        template = self.templates.get(stream.template) or self.match_template(stream.name)
        stream.generation += 1
        day = datetime.now(UTC).strftime("%Y.%m.%d")
        name = f".ds-{stream.name}-{day}-{stream.generation:06d}"
        index = self.create_index(name, None, template, data_stream=stream.name)
        stream.indices.append(index)
        return index

    def data_stream_names(self, expression: str, *, allow_missing: bool) -> list[str]:
        names: list[str] = []
        for part in expression.split(","):
            if "*" in part or part == "_all":
                pattern = "*" if part == "_all" else part
                names.extend(n for n in self.data_streams if fnmatch.fnmatchcase(n, pattern))
            elif part in self.data_streams:
                names.append(part)
            elif not allow_missing:
                raise _index_not_found(part)
        return list(dict.fromkeys(names))

    def delete_data_streams(self, expression: str) -> dict[str, Any]:
        names = self.data_stream_names(expression, allow_missing=False)
        for name in names:
            stream = self.data_streams.pop(name)
            for index in stream.indices:
                self.indices.pop(index.name, None)
        return {"acknowledged": True}

    # -- writes

    def write_target(self, op: _Op) -> _Index:
        name = cast(str, op.index)
        stream = self.data_streams.get(name)
        if stream is not None:
            if op.action != "create":
                raise _illegal("only write ops with an op_type of create are allowed in data streams")
            return stream.write_index
        index = self.indices.get(name)
        if index is not None:
            if index.data_stream is not None and op.action in ("index", "create"):
                if op.action == "create":
                    raise _illegal(
                        "index request with op_type=create targeting backing indices is disallowed, target "
                        f"corresponding data stream [{index.data_stream}] instead"
                    )
                if op.if_seq_no is None:
                    raise _illegal(
                        "index request with op_type=index and no if_primary_term and if_seq_no set "
                        "targeting backing indices is disallowed, target corresponding data stream "
                        f"[{index.data_stream}] instead"
                    )
            return index
        if op.require_alias:
            raise EsError(
                404,
                "index_not_found_exception",
                f"no such index [{name}] and [require_alias] request flag is [true] and [{name}] is not an "
                "alias",
                extra={"index_uuid": "_na_", "index": name},
            )
        # Deletes never create an index (unless externally versioned), as in Elasticsearch.
        if op.action == "delete" and op.version_type == "internal":
            raise _index_not_found(name)
        _validate_index_name(name)
        template = self.match_template(name)
        if template is not None and template.data_stream is not None:
            stream = self.create_data_stream(name)
            if op.action != "create":
                raise _illegal("only write ops with an op_type of create are allowed in data streams")
            return stream.write_index
        return self.create_index(name, None, template)

    def execute(self, op: _Op, now: float) -> dict[str, Any]:
        """One write; returns the item body or raises the item's error."""
        if op.pipeline is not None and op.pipeline != "_none":
            raise _illegal(f"pipeline with id [{op.pipeline}] does not exist")
        index = self.write_target(op)
        if op.action == "delete":
            return self._delete(index, op, now)
        if op.action == "update":
            return self._update(index, op, now)
        return self._index(index, op, now)

    def _parse_document(self, index: _Index, doc_id: str, source: Any, raw: bytes | None) -> _DocParse:
        if type(source) is _BadSource:
            raise EsError(
                400,
                "document_parsing_exception",
                f"[1:{source.col}] failed to parse: {source.message}",
                caused_by={"type": "json_parse_exception", "reason": source.message},
            )
        if type(source) is not dict:
            raise EsError(
                400,
                "document_parsing_exception",
                "[1:1] failed to parse: Malformed content, must start with an object",
            )
        if (
            index.data_stream is not None
            and "@timestamp" not in source
            and index.settings.get("index.default_pipeline") == "logs@default-pipeline"
        ):
            # logs@default-pipeline sets a missing @timestamp from the ingest time
            source["@timestamp"] = _now_iso()
            raw = None
        parse = _DocParse(index, doc_id, raw, source)
        parse.run()
        return parse

    def _check_cas(self, index: _Index, op: _Op, doc_id: str, doc: _Doc | None) -> None:
        if op.if_seq_no is None:
            return
        required = f"required seqNo [{op.if_seq_no}], primary term [{op.if_primary_term}]"
        if doc is None:
            raise _conflict(index, f"[{doc_id}]: version conflict, {required}. but no document was found")
        if doc.seq_no != op.if_seq_no or op.if_primary_term != 1:
            raise _conflict(
                index,
                f"[{doc_id}]: version conflict, {required}. current document has seqNo [{doc.seq_no}] and "
                "primary term [1]",
            )

    def _next_version(self, index: _Index, op: _Op, doc_id: str, current: int | None) -> int:
        if op.version_type == "internal":
            return 1 if current is None else current + 1
        version = cast(int, op.version)
        if current is not None:
            if op.version_type == "external" and version <= current:
                raise _conflict(
                    index,
                    f"[{doc_id}]: version conflict, current version [{current}] is higher or equal to the "
                    f"one provided [{version}]",
                )
            if op.version_type == "external_gte" and version < current:
                raise _conflict(
                    index,
                    f"[{doc_id}]: version conflict, current version [{current}] is higher than the one "
                    f"provided [{version}]",
                )
        return version

    def _index(self, index: _Index, op: _Op, now: float) -> dict[str, Any]:
        given_id = op.id is not None
        if op.id is None:
            # Generated before parsing, so a refused document's item still names its id.
            op.id = self.new_id()
        doc_id = op.id
        source = op.source
        parse = self._parse_document(index, doc_id, source, op.raw)
        # Elasticsearch applies the mapping update before the engine checks versions.
        parse.commit()
        docs = index.docs
        doc = docs.get(doc_id) if given_id else None
        if doc is not None:
            current: int | None = doc.version
        elif given_id:
            tomb = index.tombstone(doc_id, now)
            current = tomb[0] if tomb else None
        else:
            current = None
        self._check_cas(index, op, doc_id, doc)
        if op.action == "create" and doc is not None:
            raise _conflict(
                index,
                f"[{doc_id}]: version conflict, document already exists (current version [{doc.version}])",
            )
        version = self._next_version(index, op, doc_id, current)
        seq_no = index.next_seq()
        if doc is None:
            docs[doc_id] = _Doc(version, seq_no, source, parse.ignored)
            if current is not None:
                index.tombstones.pop(doc_id, None)
            result, status = "created", 201
        else:
            doc.version, doc.seq_no, doc.source, doc.ignored = version, seq_no, source, parse.ignored
            result, status = "updated", 200
        return {
            "_index": index.name,
            "_id": doc_id,
            "_version": version,
            "result": result,
            "_shards": _SHARDS,
            "_seq_no": seq_no,
            "_primary_term": 1,
            "status": status,
        }

    def _delete(self, index: _Index, op: _Op, now: float) -> dict[str, Any]:
        doc_id = cast(str, op.id)
        doc = index.docs.get(doc_id)
        if doc is not None:
            current: int | None = doc.version
        else:
            tomb = index.tombstone(doc_id, now)
            current = tomb[0] if tomb else None
        self._check_cas(index, op, doc_id, doc)
        version = self._next_version(index, op, doc_id, current)
        seq_no = index.next_seq()
        index.tombstones[doc_id] = (version, seq_no, now)
        if doc is not None:
            del index.docs[doc_id]
        return {
            "_index": index.name,
            "_id": doc_id,
            "_version": version,
            "result": "deleted" if doc is not None else "not_found",
            "_shards": _SHARDS,
            "_seq_no": seq_no,
            "_primary_term": 1,
            "status": 200 if doc is not None else 404,
        }

    def _update(self, index: _Index, op: _Op, now: float) -> dict[str, Any]:
        doc_id = cast(str, op.id)
        body = cast(dict[str, Any], op.source)
        doc = index.docs.get(doc_id)
        self._check_cas(index, op, doc_id, doc)
        if "script" in body:
            raise _illegal("scripted updates are not supported by the Elasticsearch contract server")
        partial = body.get("doc")
        if doc is None:
            if partial is not None and _bool_param(body.get("doc_as_upsert", False), "doc_as_upsert"):
                source = partial
            elif "upsert" in body:
                source = body["upsert"]
            else:
                raise EsError(
                    404,
                    "document_missing_exception",
                    f"[{doc_id}]: document missing",
                    extra=_shard_extra(index),
                )
            source = dict(source)
            parse = self._parse_document(index, doc_id, source, None)
            parse.commit()
            tomb = index.tombstone(doc_id, now)
            version = tomb[0] + 1 if tomb else 1
            seq_no = index.next_seq()
            index.docs[doc_id] = _Doc(version, seq_no, source, parse.ignored)
            index.tombstones.pop(doc_id, None)
            result, status = "created", 201
        else:
            merged, changed = _merge_source(doc.source, partial or {})
            if not changed and _bool_param(body.get("detect_noop", True), "detect_noop"):
                return {
                    "_index": index.name,
                    "_id": doc_id,
                    "_version": doc.version,
                    "result": "noop",
                    "_shards": _NOOP_SHARDS,
                    "_seq_no": doc.seq_no,
                    "_primary_term": 1,
                    "status": 200,
                }
            parse = self._parse_document(index, doc_id, merged, None)
            parse.commit()
            version = doc.version + 1
            seq_no = index.next_seq()
            doc.version, doc.seq_no, doc.source, doc.ignored = version, seq_no, merged, parse.ignored
            result, status = "updated", 200
        return {
            "_index": index.name,
            "_id": doc_id,
            "_version": version,
            "result": result,
            "_shards": _SHARDS,
            "_seq_no": seq_no,
            "_primary_term": 1,
            "status": status,
        }

    # -- reads

    def get_doc(self, name: str, doc_id: str) -> tuple[int, dict[str, Any]]:
        index = self.single_index(name)
        doc = index.docs.get(doc_id)
        if doc is None:
            return 404, {"_index": index.name, "_id": doc_id, "found": False}
        out: dict[str, Any] = {
            "_index": index.name,
            "_id": doc_id,
            "_version": doc.version,
            "_seq_no": doc.seq_no,
            "_primary_term": 1,
        }
        if doc.ignored:
            out["_ignored"] = list(doc.ignored)
        out["found"] = True
        out["_source"] = doc.source
        return 200, out

    def matching(self, expression: str, query: Any) -> list[tuple[_Index, str, _Doc]]:
        indices = self.resolve(expression)
        hits: list[tuple[_Index, str, _Doc]] = []
        for index in indices:
            try:
                pred = _QueryCompiler(index).compile(query if query is not None else {"match_all": {}})
            except EsError as exc:
                if exc.type == "search_phase_execution_exception":
                    raise
                raise _search_failure(index.name, exc) if exc.type != "parsing_exception" else exc from None
            hits.extend(
                (index, doc_id, doc) for doc_id, doc in index.docs.items() if pred(doc_id, doc.source)
            )
        return hits

    def count(self, expression: str, body: Any) -> dict[str, Any]:
        query = None
        if body:
            for key in body:
                if key != "query":
                    raise EsError(400, "parsing_exception", f"request does not support [{key}]")
            query = body.get("query")
        hits = self.matching(expression, query)
        return {"count": len(hits), "_shards": _SEARCH_SHARDS}

    def search(self, expression: str, body: dict[str, Any], params: dict[str, str]) -> dict[str, Any]:
        started = time.perf_counter()
        if "aggs" in body or "aggregations" in body:
            raise _illegal("aggregations are not supported by the Elasticsearch contract server")
        size = int(params.get("size", body.get("size", 10)))
        start = int(params.get("from", body.get("from", 0)))
        if size < 0 or start < 0:
            raise _illegal(f"[{'size' if size < 0 else 'from'}] parameter cannot be negative")
        if start + size > _MAX_RESULT_WINDOW:
            cause = _illegal(
                "Result window is too large, from + size must be less than or equal to: "
                f"[{_MAX_RESULT_WINDOW}] but was [{start + size}]. See the scroll api for a more efficient "
                "way to request large data sets. This limit can be set by changing the "
                "[index.max_result_window] index level setting."
            )
            raise _search_failure(expression, cause)
        hits = self.matching(expression, body.get("query"))
        sort_spec = body.get("sort")
        if "sort" in params:
            sort_spec = [{f: o or "asc"} for f, _, o in (s.partition(":") for s in params["sort"].split(","))]
        sort_values: list[list[Any]] | None = None
        if sort_spec is not None:
            hits, sort_values = _sort_hits(hits, sort_spec, expression)
        total = len(hits)
        tracked = body.get("track_total_hits", _MAX_RESULT_WINDOW)
        window = hits[start : start + size]
        source_wanted = body.get("_source", True) is not False
        out_hits: list[dict[str, Any]] = []
        for n, (index, doc_id, doc) in enumerate(window):
            hit: dict[str, Any] = {"_index": index.name, "_id": doc_id}
            if body.get("version"):
                hit["_version"] = doc.version
            if body.get("seq_no_primary_term"):
                hit["_seq_no"] = doc.seq_no
                hit["_primary_term"] = 1
            hit["_score"] = None if sort_values is not None else 1.0
            if doc.ignored:
                hit["_ignored"] = list(doc.ignored)
            if source_wanted:
                hit["_source"] = doc.source
            if sort_values is not None:
                hit["sort"] = sort_values[start + n]
            out_hits.append(hit)
        hits_section: dict[str, Any] = {}
        if tracked is True or (tracked is not False and isinstance(tracked, int)):
            cap = total if tracked is True else int(tracked)
            hits_section["total"] = {"value": min(total, cap), "relation": "eq" if total <= cap else "gte"}
        hits_section["max_score"] = None if sort_values is not None or not total else 1.0
        hits_section["hits"] = out_hits
        return {
            "took": int((time.perf_counter() - started) * 1000),
            "timed_out": False,
            "_shards": _SEARCH_SHARDS,
            "hits": hits_section,
        }


_NUMERIC_SORT_TYPES: Final = frozenset(
    set(_INT_RANGES) | set(_FLOAT_LIMITS) | {"date", "date_nanos", "boolean"}
)


def _sort_hits(
    hits: list[tuple[_Index, str, _Doc]], spec: Any, expression: str
) -> tuple[list[tuple[_Index, str, _Doc]], list[list[Any]]]:
    keys: list[tuple[str, str, Any]] = []
    for entry in _as_list(spec):
        if isinstance(entry, str):
            keys.append((entry, "desc" if entry == "_score" else "asc", None))
        elif isinstance(entry, dict) and len(entry) == 1:
            ((name, how),) = entry.items()
            if isinstance(how, dict):
                keys.append((name, str(how.get("order", "asc")), how.get("unmapped_type")))
            else:
                keys.append((name, str(how), None))
        else:
            raise EsError(
                400,
                "parsing_exception",
                "malformed sort format, within the sort array, an object, or an actual string are allowed",
            )
    rows: list[list[Any]] = [[] for _ in hits]
    for name, order, unmapped in keys:
        if order not in ("asc", "desc"):
            raise _illegal(f"Unknown SortOrder [{order}]")
        if name in ("_doc", "_score"):
            for n, row in enumerate(rows):
                row.append(n if name == "_doc" else 1.0)
            continue
        if name == "_id":
            raise _search_failure(
                expression,
                _illegal(
                    "Fielddata access on the _id field is disallowed, you can re-enable it by updating the "
                    "dynamic cluster setting: indices.id_field_data.enabled"
                ),
            )
        fields: dict[str, _Field | None] = {}
        for index, _doc_id, _doc in hits:
            if index.name not in fields:
                mapper, _ = index.mapping.lookup(name)
                fields[index.name] = mapper if isinstance(mapper, _Field) else None
        mapped = [f for f in fields.values() if f is not None]
        if hits and not mapped and unmapped is None:
            raise _search_failure(
                expression,
                EsError(400, "query_shard_exception", f"No mapping found for [{name}] in order to sort on"),
            )
        for candidate in mapped:
            if candidate.type in _TEXTS:
                raise _search_failure(
                    expression,
                    _illegal(
                        f"Fielddata is disabled on [{name}] in [{expression}]. Text fields are not optimised "
                        "for operations that require per-document field data like aggregations and sorting, "
                        "so these operations are disabled by default. Please use a keyword field instead. "
                        f"Alternatively, set fielddata=true on [{name}] in order to load field data by "
                        "uninverting the inverted index. Note that this can use significant memory."
                    ),
                )
        _, source_path = hits[0][0].mapping.lookup(name) if hits else (None, name)
        parts = source_path.split(".")
        for (index, _doc_id, doc), row in zip(hits, rows, strict=True):
            field = fields.get(index.name)
            values = []
            if field is not None:
                values = [
                    v
                    for v in (_normalize(field, x) for x in _source_values(doc.source, parts))
                    if v is not None
                ]
            if not values:
                numeric = field is not None and field.type in _NUMERIC_SORT_TYPES
                row.append((2**63 - 1 if order == "asc" else -(2**63)) if numeric else None)
                continue
            best = min(values) if order == "asc" else max(values)
            row.append(int(best) if isinstance(best, bool) else best)
    order_of = list(range(len(hits)))
    for position in range(len(keys) - 1, -1, -1):
        name, order, _ = keys[position]
        reverse = order == "desc"

        def key(n: int, position: int = position, reverse: bool = reverse) -> tuple[int, Any]:
            value = rows[n][position]
            missing = value is None
            # Missing values sort last in both directions.
            return (1 if missing else 0) if not reverse else (
                0 if missing else 1
            ), value if not missing else 0

        order_of.sort(key=key, reverse=reverse)
    return [hits[n] for n in order_of], [rows[n] for n in order_of]


# --------------------------------------------------------------------------------------------
# response filtering (filter_path)


def _filter_path(value: Any, spec: str) -> Any:
    includes = [p.split(".") for p in spec.split(",") if p and not p.startswith("-")]
    excludes = [p[1:].split(".") for p in spec.split(",") if p.startswith("-")]
    if includes:
        value = _filter_include(value, includes)
        if value is _MISSING:
            value = {}
    if excludes:
        value = _filter_exclude(value, excludes)
    return value


def _matches(key: str, pattern: str) -> bool:
    # Plain names and "*" need no glob machinery (they are nearly all of them, and a bulk
    # answer filters thousands of items).
    if pattern == "*":
        return True
    if "*" not in pattern and "?" not in pattern and "[" not in pattern:
        return key == pattern
    return fnmatch.fnmatchcase(key, pattern)


def _advance(key: str, patterns: list[list[str]]) -> tuple[bool, list[list[str]]]:
    full = False
    rest: list[list[str]] = []
    for pattern in patterns:
        head = pattern[0]
        if head == "**":
            rest.append(pattern)
            if len(pattern) == 1:
                full = True
            elif _matches(key, pattern[1]):
                if len(pattern) == 2:
                    full = True
                else:
                    rest.append(pattern[2:])
        elif _matches(key, head):
            if len(pattern) == 1:
                full = True
            else:
                rest.append(pattern[1:])
    return full, rest


def _filter_include(value: Any, patterns: list[list[str]]) -> Any:
    if isinstance(value, list):
        kept = [v for v in (_filter_include(item, patterns) for item in value) if v is not _MISSING]
        return kept if kept else _MISSING
    if not isinstance(value, dict):
        return _MISSING
    out: dict[str, Any] = {}
    for key, child in value.items():
        full, rest = _advance(key, patterns)
        if full:
            out[key] = child
        elif rest:
            sub = _filter_include(child, rest)
            if sub is not _MISSING:
                out[key] = sub
    return out if out else _MISSING


def _filter_exclude(value: Any, patterns: list[list[str]]) -> Any:
    if isinstance(value, list):
        return [_filter_exclude(item, patterns) for item in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, child in value.items():
        full, rest = _advance(key, patterns)
        if full:
            continue
        out[key] = _filter_exclude(child, rest) if rest else child
    return out


# --------------------------------------------------------------------------------------------
# HTTP


_JSON_TYPES: Final = frozenset(
    {
        "application/json",
        "application/x-ndjson",
        "application/vnd.elasticsearch+json",
        "application/vnd.elasticsearch+x-ndjson",
    }
)
_COMPAT = re.compile(r"compatible-with\s*=\s*(\d+)")
_BULK_PARAMS: Final = frozenset(
    {
        "refresh",
        "routing",
        "timeout",
        "wait_for_active_shards",
        "pipeline",
        "require_alias",
        "require_data_stream",
        "_source",
        "_source_includes",
        "_source_excludes",
        "list_executed_pipelines",
        "include_source_on_error",
        "pretty",
        "human",
        "error_trace",
        "filter_path",
    }
)
_WWW_AUTHENTICATE: Final = (
    ("WWW-Authenticate", 'Basic realm="security" charset="UTF-8"'),
    ("WWW-Authenticate", "ApiKey"),
)
_ANONYMOUS_DENIED: Final = (
    "unable to authenticate with provided credentials and anonymous access is not allowed for this request"
)
_FAULT_BODIES: Final = {
    429: ("es_rejected_execution_exception", "rejected execution of coordinating operation"),
    500: ("exception", "injected internal server error"),
    502: (
        "bad_gateway_exception",
        "injected bad gateway: the proxy in front of the cluster lost its upstream",
    ),
    503: (
        "cluster_block_exception",
        "blocked by: [SERVICE_UNAVAILABLE/1/state not recovered / initialized];",
    ),
    504: ("gateway_timeout_exception", "injected gateway timeout"),
}


def _fault_error(status: int, size: int) -> EsError:
    kind, reason = _FAULT_BODIES.get(status, ("status_exception", f"injected failure with status [{status}]"))
    if status == 429:
        reason = (
            f"{reason} [coordinating_and_primary_bytes=0, replica_bytes=0, all_bytes=0, "
            f"coordinating_operation_bytes={size}, max_coordinating_and_primary_bytes=107374182]"
        )
    return EsError(status, kind, reason)


def _item_fault(status: int) -> dict[str, Any]:
    if status == 429:
        return {
            "type": "es_rejected_execution_exception",
            "reason": "rejected execution of primary operation [coordinating_and_primary_bytes=0, "
            "replica_bytes=0, all_bytes=0, primary_operation_bytes=0, "
            "max_coordinating_and_primary_bytes=107374182]",
        }
    if status == 503:
        return {
            "type": "unavailable_shards_exception",
            "reason": "[0] primary shard is not active Timeout: [1m]",
        }
    kind, reason = _FAULT_BODIES.get(status, ("status_exception", f"injected failure with status [{status}]"))
    return {"type": kind, "reason": reason}


class _Response:
    __slots__ = ("body", "headers", "status")

    def __init__(self, status: int, body: Any, headers: Sequence[tuple[str, str]] = ()) -> None:
        self.status = status
        self.body = body
        self.headers = headers


class _HttpServer(ContractHTTPServer):
    worker_name = "es-contract-conn"

    def __init__(self, address: tuple[str, int], app: ElasticsearchContractServer) -> None:
        self.app = app
        super().__init__(address, _Handler)

    def finish_request(self, request: Any, client_address: Any) -> None:
        context = self.app.ssl_context
        if context is None:
            super().finish_request(request, client_address)
            return
        sock = cast(socket.socket, request)
        # A client stalled mid-handshake must not hold stop() up for ever.
        sock.settimeout(10)
        try:
            # Takes over the descriptor: ``sock`` is left detached, its shutdown a no-op.
            active = context.wrap_socket(sock, server_side=True)
        except (OSError, ssl.SSLError):
            return
        try:
            active.settimeout(None)
            # stop() must cut the TLS layer off, not the socket it no longer owns.
            if self.track(active):
                super().finish_request(active, client_address)
        finally:
            self.untrack(active)
            with contextlib.suppress(OSError):
                socket.socket.shutdown(active, socket.SHUT_RDWR)
            active.close()


class _Handler(ContractHandler):
    server_version = "contract"

    def do_GET(self) -> None:
        self._handle("GET")

    def do_HEAD(self) -> None:
        self._handle("HEAD")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks: list[bytes] = []
            while True:
                size_line = self.rfile.readline(1024)
                size = int(size_line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline(8)
            body = b"".join(chunks)
        else:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
        encoding = self.headers.get("Content-Encoding", "").lower()
        if body and encoding == "gzip":
            body = gzip.decompress(body)
        elif body and encoding == "deflate":
            body = zlib.decompress(body)
        return body

    def _handle(self, method: str) -> None:
        app = cast(_HttpServer, self.server).app
        try:
            body = self._read_body()
        except (ValueError, OSError, EOFError, zlib.error):
            self._send(
                method, _Response(400, {"error": "failed to read the request body", "status": 400}), None
            )
            self.close_connection = True
            return
        response = app._dispatch(method, self.path, self.headers, body)
        if response is None:
            self.close_connection = True
            return
        self._send(method, response, self.headers.get("Accept"))

    def _send(self, method: str, response: _Response, accept: str | None) -> None:
        compat = _COMPAT.search(accept or "")
        if accept and "vnd.elasticsearch" in accept and compat:
            content_type = f"application/vnd.elasticsearch+json;compatible-with={compat.group(1)}"
        else:
            content_type = "application/json"
        payload = b"" if response.body is None else orjson.dumps(response.body)
        if method == "HEAD":
            payload = b""
        try:
            phrase = HTTPStatus(response.status).phrase
        except ValueError:
            phrase = "Unknown"
        head = [
            f"HTTP/1.1 {response.status} {phrase}",
            "X-Elastic-Product: Elasticsearch",
            f"Content-Type: {content_type}",
            f"Content-Length: {len(payload)}",
        ]
        head.extend(f"{name}: {value}" for name, value in response.headers)
        if self.close_connection:
            head.append("Connection: close")
        # One write: headers and body in separate segments would meet Nagle and delayed ACKs.
        self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + payload)


# --------------------------------------------------------------------------------------------
# the server


class ElasticsearchContractServer(BackgroundServer):
    """An in-process Elasticsearch 8 stand-in (see the module docstring).

    Data lives on this object, so ``stop()`` followed by ``start()`` (same port) brings the
    "cluster" back with everything it held."""

    accept_thread_name = "es-contract-accept"

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        username: str | None = None,
        password: str | None = None,
        api_key: str | tuple[str, str] | None = None,
        ssl_context: ssl.SSLContext | None = None,
        cluster_name: str = "contract-cluster",
        node_name: str = "contract-node-1",
    ) -> None:
        if (username is None) != (password is None):
            raise ValueError("username and password go together")
        super().__init__(host, port)
        self.username = username
        self.password = password
        if isinstance(api_key, tuple):
            api_key = base64.b64encode(f"{api_key[0]}:{api_key[1]}".encode()).decode()
        self.api_key = api_key
        self.ssl_context = ssl_context
        self.cluster_name = cluster_name
        self.node_name = node_name
        self.cluster_uuid = _new_uuid()
        self._cluster = _Cluster()
        self._lock = threading.Lock()
        self._faults = threading.Lock()
        self._fail_remaining = 0
        self._fail_status = 429
        self._fail_paths: tuple[str, ...] = ("_bulk",)
        self._reject_remaining = 0
        self._reject_status = 429
        self._delay_s = 0.0
        self._reset_counters()

    # -- lifecycle

    def _make_server(self, address: tuple[str, int]) -> _HttpServer:
        return _HttpServer(address, self)

    @property
    def url(self) -> str:
        scheme = "https" if self.ssl_context is not None else "http"
        return f"{scheme}://{self.host}:{self._port}"

    # -- fault injection

    def fail_next_requests(self, n: int, status: int = 429, paths: str | Sequence[str] = "_bulk") -> None:
        """The next ``n`` requests whose path contains one of ``paths`` ("" or "*": any) get
        ``status`` with Elasticsearch's error body for it; status 0 closes the connection
        without an answer instead."""
        with self._faults:
            self._fail_remaining = n
            self._fail_status = status
            self._fail_paths = (paths,) if isinstance(paths, str) else tuple(paths)

    def reject_next_items(self, n: int, status: int = 429) -> None:
        """The next ``n`` bulk items (across requests) fail on their own with ``status``
        (429: ``es_rejected_execution_exception``) while the rest of each bulk succeeds."""
        with self._faults:
            self._reject_remaining = n
            self._reject_status = status

    def delay(self, ms: float) -> None:
        """Every bulk request waits ``ms`` before it is processed (0 turns it off)."""
        with self._faults:
            self._delay_s = max(ms, 0) / 1000.0

    def clear_faults(self) -> None:
        with self._faults:
            self._fail_remaining = 0
            self._reject_remaining = 0
            self._delay_s = 0.0

    # -- observation

    def _reset_counters(self) -> None:
        self._bulk_requests = 0
        self._bulk_items: list[int] = []
        self._bulk_in_flight = 0
        self._max_concurrent_bulks = 0
        self._failed_requests = 0
        self._rejected_items = 0
        self._requests = 0

    def reset_observations(self) -> None:
        with self._faults:
            in_flight = self._bulk_in_flight
            self._reset_counters()
            self._bulk_in_flight = in_flight

    @property
    def bulk_requests(self) -> int:
        """Bulk requests received, injected failures included."""
        with self._faults:
            return self._bulk_requests

    @property
    def bulk_items(self) -> list[int]:
        """Item count of each bulk request that was processed, in arrival order."""
        with self._faults:
            return list(self._bulk_items)

    @property
    def max_concurrent_bulks(self) -> int:
        with self._faults:
            return self._max_concurrent_bulks

    def document_counts(self) -> dict[str, int]:
        """Live documents per index, data streams counted under their own name."""
        with self._lock:
            cluster = self._cluster
            counts = {n: len(i.docs) for n, i in cluster.indices.items() if i.data_stream is None}
            for name, stream in cluster.data_streams.items():
                counts[name] = sum(len(i.docs) for i in stream.indices)
            return counts

    def document_count(self, index: str) -> int:
        with self._lock:
            return sum(len(i.docs) for i in self._cluster.resolve(index, allow_missing=True))

    def documents(self, index: str) -> dict[str, dict[str, Any]]:
        """``{id: _source}`` of an index or data stream; the sources are the server's own
        objects, so read them, do not change them."""
        with self._lock:
            out: dict[str, dict[str, Any]] = {}
            for idx in self._cluster.resolve(index, allow_missing=True):
                out.update((doc_id, doc.source) for doc_id, doc in idx.docs.items())
            return out

    def mapping(self, index: str) -> dict[str, Any]:
        with self._lock:
            return self._cluster.single_index(index).mapping.render()

    def observations(self) -> dict[str, Any]:
        counts = self.document_counts()
        with self._faults:
            return {
                "requests": self._requests,
                "bulk_requests": self._bulk_requests,
                "bulk_items": list(self._bulk_items),
                "max_concurrent_bulks": self._max_concurrent_bulks,
                "bulk_in_flight": self._bulk_in_flight,
                "failed_requests": self._failed_requests,
                "rejected_items": self._rejected_items,
                "documents": counts,
            }

    def reset(self) -> None:
        """Forgets every index, data stream and user template, faults and observations."""
        with self._lock:
            self._cluster = _Cluster()
        self.clear_faults()
        self.reset_observations()

    # -- request handling (handler threads)

    def _dispatch(self, method: str, target: str, headers: Any, body: bytes) -> _Response | None:
        split = urlsplit(target)
        path = split.path or "/"
        params = dict(parse_qsl(split.query, keep_blank_values=True))
        try:
            if path.startswith("/_contract/") or path == "/_contract":
                return self._admin(method, path, body)
            with self._faults:
                self._requests += 1
            self._check_auth(headers.get("Authorization"), target)
            self._check_media(headers, body)
            fault = self._take_fault(path)
            is_bulk = path.endswith("/_bulk")
            if is_bulk:
                with self._faults:
                    self._bulk_requests += 1
            if fault is not None:
                with self._faults:
                    self._failed_requests += 1
                if fault == 0:
                    return None
                raise _fault_error(fault, len(body))
            response = self._route(method, path, params, body)
        except _Drop:
            return None
        except EsError as exc:
            response = _Response(exc.status, exc.body(), exc.headers)
        except _PlainError as exc:
            response = _Response(exc.status, {"error": exc.message, "status": exc.status})
        except Exception as exc:  # a bug here must reach the client as an error, not a hang
            traceback.print_exc()
            error = EsError(500, "exception", f"contract server failure: {exc!r}")
            response = _Response(500, error.body())
        if "filter_path" in params and isinstance(response.body, dict):
            response.body = _filter_path(response.body, params["filter_path"])
        return response

    def _check_auth(self, header: str | None, target: str) -> None:
        if self.username is None and self.api_key is None:
            return
        request = f"REST request [{target}]"
        if not header:
            raise EsError(
                401,
                "security_exception",
                f"missing authentication credentials for {request}",
                extra={"header": {"WWW-Authenticate": [v for _, v in _WWW_AUTHENTICATE]}},
                headers=_WWW_AUTHENTICATE,
            )
        scheme, _, credentials = header.partition(" ")
        scheme = scheme.lower()
        credentials = credentials.strip()
        if scheme == "basic" and self.username is not None:
            try:
                user, _, secret = base64.b64decode(credentials, validate=True).decode().partition(":")
            except (ValueError, UnicodeDecodeError):
                user, secret = "", None
            if hmac.compare_digest(user.encode(), self.username.encode()) and hmac.compare_digest(
                (secret or "").encode(), (self.password or "").encode()
            ):
                return
            reason = f"unable to authenticate user [{user}] for {request}"
        elif scheme == "apikey" and self.api_key is not None:
            if hmac.compare_digest(credentials.encode(), self.api_key.encode()):
                return
            reason = _ANONYMOUS_DENIED
        else:
            reason = _ANONYMOUS_DENIED
        raise EsError(
            401,
            "security_exception",
            reason,
            extra={"header": {"WWW-Authenticate": [v for _, v in _WWW_AUTHENTICATE]}},
            headers=_WWW_AUTHENTICATE,
        )

    def _check_media(self, headers: Any, body: bytes) -> None:
        content_type = headers.get("Content-Type")
        accept = headers.get("Accept")
        versions: dict[str, str] = {}
        for name, value in (("Content-Type", content_type), ("Accept", accept)):
            match = _COMPAT.search(value or "")
            if match:
                versions[name] = match.group(1)
                if match.group(1) not in ("7", "8"):
                    raise EsError(
                        400,
                        "media_type_header_exception",
                        "Invalid media-type value on headers [Content-Type, Accept]",
                        caused_by={
                            "type": "status_exception",
                            "reason": f"{name} version must be either version 8 or 7, but found "
                            f"{match.group(1)}. {name}={value}",
                        },
                    )
        if body and "Content-Type" in versions and "Accept" in versions and len(set(versions.values())) > 1:
            raise EsError(
                400,
                "media_type_header_exception",
                "Invalid media-type value on headers [Content-Type, Accept]",
                caused_by={
                    "type": "status_exception",
                    "reason": "A compatible version is required on both Content-Type and Accept headers if "
                    "either one has requested a compatible version and the compatible versions must match. "
                    f"Accept={accept}, Content-Type={content_type}",
                },
            )
        if body:
            if not content_type:
                raise _PlainError(406, "Content-Type header is missing")
            base = content_type.split(";")[0].strip().lower()
            if base not in _JSON_TYPES:
                raise _PlainError(406, f"Content-Type header [{content_type}] is not supported")

    def _take_fault(self, path: str) -> int | None:
        with self._faults:
            if self._fail_remaining <= 0:
                return None
            if not any(p in ("", "*") or p in path for p in self._fail_paths):
                return None
            self._fail_remaining -= 1
            return self._fail_status

    def _admin(self, method: str, path: str, body: bytes) -> _Response:
        parts = [unquote(p) for p in path.strip("/").split("/")][1:]
        try:
            args: dict[str, Any] = orjson.loads(body) if body else {}
        except orjson.JSONDecodeError:
            raise _illegal("admin request bodies are JSON objects") from None
        if not isinstance(args, dict):
            raise _illegal("admin request bodies are JSON objects")
        op = parts[0] if parts else ""
        ack = {"acknowledged": True}
        if op == "fail_next_requests":
            self.fail_next_requests(
                int(args.get("n", 1)), int(args.get("status", 429)), args.get("paths", "_bulk")
            )
            return _Response(200, ack)
        if op == "reject_next_items":
            self.reject_next_items(int(args.get("n", 1)), int(args.get("status", 429)))
            return _Response(200, ack)
        if op == "delay":
            self.delay(float(args.get("ms", 0)))
            return _Response(200, ack)
        if op == "clear_faults":
            self.clear_faults()
            return _Response(200, ack)
        if op == "observations":
            return _Response(200, self.observations())
        if op == "reset_observations":
            self.reset_observations()
            return _Response(200, ack)
        if op == "reset":
            self.reset()
            return _Response(200, ack)
        if op == "documents":
            index = parts[1] if len(parts) > 1 else str(args.get("index", ""))
            return _Response(200, self.documents(index))
        raise _PlainError(400, f"no handler found for uri [{path}] and method [{method}]")

    # -- routing

    def _route(self, method: str, path: str, params: dict[str, str], body: bytes) -> _Response:
        parts = [unquote(p) for p in path.strip("/").split("/")] if path.strip("/") else []
        n = len(parts)
        first = parts[0] if parts else ""

        def allow(*methods: str) -> None:
            if method not in methods:
                raise _PlainError(
                    405,
                    f"Incorrect HTTP method for uri [{path}] and method [{method}], allowed: "
                    f"[{', '.join(methods)}]",
                )

        if n == 0:
            allow("GET", "HEAD")
            return _Response(200, self._info())
        if first == "_bulk" and n == 1:
            allow("POST", "PUT")
            return self._bulk(None, params, body, path)
        if first == "_cluster" and n >= 2 and parts[1] == "health":
            allow("GET")
            return _Response(200, self._health())
        if first == "_data_stream":
            return self._data_stream_route(method, parts[1:], allow)
        if first == "_index_template":
            return self._template_route(method, parts[1:], body, allow, component=False)
        if first == "_component_template":
            return self._template_route(method, parts[1:], body, allow, component=True)
        if first in ("_search", "_count", "_refresh", "_mapping", "_settings") and n == 1:
            return self._index_route(method, ["*", first], params, body, allow, path)
        return self._index_route(method, parts, params, body, allow, path)

    def _json(self, body: bytes) -> Any:
        if not body:
            return None
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            raise EsError(400, "x_content_parse_exception", f"[1:{exc.colno}] {exc.msg}") from None

    def _index_route(
        self,
        method: str,
        parts: list[str],
        params: dict[str, str],
        body: bytes,
        allow: Callable[..., None],
        path: str,
    ) -> _Response:
        name = parts[0]
        n = len(parts)
        cluster = self._cluster
        if n == 1:
            allow("GET", "HEAD", "PUT", "DELETE")
            if method == "PUT":
                parsed = self._json(body)
                with self._lock:
                    return _Response(200, cluster.create_index_api(name, parsed))
            with self._lock:
                if method == "DELETE":
                    return _Response(200, cluster.delete_index(name))
                if method == "HEAD":
                    try:
                        found = bool(cluster.resolve(name))
                    except EsError:
                        found = False
                    return _Response(200 if found else 404, None)
                return _Response(200, {i.name: i.describe() for i in cluster.resolve(name)})
        action = parts[1]
        if action == "_bulk" and n == 2:
            allow("POST", "PUT")
            return self._bulk(name, params, body, path)
        if action in ("_doc", "_create", "_update") and n in (2, 3):
            return self._document_route(
                method, name, action, parts[2] if n == 3 else None, params, body, allow
            )
        if action == "_source" and n == 3:
            allow("GET", "HEAD")
            with self._lock:
                status, doc = cluster.get_doc(name, parts[2])
            if status == 404:
                raise EsError(
                    404,
                    "resource_not_found_exception",
                    f"Document not found [{doc['_index']}]/[{parts[2]}]",
                )
            return _Response(200, doc["_source"])
        if n != 2:
            raise _PlainError(400, f"no handler found for uri [{path}] and method [{method}]")
        if action == "_mapping":
            allow("GET", "PUT", "POST")
            if method == "GET":
                with self._lock:
                    return _Response(
                        200, {i.name: {"mappings": i.mapping.render()} for i in cluster.resolve(name)}
                    )
            parsed = self._json(body)
            with self._lock:
                return _Response(200, cluster.put_mapping(name, parsed))
        if action == "_settings":
            allow("GET", "PUT")
            if method == "GET":
                with self._lock:
                    return _Response(
                        200, {i.name: {"settings": _nest_settings(i.settings)} for i in cluster.resolve(name)}
                    )
            parsed = self._json(body)
            with self._lock:
                return _Response(200, cluster.put_settings(name, parsed))
        if action in ("_refresh", "_flush"):
            allow("GET", "POST")
            with self._lock:
                count = len(cluster.resolve(name))
            return _Response(200, {"_shards": {"total": 2 * count, "successful": count, "failed": 0}})
        if action == "_count":
            allow("GET", "POST")
            parsed = self._json(body)
            with self._lock:
                return _Response(200, cluster.count(name, parsed))
        if action == "_search":
            allow("GET", "POST")
            parsed = self._json(body) or {}
            if not isinstance(parsed, dict):
                raise EsError(400, "parsing_exception", "Expected [START_OBJECT] but found [START_ARRAY]")
            with self._lock:
                return _Response(200, cluster.search(name, parsed, params))
        if action == "_rollover":
            allow("POST")
            with self._lock:
                stream = cluster.data_streams.get(name)
                if stream is None:
                    raise _illegal(f"rollover target [{name}] does not exist or is not a data stream")
                old = stream.write_index.name
                new = cluster.roll_over(stream).name
            return _Response(
                200,
                {
                    "acknowledged": True,
                    "shards_acknowledged": True,
                    "old_index": old,
                    "new_index": new,
                    "rolled_over": True,
                    "dry_run": False,
                    "lazy": False,
                    "conditions": {},
                },
            )
        raise _PlainError(400, f"no handler found for uri [{path}] and method [{method}]")

    def _document_route(
        self,
        method: str,
        name: str,
        action: str,
        doc_id: str | None,
        params: dict[str, str],
        body: bytes,
        allow: Callable[..., None],
    ) -> _Response:
        if action == "_doc" and method in ("GET", "HEAD") and doc_id is not None:
            with self._lock:
                status, doc = self._cluster.get_doc(name, doc_id)
            return _Response(status, doc)
        if action == "_doc":
            if doc_id is None:
                allow("POST")
            else:
                allow("GET", "HEAD", "PUT", "POST", "DELETE")
            kind = (
                "delete"
                if method == "DELETE"
                else ("create" if params.get("op_type") == "create" else "index")
            )
        elif action == "_create":
            allow("PUT", "POST")
            kind = "create"
        else:
            allow("POST")
            kind = "update"
        op = _Op(kind)
        op.index = name
        op.id = doc_id
        meta = {
            k: v
            for k, v in params.items()
            if k in ("version", "version_type", "if_seq_no", "if_primary_term", "pipeline", "require_alias")
        }
        _parse_meta(op, meta, 1, name)
        if kind == "update":
            op.source = _parse_update_body(body) if body else _MISSING
        elif kind != "delete":
            if not body:
                raise EsError(400, "parse_exception", "request body is required")
            op.raw = body
            try:
                op.source = orjson.loads(body)
            except orjson.JSONDecodeError as exc:
                op.source = _BadSource(exc.msg, exc.colno)
        _validate_ops([op])
        refresh = params.get("refresh")
        with self._lock:
            result = self._cluster.execute(op, time.monotonic())
        if refresh in ("", "true"):
            result = {**result, "forced_refresh": True}
        status = int(result.pop("status"))
        return _Response(status, result)

    def _data_stream_route(self, method: str, rest: list[str], allow: Callable[..., None]) -> _Response:
        cluster = self._cluster
        if not rest:
            allow("GET")
            rest = ["*"]
        if len(rest) != 1:
            raise _PlainError(
                400, f"no handler found for uri [/_data_stream/{'/'.join(rest)}] and method [{method}]"
            )
        allow("GET", "PUT", "DELETE")
        name = rest[0]
        with self._lock:
            if method == "PUT":
                cluster.create_data_stream(name)
                return _Response(200, {"acknowledged": True})
            if method == "DELETE":
                return _Response(200, cluster.delete_data_streams(name))
            names = cluster.data_stream_names(name, allow_missing="*" in name or name == "_all")
            streams = []
            for ds_name in names:
                stream = cluster.data_streams[ds_name]
                template = cluster.templates.get(stream.template)
                streams.append(stream.describe(template.body.get("_meta") if template else None))
            return _Response(200, {"data_streams": streams})

    def _template_route(
        self, method: str, rest: list[str], body: bytes, allow: Callable[..., None], *, component: bool
    ) -> _Response:
        cluster = self._cluster
        kind = "component_template" if component else "index_template"
        store: dict[str, Any] = cluster.components if component else cluster.templates
        if not rest:
            allow("GET")
            rest = ["*"]
        allow("GET", "HEAD", "PUT", "POST", "DELETE")
        name = rest[0]
        with self._lock:
            if method in ("PUT", "POST"):
                parsed = self._json(body)
                if component:
                    cluster.put_component(name, parsed)
                else:
                    cluster.put_template(name, parsed)
                return _Response(200, {"acknowledged": True})
            names = [n for n in store if fnmatch.fnmatchcase(n, name)]
            if not names and "*" not in name:
                raise EsError(
                    404,
                    "resource_not_found_exception",
                    f"{kind.replace('_', ' ')} matching [{name}] not found",
                )
            if method == "HEAD":
                return _Response(200 if names else 404, None)
            if method == "DELETE":
                for found in names:
                    del store[found]
                return _Response(200, {"acknowledged": True})
            if component:
                items = [{"name": n, "component_template": store[n]} for n in names]
            else:
                items = [{"name": n, "index_template": store[n].body} for n in names]
            return _Response(200, {f"{kind}s": items})

    # -- endpoints

    def _info(self) -> dict[str, Any]:
        return {
            "name": self.node_name,
            "cluster_name": self.cluster_name,
            "cluster_uuid": self.cluster_uuid,
            "version": {
                "number": VERSION,
                "build_flavor": "default",
                "build_type": "tar",
                "build_hash": "1a77947f34deddb41af25e6f0ddb8e830159c179",
                "build_date": "2024-08-05T10:05:34.233336849Z",
                "build_snapshot": False,
                "lucene_version": _LUCENE,
                "minimum_wire_compatibility_version": "7.17.0",
                "minimum_index_compatibility_version": "7.0.0",
            },
            "tagline": "You Know, for Search",
        }

    def _health(self) -> dict[str, Any]:
        with self._lock:
            count = len(self._cluster.indices)
        return {
            "cluster_name": self.cluster_name,
            "status": "yellow" if count else "green",
            "timed_out": False,
            "number_of_nodes": 1,
            "number_of_data_nodes": 1,
            "active_primary_shards": count,
            "active_shards": count,
            "relocating_shards": 0,
            "initializing_shards": 0,
            "unassigned_shards": count,
            "delayed_unassigned_shards": 0,
            "number_of_pending_tasks": 0,
            "number_of_in_flight_fetch": 0,
            "task_max_waiting_in_queue_millis": 0,
            "active_shards_percent_as_number": 50.0 if count else 100.0,
        }

    def _bulk(self, default_index: str | None, params: dict[str, str], body: bytes, path: str) -> _Response:
        started = time.perf_counter()
        for key in params:
            if key not in _BULK_PARAMS:
                raise _illegal(f"request [{path}] contains unrecognized parameter: [{key}]")
        refresh = params.get("refresh")
        if refresh is not None and refresh not in ("", "true", "false", "wait_for"):
            raise _illegal(f"Unknown value for refresh: [{refresh}].")
        with self._faults:
            self._bulk_in_flight += 1
            self._max_concurrent_bulks = max(self._max_concurrent_bulks, self._bulk_in_flight)
            delay = self._delay_s
        try:
            if delay and self._stopping.wait(delay):
                raise _Drop
            return self._bulk_inner(default_index, params, body, started, refresh in ("", "true"))
        finally:
            with self._faults:
                self._bulk_in_flight -= 1

    def _bulk_inner(
        self, default_index: str | None, params: dict[str, str], body: bytes, started: float, forced: bool
    ) -> _Response:
        default_pipeline = params.get("pipeline")
        ops = _parse_bulk(body, default_index)
        if default_pipeline is not None:
            for op in ops:
                if op.pipeline is None and op.action != "delete":
                    op.pipeline = default_pipeline
        if params.get("require_alias") in ("", "true"):
            for op in ops:
                op.require_alias = True
        _validate_ops(ops)
        with self._faults:
            rejected = min(self._reject_remaining, len(ops))
            self._reject_remaining -= rejected
            reject_status = self._reject_status
            self._rejected_items += rejected
            self._bulk_items.append(len(ops))
        items: list[dict[str, Any]] = []
        errors = False
        now = time.monotonic()
        with self._lock:
            execute = self._cluster.execute
            for n, op in enumerate(ops):
                if n < rejected:
                    items.append(
                        {
                            op.action: {
                                "_index": op.index,
                                "_id": op.id,
                                "status": reject_status,
                                "error": _item_fault(reject_status),
                            }
                        }
                    )
                    errors = True
                    continue
                try:
                    result = execute(op, now)
                except EsError as exc:
                    errors = True
                    index = exc.extra.get("index")
                    items.append(
                        {
                            op.action: {
                                "_index": index or self._item_index(op),
                                "_id": op.id,
                                "status": exc.status,
                                "error": exc.error_object(),
                            }
                        }
                    )
                    continue
                if forced:
                    result = {**result, "forced_refresh": True}
                items.append({op.action: result})
        took = int((time.perf_counter() - started) * 1000)
        return _Response(200, {"errors": errors, "took": took, "items": items})

    def _item_index(self, op: _Op) -> str | None:
        """Failed items name the concrete index they were meant for (a data stream's write index)."""
        name = op.index
        stream = self._cluster.data_streams.get(name or "")
        if stream is not None and op.action == "create":
            return stream.write_index.name
        return name


# --------------------------------------------------------------------------------------------
# a server in its own process


class ElasticsearchContractProcess(Lifecycle):
    """``python -m tests.contract_servers.elasticsearch`` as a child process, so a benchmark's
    server does not share the GIL with the code under test. Faults and observations go
    through ``admin()`` (the ``/_contract/...`` endpoints)."""

    def __init__(
        self,
        port: int = 0,
        *,
        username: str | None = None,
        password: str | None = None,
        api_key: str | None = None,
    ) -> None:
        self._requested_port = port
        self.port = port
        self.username = username
        self.password = password
        self.api_key = api_key
        self.proc: subprocess.Popen[str] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        args = [
            sys.executable,
            "-m",
            "tests.contract_servers.elasticsearch",
            "--port",
            str(self._requested_port),
        ]
        if self.username is not None:
            args += ["--username", self.username, "--password", self.password or ""]
        if self.api_key is not None:
            args += ["--api-key", self.api_key]
        return args

    def start(self, timeout: float = 30.0) -> Self:
        self.proc = subprocess.Popen(self.command(), cwd=_ROOT, stdout=subprocess.PIPE, text=True)
        port = listening_port(self.proc, timeout)
        if port is None:
            self.stop()
            raise RuntimeError("the Elasticsearch contract server did not start")
        self.port = port
        # Later ports (a restart on the same one) reuse the port the first start got.
        self._requested_port = port
        return self

    def admin(self, op: str, **payload: Any) -> Any:
        request = urllib.request.Request(
            f"{self.url}/_contract/{op}",
            data=orjson.dumps(payload),
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return orjson.loads(response.read())

    def stop(self, timeout: float = 15.0) -> int | None:
        proc, self.proc = self.proc, None
        return None if proc is None else end_process(proc, timeout)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.contract_servers.elasticsearch", description=__doc__
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--username")
    parser.add_argument("--password")
    parser.add_argument("--api-key", help="the encoded key clients send as 'ApiKey <key>'")
    args = parser.parse_args(argv)
    server = ElasticsearchContractServer(
        args.host, args.port, username=args.username, password=args.password, api_key=args.api_key
    ).start()
    try:
        # Not watching stdin: ElasticsearchContractProcess does not pipe it, so it is the parent's own.
        serve_until_signalled(server.port, watch_parent=False)
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
