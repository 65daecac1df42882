"""The evaluation clock: date expressions at weekends, month and year ends, and in zones where the date is not UTC's."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from timelyqa.official.clock import (each_days, is_dated, parse_at, placeholders, render, resolve_date,
                                     today_in)

SATURDAY = date(2026, 11, 14)
SUNDAY = date(2026, 11, 15)
MONDAY = date(2026, 11, 16)


def test_parse_at_takes_an_offset_or_z_and_refuses_a_naive_time() -> None:
    assert parse_at("2026-11-16T09:00:00+00:00") == datetime(2026, 11, 16, 9, tzinfo=UTC)
    assert parse_at("2026-11-16T09:00:00Z") == datetime(2026, 11, 16, 9, tzinfo=UTC)
    assert parse_at("2026-11-16T21:30:00+13:00") == datetime(2026, 11, 16, 8, 30, tzinfo=UTC)
    for bad in ("2026-11-16T09:00:00", "2026-11-16", "yesterday", ""):
        with pytest.raises(ValueError) as err:
            parse_at(bad)
        assert repr(bad) in str(err.value) and "\n" not in str(err.value)


def test_the_date_is_the_zones_not_utcs_nor_the_machines() -> None:
    evening_utc = parse_at("2026-11-16T20:00:00Z")
    assert today_in(evening_utc, "UTC") == date(2026, 11, 16)
    assert today_in(evening_utc, "Pacific/Auckland") == date(2026, 11, 17)
    early_utc = parse_at("2026-11-17T03:00:00Z")
    assert today_in(early_utc, "America/Los_Angeles") == date(2026, 11, 16)
    assert today_in(early_utc, "Europe/London") == date(2026, 11, 17)
    # the same instant written with another offset is the same day in the zone
    assert today_in(parse_at("2026-11-16T19:00:00-08:00"), "America/Los_Angeles") == date(2026, 11, 16)
    for not_a_zone in ("Mars/Olympus", "localtime", "/etc/localtime", ""):  # never the machine's own zone
        with pytest.raises(ValueError, match="is not an IANA time zone"):
            today_in(evening_utc, not_a_zone)
    with pytest.raises(ValueError, match="offset"):
        today_in(datetime(2026, 11, 16, 9), "UTC")


def test_days_back_and_forward_cross_month_and_year_ends() -> None:
    assert resolve_date("today", MONDAY) == MONDAY
    assert resolve_date("yesterday", date(2026, 3, 1)) == date(2026, 2, 28)
    assert resolve_date("yesterday", date(2028, 3, 1)) == date(2028, 2, 29)  # a leap year
    assert resolve_date("today-1", date(2027, 1, 1)) == date(2026, 12, 31)
    assert resolve_date("today+1", date(2026, 12, 31)) == date(2027, 1, 1)
    assert resolve_date("today-7", date(2026, 12, 3)) == date(2026, 11, 26)
    assert resolve_date("today+30", date(2026, 11, 16)) == date(2026, 12, 16)
    assert resolve_date("today-0", MONDAY) == MONDAY


def test_last_and_next_weekday_are_strictly_before_and_after() -> None:
    assert resolve_date("last-monday", MONDAY) == MONDAY - timedelta(days=7)
    assert resolve_date("last-sunday", MONDAY) == SUNDAY
    assert resolve_date("last-fri", MONDAY) == date(2026, 11, 13)
    assert resolve_date("next-monday", MONDAY) == date(2026, 11, 23)
    assert resolve_date("next-tue", MONDAY) == date(2026, 11, 17)
    assert resolve_date("next-monday", SUNDAY) == MONDAY
    assert resolve_date("last-saturday", SUNDAY) == SATURDAY
    # across a year end: the Thursday before Friday 1 January 2027
    assert resolve_date("last-thursday", date(2027, 1, 1)) == date(2026, 12, 31)
    assert resolve_date("next-friday", date(2026, 12, 31)) == date(2027, 1, 1)


def test_workday_is_today_on_a_weekday_and_the_friday_before_on_a_weekend() -> None:
    assert resolve_date("workday", MONDAY) == MONDAY
    assert resolve_date("workday", date(2026, 11, 13)) == date(2026, 11, 13)
    assert resolve_date("workday", SATURDAY) == date(2026, 11, 13)
    assert resolve_date("workday", SUNDAY) == date(2026, 11, 13)
    assert resolve_date("workday", date(2027, 1, 2)) == date(2027, 1, 1)  # Saturday after New Year's Day


@pytest.mark.parametrize("bad", ["tomorrow", "today-", "today-x", "last-funday", "last-", "next monday", "Today",
                                 "today - 1", "day", ""])
def test_an_unknown_expression_is_named(bad: str) -> None:
    with pytest.raises(ValueError) as err:
        resolve_date(bad, MONDAY)
    assert repr(bad) in str(err.value)


def test_placeholders_in_order_with_their_formats() -> None:
    assert placeholders("{site}/x?d={today-1}&e={today:%d/%m/%Y}&f={day}") == [
        ("site", None), ("today-1", None), ("today", "%d/%m/%Y"), ("day", None)]
    assert placeholders("https://example.org/latest") == []
    assert placeholders("a{{b}}c") == []
    for bad in ("{site", "site}", "{}", "{today!r}", "{today:{fmt}}"):
        with pytest.raises(ValueError):
            placeholders(bad)


def test_a_url_is_dated_when_it_names_a_date() -> None:
    assert is_dated("{site}/readings?date={day}")
    assert is_dated("{site}/releases/{last-monday}.html")
    assert is_dated("{site}/r?d={today:%d/%m/%Y}")
    assert not is_dated("{site}/latest")
    assert not is_dated("https://example.org/today")


def test_render_writes_dates_iso_or_formatted_and_returns_them_as_evidence() -> None:
    url, dates = render("{site}/x?d={today-1}&e={today:%d/%m/%Y}&f={day}", today=MONDAY,
                        variables={"site": "http://127.0.0.5:8080"}, day=date(2026, 11, 10))
    assert url == "http://127.0.0.5:8080/x?d=2026-11-15&e=16/11/2026&f=2026-11-10"
    assert dates == {"today-1": "2026-11-15", "today": "2026-11-16", "day": "2026-11-10"}
    url, dates = render("{site}/g?d={day:%d/%m/%Y}", today=MONDAY, variables={"site": "s"}, day=date(2026, 1, 2))
    assert (url, dates) == ("s/g?d=02/01/2026", {"day": "2026-01-02"})
    url, dates = render("{site}/r/{workday:%Y%m%d}", today=SUNDAY, variables={"site": "s"})
    assert (url, dates) == ("s/r/20261113", {"workday": "2026-11-13"})
    url, dates = render("{site}/latest", today=SUNDAY, variables={"site": "https://a.example"})
    assert (url, dates) == ("https://a.example/latest", {})


def test_render_names_what_it_cannot_fill() -> None:
    with pytest.raises(ValueError, match=r"\{mirror\}.*--var mirror=VALUE"):
        render("{mirror}/x", today=MONDAY, variables={"site": "s"})
    with pytest.raises(ValueError, match="each_day"):
        render("{site}/x?d={day}", today=MONDAY, variables={"site": "s"})
    with pytest.raises(ValueError, match="dates only"):
        render("{site:%Y}/x", today=MONDAY, variables={"site": "s"})


def test_each_days_are_inclusive_and_bounded() -> None:
    days = each_days("today-7", "today-1", date(2026, 3, 2))
    assert days == [date(2026, 2, 23) + timedelta(days=i) for i in range(7)]
    assert each_days("last-monday", "yesterday", date(2026, 11, 18)) == [date(2026, 11, 16), date(2026, 11, 17)]
    assert each_days("today", "today", MONDAY) == [MONDAY]
    assert len(each_days("today-365", "today", MONDAY)) == 366
    with pytest.raises(ValueError, match="comes after"):
        each_days("today-1", "today-7", MONDAY)
    with pytest.raises(ValueError, match="more than 366"):
        each_days("today-366", "today", MONDAY)
    with pytest.raises(ValueError, match="'today-x'"):
        each_days("today-x", "today", MONDAY)


def test_a_fixed_offset_clock_is_read_in_the_recipes_zone() -> None:
    at = datetime(2026, 11, 16, 23, 30, tzinfo=timezone(timedelta(hours=-5)))  # 04:30 UTC on the 17th
    assert today_in(at, "UTC") == date(2026, 11, 17)
    assert today_in(at, "America/New_York") == date(2026, 11, 16)
