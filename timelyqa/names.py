"""Versioned names of what shapes the data (generators, parsers, prompts): one spelling, `name_vN`."""

from __future__ import annotations

import re

VERSIONED = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*_v[1-9][0-9]*$")
"""`wikidata_l2_v1`, `dailyqa_query_writer_v1`: snake_case, then `_v` and the version."""

LEGACY: dict[str, str] = {
    "template:wikipedia-infobox@v2": "wikipedia_infobox_template_v2",
    "template:wikipedia-infobox@v1": "wikipedia_infobox_template_v1",
    "rule:wikipedia-domain@v1": "wikipedia_domain_rule_v1",
    "wikipedia-infobox@v1": "wikipedia_infobox_parser_v1",
    "timelyqa/repair@v1": "timelyqa_repair_v1",
}
"""Names rows were released under before the one spelling, and what they are called now."""
_LEGACY_PROMPT = re.compile(r"^([a-z0-9_]+)/([a-z0-9_]+)@v([1-9][0-9]*)$")


def versioned(name: str, version: int) -> str:
    """`versioned("dailyqa/query_writer", 1)` -> `dailyqa_query_writer_v1`."""
    spelled = f"{name.replace('/', '_').replace('-', '_')}_v{version}"
    if not VERSIONED.match(spelled):
        raise ValueError(f"{name!r} v{version} cannot be spelled as a versioned name")
    return spelled


def current_name(generator: str) -> str:
    """A generator name as this code spells it: a legacy spelling renamed, a model suffix (`+llm:...`) kept."""
    head, plus, model = generator.partition("+")
    if head in LEGACY:
        head = LEGACY[head]
    elif m := _LEGACY_PROMPT.match(head):
        head = f"{m.group(1)}_{m.group(2)}_v{m.group(3)}"
    return head + plus + model


def is_versioned(generator: str) -> bool:
    """The name (before any `+llm:model`) is spelled `name_vN`."""
    return bool(VERSIONED.match(generator.partition("+")[0]))
