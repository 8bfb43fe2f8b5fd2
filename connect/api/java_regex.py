"""Java regular expressions, compiled with Python's ``re``.

Kafka configs carry Java regexes (``RegexRouter``'s ``regex``, ``TopicNameMatches``'s
``pattern``, a connector's table or topic patterns), and users copy them from Kafka
docs. Python's syntax is close; the differences that matter are translated here:

==========================  ===========================================
Java                        Python
==========================  ===========================================
``(?<name>...)``            ``(?P<name>...)``
``\\k<name>``                ``(?P=name)``
``\\Q...\\E``                 the text, escaped
``\\p{Lower}`` and the POSIX  a character class (``[a-z]``); ``\\P{...}``
classes (``Upper``,         negates it
``Alpha``, ``Digit``, ...)
``\\z`` / ``\\Z``              ``\\Z`` / ``(?=\\n?\\Z)``
==========================  ===========================================

Possessive quantifiers (``a*+``) and atomic groups (``(?>...)``) work as they are
(Python 3.11). A construct with no Python equivalent (a negated ``\\P{...}`` inside
a character class, Unicode script classes) is refused with a message that names it.
"""

from __future__ import annotations

import re

__all__ = ["compile_java_regex", "translate_java_regex"]

_POSIX = {
    "Lower": "a-z",
    "Upper": "A-Z",
    "ASCII": "\\x00-\\x7F",
    "Alpha": "a-zA-Z",
    "Digit": "0-9",
    "Alnum": "a-zA-Z0-9",
    "Punct": "!-/:-@\\[-`{-~",
    "Graph": "!-~",
    "Print": " -~",
    "Blank": " \\t",
    "Cntrl": "\\x00-\\x1F\\x7F",
    "XDigit": "0-9a-fA-F",
    "Space": " \\t\\n\\x0B\\f\\r",
    "javaLowerCase": "a-z",
    "javaUpperCase": "A-Z",
    "javaWhitespace": " \\t\\n\\x0B\\f\\r\\x1C-\\x1F",
    "L": "a-zA-Z",  # letters: ASCII only, the common case in topic and table names
    "IsAlphabetic": "a-zA-Z",
    "IsDigit": "0-9",
}


def translate_java_regex(pattern: str) -> str:
    """The Python spelling of Java regex ``pattern``; ValueError names what cannot be translated."""
    out: list[str] = []
    i, n = 0, len(pattern)
    in_class = False
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            if nxt == "Q":
                end = pattern.find("\\E", i + 2)
                literal = pattern[i + 2 :] if end < 0 else pattern[i + 2 : end]
                out.append(re.escape(literal))
                i = n if end < 0 else end + 2
                continue
            if nxt in "pP":
                name, i = _property_name(pattern, i + 2)
                body = _POSIX.get(
                    name.removeprefix("Is") if name.startswith("Is") and name not in _POSIX else name
                )
                if body is None:
                    raise ValueError(f"Java character class \\{nxt}{{{name}}} is not supported")
                if in_class:
                    if nxt == "P":
                        raise ValueError(f"\\P{{{name}}} inside a character class is not supported")
                    out.append(body)
                else:
                    out.append(f"[{'^' if nxt == 'P' else ''}{body}]")
                continue
            if nxt == "k" and not in_class and i + 2 < n and pattern[i + 2] == "<":
                end = pattern.find(">", i + 3)
                if end < 0:
                    raise ValueError("named group reference \\k<...> is missing its '>'")
                out.append(f"(?P={pattern[i + 3 : end]})")
                i = end + 1
                continue
            if nxt == "z" and not in_class:
                out.append("\\Z")
                i += 2
                continue
            if nxt == "Z" and not in_class:
                out.append("(?=\\n?\\Z)")
                i += 2
                continue
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            out.append(c)
            i += 1
            # A ']' right after '[' or '[^' is a literal in both dialects.
            if i < n and pattern[i] == "^":
                out.append("^")
                i += 1
            if i < n and pattern[i] == "]":
                out.append("\\]")
                i += 1
            continue
        if pattern.startswith("(?<", i) and i + 3 < n and pattern[i + 3] not in "=!":
            out.append("(?P<")
            i += 3
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _property_name(pattern: str, i: int) -> tuple[str, int]:
    if i < len(pattern) and pattern[i] == "{":
        end = pattern.find("}", i)
        if end < 0:
            raise ValueError("character class \\p{...} is missing its '}'")
        return pattern[i + 1 : end], end + 1
    if i < len(pattern):
        return pattern[i], i + 1  # \pL: a one-letter name
    raise ValueError("\\p at the end of the pattern")


def compile_java_regex(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """Compile Java regex ``pattern``; ValueError with Java's wording when it is invalid."""
    try:
        return re.compile(translate_java_regex(pattern), flags)
    except re.error as exc:
        raise ValueError(str(exc)) from None
