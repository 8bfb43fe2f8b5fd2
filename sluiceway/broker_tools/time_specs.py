"""The two time notations of ``consumer-groups --reset-offsets``, parsed as Kafka does.

- ``--to-datetime``: ``YYYY-MM-DDTHH:mm:SS.sss`` with an optional zone (``Z``, ``+hh``,
  ``+hhmm``, ``+hh:mm``); without a zone it is UTC, because Kafka appends ``Z`` then.
- ``--by-duration``: an ISO-8601 duration as ``java.time.Duration.parse`` reads it,
  ``PnDTnHnMn.nS`` (days are 24 hours, every part may carry a sign, so may the whole).

Both are pure functions; a malformed value raises ``ValueError`` with a message that
shows the expected form.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

DATETIME_FORMAT = "YYYY-MM-DDTHH:mm:SS.sss"

_DATETIME = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3})"
    r"(?:(Z)|([+-])(\d{2})(?::?(\d{2}))?)?"
)

# java.time.Duration's grammar: optional sign, P, days, then T and hours/minutes/seconds.
_DURATION = re.compile(
    r"([-+]?)P(?:([-+]?\d+)D)?"
    r"(T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?\d+)(?:[.,](\d{0,9}))?S)?)?",
    re.IGNORECASE,
)

_NANOS_PER_SECOND = 1_000_000_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def parse_datetime_ms(text: str) -> int:
    """Milliseconds since the epoch of a ``--to-datetime`` value."""
    m = _DATETIME.fullmatch(text.strip())
    if m is None:
        raise ValueError(
            f"Error parsing timestamp '{text}': expected {DATETIME_FORMAT} with an optional zone "
            "(Z, +hh, +hhmm or +hh:mm), e.g. 2024-01-31T09:30:00.000 or 2024-01-31T09:30:00.000+01:00"
        )
    year, month, day, hour, minute, second, millis = (int(g) for g in m.group(1, 2, 3, 4, 5, 6, 7))
    zone = UTC
    if m.group(9) is not None:
        hours, minutes = int(m.group(10)), int(m.group(11) or 0)
        if hours > 18 or minutes > 59:
            raise ValueError(f"Error parsing timestamp '{text}': invalid zone offset")
        offset = timedelta(hours=hours, minutes=minutes)
        zone = timezone(-offset if m.group(9) == "-" else offset)
    try:
        moment = datetime(year, month, day, hour, minute, second, millis * 1000, tzinfo=zone)
    except ValueError as exc:  # Kafka parses strictly: no 31st of February
        raise ValueError(f"Error parsing timestamp '{text}': {exc}") from None
    # Integer arithmetic, not timestamp()'s float, keeps every millisecond exact.
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def parse_duration_ns(text: str) -> int:
    """Nanoseconds of an ISO-8601 ``--by-duration`` value, as ``java.time.Duration.parse``."""
    m = _DURATION.fullmatch(text.strip())
    # As in Java: at least one part, and a "T" must be followed by one.
    if m is None or not any(m.group(i) for i in (2, 4, 5, 6)) or (m.group(3) and not any(m.group(4, 5, 6))):
        raise ValueError(
            f"Error parsing duration '{text}': expected an ISO-8601 duration PnDTnHnMnS, "
            "e.g. PT30M, P1DT2H or PT-1.5S"
        )
    sign, days, hours, minutes, seconds, fraction = m.group(1, 2, 4, 5, 6, 7)
    whole_seconds = (
        int(days or 0) * 86_400 + int(hours or 0) * 3_600 + int(minutes or 0) * 60 + int(seconds or 0)
    )
    total = whole_seconds * _NANOS_PER_SECOND
    if fraction:
        nanos = int(fraction.ljust(9, "0"))
        # "-0.5S" is minus half a second: the fraction takes the sign of its seconds.
        total += -nanos if seconds.startswith("-") else nanos
    return -total if sign == "-" else total


def timestamp_before(now_ms: int, duration_ns: int) -> int:
    """The millisecond timestamp ``duration`` before ``now`` (Kafka: ``now.minus(duration)``)."""
    return (now_ms * 1_000_000 - duration_ns) // 1_000_000
