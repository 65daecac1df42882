"""Where recipes come from: the operator's recipe files (which alone may name trusted workflows), or a release's
rows (the `recipe` column of an official_site parquet file), which never run code.

Trust by origin. Recipe files the operator holds count as the operator's own, like the `--var` values and the
`--allow-host` entries beside them: the hosts they name may be loopback or private (a test site, a mirror on the
operator's network). They are what the operator writes, reviews and keeps in version control, and the same trust
already lets them name workflows. A release's rows are third-party data, whatever they say: their hosts must be
public addresses unless the operator names them (`--allow-host`, `--var`), each recipe reaches its own host only,
and a row that cannot be read is refused with its reason while the other rows are read. A recipe read from a file
remembers it (recipe.recipe_path); one from a release does not, and that is how the resolver tells them apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from timelyqa.errors import ConfigError
from timelyqa.official.reasons import RecipeReject
from timelyqa.official.recipe import Recipe, RecipeError, load_recipes, parse_recipe, recipe_path
from timelyqa.reasons import Dropped


@dataclass(frozen=True)
class Catalog:
    recipes: list[Recipe]
    refused: list[Dropped] = field(default_factory=list)
    workflows: dict[str, Path] = field(default_factory=dict)
    """Recipe id -> its Python workflow, for the recipes whose code the operator allowed to run."""


def load(path: Path, *, allow_workflows: bool = False, repaired: Path | None = None) -> Catalog:
    """The recipes of a file or folder of recipe files, or of a release's parquet file; ConfigError when there is
    nothing there at all. A recipe in `repaired` (the health state's accepted repairs) stands in for the one of the
    same id."""
    path = Path(path)
    if path.suffix == ".parquet":
        return _from_release(path)
    recipes, refused = load_recipes(path)
    if not recipes and not refused:
        raise ConfigError(f"{path}: holds no recipe files (*.yaml, *.yml)")
    if repaired is not None and Path(repaired).is_dir():
        fixed = {r.id: r for r in load_recipes(Path(repaired))[0]}
        recipes = [_keep_path(fixed[r.id], r) if r.id in fixed else r for r in recipes]
        # An L2/L3 recipe follows its L1's repair: they read the same pages the same way.
        recipes = [r.model_copy(update={"extract": fixed[r.base].extract}) if r.base in fixed and r.id not in fixed
                   else r for r in recipes]
    recipes, mismatched = _check_variants(recipes)
    recipes, escaped = _confine_workflows(recipes, path if path.is_dir() else path.parent)
    workflows: dict[str, Path] = {}
    if allow_workflows:
        for recipe in recipes:
            where = recipe_path(recipe)
            if recipe.workflow is not None and where is not None:
                workflows[recipe.id] = where.parent / recipe.workflow
    return Catalog(recipes, [*refused, *mismatched, *escaped], workflows)


def _confine_workflows(recipes: list[Recipe], folder: Path) -> tuple[list[Recipe], list[Dropped]]:
    """A recipe whose workflow is not a file inside the recipes folder (`../other/evil.py`, or a symlink leading
    out) is refused, flag or not: only the code the operator keeps with the recipes may ever run."""
    kept: list[Recipe] = []
    refused: list[Dropped] = []
    root = folder.resolve()
    for recipe in recipes:
        where = recipe_path(recipe)
        if recipe.workflow is None or where is None:
            kept.append(recipe)
            continue
        script = where.parent / recipe.workflow
        if ".." in Path(recipe.workflow).parts or not script.resolve().is_relative_to(root):
            problem = f"{recipe.workflow!r} leads out of the recipes folder {folder}"
        elif script.exists() and not script.resolve().is_file():
            problem = f"{recipe.workflow!r} is not a file"
        else:
            kept.append(recipe)
            continue
        refused.append(Dropped(item={"file": str(where), "id": recipe.id}, reason=RecipeReject.RECIPE_INVALID,
                               detail=f"{where}: workflow: {problem}; a workflow is a file beside its recipe or below it"))
    return kept, refused


def _keep_path(fixed: Recipe, original: Recipe) -> Recipe:
    """A repaired recipe, still living where the original does (its workflow is named relative to that file)."""
    fixed._path = recipe_path(original)
    return fixed


def _check_variants(recipes: list[Recipe]) -> tuple[list[Recipe], list[Dropped]]:
    """An L2/L3 recipe reuses its L1's pages and extraction (RT-QA 3.2: the verified L1 workflow is reused, so the
    ground truth stays the same): one that reads otherwise is refused."""
    by_id = {r.id: r for r in recipes}
    kept: list[Recipe] = []
    refused: list[Dropped] = []
    for recipe in recipes:
        base = by_id.get(recipe.base) if recipe.base else None
        if base is not None:
            for part in ("fetch", "extract", "each_day", "combine", "round", "valid", "timezone"):
                if getattr(recipe, part) != getattr(base, part):
                    refused.append(Dropped(
                        item={"file": str(recipe_path(recipe)), "id": recipe.id}, reason=RecipeReject.RECIPE_INVALID,
                        detail=f"{recipe_path(recipe)}: {part}: differs from its base {base.id!r}'s; an L2/L3 recipe "
                               "reuses its L1's"))
                    break
            else:
                kept.append(recipe)
            continue
        kept.append(recipe)
    return kept, refused


def _from_release(path: Path) -> Catalog:
    try:
        rows = pl.read_parquet(path, columns=["recipe_id", "recipe"]).unique("recipe_id", keep="first",
                                                                            maintain_order=True)
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise ConfigError(f"{path}: not an official_site parquet file with a recipe column "
                          f"({' '.join(str(exc).split())[:200]})") from None
    recipes: list[Recipe] = []
    refused: list[Dropped] = []
    for index, (recipe_id, text) in enumerate(rows.iter_rows(), 1):
        name = f"{path} row {index} ({str(recipe_id)[:80]})"
        try:
            recipe = parse_recipe(text or "", name=name)
        except RecipeError as exc:
            refused.append(Dropped(item={"file": str(path), "row": index}, reason=RecipeReject.RECIPE_INVALID,
                                   detail=str(exc)))
            continue
        except Exception as exc:  # noqa: BLE001 - a stranger's row costs only itself, whatever it holds
            refused.append(Dropped(item={"file": str(path), "row": index}, reason=RecipeReject.RECIPE_INVALID,
                                   detail=f"{name}: cannot be read ({type(exc).__name__})"))
            continue
        recipes.append(recipe)
    if not recipes and not refused:
        raise ConfigError(f"{path}: holds no recipes")
    return Catalog(recipes, refused)
