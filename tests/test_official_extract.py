"""Reading answers from official-style pages: selectors, types, each combine, round, valid, and each failure."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from timelyqa.official.extract import Fail, Value, evaluate, matches, typed
from timelyqa.official.reasons import Failure
from timelyqa.official.recipe import Extract, Recipe, recipe_of


def gauge_page(day: str, levels: list[str]) -> str:
    """A river-gauge agency's readings page for one day, as such sites write them (15-minute rows, a unit column)."""
    rows = "\n".join(f"""      <tr>
        <td class="time">{h:02d}:00</td>
        <td class="level">{level}</td>
        <td class="unit">m</td>
      </tr>""" for h, level in enumerate(levels))
    return f"""<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Caton: river level readings for {day}</title>
<meta property="article:modified_time" content="{day}T23:45:00+00:00"></head>
<body>
  <nav><a href="/">Home</a> &gt; <a href="/gauges">Gauges</a></nav>
  <main>
    <h1>River Lune at Caton</h1>
    <p class="station" data-station-id="72004" data-datum="5.45">Station 72004, datum 5.45 mAOD</p>
    <table class="readings">
      <thead><tr><th>Time</th><th>Level</th><th>Unit</th></tr></thead>
      <tbody>
{rows}
      </tbody>
    </table>
  </main>
</body>
</html>"""


RELEASE = """<!DOCTYPE html>
<html><head><title>Population estimates: November 2026</title></head>
<body>
<article class="release">
  <header>
    <h1>Population estimates for the region, mid-2026</h1>
    <dl class="meta">
      <dt>Release date:</dt><dd class="released">16 November 2026</dd>
      <dt>Next release:</dt><dd class="next">November 15, 2027</dd>
      <dt>Revised:</dt><dd class="revised">02/12/2026</dd>
    </dl>
  </header>
  <section class="headline">
    <p>The population was <strong class="figure">1,234,567</strong> people, up
       <span class="change" data-value="0.84">0.84%</span> on the year.</p>
    <p class="area">Area: <span>7,300.5&nbsp;km²</span></p>
    <p class="balance">Net migration: <span>−3,210</span></p>
  </section>
  <section class="districts">
    <h2>Districts</h2>
    <ul>
      <li>Lancaster <span class="pop">144,200</span></li>
      <li>Morecambe <span class="pop">34,800</span></li>
      <li>Carnforth <span class="pop">5,600</span></li>
    </ul>
  </section>
</article>
</body></html>"""


def recipe(extract: dict[str, Any], **fields: Any) -> Recipe:
    data: dict[str, Any] = {"recipe": 1, "id": "test", "question": "What?", "level": "L1", "timezone": "UTC",
                            "fetch": {"url": "{site}/p"}, "extract": extract, **fields}
    return recipe_of(data, name="test.yaml")


def level(**fields: Any) -> Recipe:
    return recipe({"css": "table.readings td.level", "type": "number"}, **fields)


# ---- matches: what the selector sees


def test_matches_give_each_nodes_text_collapsed_or_an_attributes_value() -> None:
    page = gauge_page("2026-11-16", ["1.20", "1.35", "1.31"])
    assert matches(page, Extract(css="table.readings td.level")) == ["1.20", "1.35", "1.31"]
    assert matches(page, Extract(css="p.station::attr(data-station-id)")) == ["72004"]
    assert matches(page, Extract(css="meta[property='article:modified_time']::attr(content)")) == [
        "2026-11-16T23:45:00+00:00"]
    assert matches(page, Extract(xpath="//tbody/tr[last()]/td[@class='level']/text()")) == ["1.31"]
    assert matches(page, Extract(xpath="count(//tbody/tr)")) == ["3.0"]
    # an element's text is all its text, nested tags and newlines collapsed to single spaces
    assert matches(RELEASE, Extract(css="section.headline p:first-child")) == [
        "The population was 1,234,567 people, up 0.84% on the year."]
    assert matches(RELEASE, Extract(css="div.gone")) == []
    assert matches("", Extract(css="td")) == []


def test_a_regex_takes_its_group_or_the_whole_match_and_leaves_out_what_it_does_not_match() -> None:
    districts = Extract(css="section.districts li", regex=r"^(\w+) ")
    assert matches(RELEASE, districts) == ["Lancaster", "Morecambe", "Carnforth"]
    assert matches(RELEASE, Extract(css="section.districts li", regex=r"\d{3},\d{3}")) == ["144,200"]
    assert matches(RELEASE, Extract(css="p", regex=r"up ([\d.]+)%")) == ["0.84"]
    assert matches(RELEASE, Extract(css="dd", regex=r"(?P<year>20\d\d)$")) == ["2026", "2027", "2026"]


