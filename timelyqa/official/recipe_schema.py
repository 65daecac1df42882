"""A recipe, format v1: its fields and the rules across them (levels, URL placeholders, answer type, combine)."""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from datetime import date, datetime
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import PrivateAttr, field_validator, model_validator

from timelyqa import urls
from timelyqa.official.clock import DAY, VAR_NAME, is_date_expression, placeholders, zone
from timelyqa.official.origin import check_origin, cut, origin_variable
from timelyqa.official.recipe_fields import Combine, EachDay, Extract, Fetch, FieldError, Kind, StrictModel, Valid

FORMAT = 1
ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,79}$")
COMBINES: dict[str, tuple[str, ...]] = {
    "number": ("first", "last", "min", "max", "mean", "sum", "count", "join"),
    "integer": ("first", "last", "min", "max", "mean", "sum", "count", "join"),
    "date": ("first", "last", "min", "max", "count", "join"),
    "text": ("first", "last", "count", "join"),
    "list": ("join", "count"),
}
"""Which combine makes sense for which type: the mean of dates or the max of names is refused at load, not guessed."""


class Recipe(StrictModel):
    recipe: Literal[1]
    id: str
    question: str
    level: Literal["L1", "L2", "L3"]
    timezone: str
    each_day: EachDay | None = None
    fetch: Fetch
    extract: Extract
    combine: Combine = "first"
    round: int | None = None
    unit: str | None = None
    valid: Valid | None = None
    vars: dict[str, str] = {}
    base: str | None = None
    hops: list[str] = []
    added: date | None = None
    workflow: str | None = None
    _path: Path | None = PrivateAttr(default=None)

    def __eq__(self, other: object) -> bool:
        # equal when they say the same: the file a recipe was read from is where it lives, not what it is
        return self.__dict__ == other.__dict__ if isinstance(other, Recipe) else NotImplemented

    @field_validator("id", "base")
    @classmethod
    def _id(cls, value: str | None) -> str | None:
        if value is not None and not ID.match(value):
            raise ValueError(f"must be lowercase letters, digits and '-', starting with a letter or digit, at most 80 "
                             f"characters, not {cut(value)}")
        return value

    @field_validator("question", "unit")
    @classmethod
    def _words(cls, text: str | None) -> str | None:
        if text is not None and not text.strip():
            raise ValueError("must not be empty")
        return text

    @field_validator("hops")
    @classmethod
    def _hops(cls, hops: list[str]) -> list[str]:
        for i, hop in enumerate(hops):
            if not hop.strip():
                raise FieldError(f"[{i}]", "a hop must say, in words, how it leads to the target")
        return hops

    @field_validator("timezone")
    @classmethod
    def _zone(cls, name: str) -> str:
        zone(name)
        return name

    @field_validator("round")
    @classmethod
    def _round(cls, digits: int | None) -> int | None:
        if digits is not None and not 0 <= digits <= 10:
            raise ValueError(f"must be 0 to 10 decimals, not {digits}")
        return digits

    @field_validator("added", mode="before")
    @classmethod
    def _added(cls, value: Any) -> Any:
        if isinstance(value, datetime):
            raise ValueError(f"must be a date (YYYY-MM-DD), not a time {value.isoformat()}")
        if isinstance(value, str):
            try:
                return date.fromisoformat(value)
            except ValueError:
                raise ValueError(f"must be a date (YYYY-MM-DD), not {cut(value)}") from None
        return value

    @field_validator("vars")
    @classmethod
    def _vars(cls, variables: dict[str, str]) -> dict[str, str]:
        for name in variables:
            if not VAR_NAME.match(name) or is_date_expression(name) or name == DAY:
                raise FieldError(name, "a variable's name is a word (letters, digits, _) that is not a date "
                                  "expression such as today or workday")
        return variables

    @field_validator("workflow")
    @classmethod
    def _workflow(cls, workflow: str | None) -> str | None:
        if workflow is not None:
            path = PurePosixPath(workflow)
            if path.is_absolute() or workflow.startswith("\\") or ":" in workflow or path.suffix != ".py":
                raise ValueError(f"must be a .py file relative to the recipe file, not {cut(workflow)}")
        return workflow

    @model_validator(mode="before")
    @classmethod
    def _list_joins(cls, data: Any) -> Any:
        # a list is gathered, never cut to its first item: without a combine, it joins
        if isinstance(data, Mapping) and "combine" not in data and isinstance(data.get("extract"), Mapping):
            if data["extract"].get("type") == "list":
                return {**data, "combine": "join"}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> Recipe:
        _check_level(self)
        _check_url(self)
        _check_answer(self)
        return self


