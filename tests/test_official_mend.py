"""Repairs started by the health check: a layout change breaks a recipe over three days of checks; the model's
proposal is judged on the page copy stored at the last good check and on the live page; an accepted one is used by
the next check (its L2 variant following it), and the recipe's live question is back, as a new row.

The model is a test double (tests/llmserver.py's ScriptedLLM: a paid model cannot be scripted); the crawl is stood in
for by a fetcher that serves the pages from memory into the state's page store, so six days of checks take
milliseconds (the real crawl is tested in test_official_crawl.py and test_official_resolve.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from tests.llmserver import ScriptedLLM, reply
from spiders import run as spiders_run
from timelyqa.llm.client import LLM
from timelyqa.llm.settings import LLMSettings
from timelyqa.official import health, pipeline
from timelyqa.official.catalog import load
from timelyqa.official.mend import mend, repaired_dir
from timelyqa.official.pages import Fetched
from timelyqa.official.resolve import Fetcher

SITE = "http://127.0.0.9:8000"
CHANGED = date(2026, 11, 13)
"""The agency's new layout, from this day's page on."""
L1 = """\
recipe: 1
id: lune-peak-yesterday
question: What was the highest level of the Lune at the Caton gauge yesterday?
level: L1
timezone: Europe/London
added: 2026-08-03
fetch: {url: "{site}/caton/{yesterday}.html"}
extract: {css: "table.readings td.level", type: number}
combine: max
round: 2
unit: m
valid: {min: 0, max: 10}
vars: {site: "%s"}
""" % SITE
L2 = L1.replace("id: lune-peak-yesterday", "id: lune-peak-yesterday-l2").replace(
    "question: What was the highest level of the Lune at the Caton gauge yesterday?",
    "question: What was the highest level yesterday at the gauge below the Crook o' Lune?").replace(
    "level: L1", "level: L2\nbase: lune-peak-yesterday\nhops: [\"the gauge below the Crook o' Lune\"]")


def levels(day: date) -> list[float]:
    n = day.toordinal()
    return [round(0.5 + ((n * 7 + k * 3) % 23) / 10, 2) for k in range(4)]


def page(day: date) -> str:
    if day < CHANGED:
        cells = "".join(f'<tr><td class="level">{v:.2f}</td></tr>' for v in levels(day))
        body = f'<table class="readings">{cells}</table>'
    else:
        body = '<div class="obs">' + "".join(f'<span class="obs-value">{v:.2f} m</span>' for v in levels(day)) + "</div>"
    return f"<html><body><h1>Caton</h1><p>{day:%d %B %Y}</p>{body}</body></html>"


def fetcher(state: Path) -> Fetcher:
    store = health.store(state)

    def fetch(requests: list[tuple[str, str, str]], work: Path) -> dict[str, Fetched]:
        now = datetime.now(UTC)
        out = {}
        for key, url, _ in requests:
            html = page(date.fromisoformat(url.rsplit("/", 1)[1].removesuffix(".html")))
            sha = store.put(url, now, html.encode())
            out[key] = Fetched(key, url, url, 200, now, sha, False, "no_script", None, None, store)
        return out
    return fetch


def clock(day: int, hour: int = 9) -> datetime:
    return datetime(2026, 11, day, hour, tzinfo=UTC)


@pytest.fixture
def broken(tmp_path: Path) -> tuple[Path, Path]:
    """Recipes and a state folder after checks on 11 to 16 November: good until the page of the 12th, then broken."""
    recipes, state = tmp_path / "recipes", tmp_path / "state"
    recipes.mkdir()
    (recipes / "l1.yaml").write_text(L1)
    (recipes / "l2.yaml").write_text(L2)
    health.check(load(recipes).recipes, [clock(d) for d in range(11, 17)], state, fetcher=fetcher(state),
                 crawl=spiders_run.crawl)
    status = health.statuses(health.history(state))
    assert status["lune-peak-yesterday"].broken and status["lune-peak-yesterday"].days_failing == 3
    return recipes, state


@pytest.fixture
def model() -> Iterator[tuple[ScriptedLLM, LLM]]:
    with ScriptedLLM() as server:
        llm = LLM(LLMSettings.build(base_url=server.url, model="scripted-model", timeout=5.0, repairs=0,
                                    backoff=0.0, retries=0))
        yield server, llm
        llm.close()


def proposal(css: str) -> object:
    return reply({"diagnosis": "The readings table became a list of spans.",
                  "extract": {"css": css, "xpath": None, "regex": None, "type": "number"}})


def test_an_accepted_repair_is_used_by_the_next_check_and_its_variant_follows(
        broken: tuple[Path, Path], model: tuple[ScriptedLLM, LLM]) -> None:
    recipes, state = broken
    server, llm = model
    server.then(proposal("table.readings td.level, div.obs span.obs-value"))
    done = mend(load(recipes, repaired=repaired_dir(state)).recipes, state, llm)
    assert [(m.repair.recipe_id, m.repair.status) for m in done] == [("lune-peak-yesterday", "accepted")]
    assert server.calls == 1, "one proposal for the family: the L2 follows its L1"
    logged = json.loads((state / "repairs.jsonl").read_text().splitlines()[0])
    good_day, live_day = date(2026, 11, 12), date(2026, 11, 15)
    assert logged["good_answer"] == f"{max(levels(good_day)):.2f} m"
    assert logged["answer_on_good"] == logged["good_answer"] and logged["live_answer"] == f"{max(levels(live_day)):.2f} m"
    assert len(logged["good_pages"]) == len(logged["live_pages"]) == 1 and logged["good_pages"] != logged["live_pages"]

    catalog = load(recipes, repaired=repaired_dir(state))
    by_id = {r.id: r for r in catalog.recipes}
    assert by_id["lune-peak-yesterday"].extract.css == "table.readings td.level, div.obs span.obs-value"
    assert by_id["lune-peak-yesterday-l2"].extract == by_id["lune-peak-yesterday"].extract and not catalog.refused

    answers = health.check(catalog.recipes, [clock(16, 10)], state, fetcher=fetcher(state), crawl=spiders_run.crawl)
    assert answers["answer"].to_list() == [f"{max(levels(live_day)):.2f} m"] * 2
    manifest = pipeline.build(catalog.recipes, catalog.refused, state, state.parent / "out")
    rows = pl.read_parquet(state.parent / "out" / "questions.parquet")
    live = rows.filter(pl.col("kind") == "live")
    assert sorted(live["recipe_id"]) == ["lune-peak-yesterday", "lune-peak-yesterday-l2"]
    assert all("span.obs-value" in text for text in live["recipe"]), "the live question carries the mended recipe"
    assert "recipe_broken" not in manifest.rejects and manifest.details["broken"] == []


def test_a_proposal_that_does_not_reproduce_the_stored_answer_is_held_and_changes_nothing(
        broken: tuple[Path, Path], model: tuple[ScriptedLLM, LLM]) -> None:
    recipes, state = broken
    server, llm = model
    server.then(proposal("div.obs span.obs-value"))  # reads the new layout only: nothing on the stored copy
    done = mend(load(recipes, repaired=repaired_dir(state)).recipes, state, llm)
    assert [(m.repair.status, m.repair.reason) for m in done] == [("held", "good_answer_not_reproduced")]
    assert not repaired_dir(state).exists() or not list(repaired_dir(state).iterdir())
    assert (state / "review" / "lune-peak-yesterday.yaml").is_file(), "held for a person to look at"
    catalog = load(recipes, repaired=repaired_dir(state))
    assert {r.extract.css for r in catalog.recipes} == {"table.readings td.level"}
    manifest = pipeline.build(catalog.recipes, catalog.refused, state, state.parent / "out")
    assert manifest.rejects["recipe_broken"] == 2 and manifest.counts.get("live_questions", 0) == 0


def test_a_site_that_is_down_is_not_sent_to_the_model(tmp_path: Path, model: tuple[ScriptedLLM, LLM]) -> None:
    recipes, state = tmp_path / "recipes", tmp_path / "state"
    recipes.mkdir()
    (recipes / "l1.yaml").write_text(L1)
    loaded = load(recipes).recipes
    health.check(loaded, [clock(11)], state, fetcher=fetcher(state), crawl=spiders_run.crawl)
    now = datetime.now(UTC)

    def down(requests: list[tuple[str, str, str]], work: Path) -> dict[str, Fetched]:
        return {k: Fetched(k, u, u, 503, now, None, False, None, "site_down", "http_503") for k, u, _ in requests}
    health.check(loaded, [clock(11) + timedelta(days=d) for d in (1, 2, 3)], state, fetcher=down,
                 crawl=spiders_run.crawl)
    assert health.statuses(health.history(state))["lune-peak-yesterday"].broken
    server, llm = model
    assert mend(loaded, state, llm) == [] and server.calls == 0
