"""JavaDateFormat against Java's SimpleDateFormat (US locale, UTC): every supported
letter when formatting, and lenient parsing with abutting fields, zones, roll-over,
trailing text and two-digit years."""

from __future__ import annotations

import datetime

import pytest

from connect.api.java_dates import JavaDateFormat

UTC = datetime.UTC
MORNING = datetime.datetime(2024, 3, 5, 7, 8, 9, 5000, tzinfo=UTC)  # a Tuesday, 5 ms past the second
DAY = 86_400_000


def fmt(pattern: str, value: datetime.datetime = MORNING) -> str:
    return JavaDateFormat(pattern).format(value)


def parse(pattern: str, text: str) -> datetime.datetime:
    return JavaDateFormat(pattern).parse(text)


def at(*args: int) -> datetime.datetime:
    return datetime.datetime(*args, tzinfo=UTC)  # type: ignore[misc]


# -- formatting ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("G", "AD"),
        ("y", "2024"),
        ("yy", "24"),
        ("yyyy", "2024"),
        ("yyyyy", "02024"),
        ("M", "3"),
        ("MM", "03"),
        ("MMM", "Mar"),
        ("MMMM", "March"),
        ("L", "3"),
        ("LLLL", "March"),
        ("w", "10"),
        ("W", "2"),
        ("D", "65"),
        ("DDD", "065"),
        ("d", "5"),
        ("dd", "05"),
        ("F", "1"),
        ("E", "Tue"),
        ("EEE", "Tue"),
        ("EEEE", "Tuesday"),
        ("u", "2"),
        ("a", "AM"),
        ("H", "7"),
        ("HH", "07"),
        ("k", "7"),
        ("K", "7"),
        ("h", "7"),
        ("hh", "07"),
        ("m", "8"),
        ("mm", "08"),
        ("s", "9"),
        ("ss", "09"),
        ("S", "5"),
        ("SSS", "005"),
        ("SSSSSS", "000005"),
        ("z", "UTC"),
        ("zzzz", "Coordinated Universal Time"),
        ("Z", "+0000"),
        ("X", "Z"),
        ("XX", "Z"),
        ("XXX", "Z"),
    ],
)
def test_each_letter(pattern: str, expected: str) -> None:
    assert fmt(pattern) == expected


def test_s_is_milliseconds_as_a_number_not_a_fraction() -> None:
    value = datetime.datetime(2024, 1, 1, 0, 0, 0, 123456, tzinfo=UTC)
    assert (fmt("S", value), fmt("SS", value), fmt("SSS", value), fmt("SSSSSS", value)) == (
        "123",
        "123",
        "123",
        "000123",
    )


@pytest.mark.parametrize(
    ("hour", "a", "H", "k", "K", "h"),
    [
        (0, "AM", "0", "24", "0", "12"),
        (11, "AM", "11", "11", "11", "11"),
        (12, "PM", "12", "12", "0", "12"),
        (15, "PM", "15", "15", "3", "3"),
        (23, "PM", "23", "23", "11", "11"),
    ],
)
def test_the_four_hour_letters_and_am_pm(hour: int, a: str, H: str, k: str, K: str, h: str) -> None:
    value = at(2024, 1, 1, hour)
    assert (fmt("a", value), fmt("H", value), fmt("k", value), fmt("K", value), fmt("h", value)) == (
        a,
        H,
        k,
        K,
        h,
    )


def test_us_weeks_start_on_sunday_and_week_one_holds_january_first() -> None:
    assert fmt("w", at(2024, 12, 29)) == "1"  # Sunday of the week of 2025-01-01
    assert fmt("w", at(2021, 1, 1)) == "1"
    assert fmt("w", at(2021, 1, 3)) == "2"
    assert fmt("u", at(2024, 3, 10)) == "7"  # Sunday


def test_quoted_text_and_quotes() -> None:
    assert fmt("'at' HH 'o''clock'") == "at 07 o'clock"
    assert fmt("''") == "'"
    assert fmt("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'") == "2024-03-05T07:08:09.005Z"  # a literal Z, not the zone
    assert fmt("yyyy-MM-dd'T'HH:mm:ss.SSSXXX") == "2024-03-05T07:08:09.005Z"  # the zone, Z in UTC
    assert fmt("yyyy/MM/dd HH.mm,ss -") == "2024/03/05 07.08,09 -"


def test_values_are_formatted_in_utc() -> None:
    local = datetime.datetime(2024, 3, 5, 23, 30, tzinfo=datetime.timezone(datetime.timedelta(hours=-2)))
    assert fmt("yyyy-MM-dd HH:mm XXX", local) == "2024-03-06 01:30 Z"
    assert (
        fmt("yyyy-MM-dd HH:mm", datetime.datetime(2024, 3, 5, 23, 30)) == "2024-03-05 23:30"
    )  # naive is UTC