# ---- typed: one match as its type


@pytest.mark.parametrize(("raw", "kind", "expected"), [
    ("1,234.5", "number", 1234.5),
    ("\u22123.2", "number", -3.2),  # a typeset minus
    ("4.27 m", "number", 4.27),
    ("Level: -0.5m", "number", -0.5),
    ("7,300.5\u00a0km²", "number", 7300.5),
    ("1\u202f234\u202f567", "number", 1234567.0),  # narrow no-break spaces group thousands in typeset pages
    ("£12,000,000", "number", 12000000.0),
    ("0.84%", "number", 0.84),
    (".5", "number", 0.5),
    ("Rate: 1.0842", "number", 1.0842),
    ("USD 1.0842", "number", 1.0842),
    ("1.92 metres", "number", 1.92),
    ("12 per cent", "number", 12.0),
    ("1,234,567", "integer", 1234567),
    ("4.0", "integer", 4),
    ("\u22123,210", "integer", -3210),
    ("98765432109876543210", "integer", 98765432109876543210),  # exact: not through a float
    ("2026-11-16", "date", date(2026, 11, 16)),
    ("2026-11-16T23:45:00+00:00", "date", date(2026, 11, 16)),
    ("16 November 2026", "date", date(2026, 11, 16)),
    ("Release date: Mon 16th Nov 2026", "date", date(2026, 11, 16)),
    ("November 15, 2027", "date", date(2027, 11, 15)),
    ("Sept. 3, 2026", "date", date(2026, 9, 3)),
    ("the 3rd of March 2026", "date", date(2026, 3, 3)),
    ("02/12/2026", "date", date(2026, 12, 2)),  # day first: 2 December
    ("16.11.2026", "date", date(2026, 11, 16)),
    ("2026/11/16", "date", date(2026, 11, 16)),
    ("Updated: Monday, 16 November 2026, 09:30 GMT", "date", date(2026, 11, 16)),
    ("  Lancaster ", "text", "Lancaster"),
    ("Lancaster", "list", "Lancaster"),
])
def test_typed_reads_values_as_official_pages_write_them(raw: str, kind: Any, expected: object) -> None:
    value = typed(raw, kind)
    assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize(("raw", "kind", "why"), [
    ("n/a", "number", "it holds no number"),
    ("", "number", "it holds no number"),
    ("1,5 m", "number", "'1,5' is ambiguous"),  # a decimal comma: never read as 1 or 15
    ("1.234.567", "number", "'1.234.567' is ambiguous"),
    ("4.5", "integer", "4.5 is not a whole number"),
    ("31/02/2026", "date", "'31/02/2026' is not a day of the calendar"),
    ("16 Brumaire 2026", "date", "it holds no date"),
    ("next week", "date", "it holds no date"),
    ("   ", "text", "it is empty"),
    # the whole value or nothing (issue 26): a number found inside other text is not the value
    ("Daily weather for Aldermoor on 2026-11-15", "number", "it holds 3 numbers, not one"),
    ("Daily weather for Aldermoor on 2026-11-15", "integer", "it holds 3 numbers, not one"),
    ("Daily weather for Aldermoor on 2026-11-15", "date", "'Daily weather for Aldermoor on' around the date is no "
                                                          "label, weekday or time"),
    ("A-5 road", "number", "'A-' before the number is no label or currency"),  # a road's name, not minus five
    ("Population 2026 estimate", "number", "'Population' before the number is no label"),
    ("2026 was a record year", "number", "'was a record year' after the number is no unit"),
    ("1.2 million", "number", "'million' scales the number"),
    ("between 4 and 6", "number", "it holds 2 numbers"),
    ("16 November 2026 to 20 November 2026", "date", "'to 20 November 2026' around the date"),
])
def test_typed_says_why_a_value_is_not_of_its_type(raw: str, kind: Any, why: str) -> None:
    with pytest.raises(ValueError, match="^" + why.replace(".", r"\.")):
        typed(raw, kind)


