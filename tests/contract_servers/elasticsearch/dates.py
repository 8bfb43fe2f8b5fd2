"""The Elasticsearch contract server: dates."""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Final

from tests.contract_servers.elasticsearch.errors import _MappingError

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
