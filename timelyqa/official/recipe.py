"""Recipes, format v1: the YAML schema, its one-line refusals naming file and field, and loading a folder of them.

A recipe may come from a stranger (a release's row, a model's draft), so reading one is bounded: at most
MAX_RECIPE_CHARS of YAML, no anchors or aliases (a 700-byte alias bomb expands to gigabytes), at most MAX_DEPTH
levels of nesting, selectors and regexes of at most MAX_SELECTOR_CHARS, a regex compiled by RE2 (linear time: no
catastrophic backtracking; a pattern RE2 cannot compile refuses the recipe), its host fixed in its own text
(timelyqa.official.origin), and every message cut before it is built.

The parts: `recipe_fields` (fetch, extract, each_day, valid, and the bounds on selectors and regexes),
`recipe_schema` (the recipe and its rules across fields), `recipe_yaml` (reading and writing recipe files).
"""

from __future__ import annotations

from timelyqa.official.recipe_fields import (MAX_SELECTOR_CHARS, Combine, EachDay, Extract, Fetch, Kind, Render,
                                             Valid, compile_regex)
from timelyqa.official.recipe_schema import COMBINES, FORMAT, ID, Recipe, answer_kind
from timelyqa.official.recipe_yaml import (MAX_DEPTH, MAX_RECIPE_CHARS, RecipeError, dump_recipe, load_recipe,
                                           load_recipes, parse_recipe, recipe_files, recipe_of, recipe_path)

__all__ = ["COMBINES", "FORMAT", "ID", "MAX_DEPTH", "MAX_RECIPE_CHARS", "MAX_SELECTOR_CHARS", "Combine", "EachDay",
           "Extract", "Fetch", "Kind", "Recipe", "RecipeError", "Render", "Valid", "answer_kind", "compile_regex",
           "dump_recipe", "load_recipe", "load_recipes", "parse_recipe", "recipe_files", "recipe_of", "recipe_path"]
