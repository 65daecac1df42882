"""Recipes of format v1: every field refused with one line naming file and field; folders loaded with drops."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml

from timelyqa.errors import ConfigError
from timelyqa.official.reasons import RecipeReject
from timelyqa.official.recipe import (Extract, Recipe, RecipeError, answer_kind, dump_recipe, load_recipe,
                                      load_recipes, parse_recipe, recipe_of, recipe_path)

# the issue's own example, comments and all: the format's documentation must load as written
CATON = """\
recipe: 1                       # format version
id: caton-river-peak-7d
question: What was the highest river level at the Caton gauge over the past 7 days, excluding today?
level: L1                       # L1 names the target; L2/L3 describe it through one or two hops
timezone: Europe/London         # the zone in which the evaluation clock's dates are taken
each_day: {from: today-7, to: today-1}   # optional: fetch once per day, as {day}
fetch:
  url: "{site}/gauges/caton/readings?date={day}"
  render: never                 # never | always | auto
extract:
  css: "table.readings td.level"   # or xpath: "..."; then optional regex: "..."
  type: number                  # number | integer | date | text | list
combine: max                    # first | last | min | max | mean | sum | count | join
round: 2
unit: "m"
valid: {min: 0, max: 15}
"""


def caton(**changes: Any) -> dict[str, Any]:
    """The example as data, with fields changed (None removes one); nested dicts replace the whole field."""
    data = yaml.safe_load(CATON)
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return data


def write(tmp_path: Path, name: str, data: dict[str, Any] | str) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def refusal(tmp_path: Path, data: dict[str, Any] | str) -> str:
    path = write(tmp_path, "caton.yaml", data)
    with pytest.raises(RecipeError) as err:
        load_recipe(path)
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"{path}: ")
    return message.removeprefix(f"{path}: ")


def test_the_issues_example_loads_as_written(tmp_path: Path) -> None:
    path = write(tmp_path, "caton.yaml", CATON)
    r = load_recipe(path)
    assert (r.id, r.level, r.timezone, r.combine, r.round, r.unit) == (
        "caton-river-peak-7d", "L1", "Europe/London", "max", 2, "m")
    assert (r.each_day.start, r.each_day.end) == ("today-7", "today-1")  # type: ignore[union-attr]
    assert r.fetch.url == "{site}/gauges/caton/readings?date={day}" and r.fetch.render == "never"
    assert r.extract == Extract(css="table.readings td.level", type="number")
    assert (r.valid.min, r.valid.max) == (0, 15)  # type: ignore[union-attr]
    assert recipe_path(r) == path
    assert answer_kind(r) == "number"


def test_a_recipe_error_is_a_configuration_error_the_cli_prints_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        load_recipe(write(tmp_path, "x.yaml", caton(level="L4")))


@pytest.mark.parametrize(("changes", "expected"), [
    # unknown fields, at the top and nested, named with the fields that exist there
    ({"colour": "blue"}, "colour: unknown field (the fields here: recipe, id, question, level, timezone,"),
    ({"extract": {"css": "td", "type": "number", "selector": "td"}}, "extract.selector: unknown field (the fields "
                                                                     "here: css, xpath, regex, type)"),
    ({"each_day": {"from": "today-7", "until": "today"}}, "each_day.until: unknown field (the fields here: from, "
                                                          "to)"),
    ({"valid": {"min": 0, "maximum": 3}}, "valid.maximum: unknown field"),
    # bad types: nothing is coerced
    ({"id": 123}, "id: must be a valid string, not 123"),
    ({"round": "2"}, "round: must be a valid integer, not '2'"),
    ({"round": True}, "round: must be a valid integer, not True"),
    ({"question": ["what?"]}, "question: must be a valid string"),
    ({"vars": {"port": 8080}}, "vars.port: must be a valid string, not 8080"),
    ({"hops": "one hop"}, "hops: must be a valid list"),
    ({"fetch": "http://example.org"}, "fetch: must be a mapping of fields, not 'http://example.org'"),
    ({"valid": {"min": "low"}}, "valid.min: must be a number, or an ISO date for a date answer, not 'low'"),
    ({"added": "16/11/2026"}, "added: must be a date (YYYY-MM-DD), not '16/11/2026'"),
    # enums
    ({"extract": {"css": "td", "type": "float"}}, "extract.type: must be one of number, integer, date, text, "
                                                  "list, not 'float'"),
    ({"level": "L4"}, "level: must be one of L1, L2, L3, not 'L4'"),
    ({"combine": "avg"}, "combine: must be one of first, last, min, max, mean, sum, count, join, not 'avg'"),
    ({"fetch": {"url": "{site}/x?d={day}", "render": "sometimes"}}, "fetch.render: must be one of never, always, "
                                                                    "auto, not 'sometimes'"),
    ({"recipe": "1"}, "recipe: must be one of 1, not '1'"),
    ({"recipe": 2}, "recipe: format 2 is not known here; this reader knows format 1"),
    # missing
    ({"question": None}, "question: required, and missing"),
    ({"fetch": None}, "fetch: required, and missing"),
    ({"question": "  "}, "question: must not be empty"),
    # zone, id, base
    ({"timezone": "Europe/Londres"}, "timezone: 'Europe/Londres' is not an IANA time zone"),
    ({"timezone": "localtime"}, "timezone: 'localtime' is not an IANA time zone"),
    ({"timezone": "../../etc/passwd"}, "timezone: '../../etc/passwd' is not an IANA time zone"),
    ({"id": "Caton_River"}, "id: must be lowercase letters, digits and '-'"),
    ({"id": "-caton"}, "id: must be lowercase letters, digits and '-'"),
    ({"id": "c" * 81}, "id: must be lowercase letters, digits and '-'"),
    # selectors and regex
    ({"extract": {"css": "td", "xpath": "//td", "type": "number"}}, "extract.xpath: give css or xpath, not both"),
    ({"extract": {"type": "number"}}, "extract.css: give a css or an xpath selector (neither is set)"),
    ({"extract": {"css": "table..readings", "type": "number"}}, "extract.css: 'table..readings' is not a CSS "
                                                                "selector"),
    ({"extract": {"css": "td:first", "type": "number"}}, "extract.css: 'td:first' is not a CSS selector"),
    ({"extract": {"xpath": "//td[", "type": "number"}}, "extract.xpath: '//td[' is not an XPath"),
    ({"extract": {"css": "td", "regex": "([0-9]+", "type": "number"}}, "extract.regex: '([0-9]+' does not "
                                                                      "compile: missing )"),
    ({"extract": {"css": "td", "regex": r"(\d+)\.(\d+)", "type": "number"}}, "extract.regex: '(\\\\d+)\\\\.(\\\\d+)' "
                                                                           "has 2 groups; use at most one"),
    # placeholders and each_day
    ({"each_day": None}, "fetch.url: {day} is only filled inside each_day"),
    ({"fetch": {"url": "{site}/gauges/caton/latest"}}, "each_day: fetch.url has no {day}"),
    ({"fetch": {"url": "{site}/x?d={day}&e={today-x}"}}, "fetch.url: {today-x} is neither a date expression"),
    ({"fetch": {"url": "{site}/x?d={day}&e={tomorrow-1}"}}, "fetch.url: {tomorrow-1} is neither a date expression"),
    ({"fetch": {"url": "{site:%Y}/x?d={day}"}}, "fetch.url: {site:%Y}: a format applies to dates only"),
    ({"fetch": {"url": "{site/x?d={day}"}}, "fetch.url: "),
    ({"fetch": {"url": "file:///etc/passwd?d={day}"}}, "fetch.url: must start with http://, https:// or a "
                                                       "{variable}"),
    ({"each_day": {"from": "last-funday", "to": "today"}}, "each_day.from: 'last-funday' is not a date expression"),
    ({"each_day": {"from": "today-7"}}, "each_day.to: required, and missing"),
    ({"vars": {"today": "x"}}, "vars.today: a variable's name is a word"),
    ({"vars": {"my-site": "x"}}, "vars.my-site: a variable's name is a word"),
    # levels
    ({"level": "L2"}, "base: an L2 recipe reuses an L1 recipe: give that recipe's id"),
    ({"level": "L2", "base": "caton-river-level"}, "hops: an L2 recipe describes its target through exactly 1 hop, "
                                                   "not 0"),
    ({"level": "L3", "base": "caton-river-level", "hops": ["the gauge on the Lune"]},
     "hops: an L3 recipe describes its target through at least 2 hops, not 1"),
    ({"level": "L2", "base": "caton-river-peak-7d", "hops": ["x"]}, "base: a recipe cannot be its own base"),
    ({"base": "caton-river-level"}, "base: an L1 recipe names its target itself"),
    ({"hops": ["the gauge on the Lune"]}, "hops: an L1 recipe names its target itself"),
    ({"level": "L2", "base": "caton-river-level", "hops": [" "]}, "hops[0]: a hop must say, in words"),
    # what applies to which answer
    ({"combine": "mean", "extract": {"css": "td", "type": "date"}, "valid": None, "round": None, "unit": None},
     "combine: mean does not apply to type date; use one of first, last, min, max, count, join"),
    ({"combine": "max", "extract": {"css": "td", "type": "text"}}, "combine: max does not apply to type text"),
    ({"combine": "first", "extract": {"css": "li", "type": "list"}}, "combine: first does not apply to type list"),
    ({"round": 11}, "round: must be 0 to 10 decimals, not 11"),
    ({"round": -1}, "round: must be 0 to 10 decimals, not -1"),
    ({"combine": "count"}, "round: rounds numbers, and this recipe's answer is an integer"),
    ({"combine": "join", "round": None}, "unit: follows a number, and this recipe's answer is a text"),
    ({"extract": {"css": "td", "type": "date"}, "round": None, "unit": None},
     "valid: the bounds of a date answer must be ISO dates"),
    ({"valid": {"min": "2026-01-01"}}, "valid: the bounds of a number answer must be numbers"),
    ({"valid": {"min": 5, "max": 1}}, "valid.max: 1.0 is below min 5.0"),
    ({"valid": {"min": 0, "max": "2026-01-01"}}, "valid.max: min and max must both be numbers or both dates"),
    ({"workflow": "/usr/local/bin/x.py"}, "workflow: must be a .py file relative to the recipe file"),
    ({"workflow": "workflow.sh"}, "workflow: must be a .py file relative to the recipe file"),
])
def test_each_bad_field_is_refused_with_one_line_naming_it(tmp_path: Path, changes: dict[str, Any],
                                                           expected: str) -> None:
    assert refusal(tmp_path, caton(**changes)).startswith(expected)


@pytest.mark.parametrize(("text", "expected"), [
    (CATON.replace("fetch:\n", "fetch\n"), "line 8: not valid YAML"),
    (CATON.replace("combine: max", "combine: max\ncombine: min"), "line 14: not valid YAML (the key 'combine' is "
                                                                 "given twice)"),
    (CATON.replace("valid: {min: 0, max: 15}", "valid: {min: 0, max: 15"), "line 17: not valid YAML"),
    (CATON.replace('  css: "table.readings td.level"', '  css: "table.readings td.level'), "line 11: not valid "
                                                                                           "YAML"),
    ("", "the file is empty"),
    ("- one\n- two\n", "the file must be a mapping of fields"),
])
def test_bad_yaml_is_refused_naming_its_line(tmp_path: Path, text: str, expected: str) -> None:
    assert refusal(tmp_path, text).startswith(expected)


def test_the_other_fields_load_when_right(tmp_path: Path) -> None:
    r = load_recipe(write(tmp_path, "lune.yaml", caton(
        id="lune-peak-7d", level="L3", base="caton-river-peak-7d",
        hops=["the river that flows through Lancaster", "the gauge furthest upstream on it"],
        vars={"site": "https://riverlevels.example.org"}, added="2026-11-16", workflow="workflows/lune.py",
        each_day={"from": "last-monday", "to": "yesterday"},
        fetch={"url": "{site}/r?d={day:%d/%m/%Y}&since={today-7}", "render": "auto"},
        extract={"xpath": "//td[@class='level']/text()", "regex": r"([\d.]+)\s*m", "type": "number"})))
    assert r.added == date(2026, 11, 16) and r.vars == {"site": "https://riverlevels.example.org"}
    assert r.hops[1] == "the gauge furthest upstream on it" and r.workflow == "workflows/lune.py"
    assert recipe_of(caton(timezone="UTC"), name="x").timezone == "UTC"
    listing = recipe_of(caton(extract={"css": "ul.stations li", "type": "list"}, combine=None, round=None, unit=None,
                              valid=None), name="x")
    assert listing.combine == "join" and answer_kind(listing) == "list"  # a list is gathered, never cut to one
    dated = recipe_of(caton(extract={"css": "td", "type": "date"}, valid={"min": "2020-01-01"}, round=None,
                            unit=None), name="x")
    assert dated.valid.min == date(2020, 1, 1)  # type: ignore[union-attr]


def test_dump_is_canonical_and_round_trips(tmp_path: Path) -> None:
    r = load_recipe(write(tmp_path, "caton.yaml", CATON))
    text = dump_recipe(r)
    assert text.splitlines()[:6] == ["recipe: 1", "id: caton-river-peak-7d", "question: What was the highest river "
                                     "level at the Caton gauge over the past 7 days, excluding today?", "level: L1",
                                     "timezone: Europe/London", "each_day:"]
    assert "  from: today-7" in text and "vars" not in text and "hops" not in text and "null" not in text
    again = parse_recipe(text, name="again.yaml")
    assert again == r and dump_recipe(again) == text
    l3 = r.model_copy(update={"level": "L3", "base": "caton-river-level", "hops": ["a", "b"],
                              "added": date(2026, 11, 16), "vars": {"site": "http://127.0.0.9:8000"}})
    assert parse_recipe(dump_recipe(l3), name="l3.yaml") == l3


def test_a_folder_loads_sorted_and_drops_bad_and_duplicate_files(tmp_path: Path) -> None:
    root = tmp_path / "recipes"
    write(root, "b/caton.yaml", CATON)
    write(root, "a/lune.yml", caton(id="lune-peak-7d"))
    write(root, "c/copy.yaml", CATON)  # the same id again
    write(root, "a/broken.yaml", caton(level="L9"))
    write(root, "notes.txt", "not a recipe")
    recipes, dropped = load_recipes(root)
    assert [r.id for r in recipes] == ["lune-peak-7d", "caton-river-peak-7d"]
    assert [recipe_path(r) for r in recipes] == [root / "a/lune.yml", root / "b/caton.yaml"]
    assert [(d.item["file"], d.reason) for d in dropped] == [  # type: ignore[index]
        (str(root / "a/broken.yaml"), RecipeReject.RECIPE_INVALID),
        (str(root / "c/copy.yaml"), RecipeReject.RECIPE_DUPLICATE)]
    assert dropped[0].detail == f"{root / 'a/broken.yaml'}: level: must be one of L1, L2, L3, not 'L9'"
    assert dropped[1].detail.endswith(f"'caton-river-peak-7d' is already the id of {root / 'b/caton.yaml'}")
    one, none = load_recipes(root / "b/caton.yaml")
    assert [r.id for r in one] == ["caton-river-peak-7d"] and none == []
    with pytest.raises(ConfigError, match="no such recipe file or folder"):
        load_recipes(tmp_path / "missing")


def test_a_recipe_made_in_code_is_checked_the_same_way() -> None:
    with pytest.raises(ValueError, match="give css or xpath, not both"):
        Extract(css="td", xpath="//td")
    base = recipe_of(caton(), name="x")
    assert isinstance(base, Recipe) and recipe_path(base) is None
    with pytest.raises(RecipeError, match=r"^drafted: combine: sum does not apply to type date"):
        recipe_of({**caton(round=None, unit=None, valid=None), "combine": "sum",
                   "extract": {"css": "td", "type": "date"}}, name="drafted")
