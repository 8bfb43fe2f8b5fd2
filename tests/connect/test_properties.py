"""Tests of connect.runtime.properties: Java ``.properties`` syntax (``java.util.Properties.load``)
with the line each key was defined on, and errors that name the file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from connect.api.errors import ConnectException
from connect.runtime.properties import PropertiesError, PropertiesFile, load


def write(tmp_path: Path, content: str | bytes, name: str = "c.properties") -> Path:
    path = tmp_path / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


def parse(tmp_path: Path, content: str | bytes) -> PropertiesFile:
    return load(write(tmp_path, content))


# -- separators -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "key", "value"),
    [
        ("key=value", "key", "value"),
        ("key:value", "key", "value"),
        ("key value", "key", "value"),
        ("key\tvalue", "key", "value"),
        ("key = value", "key", "value"),
        ("key   :   value", "key", "value"),
        ("key \t value", "key", "value"),
        ("   key=value", "key", "value"),
        ("key = = value", "key", "= value"),
        ("key :: value", "key", ": value"),
        ("key value=with=equals", "key", "value=with=equals"),
        ("key=a:b=c", "key", "a:b=c"),
        ("url=jdbc:postgresql://db:5432/x", "url", "jdbc:postgresql://db:5432/x"),
        ("key=", "key", ""),
        ("key", "key", ""),
        ("key   ", "key", ""),
        ("key=value   ", "key", "value   "),  # trailing whitespace is kept, as in Java
        ("key=  \\  value", "key", "  value"),  # an escaped space keeps leading whitespace
        ("key=b#c!d", "key", "b#c!d"),  # # and ! only start comments at the start of a line
    ],
)
def test_separators_and_values(tmp_path: Path, line: str, key: str, value: str) -> None:
    p = parse(tmp_path, line + "\n")
    assert p.values == {key: value}
    assert p.lines == {key: 1}


# -- escapes --------------------------------------------------------------------------------------


def test_value_escapes(tmp_path: Path) -> None:
    p = parse(tmp_path, "v=\\t\\n\\r\\f\\\\\\=\\:\\#\\!\\ \n")
    assert p.values["v"] == "\t\n\r\f\\=:#! "


def test_unicode_escapes(tmp_path: Path) -> None:
    p = parse(tmp_path, "u=\\u0041\\u00e9\\u20AC\\u20ac!\n")
    assert p.values["u"] == "Aé€€!"


def test_unknown_escapes_drop_the_backslash(tmp_path: Path) -> None:
    p = parse(tmp_path, "q=\\q\\z\\a\n")
    assert p.values["q"] == "qza"


def test_raw_utf8_text(tmp_path: Path) -> None:
    p = parse(tmp_path, "greeting=こんにちは\ncafé=crème\n")
    assert p.values == {"greeting": "こんにちは", "café": "crème"}
    assert p.lines == {"greeting": 1, "café": 2}


@pytest.mark.parametrize(
    ("line", "key", "value"),
    [
        ("key\\=with\\=equals=1", "key=with=equals", "1"),
        ("key\\:colon:2", "key:colon", "2"),
        ("key\\ with\\ spaces = 3", "key with spaces", "3"),
        ("\\#not-a-comment=4", "#not-a-comment", "4"),
        ("\\!not-a-comment=5", "!not-a-comment", "5"),
        ("tab\\tkey=6", "tab\tkey", "6"),
        ("\\u006bey=7", "key", "7"),
    ],
)
def test_keys_with_escaped_separators(tmp_path: Path, line: str, key: str, value: str) -> None:
    p = parse(tmp_path, "first=0\n" + line + "\n")
    assert p.values == {"first": "0", key: value}
    assert p.lines == {"first": 1, key: 2}
    assert p.where(key) == f"{p.path}:2"


# -- continuations --------------------------------------------------------------------------------


def test_line_continuations_strip_the_next_lines_leading_whitespace(tmp_path: Path) -> None:
    text = "multi = one, \\\n        two, \\\n\tthree\nafter=x\n"
    p = parse(tmp_path, text)
    assert p.values == {"multi": "one, two, three", "after": "x"}
    assert p.lines == {"multi": 1, "after": 4}


def test_a_continued_line_starting_with_hash_is_not_a_comment(tmp_path: Path) -> None:
    p = parse(tmp_path, "a=1,\\\n  #2\nb=3\n")
    assert p.values == {"a": "1,#2", "b": "3"}
    assert p.lines == {"a": 1, "b": 3}


def test_an_even_number_of_backslashes_does_not_continue(tmp_path: Path) -> None:
    p = parse(tmp_path, "c=even\\\\\nd=2\ne=odd\\\\\\\n  more\n")
    assert p.values == {"c": "even\\", "d": "2", "e": "odd\\more"}
    assert p.lines == {"c": 1, "d": 2, "e": 3}


def test_a_comment_ending_in_a_backslash_does_not_continue(tmp_path: Path) -> None:
    p = parse(tmp_path, "# a comment \\\nx=1\n! another \\\ny=2\n")
    assert p.values == {"x": "1", "y": "2"}
    assert p.lines == {"x": 2, "y": 4}


def test_continuation_onto_an_empty_line_ends_the_value(tmp_path: Path) -> None:
    p = parse(tmp_path, "a=x\\\n\nb=1\n")
    assert p.values == {"a": "x", "b": "1"}
    assert p.lines == {"a": 1, "b": 3}


def test_continuation_at_end_of_file(tmp_path: Path) -> None:
    p = parse(tmp_path, "a=1\nlast=v\\")
    assert p.values == {"a": "1", "last": "v"}
    assert p.lines == {"a": 1, "last": 2}


def test_a_key_split_by_a_continuation_has_the_line_it_starts_on(tmp_path: Path) -> None:
    p = parse(tmp_path, "a=1\nlong.\\\n   key=v\nb=2\n")
    assert p.values == {"a": "1", "long.key": "v", "b": "2"}
    assert p.lines == {"a": 1, "long.key": 2, "b": 4}


# -- comments, blank lines, duplicates --------------------------------------------------------------


def test_comments_and_blank_lines(tmp_path: Path) -> None:
    text = (
        "# comment\n"
        "! bang comment\n"
        "\n"
        "   \n"
        "\t\n"
        "   # indented comment\n"
        "\t! tab-indented bang\n"
        "name=file-source\n"
        "#commented.out=1\n"
        "topic=lines\n"
    )
    p = parse(tmp_path, text)
    assert p.values == {"name": "file-source", "topic": "lines"}
    assert p.lines == {"name": 8, "topic": 10}


def test_last_definition_wins_with_its_line(tmp_path: Path) -> None:
    p = parse(tmp_path, "a=first\nb=1\na=second\nc=3\na:third\n")
    assert p.values == {"a": "third", "b": "1", "c": "3"}
    assert p.lines == {"a": 5, "b": 2, "c": 4}


def test_empty_and_comment_only_files(tmp_path: Path) -> None:
    assert parse(tmp_path, "").values == {}
    p = parse(tmp_path, "# nothing\n\n! here\n")
    assert p.values == {}
    assert p.lines == {}


# -- line endings and line numbers --------------------------------------------------------------------


def test_crlf_line_endings(tmp_path: Path) -> None:
    p = parse(tmp_path, b"a=1\r\nb = two\r\n\r\n# c\r\nd=4\r\n")
    assert p.values == {"a": "1", "b": "two", "d": "4"}
    assert p.lines == {"a": 1, "b": 2, "d": 5}


def test_cr_alone_ends_a_line(tmp_path: Path) -> None:
    p = parse(tmp_path, b"a=1\rb=2\rc=3")
    assert p.values == {"a": "1", "b": "2", "c": "3"}
    assert p.lines == {"a": 1, "b": 2, "c": 3}


def test_crlf_continuations(tmp_path: Path) -> None:
    p = parse(tmp_path, b"list=a,\\\r\n  b,\\\r\n  c\r\nnext=1\r\n")
    assert p.values == {"list": "a,b,c", "next": "1"}
    assert p.lines == {"list": 1, "next": 4}


def test_line_numbers_of_a_realistic_file(tmp_path: Path) -> None:
    text = (
        "# FileStream source\n"  # 1
        "name=local-file-source\n"  # 2
        "connector.class=FileStreamSource\n"  # 3
        "\n"  # 4
        "tasks.max=1\n"  # 5
        "transforms=route, \\\n"  # 6
        "   mask\n"  # 7
        "transforms.route.type=org.apache.kafka.connect.transforms.RegexRouter\n"  # 8
        "transforms.route.regex=(.*)\n"  # 9
        "transforms.route.replacement=$1-copy\n"  # 10
    )
    p = parse(tmp_path, text)
    assert p.values["transforms"] == "route, mask"
    assert p.values["transforms.route.replacement"] == "$1-copy"
    assert p.lines == {
        "name": 2,
        "connector.class": 3,
        "tasks.max": 5,
        "transforms": 6,
        "transforms.route.type": 8,
        "transforms.route.regex": 9,
        "transforms.route.replacement": 10,
    }
    assert p.where("tasks.max") == f"{p.path}:5"
    assert p.where("not.there") == str(p.path)


def test_form_feed_separator_does_not_shift_line_numbers(tmp_path: Path) -> None:
    """A form feed is whitespace in .properties, not a line break."""
    p = parse(tmp_path, "k\fv\nz=1\n")
    assert p.values == {"k": "v", "z": "1"}
    assert p.lines == {"k": 1, "z": 2}


@pytest.mark.parametrize("char", ["\x85", "\u2028", "\x0b"])
def test_unicode_line_separators_in_values_do_not_shift_line_numbers(tmp_path: Path, char: str) -> None:
    """Only \\n, \\r\\n and \\r end a line in a .properties file."""
    p = parse(tmp_path, f"a=x{char}y\nb=2\n")
    assert p.values == {"a": f"x{char}y", "b": "2"}
    assert p.lines == {"a": 1, "b": 2}


# -- errors -----------------------------------------------------------------------------------------


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "missing.properties"
    with pytest.raises(PropertiesError) as info:
        load(path)
    assert str(path) in str(info.value)
    assert "cannot read" in str(info.value)
    assert isinstance(info.value, ConnectException)


def test_malformed_unicode_escape_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, "a=1\nb=2\nbad=\\u12G4\nc=3\n", "broken.properties")
    with pytest.raises(PropertiesError) as info:
        load(path)
    assert f"{path}:3" in str(info.value)
    assert "<unknown>" not in str(info.value)


def test_truncated_unicode_escape_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, "a=1\nbad=\\u12\n", "short.properties")
    with pytest.raises(PropertiesError) as info:
        load(path)
    assert f"{path}:2" in str(info.value)


def test_not_utf8(tmp_path: Path) -> None:
    path = write(tmp_path, b"a=\xff\xfe\n", "latin.properties")
    with pytest.raises(PropertiesError) as info:
        load(path)
    assert str(path) in str(info.value)
    assert "UTF-8" in str(info.value)


def test_a_directory_is_not_a_properties_file(tmp_path: Path) -> None:
    with pytest.raises(PropertiesError) as info:
        load(tmp_path)
    assert str(tmp_path) in str(info.value)


def test_load_accepts_str_paths(tmp_path: Path) -> None:
    path = write(tmp_path, "a=1\n")
    p = load(str(path))
    assert p.path == path
    assert p.values == {"a": "1"}
