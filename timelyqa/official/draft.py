"""Drafting recipes for a site (RT-QA appendix A.1; section 3.3: "a target URL and a topic of interest"): a model
writes real-time questions and their recipes, each validated as format v1 (a bad one is dropped, recipe_invalid,
naming the field); a second call writes their L2/L3 variants, which reuse the L1 recipe and only describe the target.

The drafter, not the model, sets what the operator decided: format version, level, timezone, the `{site}` variable
and the day the recipe was added. A draft never names a workflow (code is never drafted). Drafts are for review:
the caller resolves them and keeps those that resolve (RT-QA's agent checks its own code; ours is checked by running).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from timelyqa.llm import prompts
from timelyqa.llm.client import LLM
from timelyqa.official.origin import cut, host_port
from timelyqa.official.reasons import RecipeReject
from timelyqa.official.recipe import Recipe, RecipeError, dump_recipe, recipe_of
from timelyqa.official.repair import PAGE_CHARS, trim_html
from timelyqa.reasons import Dropped

GENERATION, HOPS = "rtqa/recipe_generation", "rtqa/recipe_hops"
OWNED = frozenset({"recipe", "level", "timezone", "added", "base", "hops"})
"""Fields a drafted L1 recipe takes from the drafter whatever the model wrote (`vars` gets `site` added)."""


def origin(url: str) -> str:
    """scheme://host[:port] of `url`: what `{site}` stands for in the drafted recipes."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"--url: {url!r} is not an http(s) URL")
    return f"{parts.scheme}://{parts.netloc}"


def on_site(url: str, site: str) -> str | None:
    """What follows the origin in a drafted URL that is on `site` (`/path?query`), or None when it is not on it:
    `{site}` then /, ? or # (the recipe's own check refuses anything else after it), or the origin written out, its
    scheme, host and port compared parsed, never as a prefix (`http://a.example.attacker.example` is not on
    `http://a.example`, nor `http://a.example@127.0.0.9`)."""
    if url.startswith("{site}"):
        rest = url[len("{site}"):]
        return rest if rest == "" or rest.startswith(("/", "?", "#")) else None
    head = url.split("{", 1)[0]  # the host is read before any placeholder, which must come after it
    ends = [i for i in (head.find(c, len("https://")) for c in "/?#") if i >= 0]
    if not ends and "{" in url:
        return None
    origin_text = head[:min(ends)] if ends else head
    if "@" in origin_text or "\\" in origin_text:  # a user name, or a backslash some parsers read as a slash
        return None
    same = host_port(origin_text) == host_port(site) is not None
    if not same or urlsplit(origin_text).scheme.lower() != urlsplit(site).scheme.lower():
        return None
    return url[len(origin_text):]


def draft(llm: LLM, url: str, topic: str, html: str, *, timezone: str, today: date, variants: bool = True,
          page_chars: int = PAGE_CHARS) -> list[Recipe | Dropped]:
    """L1 drafts for the page at `url` on `topic`, then (when `variants`) their L2/L3 variants; in that order."""
    site = origin(url)
    reply = llm.ask(prompts.get(GENERATION), {"url": url, "site": site, "topic": topic, "today": today.isoformat(),
                                              "timezone": timezone, "page": trim_html(html, page_chars)})
    if not reply.ok:
        return [Dropped({"url": url, "topic": topic}, reply.reason, f"{reply.prompt_id}: {reply.detail}")]
    out: list[Recipe | Dropped] = []
    seen: set[str] = set()
    for number, item in enumerate(reply.value.drafts, 1):
        out.append(_unique(l1_recipe(item.recipe, number=number, site=site, timezone=timezone, today=today), seen))
    l1 = [r for r in out if isinstance(r, Recipe)]
    if variants and l1:
        out += hop_variants(llm, l1, seen=seen)
    return out