def test_format_millis_matches_format_and_reuses_the_text_within_its_period() -> None:
    f = JavaDateFormat("yyyyMMdd")
    first = f.format_millis(0)
    assert first == "19700101"
    assert f.format_millis(DAY - 1) is first
    assert f.format_millis(DAY) == "19700102"
    assert f.format_millis(-1) == "19691231"
    seconds = JavaDateFormat("HH:mm:ss.SSS")
    assert [seconds.format_millis(ms) for ms in (0, 1, 1000, 3_600_000)] == [
        "00:00:00.000",
        "00:00:00.001",
        "00:00:01.000",
        "01:00:00.000",
    ]


def test_format_millis_sees_am_turn_to_pm() -> None:
    f = JavaDateFormat("yyyyMMdd a")
    assert (f.format_millis(10 * 3_600_000), f.format_millis(14 * 3_600_000)) == (
        "19700101 AM",
        "19700101 PM",
    )


def test_week_year_is_the_us_one() -> None:
    assert fmt("YYYY", at(2021, 1, 1)) == "2021"  # ISO says 2020
    assert fmt("YYYY", at(2024, 12, 29)) == "2025"  # ISO says 2024


def test_week_year_at_the_turn_of_the_year() -> None:
    assert fmt("YYYY", at(2024, 12, 30)) == "2025"
    assert fmt("yyyy", at(2024, 12, 30)) == "2024"


# -- parsing ---------------------------------------------------------------------------


def test_parses_to_an_aware_utc_datetime_with_unset_fields_from_the_epoch() -> None:
    result = parse("HH:mm", "13:45")
    assert result == at(1970, 1, 1, 13, 45)
    assert result.utcoffset() == datetime.timedelta()
    assert parse("yyyy", "2024") == at(2024, 1, 1)


def test_abutting_numeric_fields_are_read_by_width() -> None:
    assert parse("yyyyMMddHHmmss", "20240305070809") == at(2024, 3, 5, 7, 8, 9)
    assert parse("yyyyMMddHHmmssSSS", "20240305070809123") == datetime.datetime(
        2024, 3, 5, 7, 8, 9, 123000, tzinfo=UTC
    )
    assert parse("yyyyMMdd", "20240305") == at(2024, 3, 5)


def test_separated_numeric_fields_take_any_number_of_digits() -> None:
    assert parse("d/M/yyyy", "5/3/2024") == at(2024, 3, 5)
    assert parse("yyyy-MM-dd HH:mm:ss.SSS", "2024-01-01 00:00:00.5") == datetime.datetime(
        2024, 1, 1, 0, 0, 0, 5000, tzinfo=UTC
    )  # "5" is 5 ms, not half a second


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        ("yyyy-MM-dd'T'HH:mm:ssXXX", "2024-01-01T10:00:00+02:00", at(2024, 1, 1, 8)),
        ("yyyy-MM-dd'T'HH:mm:ssXXX", "2024-01-01T10:00:00Z", at(2024, 1, 1, 10)),
        ("yyyy-MM-dd'T'HH:mm:ssX", "2024-01-01T10:00:00-05", at(2024, 1, 1, 15)),
        ("yyyy-MM-dd HH:mm:ss Z", "2024-01-01 10:00:00 -0130", at(2024, 1, 1, 11, 30)),
        ("yyyy-MM-dd HH:mm:ss z", "2024-01-01 10:00:00 UTC", at(2024, 1, 1, 10)),
        ("yyyy-MM-dd HH:mm:ss z", "2024-01-01 10:00:00 GMT+05:30", at(2024, 1, 1, 4, 30)),
        ("yyyy-MM-dd HH:mm:ss z", "2024-01-01 00:30:00 GMT+01:00", at(2023, 12, 31, 23, 30)),
    ],
)
def test_zones_and_offsets_are_converted_to_utc(pattern: str, text: str, expected: datetime.datetime) -> None:
    assert parse(pattern, text) == expected


def test_parsing_is_lenient() -> None:
    assert parse("yyyy-MM-dd", "2024-02-30") == at(2024, 3, 1)
    assert parse("yyyy-MM-dd", "2023-02-29") == at(2023, 3, 1)
    assert parse("yyyy-MM-dd", "2024-13-01") == at(2025, 1, 1)
    assert parse("yyyy-MM-dd HH:mm", "2024-01-01 25:00") == at(2024, 1, 2, 1)
    assert parse("yyyy-MM-dd HH:mm:ss", "2024-01-01 00:00:60") == at(2024, 1, 1, 0, 1)


