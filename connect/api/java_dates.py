"""Java date patterns: SimpleDateFormat's and Joda-Time's, printed (and SimpleDateFormat's parsed).

Users copy these patterns from Kafka's and Confluent's docs, so they are read as Java reads
them rather than translated to ``strftime``:

- ``JavaDateFormat``: ``java.text.SimpleDateFormat`` in UTC and the US locale, which Kafka's
  ``TimestampConverter`` (``format``) and ``TimestampRouter`` (``timestamp.format``) use;
  formatting and lenient parsing.
- ``JodaFormat``: ``org.joda.time.format.DateTimeFormat``, which Confluent's time-based storage
  partitioners use for ``path.format``; printing only, in the datetime's own zone.

Both share one grammar (a run of one ASCII letter is a field whose width is the run's
length, ``'quoted text'`` is literal, ``''`` is a quote, anything else prints as it is) and
most letters. Where a letter means different things, each dialect says so:

======  =====================================  ===================================
letter  SimpleDateFormat                        Joda-Time
======  =====================================  ===================================
``Y``   week year (US weeks)                    year of era
``w``   week of year (US: Sunday, Jan 1st)     ISO week of week year
``S``   milliseconds, zero-padded               fraction of a second, ``count`` digits
``Z``   ``+0000`` (always UTC here)             the zone's offset; ``ZZ`` with a colon
``z``   ``UTC`` / ``Coordinated Universal ...`` the zone's short name
======  =====================================  ===================================

SimpleDateFormat also knows ``L W F u X``; Joda also knows ``x C e``. A letter a dialect
does not know is refused with its message.
"""

from __future__ import annotations

import datetime
import re
import zoneinfo
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

__all__ = ["JavaDateFormat", "JodaFormat", "LocaleNotSupported", "offset_text"]

Printer = Callable[[datetime.datetime], str]

_MONTHS: Final = (
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
)
_MONTH_NUMBERS: Final = {name[:3].lower(): i for i, name in enumerate(_MONTHS, 1)}
_DAYS: Final = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_EPOCH: Final = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_UTC: Final = datetime.UTC
_MS_PER_DAY: Final = 86_400_000


# -- the shared grammar ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Field:
    letter: str
    count: int


_Token = str | _Field


def _read_quoted(pattern: str, start: int) -> tuple[str, int]:
    """The text of the quoted literal starting at ``pattern[start] == "'"`` and the index after it."""
    if pattern.startswith("''", start):
        return "'", start + 2  # '' outside quotes is one quote
    text: list[str] = []
    i = start + 1
    while i < len(pattern):
        if pattern[i] != "'":
            text.append(pattern[i])
            i += 1
        elif pattern.startswith("''", i):
            text.append("'")
            i += 2
        else:
            return "".join(text), i + 1
    raise ValueError(f"Unterminated quote: the quote at position {start} is never closed")


def _tokenize(pattern: str) -> list[_Token]:
    """Literal text (adjacent literals joined) and fields, as both libraries split a pattern."""
    tokens: list[_Token] = []
    literal: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "'":
            text, i = _read_quoted(pattern, i)
            literal.append(text)
        elif char.isascii() and char.isalpha():
            end = i
            while end < len(pattern) and pattern[end] == char:
                end += 1
            if literal:
                tokens.append("".join(literal))
                literal = []
            tokens.append(_Field(char, end - i))
            i = end
        else:
            literal.append(char)
            i += 1
    if literal:
        tokens.append("".join(literal))
    return tokens


def _pad(value: int, count: int) -> str:
    # The minimum width is the repeat count, zero-padded; wider values print whole.
    return f"{'-' if value < 0 else ''}{abs(value):0{count}d}"


def _number(get: Callable[[datetime.datetime], int], count: int) -> Printer:
    return lambda dt: _pad(get(dt), count)


def _year(get: Callable[[datetime.datetime], int], count: int) -> Printer:
    if count == 2:  # both print a two-digit year for "yy"
        return lambda dt: f"{get(dt) % 100:02d}"
    return _number(get, count)


def _month(count: int) -> Printer:
    if count >= 4:
        return lambda dt: _MONTHS[dt.month - 1]
    if count == 3:
        return lambda dt: _MONTHS[dt.month - 1][:3]
    return _number(lambda dt: dt.month, count)


def _weekday(count: int) -> Printer:
    if count >= 4:
        return lambda dt: _DAYS[dt.weekday()]
    return lambda dt: _DAYS[dt.weekday()][:3]


