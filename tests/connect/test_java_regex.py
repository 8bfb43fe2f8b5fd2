"""Java regexes from Kafka configs, compiled with Python's re."""

from __future__ import annotations

import pytest

from connect.api import compile_java_regex
from connect.api.java_regex import translate_java_regex


@pytest.mark.parametrize(
    ("java", "matches", "rejects"),
    [
        ("(?<topic>.*)-raw", ["orders-raw"], ["orders"]),
        ("(?<a>x)\\k<a>", ["xx"], ["xy"]),
        ("\\p{Lower}+", ["abc"], ["aBc", "a1"]),
        ("\\P{Digit}+", ["abc"], ["a1"]),
        ("[\\p{Upper}_]+", ["A_B"], ["a"]),
        ("\\p{Alnum}*", ["a1B"], ["a-1"]),
        ("\\QA.B*\\E", ["A.B*"], ["AxB"]),
        ("\\Qopen", ["open"], ["ope"]),
        ("a*+b", ["aab"], ["aa"]),
        ("(?>a+)b", ["aab"], ["aa"]),
        ("(?>a+)a", [], ["aaa"]),  # atomic: no backtracking into the group
        ("(?<=a)b|b", ["b"], ["c"]),
        ("[]a]+", ["]a"], ["b"]),
    ],
)
def test_java_constructs_mean_what_they_mean_in_java(
    java: str, matches: list[str], rejects: list[str]
) -> None:
    pattern = compile_java_regex(java)
    for text in matches:
        assert pattern.fullmatch(text), (java, text)
    for text in rejects:
        assert not pattern.fullmatch(text), (java, text)


def test_end_anchors() -> None:
    assert compile_java_regex("a\\z").search("a") and not compile_java_regex("a\\z").search("a\n")
    assert compile_java_regex("a\\Z").search("a\n")  # Java's \Z allows a final line terminator
    assert translate_java_regex("a\\z") == "a\\Z"


@pytest.mark.parametrize(
    ("java", "message"),
    [
        ("\\p{IsGreek}", "Java character class \\p{IsGreek} is not supported"),
        ("[\\P{Digit}]", "\\P{Digit} inside a character class is not supported"),
        ("((", "missing ), unterminated subpattern"),
    ],
)
def test_what_cannot_be_compiled_is_named(java: str, message: str) -> None:
    with pytest.raises(ValueError) as err:
        compile_java_regex(java)
    assert message in str(err.value)


def test_plain_patterns_pass_through_unchanged() -> None:
    for p in ("orders-.*", "^a(b|c)+$", "[a-z]{3}\\d", "x\\.y"):
        assert translate_java_regex(p) == p