def test_a_heading_with_a_date_read_as_a_number_fails_value_invalid_instead_of_answering_the_year() -> None:
    page = "<html><body><h1>Daily weather for Aldermoor on 2026-11-15</h1><p class='t'>High: 14 °C</p></body></html>"
    got = evaluate(recipe({"css": "h1", "type": "number"}), [page])
    assert isinstance(got, Fail) and got.reason == "value_invalid", got
    assert got.detail == ("'Daily weather for Aldermoor on 2026-11-15' on page 1 is not a number: it holds 3 numbers, "
                          "not one (a regex can pick the one meant)")
    picked = evaluate(recipe({"css": "h1", "regex": r"on (\d{4})-", "type": "integer"}), [page])
    assert picked == Value(value=2026, text="2026", number=2026.0), "a regex picks the number out"
    assert evaluate(recipe({"css": "p.t", "type": "number"}), [page]) == Value(value=14.0, text="14", number=14.0)


# ---- evaluate: across pages, each combine


WEEK = [["1.20", "1.35"], ["2.41", "2.10"], ["0.98", "1.05"]]
PAGES = [gauge_page(f"2026-11-{10 + i}", levels) for i, levels in enumerate(WEEK)]
ALL = [float(x) for day in WEEK for x in day]


@pytest.mark.parametrize(("combine", "value", "text"), [
    ("first", 1.2, "1.2 m"),
    ("last", 1.05, "1.05 m"),
    ("min", 0.98, "0.98 m"),
    ("max", 2.41, "2.41 m"),
    ("sum", 9.09, "9.09 m"),  # summed exactly (fsum): a naive float sum would print 9.090000000000002
    ("mean", 1.515, "1.515 m"),
])
def test_each_numeric_combine_runs_over_every_page_in_order(combine: str, value: float, text: str) -> None:
    got = evaluate(level(combine=combine, unit="m"), PAGES)
    assert isinstance(got, Value)
    assert got.value == pytest.approx(value) and got.number == pytest.approx(value)
    assert got.text == text


def test_count_join_and_lists() -> None:
    count = evaluate(level(combine="count", unit="readings"), PAGES)
    assert count == Value(value=6, text="6 readings", number=6.0)
    joined = evaluate(level(combine="join"), PAGES[:1])
    assert joined == Value(value="1.2; 1.35", text="1.2; 1.35", number=None)
    names = recipe({"css": "section.districts li", "regex": r"^(\w+)", "type": "list"})
    assert evaluate(names, [RELEASE]) == Value(value=["Lancaster", "Morecambe", "Carnforth"],
                                               text="Lancaster; Morecambe; Carnforth", number=None)
    districts = recipe({"css": "section.districts li", "type": "list"}, combine="count")
    assert evaluate(districts, [RELEASE]) == Value(value=3, text="3", number=3.0)
    first_name = recipe({"css": "section.districts li", "regex": r"^(\w+)", "type": "text"})
    assert evaluate(first_name, [RELEASE]) == Value(value="Lancaster", text="Lancaster", number=None)


def test_integers_and_dates() -> None:
    people = recipe({"css": "strong.figure", "type": "integer"}, unit="people")
    assert evaluate(people, [RELEASE]) == Value(value=1234567, text="1234567 people", number=1234567.0)
    biggest = recipe({"css": "span.pop", "type": "integer"}, combine="max")
    assert evaluate(biggest, [RELEASE]) == Value(value=144200, text="144200", number=144200.0)
    total = recipe({"css": "span.pop", "type": "integer"}, combine="sum")
    assert evaluate(total, [RELEASE]) == Value(value=184600, text="184600", number=184600.0)
    mean = recipe({"css": "span.pop", "type": "integer"}, combine="mean", round=1)
    assert evaluate(mean, [RELEASE]) == Value(value=61533.3, text="61533.3", number=61533.3)
    released = recipe({"css": "dl.meta dd.released", "type": "date"})
    assert evaluate(released, [RELEASE]) == Value(value=date(2026, 11, 16), text="2026-11-16", number=None)
    latest = recipe({"css": "dl.meta dd", "type": "date"}, combine="max")
    assert evaluate(latest, [RELEASE]).text == "2027-11-15"  # type: ignore[union-attr]
    earliest = recipe({"css": "dl.meta dd", "type": "date"}, combine="min")
    assert evaluate(earliest, [RELEASE]).text == "2026-11-16"  # type: ignore[union-attr]