def _literal(text: str) -> Printer:
    return lambda dt: text


# Letters both libraries print alike.
_COMMON_NUMBERS: Final[dict[str, Callable[[datetime.datetime], int]]] = {
    "d": lambda dt: dt.day,
    "D": lambda dt: dt.timetuple().tm_yday,
    "H": lambda dt: dt.hour,
    "k": lambda dt: dt.hour or 24,
    "K": lambda dt: dt.hour % 12,
    "h": lambda dt: dt.hour % 12 or 12,
    "m": lambda dt: dt.minute,
    "s": lambda dt: dt.second,
}


def _common_printer(letter: str, count: int) -> Printer | None:
    if letter in _COMMON_NUMBERS:
        return _number(_COMMON_NUMBERS[letter], count)
    if letter == "y":
        return _year(lambda dt: dt.year, count)
    if letter == "M":
        return _month(count)
    if letter == "E":
        return _weekday(count)
    if letter == "a":
        return lambda dt: "AM" if dt.hour < 12 else "PM"
    if letter == "G":
        return lambda dt: "AD"  # datetime has no years before 1
    return None


def _join(printers: list[Printer]) -> Printer:
    if len(printers) == 1:
        return printers[0]
    return lambda dt: "".join([p(dt) for p in printers])


# -- SimpleDateFormat --------------------------------------------------------------------------------

_SDF_LETTERS: Final = frozenset("GyYMLwWDdFEuaHkKhmsSzZX")
_SDF_NUMERIC: Final = frozenset("yYwWDdFuHkKhmsS")

# How long a formatted string stays the same, by the finest field in the pattern: lets a
# formatter reuse its last result (TimestampRouter formats a day per record otherwise).
_PERIOD_MS: Final = {
    "S": 1,
    "s": 1000,
    "m": 60_000,
    "H": 3_600_000,
    "k": 3_600_000,
    "K": 3_600_000,
    "h": 3_600_000,
    "a": 43_200_000,  # AM turns to PM at noon
}


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


def _printer(field: _Field, own: Callable[[str, int], Printer]) -> Printer:
    """A field's printer: as both libraries print it, else as the dialect's ``own`` does."""
    common = _common_printer(field.letter, field.count)
    return common if common is not None else own(field.letter, field.count)