def l1_recipe(data: Mapping[str, Any], *, number: int, site: str, timezone: str, today: date) -> Recipe | Dropped:
    """The model's recipe object as an L1 Recipe, with the drafter's fields set; or why it is not one."""
    label = _label("draft", number, data)
    item = {"draft": number, "recipe": dict(data)}
    if data.get("workflow") is not None:
        return Dropped(item, RecipeReject.RECIPE_INVALID, f"{label}: workflow: a drafted recipe never runs code")
    fetch = data.get("fetch")
    if isinstance(fetch, Mapping) and isinstance(url := fetch.get("url"), str):
        if (rest := on_site(url, site)) is None:
            return Dropped(item, RecipeReject.RECIPE_INVALID,
                           f"{label}: fetch.url: {cut(url)} is not on the site (it must start with {{site}}, {site})")
        fetch = {**fetch, "url": "{site}" + rest}  # the origin said the portable way
    declared = data.get("vars") if isinstance(data.get("vars"), Mapping) else {}
    fields = {**{k: v for k, v in data.items() if k not in OWNED}, "recipe": 1, "level": "L1", "timezone": timezone,
              "vars": {**declared, "site": site}, "added": today}
    if fetch is not None:
        fields["fetch"] = fetch
    return _validated(fields, item, label)


def hop_variants(llm: LLM, l1: Sequence[Recipe], *, seen: set[str] | None = None) -> list[Recipe | Dropped]:
    """One call for L2/L3 variants of the `l1` recipes: each the L1 recipe with its question, level, base and hops."""
    seen = set() if seen is None else seen
    by_id = {recipe.id: recipe for recipe in l1}
    reply = llm.ask(prompts.get(HOPS), {"questions": "\n".join(f"{r.id}: {r.question}" for r in l1)})
    if not reply.ok:
        return [Dropped({"bases": sorted(by_id)}, reply.reason, f"{reply.prompt_id}: {reply.detail}")]
    out: list[Recipe | Dropped] = []
    for number, variant in enumerate(reply.value.variants, 1):
        item = {"variant": number, **variant.model_dump()}
        base = by_id.get(variant.base)
        if base is None:
            out.append(Dropped(item, RecipeReject.RECIPE_INVALID, f"variant {number}: base: no L1 draft "
                                                                  f"{variant.base!r} (drafts: {', '.join(by_id)})"))
            continue
        label = f"variant {number} of {base.id}"
        if " ".join(variant.question.split()).casefold() == " ".join(base.question.split()).casefold():
            out.append(Dropped(item, RecipeReject.RECIPE_INVALID, f"{label}: question: the L1 question unchanged"))
            continue
        level = "L2" if len(variant.hops) <= 1 else "L3"
        # Everything but the question's words is the L1 recipe's: the ground truth stays the L1's (RT-QA 3.2).
        fields = {**base.model_dump(by_alias=True, exclude_none=True), "id": _free(f"{base.id}-{level.lower()}", seen),
                  "question": variant.question, "level": level, "base": base.id, "hops": list(variant.hops)}
        out.append(_unique(_validated(fields, item, label), seen))
    return out


def write_review(items: Sequence[Recipe | Dropped], folder: Path) -> list[Path]:
    """Each drafted recipe as <id>.yaml in `folder`, each dropped draft a line of dropped.jsonl, for review."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    dropped = [item for item in items if isinstance(item, Dropped)]
    for item in items:
        if isinstance(item, Recipe):
            path = folder / f"{item.id}.yaml"
            path.write_text(dump_recipe(item), encoding="utf-8")
            written.append(path)
    if dropped:
        with (folder / "dropped.jsonl").open("a", encoding="utf-8") as log:
            for item in dropped:
                log.write(json.dumps({"reason": str(item.reason), "detail": item.detail, "item": item.item},
                                     default=str, ensure_ascii=False) + "\n")
    return written


def _validated(fields: Mapping[str, Any], item: Mapping[str, Any], label: str) -> Recipe | Dropped:
    try:
        return recipe_of(fields, name=label)  # the loader's own one-line refusal: "<label>: <field>: <what>"
    except RecipeError as exc:
        return Dropped(item, RecipeReject.RECIPE_INVALID, str(exc))


def _unique(result: Recipe | Dropped, seen: set[str]) -> Recipe | Dropped:
    if isinstance(result, Recipe):
        if result.id in seen:
            return Dropped({"id": result.id, "question": result.question}, RecipeReject.RECIPE_DUPLICATE,
                           f"{result.id}: id: another draft already has this id")
        seen.add(result.id)
    return result


def _free(stem: str, seen: set[str]) -> str:
    """`stem`, or stem-2, stem-3, ...: the first id no draft has taken."""
    candidate, n = stem, 1
    while candidate in seen:
        n += 1
        candidate = f"{stem}-{n}"
    return candidate


def _label(kind: str, number: int, data: Mapping[str, Any]) -> str:
    name = data.get("id")
    return f"{kind} {number} ({name})" if isinstance(name, str) and name else f"{kind} {number}"