def test_text_after_the_pattern_is_ignored() -> None:
    assert parse("yyyy-MM-dd", "2024-01-01T12:00:00Z and more") == at(2024, 1, 1)


def test_two_digit_years_fall_within_80_years_before_and_20_after_now() -> None:
    this_year = datetime.datetime.now(UTC).year
    assert parse("yy-MM-dd", "99-01-01").year == (1999 if this_year - 80 <= 1999 else 2099)
    near = (this_year + 5) % 100
    assert parse("yy", f"{near:02d}").year == this_year + 5
    assert parse("yy", f"{(this_year - 30) % 100:02d}").year == this_year - 30
    assert parse("yy-MM-dd", "2024-01-01").year == 2024  # not two digits: taken as written


def test_month_and_day_names() -> None:
    assert parse("d MMM yyyy", "5 Mar 2024") == at(2024, 3, 5)
    assert parse("d MMMM yyyy", "5 march 2024") == at(2024, 3, 5)
    assert parse("EEE, d MMM yyyy HH:mm:ss Z", "Tue, 5 Mar 2024 07:08:09 +0000") == at(2024, 3, 5, 7, 8, 9)


def test_twelve_hour_clock() -> None:
    assert parse("hh:mm a", "07:30 PM") == at(1970, 1, 1, 19, 30)
    assert parse("hh:mm a", "12:15 AM") == at(1970, 1, 1, 0, 15)
    assert parse("hh:mm a", "12:15 PM") == at(1970, 1, 1, 12, 15)
    assert parse("hh:mm", "07:30") == at(1970, 1, 1, 7, 30)
    assert parse("kk:mm", "24:00") == at(1970, 1, 1, 0, 0)


def test_am_pm_does_not_move_a_24_hour_field() -> None:
    # Java's calendar resolves the hour from HOUR_OF_DAY when HOUR (h/K) is not set.
    assert parse("HH:mm a", "07:30 PM") == at(1970, 1, 1, 7, 30)


def test_quotes_in_patterns_match_literally() -> None:
    assert parse("yyyy''MM", "2024'05") == at(2024, 5, 1)
    assert parse("'day' d 'of' M", "day 5 of 3") == at(1970, 3, 5)


def test_round_trip() -> None:
    f = JavaDateFormat("yyyy-MM-dd'T'HH:mm:ss.SSSXXX")
    assert f.parse(f.format(MORNING)) == datetime.datetime(2024, 3, 5, 7, 8, 9, 5000, tzinfo=UTC)


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        ("yyyy-MM-dd", "nope"),
        ("yyyy-MM-dd", "2024/01/01"),
        ("yyyyMMdd", "2024"),  # abutting fields need their full width
        ("HH:mm", "12"),
        ("MMM yyyy", "Foo 2024"),
    ],
)
def test_unparseable_text(pattern: str, text: str) -> None:
    with pytest.raises(ValueError) as err:
        parse(pattern, text)
    assert str(err.value) == f'Unparseable date: "{text}"'


# -- patterns --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "letter"), [("q", "q"), ("yyyy-MM-dd qq", "q"), ("bad-format", "b"), ("T", "T")]
)
def test_illegal_pattern_letters(pattern: str, letter: str) -> None:
    with pytest.raises(ValueError) as err:
        JavaDateFormat(pattern)
    assert str(err.value) == f"Illegal pattern character '{letter}'"


def test_other_invalid_patterns() -> None:
    with pytest.raises(ValueError, match="Unterminated quote"):
        JavaDateFormat("yyyy 'open")
    with pytest.raises(ValueError, match="invalid ISO 8601 format: length=4"):
        JavaDateFormat("XXXX")


def test_letters_inside_quotes_and_non_letters_are_literal() -> None:
    f = JavaDateFormat("'qbT' #1 ~")
    assert f.format(MORNING) == "qbT #1 ~"
    assert JavaDateFormat("").format(MORNING) == ""


def test_spaces_and_tabs_before_a_field_are_skipped_as_java_does() -> None:
    assert parse("yyyy-MM-dd", " 2024-01-05") == at(2024, 1, 5)
    assert parse("MMM d yyyy", "Jan  5 2024") == at(2024, 1, 5)
    assert parse("yyyy-MM-dd HH:mm", "2024-01-05 \t7:30") == at(2024, 1, 5, 7, 30)


def test_literal_text_is_case_sensitive_but_names_are_not() -> None:
    assert parse("dd MMM yyyy", "05 JAN 2024") == at(2024, 1, 5)
    assert parse("yyyy-MM-dd'T'HH", "2024-01-05T10") == at(2024, 1, 5, 10)
    with pytest.raises(ValueError, match="Unparseable date"):
        parse("yyyy-MM-dd'T'HH", "2024-01-05t10")
