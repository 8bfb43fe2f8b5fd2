"""How console lines become records and records become lines: Kafka's ``LineMessageReader``
(console-producer) and ``DefaultMessageFormatter`` (console-consumer), as pure code.

Both are configured by ``--property key=value`` pairs with Kafka's names and defaults:

- reader: ``parse.key`` (false), ``key.separator`` (tab), ``parse.headers`` (false),
  ``headers.delimiter`` (tab), ``headers.separator`` (``,``, a regular expression as in
  Kafka), ``headers.key.separator`` (``:``), ``ignore.error`` (false), ``null.marker``
  (none: a key, value or header value equal to it becomes null);
- formatter: ``print.timestamp``, ``print.partition``, ``print.offset``, ``print.headers``,
  ``print.key`` (all false), ``print.value`` (true), ``key.separator`` (tab),
  ``line.separator`` (newline), ``headers.separator`` (``,``), ``null.literal`` (``null``).

Booleans are true only for ``true`` in any case, as Java's ``equalsIgnoreCase``.
Unknown properties are reported back so the command can warn about them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# Lines read from stdin keep undecodable bytes as surrogates, so they go back out unchanged.
ENCODING = "utf-8"
ERRORS = "surrogateescape"

Header = tuple[str, bytes | None]


class LineFormatError(ValueError):
    """A console line that cannot become a record (Kafka throws a KafkaException)."""


def _flag(props: Mapping[str, str], key: str, default: bool) -> bool:
    return props[key].strip().lower() == "true" if key in props else default


def _encode(text: str) -> bytes:
    return text.encode(ENCODING, ERRORS)


@dataclass(frozen=True, slots=True)
class LineReaderSettings:
    parse_key: bool = False
    key_separator: str = "\t"
    parse_headers: bool = False
    headers_delimiter: str = "\t"
    headers_separator: str = ","
    headers_key_separator: str = ":"
    ignore_error: bool = False
    null_marker: str | None = None

    KEYS = frozenset(
        {
            "parse.key",
            "key.separator",
            "parse.headers",
            "headers.delimiter",
            "headers.separator",
            "headers.key.separator",
            "ignore.error",
            "null.marker",
        }
    )

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> LineReaderSettings:
        s = cls(
            parse_key=_flag(props, "parse.key", False),
            key_separator=props.get("key.separator", "\t"),
            parse_headers=_flag(props, "parse.headers", False),
            headers_delimiter=props.get("headers.delimiter", "\t"),
            headers_separator=props.get("headers.separator", ","),
            headers_key_separator=props.get("headers.key.separator", ":"),
            ignore_error=_flag(props, "ignore.error", False),
            null_marker=props.get("null.marker"),
        )
        s._validate()
        return s

    def _validate(self) -> None:
        # The same pairs Kafka refuses: either would make lines ambiguous.
        pairs = [
            ("headers.delimiter", self.headers_delimiter, "headers.separator", self.headers_separator),
            (
                "headers.delimiter",
                self.headers_delimiter,
                "headers.key.separator",
                self.headers_key_separator,
            ),
            (
                "headers.separator",
                self.headers_separator,
                "headers.key.separator",
                self.headers_key_separator,
            ),
            ("null.marker", self.null_marker, "key.separator", self.key_separator),
            ("null.marker", self.null_marker, "headers.separator", self.headers_separator),
            ("null.marker", self.null_marker, "headers.delimiter", self.headers_delimiter),
            ("null.marker", self.null_marker, "headers.key.separator", self.headers_key_separator),
        ]
        for a, va, b, vb in pairs:
            if va is not None and va == vb:
                raise LineFormatError(f"{a} and {b} may not be equal")
        if self.parse_key and not self.key_separator:
            raise LineFormatError("key.separator may not be empty")
        try:
            re.compile(self.headers_separator)
        except re.error as exc:
            raise LineFormatError(
                f"headers.separator {self.headers_separator!r} is not a regular expression: {exc}"
            ) from None


@dataclass(frozen=True, slots=True)
class ParsedLine:
    key: bytes | None
    value: bytes | None
    headers: list[Header]


def _split_at(
    enabled: bool, line: str, start: int, sep: str, what: str, number: int, s: LineReaderSettings
) -> str | None:
    if not enabled:
        return None
    index = line.find(sep, start)
    if index == -1:
        if s.ignore_error:
            return None
        raise LineFormatError(f"No {what} found on line number {number}: '{line}'")
    return line[start:index]


def _headers(text: str, number: int, s: LineReaderSettings) -> list[Header]:
    pairs = re.split(s.headers_separator, text)
    while pairs and pairs[-1] == "":  # Java's String.split drops trailing empty strings
        pairs.pop()
    out: list[Header] = []
    for pair in pairs:
        i = pair.find(s.headers_key_separator)
        if i == -1:
            if s.ignore_error:
                out.append((pair, None))
                continue
            raise LineFormatError(f"No header key separator found in pair '{pair}' on line number {number}")
        key = pair[:i]
        if key == s.null_marker:
            raise LineFormatError(
                f"Header keys should not be equal to the null marker '{s.null_marker}' as they can't be null"
            )
        value = pair[i + len(s.headers_key_separator) :]
        out.append((key, None if value == s.null_marker else _encode(value)))
    return out


def parse_line(line: str, number: int, s: LineReaderSettings) -> ParsedLine:
    """The record of console line ``number`` (1-based), without its line terminator."""
    headers = _split_at(s.parse_headers, line, 0, s.headers_delimiter, "headers delimiter", number, s)
    header_end = 0 if headers is None else len(headers) + len(s.headers_delimiter)
    key = _split_at(s.parse_key, line, header_end, s.key_separator, "key separator", number, s)
    key_end = header_end if key is None else header_end + len(key) + len(s.key_separator)
    value = line[key_end:]
    return ParsedLine(
        key=None if key is None or key == s.null_marker else _encode(key),
        value=None if value == s.null_marker else _encode(value),
        headers=[] if headers is None or headers == s.null_marker else _headers(headers, number, s),
    )


# --- the consumer's formatter ----------------------------------------------------------

# confluent-kafka's timestamp types -> Java's TimestampType.toString()
TIMESTAMP_TYPES = {1: "CreateTime", 2: "LogAppendTime"}


@dataclass(frozen=True, slots=True)
class FormatterSettings:
    print_timestamp: bool = False
    print_partition: bool = False
    print_offset: bool = False
    print_headers: bool = False
    print_key: bool = False
    print_value: bool = True
    key_separator: bytes = b"\t"
    line_separator: bytes = b"\n"
    headers_separator: bytes = b","
    null_literal: bytes = b"null"

    KEYS = frozenset(
        {
            "print.timestamp",
            "print.partition",
            "print.offset",
            "print.headers",
            "print.key",
            "print.value",
            "key.separator",
            "line.separator",
            "headers.separator",
            "null.literal",
        }
    )

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> FormatterSettings:
        return cls(
            print_timestamp=_flag(props, "print.timestamp", False),
            print_partition=_flag(props, "print.partition", False),
            print_offset=_flag(props, "print.offset", False),
            print_headers=_flag(props, "print.headers", False),
            print_key=_flag(props, "print.key", False),
            print_value=_flag(props, "print.value", True),
            key_separator=_encode(props.get("key.separator", "\t")),
            line_separator=_encode(props.get("line.separator", "\n")),
            headers_separator=_encode(props.get("headers.separator", ",")),
            null_literal=_encode(props.get("null.literal", "null")),
        )


@dataclass(frozen=True, slots=True)
class ConsumedRecord:
    """What the formatter reads of a consumed message."""

    timestamp_type: int  # 0 none, 1 create time, 2 log append time (confluent-kafka's constants)
    timestamp: int
    partition: int
    offset: int
    headers: Sequence[Header]
    key: bytes | None
    value: bytes | None


def format_record(r: ConsumedRecord, s: FormatterSettings) -> bytes:
    """The bytes ``DefaultMessageFormatter`` writes for one record.

    Each printed field is followed by ``key.separator`` when another field follows it,
    otherwise by ``line.separator``; the value always ends the line.
    """
    fields: list[bytes] = []
    if s.print_timestamp:
        kind = TIMESTAMP_TYPES.get(r.timestamp_type)
        fields.append(f"{kind}:{r.timestamp}".encode() if kind else b"NO_TIMESTAMP")
    if s.print_partition:
        fields.append(b"Partition:%d" % r.partition)
    if s.print_offset:
        fields.append(b"Offset:%d" % r.offset)
    if s.print_headers:
        if r.headers:
            fields.append(
                s.headers_separator.join(
                    _encode(k) + b":" + (s.null_literal if v is None else v) for k, v in r.headers
                )
            )
        else:
            fields.append(b"NO_HEADERS")
    if s.print_key:
        fields.append(s.null_literal if r.key is None else r.key)
    if s.print_value:
        fields.append(s.null_literal if r.value is None else r.value)
    if not fields:
        return b""
    return s.key_separator.join(fields) + s.line_separator
