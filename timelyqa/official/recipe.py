"""Recipes, format v1: the YAML schema, its one-line refusals naming file and field, and loading a folder of them.

A recipe may come from a stranger (a release's row, a model's draft), so reading one is bounded: at most
MAX_RECIPE_CHARS of YAML, no anchors or aliases (a 700-byte alias bomb expands to gigabytes), at most MAX_DEPTH
levels of nesting, selectors and regexes of at most MAX_SELECTOR_CHARS, a regex compiled by RE2 (linear time: no
catastrophic backtracking; a pattern RE2 cannot compile refuses the recipe), its host fixed in its own text
(timelyqa.official.origin), and every message cut before it is built.
"""

from __future__ import annotations

import re
import reprlib
import string
from collections.abc import Mapping
from datetime import date, datetime
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Any, Literal

import re2
import yaml
from cssselect import SelectorError
from parsel import Selector
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from timelyqa import urls
from timelyqa.errors import ConfigError
from timelyqa.official.clock import DAY, VAR_NAME, is_date_expression, placeholders, resolve_date, zone
from timelyqa.official.origin import check_origin, check_template, clip, cut, origin_variable
from timelyqa.official.reasons import RecipeReject
from timelyqa.stages import Dropped

Render = Literal["never", "always", "auto"]
Kind = Literal["number", "integer", "date", "text", "list"]
Combine = Literal["first", "last", "min", "max", "mean", "sum", "count", "join"]

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
_EMPTY = Selector(text="<html></html>")
MAX_RECIPE_CHARS = 64 * 1024
"""The longest recipe text read: recipes are a kilobyte or two; a longer one is refused before YAML sees it."""
MAX_DEPTH = 12
"""The deepest nesting of mappings and lists a recipe may have (it needs 3)."""
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


class RecipeError(ConfigError, ValueError):
    """A recipe file that is not a valid recipe: one line, "<file>: <field path>: <what is wrong>"."""