def _sdf_letter(c: str, n: int) -> Printer:
    if c == "Y":
        return _year(_us_week_year, n)
    if c == "L":
        return _month(n)
    if c == "w":
        return _number(_us_week_of_year, n)
    if c == "W":
        return _number(lambda d: (d.day - 1 + (d.replace(day=1).weekday() + 1) % 7) // 7 + 1, n)
    if c == "F":
        return _number(lambda d: (d.day - 1) // 7 + 1, n)
    if c == "u":
        return _number(lambda d: d.isoweekday(), n)
    if c == "S":
        return _number(lambda d: d.microsecond // 1000, n)
    if c == "z":
        return _literal("Coordinated Universal Time" if n >= 4 else "UTC")
    if c == "Z":
        return _literal("+0000")
    assert c == "X"
    return _literal("Z")


_ZONE: Final = r"(?:Z|UTC|GMT(?:[+-]\d{1,2}(?::?\d{2})?)?|[+-]\d{2}(?::?\d{2})?)"


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
    """One SimpleDateFormat pattern, compiled for formatting and parsing in UTC.

    Parsing follows SimpleDateFormat's defaults: lenient (``2024-02-30`` is March 1st),
    unset fields from 1970-01-01T00:00:00.000, text after the pattern ignored, numeric
    fields that abut (``yyyyMMdd``) read with their pattern width, a two-digit ``yy`` year
    placed within 80 years before and 20 after today, zone fields (``z``, ``Z``, ``X``)
    honoured and the result returned in UTC. A letter Java does not know is refused with
    Java's message ("Illegal pattern character 'q'").
    """

    __slots__ = ("_fields", "_has_day", "_last", "_period", "_print", "_regex", "pattern")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        tokens = _tokenize(pattern)
        for token in tokens:
            if isinstance(token, _Field):
                if token.letter not in _SDF_LETTERS:
                    raise ValueError(f"Illegal pattern character '{token.letter}'")
                if token.letter == "X" and token.count > 3:
                    raise ValueError(f"invalid ISO 8601 format: length={token.count}")
        printers = [_literal(t) if isinstance(t, str) else _printer(t, _sdf_letter) for t in tokens]
        self._print = _join(printers or [_literal("")])
        letters = {t.letter for t in tokens if isinstance(t, _Field)}
        self._period = min((_PERIOD_MS.get(c, _MS_PER_DAY) for c in letters), default=_MS_PER_DAY)
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
        return self._print(value)

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
                nxt.letter in _SDF_NUMERIC or (nxt.letter in "ML" and nxt.count <= 2)
            )
            numeric = c in _SDF_NUMERIC or (c in "ML" and n <= 2)
            if numeric:
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
            if not numeric:
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


# -- Joda-Time ---------------------------------------------------------------------------------------


class LocaleNotSupported(ValueError):
    """A Joda pattern prints names (months, days, AM/PM, eras, zones) in a locale other than English."""


def _joda_fraction(count: int) -> Printer:
    # Joda prints the milliseconds as three digits, then drops trailing zeros down to `count`
    # digits ("S" of 120 ms is "12"); it never prints more digits than it has, except for zero.
    def print_fraction(dt: datetime.datetime) -> str:
        millis = dt.microsecond // 1000
        if millis == 0:
            return "0" * count
        digits = f"{millis:03d}"
        while len(digits) > count and digits.endswith("0"):
            digits = digits[:-1]
        return digits

    return print_fraction


def offset_text(offset: datetime.timedelta, *, colon: bool) -> str:
    """``+0530`` / ``+05:30``: an offset as Joda prints it (hours and minutes; "+0000" for UTC)."""
    seconds = offset // datetime.timedelta(seconds=1)
    sign = "-" if seconds < 0 else "+"
    hours, mins = divmod(abs(seconds) // 60, 60)  # historical offsets' seconds are dropped
    return f"{sign}{hours:02d}{':' if colon else ''}{mins:02d}"


def _zone_id(dt: datetime.datetime) -> str:
    zone = dt.tzinfo
    if isinstance(zone, zoneinfo.ZoneInfo):
        return zone.key
    return dt.tzname() or ""


def _joda_zone_offset(count: int) -> Printer:
    if count >= 3:
        return _zone_id
    return lambda dt: offset_text(dt.utcoffset() or datetime.timedelta(0), colon=count == 2)


def _joda_letter(c: str, n: int) -> Printer:
    if c == "Y":
        return _year(lambda dt: dt.year, n)  # year of era (not week year as in java.time): same for AD
    if c == "x":
        return _year(lambda dt: dt.isocalendar().year, n)  # Joda's week year
    if c == "C":
        return _number(lambda dt: dt.year // 100, n)  # century of era
    if c == "w":
        return _number(lambda dt: dt.isocalendar().week, n)  # Joda's week of weekyear is ISO's
    if c == "e":
        return _number(lambda dt: dt.isoweekday(), n)
    if c == "S":
        return _joda_fraction(n)
    if c == "Z":
        return _joda_zone_offset(n)
    if c == "z":
        if n >= 4:
            raise ValueError("long time zone names (zzzz) are not supported; use z or ZZZ")
        return lambda dt: dt.tzname() or ""
    raise ValueError(f"unknown pattern letter {c!r} (quote literal text: 'text')")


def _is_text_field(field: _Field) -> bool:
    return field.letter in "EaGz" or (field.letter == "M" and field.count >= 3)


def _is_english(locale: str) -> bool:
    return re.split(r"[-_]", locale, maxsplit=1)[0].lower() == "en"


class JodaFormat:
    """One Joda-Time ``DateTimeFormat`` pattern, printing an aware datetime in its own zone.

    Month and day names, AM/PM, eras and zone names are English: another ``locale`` with
    such a field raises ``LocaleNotSupported``; a letter Joda does not know, ValueError.
    """

    __slots__ = ("_print", "pattern")

    def __init__(self, pattern: str, locale: str = "en") -> None:
        self.pattern = pattern
        printers: list[Printer] = []
        for token in _tokenize(pattern):
            if isinstance(token, str):
                printers.append(_literal(token))
                continue
            printers.append(_printer(token, _joda_letter))
            if _is_text_field(token) and not _is_english(locale):
                raise LocaleNotSupported(
                    f"locale {locale!r} is not supported with the text field "
                    f"{token.letter * token.count!r}: names are printed in English only "
                    "(use an en locale or numeric fields)"
                )
        self._print = _join(printers or [_literal("")])

    def format(self, value: datetime.datetime) -> str:
        """``value`` (aware) printed with the pattern, in its own zone."""
        return self._print(value)

    def __repr__(self) -> str:
        return f"JodaFormat({self.pattern!r})"
