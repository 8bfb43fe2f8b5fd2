"""Java ``.properties`` files with the line each key was defined on.

Parsing is jproperties' (escapes, continuations, ``=``/``:``/whitespace separators);
this module adds the line numbers, so a config error can say "file:line: key".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from jproperties import Properties

from connect.api.errors import ConnectException

# The start of a logical line's key: skip leading blanks, stop at an unescaped separator.
_KEY = re.compile(r"^[ \t\f]*((?:\\.|[^ \t\f=:\\])+)")


class PropertiesError(ConnectException):
    pass


@dataclass(frozen=True, slots=True)
class PropertiesFile:
    path: Path
    values: dict[str, str]
    lines: dict[str, int]  # key -> 1-based line of its (last) definition

    def where(self, key: str) -> str:
        line = self.lines.get(key)
        return f"{self.path}:{line}" if line else str(self.path)


def _unescape_key(raw: str) -> str:
    props = Properties()
    props.load(f"{raw}=x\n", "utf-8")
    return next(iter(props.keys()), raw)


_LINE_END = re.compile(r"\r\n|\r|\n")


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first physical line, text) of each logical line, continuations joined as Java does.

    Only ``\n``, ``\r\n`` and ``\r`` end lines in a properties file (not the other
    characters ``str.splitlines`` knows); a line ending in an odd number of backslashes
    continues on the next one, whose leading whitespace is dropped.
    """
    out: list[tuple[int, str]] = []
    start = 0
    parts: list[str] = []
    for number, line in enumerate(_LINE_END.split(text), start=1):
        if parts:
            line = line.lstrip(" \t\f")
        else:
            start = number
            body = line.lstrip(" \t\f")
            if not body or body[0] in "#!":
                continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:
            parts.append(line[:-1])
            continue
        parts.append(line)
        out.append((start, "".join(parts)))
        parts = []
    if parts:
        out.append((start, "".join(parts)))
    return out


def _key_lines(text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for number, line in _logical_lines(text):
        m = _KEY.match(line)
        if m:
            out[_unescape_key(m.group(1))] = number
    return out


def load(path: str | Path) -> PropertiesFile:
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise PropertiesError(f"{p}: cannot read: {exc.strerror}") from exc
    props = Properties()
    try:
        text = raw.decode("utf-8")
        props.load(text, "utf-8")
    except UnicodeDecodeError as exc:
        raise PropertiesError(f"{p}: not UTF-8 text: {exc}") from exc
    except Exception as exc:  # jproperties' ParseError says "Parse error in <unknown>:LINE: ..."
        message = str(exc).replace("<unknown>", str(p))
        raise PropertiesError(message if str(p) in message else f"{p}: {message}") from exc
    values = {k: v for k, (v, _meta) in props.items()}
    return PropertiesFile(p, values, _key_lines(text))