class _FieldError(ValueError):
    """A check across fields that still names the one field to fix (pydantic would name only the model)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


class _Model(BaseModel):
    # strict: `round: "2"` or `id: 123` is a mistake to name, not a value to coerce
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class Fetch(_Model):
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


class Extract(_Model):
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
            raise _FieldError("xpath", "give css or xpath, not both")
        if self.css is None and self.xpath is None:
            raise _FieldError("css", "give a css or an xpath selector (neither is set)")
        return self

    @property
    def selector(self) -> str:
        """How the selector is named in a failure: `css 'td.level'` or `xpath '//td'`."""
        return f"css {cut(self.css)}" if self.css is not None else f"xpath {cut(self.xpath or '')}"


class EachDay(_Model):
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
    raise ValueError(f"must be a number, or an ISO date for a date answer, not {_short(value)}")


class Valid(_Model):
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
                raise _FieldError("max", "min and max must both be numbers or both dates")
            if self.min > self.max:  # type: ignore[operator]
                raise _FieldError("max", f"{self.max} is below min {self.min}")
        return self


class Recipe(_Model):
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
                raise _FieldError(f"[{i}]", "a hop must say, in words, how it leads to the target")
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
                raise _FieldError(name, "a variable's name is a word (letters, digits, _) that is not a date "
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
            raise _FieldError("base", "an L1 recipe names its target itself; base is for L2/L3")
        if r.hops:
            raise _FieldError("hops", "an L1 recipe names its target itself; hops are for L2/L3")
        return
    if r.base is None:
        raise _FieldError("base", f"an {r.level} recipe reuses an L1 recipe: give that recipe's id")
    if r.base == r.id:
        raise _FieldError("base", "a recipe cannot be its own base")
    wanted = 1 if r.level == "L2" else 2
    if len(r.hops) < wanted or r.level == "L2" and len(r.hops) != 1:
        need = "exactly 1 hop" if r.level == "L2" else "at least 2 hops"
        raise _FieldError("hops", f"an {r.level} recipe describes its target through {need}, not {len(r.hops)}")


def _check_url(r: Recipe) -> None:
    names = placeholders(r.fetch.url)
    for name, spec in names:
        if name == DAY:
            if r.each_day is None:
                raise _FieldError("fetch.url", "{day} is only filled inside each_day: add each_day, or use a date "
                                  "expression such as {today-1}")
        elif is_date_expression(name):
            continue
        elif not VAR_NAME.match(name):
            raise _FieldError("fetch.url", f"{{{name}}} is neither a date expression (today, yesterday, today-N, "
                              "today+N, last-<weekday>, next-<weekday>, workday) nor a variable name")
        elif spec:
            raise _FieldError("fetch.url", f"{{{name[:40]}:{spec[:40]}}}: a format applies to dates only, and "
                              f"{cut(name, 40)} is a variable")
    if r.each_day is not None and all(name != DAY for name, _ in names):
        raise _FieldError("each_day", "fetch.url has no {day}, so every day would fetch the same page")
    if (origin := origin_variable(r.fetch.url)) is not None and origin in r.vars:
        try:
            check_origin(origin, r.vars[origin])
        except ValueError as exc:
            raise _FieldError(f"vars.{origin}", str(exc)) from None
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
        raise _FieldError("fetch.url", f"{cut(template)} has no canonical form: {exc.why}") from None


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
        raise _FieldError("combine", f"{r.combine} does not apply to type {r.extract.type}; use one of "
                          f"{', '.join(COMBINES[r.extract.type])}")
    kind = answer_kind(r)
    if r.round is not None and kind != "number":
        raise _FieldError("round", f"rounds numbers, and this recipe's answer is {_a(kind)}")
    if r.unit is not None and kind not in ("number", "integer"):
        raise _FieldError("unit", f"follows a number, and this recipe's answer is {_a(kind)}")
    if r.valid is not None:
        bounds = [b for b in (r.valid.min, r.valid.max) if b is not None]
        if kind in ("text", "list"):
            raise _FieldError("valid", f"bounds numbers and dates, and this recipe's answer is {_a(kind)}")
        if any(isinstance(b, date) != (kind == "date") for b in bounds):
            want = "ISO dates" if kind == "date" else "numbers"
            raise _FieldError("valid", f"the bounds of {_a(kind)} answer must be {want}")


def _a(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


# ---- reading and writing recipe files

_FIELDS: dict[str, type[BaseModel]] = {"": Recipe, "fetch": Fetch, "extract": Extract, "each_day": EachDay,
                                       "valid": Valid}


class _Loader(yaml.SafeLoader):
    """YAML's safe loader, except that a key given twice is refused (which `combine:` did the author mean?), and so
    are anchors and aliases (nothing in a recipe needs them, and an alias bomb expands to gigabytes) and nesting
    deeper than MAX_DEPTH, each when the parser meets it, before anything is built."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise yaml.composer.ComposerError(None, None, "anchors and aliases (&name, *name) are not allowed in a "
                                              "recipe", event.start_mark)
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise yaml.composer.ComposerError(None, None, f"nested deeper than {MAX_DEPTH} levels",
                                                  event.start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)  # type: ignore[no-untyped-call]
            if key in seen:
                raise yaml.constructor.ConstructorError(None, None, f"the key {_short(key)} is given twice",
                                                        key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 60
_REPR.maxlist = _REPR.maxdict = _REPR.maxtuple = _REPR.maxset = 4
_REPR.maxlevel = 2


def _short(value: Any) -> str:
    """A value as a message shows it, at most about 60 characters: cut while it is built (reprlib), never the repr()
    of a whole value cut afterwards."""
    text = _REPR.repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _describe(error: Mapping[str, Any]) -> tuple[str, str]:
    """One pydantic error as (field path, what is wrong), worded for someone editing the YAML file."""
    path = ""
    for part in error["loc"]:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    kind, ctx, value = error["type"], error.get("ctx") or {}, error.get("input")
    if isinstance(ctx.get("error"), _FieldError):
        field, message = ctx["error"].field, ctx["error"].message
        return path + (field if field.startswith("[") else (f".{field}" if path else field)), message
    if kind == "extra_forbidden":
        parent = path.rpartition(".")[0] if "." in path else ""
        model = _FIELDS.get(parent)
        known = [f.alias or name for name, f in model.model_fields.items()] if model else []
        return path, "unknown field" + (f" (the fields here: {', '.join(known)})" if known else "")
    if kind == "missing":
        return path, "required, and missing"
    if kind == "literal_error":
        expected = ctx.get("expected", "").replace("'", "").replace(" or ", ", ")
        return path, f"must be one of {expected}, not {_short(value)}"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return path, f"must be a mapping of fields, not {_short(value)}"
    if kind == "value_error":
        return path, str(ctx.get("error", error["msg"]))
    message = error["msg"].replace("Input should be", "must be")
    return path, f"{message}, not {_short(value)}"


def recipe_of(data: Any, *, name: str) -> Recipe:
    """A recipe from already-parsed data (a YAML mapping, an LLM's JSON); RecipeError naming `name` and the field."""
    if data is None:
        raise RecipeError(f"{name}: the file is empty; a recipe starts with recipe: 1")
    if not isinstance(data, Mapping):
        raise RecipeError(f"{name}: the file must be a mapping of fields (recipe: 1, id: ..., ...), not "
                          f"{type(data).__name__}")
    version = data.get("recipe")
    if version != FORMAT and (isinstance(version, int) and not isinstance(version, bool)):
        raise RecipeError(f"{name}: recipe: format {version} is not known here; this reader knows format {FORMAT}")
    try:
        return Recipe.model_validate(data)
    except ValidationError as exc:
        # an unknown field first: a misspelt `until:` explains the `to:` said to be missing
        errors = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")
        path, message = _describe(errors[0])
        raise RecipeError(f"{name}: {path or 'recipe'}: {' '.join(message.split())}") from None


def parse_recipe(text: str, *, name: str) -> Recipe:
    """A recipe from YAML text; RecipeError naming `name`, the field, or the line YAML stumbled on."""
    if len(text) > MAX_RECIPE_CHARS:
        raise RecipeError(f"{name}: the recipe is {len(text)} characters, over the {MAX_RECIPE_CHARS} a recipe may "
                          "have")
    try:
        data = yaml.load(text, Loader=_Loader)  # noqa: S506 (_Loader is a SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "YAML"
        problem = getattr(exc, "problem", None) or str(exc)
        raise RecipeError(f"{name}: {where}: not valid YAML ({' '.join(str(problem)[:200].split())})") from None
    return recipe_of(data, name=name)


def load_recipe(path: Path) -> Recipe:
    """The recipe in one file; it remembers the file (see recipe_path), for workflows named relative to it."""
    try:
        with Path(path).open(encoding="utf-8") as fh:
            text = fh.read(MAX_RECIPE_CHARS + 1)  # one more than allowed: parse_recipe says it is too long
    except (OSError, UnicodeDecodeError) as exc:
        raise RecipeError(f"{path}: cannot be read ({exc.__class__.__name__}: {exc})") from None
    recipe = parse_recipe(text, name=str(path))
    recipe._path = Path(path)
    return recipe


def recipe_path(recipe: Recipe) -> Path | None:
    """The file a recipe was loaded from; None for one made in memory (a draft, a repair not yet written)."""
    return recipe._path


def recipe_files(path: Path) -> list[Path]:
    """A file, or every *.yaml and *.yml under a folder, sorted, so the duplicate kept is always the first."""
    path = Path(path)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise ConfigError(f"{path}: no such recipe file or folder")
    return sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())


