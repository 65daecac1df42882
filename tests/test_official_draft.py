"""Drafting recipes for a site (RT-QA A.1, 3.2, 3.3): a model writes questions and recipes, then L2/L3 variants.

The model is a test double: tests/llmserver.py's ScriptedLLM, an OpenAI-compatible server on 127.0.0.1 standing in
for a paid LLM API, because the drafts a model writes (good and bad) cannot be chosen at will from a real one. The
page is real HTML whose value is a function of the date, computed here independently of the recipes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from tests.llmserver import ScriptedLLM, Step, reply
from tests.test_official_repair import answer, gauge_page
from timelyqa.llm.client import LLM
from timelyqa.llm.settings import LLMSettings
from timelyqa.official.extract import evaluate
from timelyqa.official.draft import draft, origin, write_review
from timelyqa.official.reasons import RecipeReject
from timelyqa.official.recipe import Recipe, load_recipe
from timelyqa.reasons import Dropped

TODAY = date(2026, 11, 16)
SITE = "http://127.0.0.1:8000"
URL = f"{SITE}/gauges/caton/readings?date=2026-11-16"
LEVEL = {"css": "table.readings td.level", "type": "number"}


def recipe(id_: str, question: str, **fields: Any) -> dict[str, Any]:
    return {"id": id_, "question": question, "fetch": {"url": "{site}/gauges/caton/readings?date={today}",
                                                       "render": "never"},
            "extract": LEVEL, "round": 2, "unit": "m", "valid": {"min": 0, "max": 15}, **fields}


DRAFTS = [
    recipe("caton-level-today", "What is the river level at the Caton gauge today?",
           level="L3", timezone="UTC"),  # the drafter's fields, whatever the model says
    recipe("caton-peak-7d", "What was the highest river level at the Caton gauge over the past 7 days, excluding "
                            "today?", each_day={"from": "today-7", "to": "today-1"}, combine="max",
           fetch={"url": SITE + "/gauges/caton/readings?date={day}"}),  # the origin written out
    recipe("caton-level-float", "What is the Caton level as a float?", extract={**LEVEL, "type": "float"}),
    recipe("caton-elsewhere", "What is the level at Caton on a mirror?",
           fetch={"url": "http://mirror.example/gauges/caton?date={today}"}),
    recipe("caton-script", "What does the script say?", workflow="caton.py"),
    recipe("caton-level-today", "What is the level at Caton gauge on this day?"),
]
L2 = "the river gauge on the River Lune just upstream of the Crook o' Lune"
L3 = ["the river that gives Lancaster its name", "its gauge in the village below the Crook o' Lune"]
VARIANTS = [
    {"base": "caton-level-today", "hops": [L2], "question": f"What is the river level at {L2} today?"},
    {"base": "caton-level-today", "hops": L3, "question": "What is today's level at the gauge in the village below "
                                                          "the Crook o' Lune, on the river that names Lancaster?"},
    {"base": "caton-peak-7d", "hops": [L2], "question": f"What was the highest river level at {L2} over the past "
                                                        "7 days, excluding today?"},
    {"base": "caton-level-float", "hops": [L2], "question": "A variant of a dropped draft?"},
    {"base": "caton-peak-7d", "hops": ["x"], "question": DRAFTS[1]["question"]},
]


@pytest.fixture
def model() -> Iterator[tuple[ScriptedLLM, LLM]]:
    with ScriptedLLM() as server:
        llm = LLM(LLMSettings.build(base_url=server.url, model="scripted-model", timeout=5.0, repairs=1,
                                    backoff=0.0, retries=0))
        yield server, llm
        llm.close()


def drafted(llm: LLM) -> tuple[dict[str, Recipe], list[Dropped]]:
    out = draft(llm, URL, "river levels", gauge_page(TODAY, "a"), timezone="Europe/London", today=TODAY)
    recipes = {r.id: r for r in out if isinstance(r, Recipe)}
    assert len(recipes) == sum(isinstance(r, Recipe) for r in out), "two drafts kept with one id"
    return recipes, [d for d in out if isinstance(d, Dropped)]


def script(server: ScriptedLLM) -> None:
    server.then(reply({"drafts": [{"reason": "The level changes every day.", "recipe": r} for r in DRAFTS]}),
                reply({"variants": VARIANTS}))


def test_drafts_become_valid_recipes_with_the_drafters_fields_set(model) -> None:
    server, llm = model
    script(server)
    recipes, _ = drafted(llm)
    today, peak = recipes["caton-level-today"], recipes["caton-peak-7d"]
    for r in (today, peak):
        assert (r.recipe, r.level, r.timezone, r.added, r.vars) == (1, "L1", "Europe/London", TODAY, {"site": SITE})
        assert r.base is None and r.hops == [] and r.workflow is None
    assert peak.fetch.url == "{site}/gauges/caton/readings?date={day}" and peak.combine == "max"
    assert evaluate(today, [gauge_page(TODAY, "a")]).text == answer(TODAY)  # the draft reads the true value


def test_a_bad_draft_is_dropped_naming_its_field(model) -> None:
    server, llm = model
    script(server)
    _, dropped = drafted(llm)
    reasons = {d.item["recipe"]["id"]: (d.reason, d.detail) for d in dropped if "draft" in d.item}
    reason, detail = reasons["caton-level-float"]
    assert reason is RecipeReject.RECIPE_INVALID and "draft 3 (caton-level-float): extract.type" in detail
    assert reasons["caton-elsewhere"][0] is RecipeReject.RECIPE_INVALID
    assert "fetch.url: 'http://mirror.example/gauges/caton?date={today}' is not on the site" in \
        reasons["caton-elsewhere"][1]
    assert "workflow: a drafted recipe never runs code" in reasons["caton-script"][1]
    duplicate = [d for d in dropped if d.reason is RecipeReject.RECIPE_DUPLICATE]
    assert [d.item["question"] for d in duplicate] == [DRAFTS[5]["question"]]
    assert all("\n" not in d.detail for d in dropped)


def test_variants_reuse_the_l1_recipe_with_base_and_hops_set(model) -> None:
    server, llm = model
    script(server)
    recipes, dropped = drafted(llm)
    assert sorted(recipes) == ["caton-level-today", "caton-level-today-l2", "caton-level-today-l3",
                               "caton-peak-7d", "caton-peak-7d-l2"]
    l1 = recipes["caton-level-today"]
    for id_, level, hops in (("caton-level-today-l2", "L2", [L2]), ("caton-level-today-l3", "L3", L3)):
        variant = recipes[id_]
        assert (variant.level, variant.base, variant.hops) == (level, l1.id, hops)
        assert variant.question != l1.question
        assert variant.model_dump(exclude={"id", "question", "level", "base", "hops"}) == \
            l1.model_dump(exclude={"id", "question", "level", "base", "hops"})
    peak = recipes["caton-peak-7d-l2"]
    assert (peak.fetch, peak.extract, peak.each_day, peak.combine) == (
        recipes["caton-peak-7d"].fetch, recipes["caton-peak-7d"].extract, recipes["caton-peak-7d"].each_day, "max")
    variant_drops = [d.detail for d in dropped if "variant" in d.item]
    assert variant_drops == ["variant 4: base: no L1 draft 'caton-level-float' (drafts: caton-level-today, "
                             "caton-peak-7d)", "variant 5 of caton-peak-7d: question: the L1 question unchanged"]


def test_each_call_is_given_what_its_prompt_asks_for(model) -> None:
    server, llm = model
    script(server)
    drafted(llm)
    first, second = server.requests
    _, user = (m["content"] for m in first["messages"])
    assert f"Website: {URL} (its origin {{site}} is {SITE})" in user
    assert "Topic: river levels" in user and "Today is 2026-11-16 in Europe/London." in user
    assert '<td class="level">' in user and "<script" not in user
    [hops_user] = [m["content"] for m in second["messages"] if m["role"] == "user"]
    assert hops_user.splitlines()[1:] == [f"caton-level-today: {DRAFTS[0]['question']}",
                                          f"caton-peak-7d: {DRAFTS[1]['question']}"]


def test_a_reply_that_is_not_json_drops_the_site_with_its_reason(model) -> None:
    server, llm = model
    server.then(Step(content="Here are some questions: ..."), Step(content="The table lists the levels."))
    [dropped] = draft(llm, URL, "river levels", gauge_page(TODAY, "a"), timezone="UTC", today=TODAY)
    assert isinstance(dropped, Dropped) and str(dropped.reason) == "malformed_json"
    assert dropped.item == {"url": URL, "topic": "river levels"} and "rtqa_recipe_generation_v1" in dropped.detail


def test_drafts_go_to_review_as_recipe_files_and_dropped_lines(model, tmp_path: Path) -> None:
    server, llm = model
    script(server)
    out = draft(llm, URL, "river levels", gauge_page(TODAY, "a"), timezone="Europe/London", today=TODAY)
    written = write_review(out, tmp_path / "review")
    assert sorted(p.name for p in written) == ["caton-level-today-l2.yaml", "caton-level-today-l3.yaml",
                                               "caton-level-today.yaml", "caton-peak-7d-l2.yaml", "caton-peak-7d.yaml"]
    again = load_recipe(tmp_path / "review" / "caton-peak-7d-l2.yaml")
    assert again.base == "caton-peak-7d" and again.each_day is not None
    lines = [json.loads(line) for line in (tmp_path / "review" / "dropped.jsonl").read_text().splitlines()]
    assert [line["reason"] for line in lines] == ["recipe_invalid"] * 3 + ["recipe_duplicate"] + ["recipe_invalid"] * 2


def test_a_url_that_is_not_http_is_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match=r"^--url: 'ftp://x/y' is not an http\(s\) URL$"):
        origin("ftp://x/y")
