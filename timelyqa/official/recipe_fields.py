"""The parts a recipe is made of (fetch, extract, each_day, valid), each checked alone; selectors and regexes
bounded (a regex compiled by RE2: linear time, no catastrophic backtracking)."""

from __future__ import annotations

import reprlib
from datetime import date, datetime
from functools import lru_cache
from typing import Any, Literal

import re2
from cssselect import SelectorError
from parsel import Selector
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from timelyqa.official.clock import placeholders, resolve_date
from timelyqa.official.origin import check_template, clip, cut

Render = Literal["never", "always", "auto"]
Kind = Literal["number", "integer", "date", "text", "list"]
Combine = Literal["first", "last", "min", "max", "mean", "sum", "count", "join"]

_EMPTY = Selector(text="<html></html>")
MAX_SELECTOR_CHARS = 2_000
"""The longest css, xpath or regex a recipe may give."""
_RE2 = re2.Options()
_RE2.log_errors = False  # RE2 would print each refused pattern to stderr; the refusal says it once, in one line


def compile_regex(pattern: str) -> Any:
    """A recipe's regex compiled by RE2 (linear in the text it reads); re2.error when RE2 cannot take it."""
    return _compiled(pattern)


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> Any:
    return re2.compile(pattern, _RE2)


def _too_long(text: str) -> str | None:
    return f"{cut(text)} is {len(text)} characters, over {MAX_SELECTOR_CHARS}" if len(text) > MAX_SELECTOR_CHARS \
        else None


class FieldError(ValueError):
    """A check across fields that still names the one field to fix (pydantic would name only the model)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


class StrictModel(BaseModel):
    # strict: `round: "2"` or `id: 123` is a mistake to name, not a value to coerce
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class Fetch(StrictModel):
    url: str
    render: Render = "never"

    @field_validator("url")
    @classmethod
    def _url(cls, url: str) -> str:
        placeholders(url)
        # a literal scheme must be the web's (a public recipe must never read file:// or talk ftp), and the host is
        # written out or one variable stands for the whole origin: no variable or date format picks the host
        check_template(url)
        return url


class Extract(StrictModel):
    css: str | None = None
    xpath: str | None = None
    regex: str | None = None
    type: Kind = "text"

    @field_validator("css")
    @classmethod
    def _css(cls, css: str | None) -> str | None:
        if css is not None:
            if (long := _too_long(css)) is not None:
                raise ValueError(long)
            try:
                _EMPTY.css(css)
            except (SelectorError, ValueError) as exc:
                raise ValueError(f"{cut(css)} is not a CSS selector: {clip(str(exc))}") from None
        return css

    @field_validator("xpath")
    @classmethod
    def _xpath(cls, xpath: str | None) -> str | None:
        if xpath is not None:
            if (long := _too_long(xpath)) is not None:
                raise ValueError(long)
            try:
                _EMPTY.xpath(xpath)
            except ValueError as exc:
                said = str(exc).removeprefix("XPath error: ")
                raise ValueError(f"{cut(xpath)} is not an XPath: {clip(said)}") from None
        return xpath

    @field_validator("regex")
    @classmethod
    def _regex(cls, regex: str | None) -> str | None:
        if regex is not None:
            if (long := _too_long(regex)) is not None:
                raise ValueError(long)
            try:
                groups = compile_regex(regex).groups
            except re2.error as exc:
                said = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) \
                    else str(exc)
                raise ValueError(f"{cut(regex)} does not compile: {clip(said)} (recipes' regexes are "
                                 "RE2's: no lookaround, no backreferences)") from None
            if groups > 1:
                raise ValueError(f"{cut(regex)} has {groups} groups; use at most one (its text is the value)")
        return regex

    @model_validator(mode="after")
    def _one_selector(self) -> Extract:
        if self.css is not None and self.xpath is not None:
            raise FieldError("xpath", "give css or xpath, not both")
        if self.css is None and self.xpath is None:
            raise FieldError("css", "give a css or an xpath selector (neither is set)")
        return self

    @property
    def selector(self) -> str:
        """How the selector is named in a failure: `css 'td.level'` or `xpath '//td'`."""
        return f"css {cut(self.css)}" if self.css is not None else f"xpath {cut(self.xpath or '')}"


class EachDay(StrictModel):
    model_config = ConfigDict(validate_by_name=True, validate_by_alias=True, serialize_by_alias=True)
    start: str = Field(alias="from")
    end: str = Field(alias="to")

    @field_validator("start", "end")
    @classmethod
    def _expression(cls, expr: str) -> str:
        resolve_date(expr, date(2000, 1, 1))
        return expr


def _bound(value: Any) -> Any:
    if value is None or isinstance(value, date) and not isinstance(value, datetime):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return date.fromisoformat(value)
        except ValueError:
            pass
    raise ValueError(f"must be a number, or an ISO date for a date answer, not {short(value)}")


class Valid(StrictModel):
    min: float | date | None = None
    max: float | date | None = None

    @field_validator("min", "max", mode="before")
    @classmethod
    def _bounds(cls, value: Any) -> Any:
        return _bound(value)

    @model_validator(mode="after")
    def _order(self) -> Valid:
        if self.min is not None and self.max is not None:
            if isinstance(self.min, date) != isinstance(self.max, date):
                raise FieldError("max", "min and max must both be numbers or both dates")
            if self.min > self.max:  # type: ignore[operator]
                raise FieldError("max", f"{self.max} is below min {self.min}")
        return self


_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 60
_REPR.maxlist = _REPR.maxdict = _REPR.maxtuple = _REPR.maxset = 4
_REPR.maxlevel = 2


def short(value: Any) -> str:
    """A value as a message shows it, at most about 60 characters: cut while it is built (reprlib), never the repr()
    of a whole value cut afterwards."""
    text = _REPR.repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