def load_recipes(path: Path) -> tuple[list[Recipe], list[Dropped]]:
    """Every valid recipe of a file or folder, and each refused file as a Dropped with its one-line reason."""
    recipes: list[Recipe] = []
    dropped: list[Dropped] = []
    seen: dict[str, Path] = {}
    for file in recipe_files(path):
        try:
            recipe = load_recipe(file)
        except RecipeError as exc:
            dropped.append(Dropped(item={"file": str(file)}, reason=RecipeReject.RECIPE_INVALID, detail=str(exc)))
            continue
        if recipe.id in seen:
            dropped.append(Dropped(item={"file": str(file), "id": recipe.id}, reason=RecipeReject.RECIPE_DUPLICATE,
                                   detail=f"{file}: id: {recipe.id!r} is already the id of {seen[recipe.id]}"))
            continue
        seen[recipe.id] = file
        recipes.append(recipe)
    return recipes, dropped


def dump_recipe(recipe: Recipe) -> str:
    """Canonical YAML: the schema's key order, unset optional fields left out; parse_recipe reads it back equal."""
    data = recipe.model_dump(mode="python", by_alias=True, exclude_none=True)
    for empty in ("vars", "hops"):
        if not data[empty]:
            del data[empty]
    if data.get("valid") == {}:
        del data["valid"]
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False, width=1_000)
