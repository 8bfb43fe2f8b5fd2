"""Java ``SimpleDateFormat`` patterns, formatting and parsing in UTC.

Kafka's ``TimestampConverter`` and ``TimestampRouter`` take their ``format`` /
``timestamp.format`` as SimpleDateFormat patterns (``yyyy-MM-dd'T'HH:mm:ss.SSSXXX``)
with the time zone set to UTC; users' configs carry those patterns, so they are
read here as Java reads them rather than translated to ``strftime`` (whose
directives differ: ``S`` is milliseconds in Java, ``yy`` pads, ``X`` prints ``Z``).

Supported letters: G y Y M L w W D d F E u a H k K h m s S z Z X, ``'quoted text'``
and ``''`` for a quote. Any other ASCII letter is refused as Java refuses it
("Illegal pattern character 'q'").

Parsing follows SimpleDateFormat's defaults: lenient (``2024-02-30`` is March 1st),
unset fields from 1970-01-01T00:00:00.000, text after the pattern ignored, numeric
fields that abut (``yyyyMMdd``) read with their pattern width, a two-digit ``yy``
year placed within 80 years before and 20 after today, zone fields (``z``, ``Z``,
``X``) honoured and the result returned in UTC.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["JavaDateFormat"]

_LETTERS = set("GyYMLwWDdFEuaHkKhmsSzZX")
_NUMERIC = set("yYwWDdFuHkKhmsS")
_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_MONTH_NUMBERS = {name[:3].lower(): i for i, name in enumerate(_MONTHS, 1)}
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_UTC = datetime.UTC
_MS_PER_DAY = 86_400_000

# How long a formatted string stays the same, by the finest field in the pattern: lets
# a formatter reuse its last result (TimestampRouter formats a day per record otherwise).
_PERIOD_MS = {
    "S": 1,
    "s": 1000,
    "m": 60_000,
    "H": 3_600_000,
    "k": 3_600_000,
    "K": 3_600_000,
    "h": 3_600_000,
    "a": 43_200_000,  # AM turns to PM at noon
}


@dataclass(frozen=True, slots=True)
class _Field:
    letter: str
    count: int


_Token = str | _Field


def _tokenize(pattern: str) -> list[_Token]:
    tokens: list[_Token] = []
    literal: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "'":
            if i + 1 < n and pattern[i + 1] == "'":
                literal.append("'")
                i += 2
                continue
            end = i + 1
            text: list[str] = []
            while True:
                if end >= n:
                    raise ValueError(f"Unterminated quote in pattern {pattern!r}")
                if pattern[end] == "'":
                    if end + 1 < n and pattern[end + 1] == "'":
                        text.append("'")
                        end += 2
                        continue
                    break
                text.append(pattern[end])
                end += 1
            literal.extend(text)
            i = end + 1
        elif ("a" <= c <= "z") or ("A" <= c <= "Z"):
            if c not in _LETTERS:
                raise ValueError(f"Illegal pattern character '{c}'")
            j = i
            while j < n and pattern[j] == c:
                j += 1
            if literal:
                tokens.append("".join(literal))
                literal = []
            if c == "X" and j - i > 3:
                raise ValueError(f"invalid ISO 8601 format: length={j - i}")
            tokens.append(_Field(c, j - i))
            i = j
        else:
            literal.append(c)
            i += 1
    if literal:
        tokens.append("".join(literal))
    return tokens


def _pad(value: int, count: int) -> str:
    return str(value).zfill(count)


def _us_week_of_year(d: datetime.datetime) -> int:
    # US locale (Java's default for these patterns): weeks start on Sunday and week 1 is
    # the one containing January 1st, so the last days of December can be week 1.
    day = d.date()
    sunday = day - datetime.timedelta(days=(day.weekday() + 1) % 7)
    if (sunday + datetime.timedelta(days=6)).year > day.year:
        return 1
    jan1 = datetime.date(day.year, 1, 1)
    return (day.toordinal() - jan1.toordinal() + (jan1.weekday() + 1) % 7) // 7 + 1


def _us_week_year(d: datetime.datetime) -> int:
    # The year of the Saturday that ends the date's Sunday-to-Saturday week: the week holding
    # January 1st is week 1 of its year, so late December can belong to the next week-year.
    day = d.date()
    sunday = day - datetime.timedelta(days=(day.weekday() + 1) % 7)
    return (sunday + datetime.timedelta(days=6)).year


def _formatter(token: _Token) -> Callable[[datetime.datetime], str]:
    if isinstance(token, str):
        return lambda d, s=token: s  # type: ignore[misc]
    c, n = token.letter, token.count
    if c == "G":
        return lambda d: "AD"
    if c in "yY":
        year = _us_week_year if c == "Y" else (lambda d: d.year)
        if n == 2:
            return lambda d: _pad(year(d) % 100, 2)
        return lambda d: _pad(year(d), n)
    if c in "ML":
        if n >= 4:
            return lambda d: _MONTHS[d.month - 1]
        if n == 3:
            return lambda d: _MONTHS[d.month - 1][:3]
        return lambda d: _pad(d.month, n)
    if c == "w":
        return lambda d: _pad(_us_week_of_year(d), n)
    if c == "W":
        return lambda d: _pad((d.day - 1 + (d.replace(day=1).weekday() + 1) % 7) // 7 + 1, n)
    if c == "D":
        return lambda d: _pad(d.timetuple().tm_yday, n)
    if c == "d":
        return lambda d: _pad(d.day, n)
    if c == "F":
        return lambda d: _pad((d.day - 1) // 7 + 1, n)
    if c == "E":
        if n >= 4:
            return lambda d: _DAYS[d.weekday()]
        return lambda d: _DAYS[d.weekday()][:3]
    if c == "u":
        return lambda d: _pad(d.isoweekday(), n)
    if c == "a":
        return lambda d: "AM" if d.hour < 12 else "PM"
    if c == "H":
        return lambda d: _pad(d.hour, n)
    if c == "k":
        return lambda d: _pad(d.hour or 24, n)
    if c == "K":
        return lambda d: _pad(d.hour % 12, n)
    if c == "h":
        return lambda d: _pad(d.hour % 12 or 12, n)
    if c == "m":
        return lambda d: _pad(d.minute, n)
    if c == "s":
        return lambda d: _pad(d.second, n)
    if c == "S":
        return lambda d: _pad(d.microsecond // 1000, n)
    if c == "z":
        return (lambda d: "Coordinated Universal Time") if n >= 4 else (lambda d: "UTC")
    if c == "Z":
        return lambda d: "+0000"
    assert c == "X"
    return lambda d: "Z"


_ZONE = r"(?:Z|UTC|GMT(?:[+-]\d{1,2}(?::?\d{2})?)?|[+-]\d{2}(?::?\d{2})?)"


def _zone_offset(text: str) -> datetime.timedelta:
    if text in ("Z", "UTC", "GMT"):
        return datetime.timedelta()
    if text.startswith("GMT"):
        text = text[3:]
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    if len(digits) <= 2:
        hours, minutes = int(digits), 0
    else:
        hours, minutes = int(digits[:-2]), int(digits[-2:])
    return sign * datetime.timedelta(hours=hours, minutes=minutes)


class JavaDateFormat:
    """One SimpleDateFormat pattern, compiled for formatting and parsing in UTC."""

    __slots__ = ("_fields", "_has_day", "_last", "_parts", "_period", "_regex", "pattern")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        tokens = _tokenize(pattern)
        self._parts = [_formatter(t) for t in tokens]
        letters = {t.letter for t in tokens if isinstance(t, _Field)}
        self._period = min((_PERIOD_MS.get(c, _MS_PER_DAY) for c in letters), default=_MS_PER_DAY)
        if letters & {"w", "W", "Y", "u", "E", "F", "D"}:
            self._period = min(self._period, _MS_PER_DAY)
        self._last: tuple[int, str] | None = None
        self._regex, self._fields = self._compile(tokens)
        self._has_day = "d" in letters

    # -- formatting ------------------------------------------------------------------

    def format(self, value: datetime.datetime) -> str:
        """``value`` (aware, or naive meaning UTC) as text in UTC."""
        if value.tzinfo is None:
            value = value.replace(tzinfo=_UTC)
        elif value.utcoffset():
            value = value.astimezone(_UTC)
        return "".join([part(value) for part in self._parts])

    def format_millis(self, epoch_ms: int) -> str:
        """Epoch milliseconds as text in UTC, reusing the last result while it cannot change."""
        bucket = epoch_ms // self._period
        last = self._last
        if last is not None and last[0] == bucket:
            return last[1]
        text = self.format(_EPOCH + datetime.timedelta(milliseconds=epoch_ms))
        self._last = (bucket, text)
        return text

    # -- parsing ---------------------------------------------------------------------

    @staticmethod
    def _compile(tokens: list[_Token]) -> tuple[re.Pattern[str], list[tuple[str, _Field]]]:
        regex: list[str] = []
        fields: list[tuple[str, _Field]] = []
        for i, token in enumerate(tokens):
            if isinstance(token, str):
                regex.append(re.escape(token))
                continue
            group = f"g{i}"
            c, n = token.letter, token.count
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            abutting = isinstance(nxt, _Field) and (
                nxt.letter in _NUMERIC or (nxt.letter in "ML" and nxt.count <= 2)
            )
            if c in _NUMERIC or (c in "ML" and n <= 2):
                body = rf"\d{{{n}}}" if abutting else r"\d+"
                if c in "yY" and not abutting:
                    body = r"[+-]?\d+"
            elif c in "ML":
                body = "|".join(sorted({*_MONTHS, *(m[:3] for m in _MONTHS)}, key=len, reverse=True))
            elif c == "E":
                body = "|".join(sorted({*_DAYS, *(d[:3] for d in _DAYS)}, key=len, reverse=True))
            elif c == "a":
                body = "AM|PM"
            elif c == "G":
                body = "AD|BC"
            else:  # z Z X
                body = _ZONE
            if not (c in _NUMERIC or (c in "ML" and n <= 2)):
                body = f"(?i:{body})"  # names and markers in any case; literals stay exact
            # SimpleDateFormat skips spaces and tabs before a field ("Jan  5", " 2024-01-05").
            regex.append(f"[ \\t]*(?P<{group}>{body})")
            fields.append((group, token))
        return re.compile("".join(regex)), fields

    def parse(self, text: str) -> datetime.datetime:
        """``text`` read with the pattern, as an aware UTC datetime; ValueError if it does not fit."""
        m = self._regex.match(text)
        if m is None:
            raise ValueError(f'Unparseable date: "{text}"')
        year, month, day, day_of_year = 1970, 1, 1, None
        hour = minute = second = millis = 0
        pm: bool | None = None
        twelve_hour: int | None = None
        offset = datetime.timedelta()
        bc = False
        for group, f in self._fields:
            raw = m.group(group)
            c = f.letter
            if c in "yY":
                year = int(raw)
                if f.count <= 2 and len(raw) == 2 and raw.isdigit():
                    year = _two_digit_year(year)
            elif c in "ML":
                month = int(raw) if raw.isdigit() else _MONTH_NUMBERS[raw.lower()[:3]]
            elif c == "d":
                day = int(raw)
            elif c == "D":
                day_of_year = int(raw)
            elif c in "Hk":
                hour = int(raw) % 24 if c == "k" and int(raw) == 24 else int(raw)
            elif c in "Kh":
                twelve_hour = int(raw) % 12
            elif c == "a":
                pm = raw.upper() == "PM"
            elif c == "m":
                minute = int(raw)
            elif c == "s":
                second = int(raw)
            elif c == "S":
                millis = int(raw)
            elif c in "zZX":
                offset = _zone_offset(raw.upper())
            elif c == "G":
                bc = raw.upper() == "BC"
            # w W F E u: Java uses them only when the date fields are missing; ignored here.
        # As Java's calendar: AM/PM only applies to a 12-hour field (h, K); H and k stand alone.
        if twelve_hour is not None:
            hour = twelve_hour + (12 if pm else 0)
        if bc:
            year = 1 - year
        try:
            # Lenient, as Java's default calendar: out-of-range fields roll over.
            year += (month - 1) // 12
            month = (month - 1) % 12 + 1
            if day_of_year is not None and not self._has_day:
                base, days = datetime.datetime(year, 1, 1, tzinfo=_UTC), day_of_year - 1
            else:
                base, days = datetime.datetime(year, month, 1, tzinfo=_UTC), day - 1
            result = base + datetime.timedelta(
                days=days, hours=hour, minutes=minute, seconds=second, milliseconds=millis
            )
        except (ValueError, OverflowError):
            raise ValueError(f'Unparseable date: "{text}"') from None
        return result - offset

    def __repr__(self) -> str:
        return f"JavaDateFormat({self.pattern!r})"


def _two_digit_year(yy: int) -> int:
    # SimpleDateFormat puts "yy" within 80 years before and 20 years after now.
    start = datetime.datetime.now(_UTC).year - 80
    year = start - start % 100 + yy
    if year < start:
        year += 100
    return year
