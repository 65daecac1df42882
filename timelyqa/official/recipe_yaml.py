"""Reading and writing recipe files: bounded YAML, pydantic's errors worded as one line naming file and field, and
a folder loaded with each refused file dropped with its reason."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from timelyqa.errors import ConfigError
from timelyqa.official.reasons import RecipeReject
from timelyqa.official.recipe_fields import EachDay, Extract, Fetch, FieldError, Valid, short
from timelyqa.official.recipe_schema import FORMAT, Recipe
from timelyqa.stages import Dropped

MAX_RECIPE_CHARS = 64 * 1024
"""The longest recipe text read: recipes are a kilobyte or two; a longer one is refused before YAML sees it."""
MAX_DEPTH = 12
"""The deepest nesting of mappings and lists a recipe may have (it needs 3)."""


class RecipeError(ConfigError, ValueError):
    """A recipe file that is not a valid recipe: one line, "<file>: <field path>: <what is wrong>"."""


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
                raise yaml.constructor.ConstructorError(None, None, f"the key {short(key)} is given twice",
                                                        key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)



def _describe(error: Mapping[str, Any]) -> tuple[str, str]:
    """One pydantic error as (field path, what is wrong), worded for someone editing the YAML file."""
    path = ""
    for part in error["loc"]:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    kind, ctx, value = error["type"], error.get("ctx") or {}, error.get("input")
    if isinstance(ctx.get("error"), FieldError):
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
        return path, f"must be one of {expected}, not {short(value)}"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return path, f"must be a mapping of fields, not {short(value)}"
    if kind == "value_error":
        return path, str(ctx.get("error", error["msg"]))
    message = error["msg"].replace("Input should be", "must be")
    return path, f"{message}, not {short(value)}"


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