def test_round_writes_exactly_that_many_decimals_and_no_round_the_shortest_form() -> None:
    assert evaluate(level(combine="max", round=2, unit="m"), PAGES) == Value(value=2.41, text="2.41 m", number=2.41)
    assert evaluate(level(combine="sum", round=2), PAGES).text == "9.09"  # type: ignore[union-attr]
    assert evaluate(level(combine="first", round=3), PAGES).text == "1.200"  # type: ignore[union-attr]
    assert evaluate(level(combine="mean", round=0), PAGES).text == "2"  # type: ignore[union-attr]
    assert evaluate(level(combine="mean", round=4), PAGES).text == "1.5150"  # type: ignore[union-attr]
    whole = [gauge_page("2026-11-16", ["3.00", "2.5"])]
    assert evaluate(level(combine="first"), whole).text == "3"  # type: ignore[union-attr]
    below_zero = [gauge_page("2026-11-16", ["-0.001"])]
    assert evaluate(level(round=2), below_zero).text == "0.00"  # type: ignore[union-attr]  # never "-0.00"
    area = recipe({"css": "p.area span", "type": "number"}, unit="km²")
    assert evaluate(area, [RELEASE]).text == "7300.5 km²"  # type: ignore[union-attr]
    balance = recipe({"css": "p.balance span", "type": "number"})
    assert evaluate(balance, [RELEASE]) == Value(value=-3210.0, text="-3210", number=-3210.0)


def test_valid_bounds_pass_values_inside_them() -> None:
    assert isinstance(evaluate(level(combine="max", valid={"min": 0, "max": 15}), PAGES), Value)
    assert isinstance(evaluate(level(combine="max", valid={"max": 2.41}), PAGES), Value)  # bounds are inclusive
    released = recipe({"css": "dd.released", "type": "date"}, valid={"min": "2026-01-01", "max": "2026-12-31"})
    assert isinstance(evaluate(released, [RELEASE]), Value)


# ---- failures, each with its reason


def test_a_selector_that_matches_nothing_names_the_page() -> None:
    moved = PAGES[0], PAGES[1].replace('class="level"', 'class="lvl"'), PAGES[2]  # a layout change on day two
    assert evaluate(level(combine="max"), moved) == Fail(
        Failure.EXTRACTED_NOTHING, "css 'table.readings td.level' matched nothing on page 2")
    by_xpath = recipe({"xpath": "//td[@class='level']", "regex": r"(\d+\.\d+) m", "type": "number"})
    assert evaluate(by_xpath, PAGES) == Fail(
        Failure.EXTRACTED_NOTHING, "xpath \"//td[@class='level']\" with regex '(\\\\d+\\\\.\\\\d+) m' matched "
                                   "nothing on page 1")
    assert evaluate(level(), []) == Fail(Failure.EXTRACTED_NOTHING, "no page was given to read")
    assert evaluate(level(), [""]).reason == Failure.EXTRACTED_NOTHING  # type: ignore[union-attr]


def test_a_value_not_of_its_type_is_refused_naming_the_raw_text_and_page() -> None:
    garbage = [PAGES[0], gauge_page("2026-11-11", ["2.41", "n/a"])]
    assert evaluate(level(combine="max"), garbage) == Fail(
        Failure.VALUE_INVALID, "'n/a' on page 2 is not a number: it holds no number")
    # the first reading is fine, and still a bad one later fails the answer: no silent skipping
    assert evaluate(level(combine="first"), garbage).reason == Failure.VALUE_INVALID  # type: ignore[union-attr]
    comma = [gauge_page("2026-11-16", ["1,35"])]
    got = evaluate(level(), comma)
    assert isinstance(got, Fail) and got.reason == Failure.VALUE_INVALID and "'1,35' is ambiguous" in got.detail
    fraction = recipe({"css": "span.change", "type": "integer"})
    assert evaluate(fraction, [RELEASE]) == Fail(
        Failure.VALUE_INVALID, "'0.84%' on page 1 is not an integer: 0.84 is not a whole number")
    long_text = [gauge_page("2026-11-16", ["telemetry unavailable " * 10])]
    detail = evaluate(level(), long_text).detail  # type: ignore[union-attr]
    assert detail.startswith("'telemetry unavailable telemetry") and "...' on page 1" in detail and len(detail) < 140


def test_a_value_outside_valid_is_refused_with_the_bound() -> None:
    assert evaluate(level(combine="max", valid={"max": 2}), PAGES) == Fail(Failure.VALUE_INVALID,
                                                                         "2.41 above max 2")
    assert evaluate(level(combine="sum", round=1, valid={"min": 10}), PAGES) == Fail(Failure.VALUE_INVALID,
                                                                                   "9.1 below min 10")
    assert evaluate(level(combine="count", valid={"min": 24}), PAGES) == Fail(Failure.VALUE_INVALID,
                                                                            "6 below min 24")
    released = recipe({"css": "dd.released", "type": "date"}, valid={"max": "2026-06-30"})
    assert evaluate(released, [RELEASE]) == Fail(Failure.VALUE_INVALID, "2026-11-16 after max 2026-06-30")