def _check_level(r: Recipe) -> None:
    if r.level == "L1":
        if r.base is not None:
            raise FieldError("base", "an L1 recipe names its target itself; base is for L2/L3")
        if r.hops:
            raise FieldError("hops", "an L1 recipe names its target itself; hops are for L2/L3")
        return
    if r.base is None:
        raise FieldError("base", f"an {r.level} recipe reuses an L1 recipe: give that recipe's id")
    if r.base == r.id:
        raise FieldError("base", "a recipe cannot be its own base")
    wanted = 1 if r.level == "L2" else 2
    if len(r.hops) < wanted or r.level == "L2" and len(r.hops) != 1:
        need = "exactly 1 hop" if r.level == "L2" else "at least 2 hops"
        raise FieldError("hops", f"an {r.level} recipe describes its target through {need}, not {len(r.hops)}")


def _check_url(r: Recipe) -> None:
    names = placeholders(r.fetch.url)
    for name, spec in names:
        if name == DAY:
            if r.each_day is None:
                raise FieldError("fetch.url", "{day} is only filled inside each_day: add each_day, or use a date "
                                  "expression such as {today-1}")
        elif is_date_expression(name):
            continue
        elif not VAR_NAME.match(name):
            raise FieldError("fetch.url", f"{{{name}}} is neither a date expression (today, yesterday, today-N, "
                              "today+N, last-<weekday>, next-<weekday>, workday) nor a variable name")
        elif spec:
            raise FieldError("fetch.url", f"{{{name[:40]}:{spec[:40]}}}: a format applies to dates only, and "
                              f"{cut(name, 40)} is a variable")
    if r.each_day is not None and all(name != DAY for name, _ in names):
        raise FieldError("each_day", "fetch.url has no {day}, so every day would fetch the same page")
    if (origin := origin_variable(r.fetch.url)) is not None and origin in r.vars:
        try:
            check_origin(origin, r.vars[origin])
        except ValueError as exc:
            raise FieldError(f"vars.{origin}", str(exc)) from None
    if origin is None or origin in r.vars:  # an origin given by --var only is checked once filled (resolve.plan)
        _check_canonical(r.fetch.url, r.vars)


def _check_canonical(template: str, variables: Mapping[str, str]) -> None:
    # The one URL check (timelyqa.urls), on the URL with each date and variable filled by a stand-in: a port out of
    # range or a malformed host refuses this recipe when it is read, never the run that fetches every recipe's pages.
    sample = "".join(text + ("" if name is None else variables.get(name, "x"))
                     for text, name, _, _ in string.Formatter().parse(template))
    try:
        urls.canonical(sample)
    except urls.UrlError as exc:
        raise FieldError("fetch.url", f"{cut(template)} has no canonical form: {exc.why}") from None


def answer_kind(r: Recipe) -> Kind:
    """The kind of the combined answer: count is an integer, join a text (a list for type list), the mean of
    integers a number; otherwise the extracted type."""
    if r.combine == "count":
        return "integer"
    if r.combine == "join":
        return "list" if r.extract.type == "list" else "text"
    if r.extract.type == "integer" and r.combine == "mean":
        return "number"
    return r.extract.type


def _check_answer(r: Recipe) -> None:
    if r.combine not in COMBINES[r.extract.type]:
        raise FieldError("combine", f"{r.combine} does not apply to type {r.extract.type}; use one of "
                          f"{', '.join(COMBINES[r.extract.type])}")
    kind = answer_kind(r)
    if r.round is not None and kind != "number":
        raise FieldError("round", f"rounds numbers, and this recipe's answer is {_a(kind)}")
    if r.unit is not None and kind not in ("number", "integer"):
        raise FieldError("unit", f"follows a number, and this recipe's answer is {_a(kind)}")
    if r.valid is not None:
        bounds = [b for b in (r.valid.min, r.valid.max) if b is not None]
        if kind in ("text", "list"):
            raise FieldError("valid", f"bounds numbers and dates, and this recipe's answer is {_a(kind)}")
        if any(isinstance(b, date) != (kind == "date") for b in bounds):
            want = "ISO dates" if kind == "date" else "numbers"
            raise FieldError("valid", f"the bounds of {_a(kind)} answer must be {want}")


def _a(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"

