"""The official-site source run: the recipes and their history of resolutions become rows of the release.

Each answer a recipe gave at a check is a `snapshot` row (question, `as_of`, answer): what train and validation
hold. Each recipe that resolves is also one `live` row (question and recipe, no answer): what test holds, answered
by `timelyqa live resolve` next to the evaluated model, as RT-QA does. A broken recipe (health.py) gets no live row
until it is repaired, and the release's changelog says so.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import polars as pl

from timelyqa.crawling import Crawl
from timelyqa.manifest import Input, Manifest
from timelyqa.official import health
from timelyqa.official.reasons import Health, reason_of
from timelyqa.official.record import OfficialRecord
from timelyqa.official.recipe import Recipe, dump_recipe
from timelyqa.official.resolve import dates_json
from timelyqa.official.typed import asked, declared, expected, typed
from timelyqa.quality import GATE_PASSED, Gate
from timelyqa.record import Evidence, Verification, record_id
from timelyqa.sources import Progress
from timelyqa.stages import Dropped, StageWriter

SOURCE_NAME = "official_site"
GENERATOR = "official_recipe_v2"
"""The rows' generator: a recipe of format v1 resolved by this code. The question is the recipe's own, saying the
answer's unit when the recipe's question does not (v2: and the answer typed by the recipe's type and unit)."""


def family(recipe: Recipe) -> str:
    return recipe.base or recipe.id


def build(recipes: Sequence[Recipe], refused: Sequence[Dropped], state: Path, out: Path, *,
          broken_after: int = health.BROKEN_AFTER, inputs: Mapping[str, Input] | None = None,
          settings: Mapping[str, Any] | None = None) -> Manifest:
    """questions.parquet, rejected.parquet and manifest.json in `out` from the recipes and the state's history."""
    writer = StageWriter(SOURCE_NAME, out)
    writer.count("recipe_files", len(recipes) + len(refused))
    writer.count("recipes", len(recipes))
    writer.reject_all(refused)
    by_id = {r.id: r for r in recipes}
    answers = health.history(state).filter(pl.col("id").is_in(list(by_id)))
    writer.count("resolutions", answers.height)
    writer.count("resolved", answers.filter(pl.col("status") == "ok").height)
    first_ok = {str(k): v for k, v in answers.filter(pl.col("status") == "ok").group_by("id").agg(
        pl.col("at").min()).iter_rows()}
    added = {r.id: r.added for r in recipes if r.added is not None}
    kept: set[str] = set()
    gate = Gate()  # a recipe's question, as released with its clock, before it becomes a row
    for row in answers.iter_rows(named=True):
        recipe = by_id[row["id"]]
        if row["status"] != "ok":
            writer.reject({"recipe": recipe.id, "at": row["at"].isoformat()}, reason_of(row["reason"]), row["detail"])
            continue
        record = snapshot(recipe, row, _event_date(recipe, added, first_ok))
        if record.id not in kept:  # two clocks of one day in the recipe's zone read the same pages: one row
            kept.add(record.id)
            if gate.keep(record.model_dump(mode="json")):
                writer.keep(record)
    status = health.statuses(answers, broken_after=broken_after)
    broken: list[dict[str, Any]] = []
    for recipe in recipes:
        seen = status.get(recipe.id)
        if seen is None or seen.last_good is None:
            continue  # never resolved: its failures are its rejects
        if recipe.workflow is not None:
            continue  # its code stays with the operator (a release never runs any): snapshots only, no live question
        row = live(recipe, seen.last_good, _event_date(recipe, added, first_ok))
        if seen.broken:
            writer.reject({"id": row.id, "recipe": recipe.id}, Health.RECIPE_BROKEN,
                          f"failed every check of {seen.days_failing} days since {seen.failing_since}: "
                          f"{seen.reason}: {seen.detail}")
            broken.append({"recipe": recipe.id, "since": str(seen.failing_since), "days": seen.days_failing,
                           "reason": seen.reason})
            continue
        if gate.keep(row.model_dump(mode="json")):
            writer.count("live_questions")
            writer.keep(row)
    writer.count(GATE_PASSED, gate.passed)
    writer.reject_all(gate.dropped)
    as_of = answers["at"].max() if answers.height else datetime.now(UTC)
    lines = [f"official_site: recipe `{b['recipe']}` is broken (failing {b['days']} days since {b['since']}: "
             f"{b['reason']}); out of the test split until repaired" for b in broken]
    return writer.finish(as_of=as_of, inputs=dict(inputs or {}), settings={"broken_after": broken_after,
                                                                            **(settings or {})},
                         details={"broken": broken, "changelog": lines})


def _event_date(recipe: Recipe, added: Mapping[str, date], first_ok: Mapping[str, datetime]) -> date:
    """The day the recipe's family joined the dataset: its `added`, else its first good resolution's (UTC)."""
    for key in (recipe.id, family(recipe)):
        if key in added:
            return added[key]
    seen = [first_ok[k] for k in (recipe.id, family(recipe)) if k in first_ok]
    return min(seen).date()


def _evidence(recipe: Recipe, evidence: Sequence[Mapping[str, Any]]) -> list[Evidence]:
    return [Evidence(url=e["url"], title=f"{recipe.id}: page {i} of {len(evidence)}", fetched_at=e["fetched_at"],
                     sha256=e["sha256"]) for i, e in enumerate(evidence, 1)]


def _verification(recipe: Recipe, pages: int, method: str) -> Verification:
    return Verification(method=method, query=recipe.fetch.url, endpoint=recipe.fetch.url.split("?")[0],
                        result_count=pages, passed=True)


def snapshot(recipe: Recipe, row: Mapping[str, Any], event_date: date) -> OfficialRecord:
    """The answer a recipe gave at one clock, with the clock in the question (RT-QA gives models the current time)."""
    at: datetime = row["at"]
    local = at.astimezone(ZoneInfo(recipe.timezone))
    dates = dates_json(row)
    # The type is the recipe's; a list's items as read, when the history has them (older checks have only the text)
    answer = typed(recipe, row["answer"], (row.get("answer_value") or {}).get("items"))
    return OfficialRecord(
        id=record_id(SOURCE_NAME, recipe.id, dates, row["answer"]),
        question=f"Current time: {local:%Y-%m-%d %H:%M} ({recipe.timezone}). {asked(recipe)}",
        **answer.fields(), source=SOURCE_NAME, level=recipe.level, event_date=event_date, as_of=at,
        evidence=_evidence(recipe, row["evidence"]),
        verification=_verification(recipe, len(row["evidence"]), "recipe_v1: resolved at as_of"),
        generator=GENERATOR, recipe_id=recipe.id, family=family(recipe), kind="snapshot", recipe=dump_recipe(recipe),
        timezone=recipe.timezone, dates=dates, value=row["value"], unit=recipe.unit)


def live(recipe: Recipe, good: health.Good, event_date: date) -> OfficialRecord:
    """The question with its recipe and no answer: resolved when a model is evaluated. Its type and what is known of
    its value (the unit, the precision) say the form the answer will take. A repaired recipe is a new row (its text,
    and so its id, changed): a released row is never edited in place."""
    text = dump_recipe(recipe)
    digest = hashlib.sha256(text.encode()).hexdigest()
    return OfficialRecord(
        id=record_id(SOURCE_NAME, recipe.id, "live", digest), question=asked(recipe), answer="",
        answer_type=declared(recipe), answer_value=expected(recipe), source=SOURCE_NAME, level=recipe.level,
        event_date=event_date, as_of=good.at,
        evidence=[Evidence(url=recipe.fetch.url, title=f"{recipe.id}: the recipe's page (last read {good.at:%Y-%m-%d})",
                           fetched_at=good.at, sha256=good.pages[0] if good.pages else None)],
        verification=_verification(recipe, len(good.pages), "recipe_v1: last resolved at as_of; answer at evaluation"),
        generator=GENERATOR, recipe_id=recipe.id, family=family(recipe), kind="live", recipe=text,
        timezone=recipe.timezone, dates=json.dumps({}), value=None, unit=recipe.unit)


def run(recipes_path: Path, state: Path, out: Path, *, crawl: Crawl, clocks: Sequence[datetime] | None = None,
        variables: Mapping[str, str] | None = None, broken_after: int = health.BROKEN_AFTER,
        allow_hosts: Sequence[str] = ()) -> Manifest:
    """`timelyqa official`: check the recipes at `clocks` through `crawl` (none: use the history as it is), then
    build the rows.
    `allow_hosts`: hosts the operator names, which may be private (resolve's trust by origin)."""
    from timelyqa.official.catalog import load  # noqa: PLC0415 - keeps this module's imports light

    catalog = load(Path(recipes_path), repaired=Path(state) / "repaired")
    recipes, refused = catalog.recipes, catalog.refused
    if clocks:
        health.check(recipes, clocks, state, crawl=crawl, variables=variables, allow_hosts=allow_hosts)
    inputs = {"recipes": Input(path=str(recipes_path), sha256=_tree_sha256(Path(recipes_path)))}
    return build(recipes, refused, state, out, broken_after=broken_after, inputs=inputs,
                 settings={"clocks": [c.isoformat() for c in clocks or ()], "vars": dict(variables or {})})


def run_bundle(bundle_path: Path, out: Path, *, crawl: Crawl) -> Manifest:
    """A bundled world (bundle.py): its site served on its port for the run, its recipes checked at its clocks."""
    from timelyqa.localsite import LocalSite  # noqa: PLC0415
    from timelyqa.official.bundle import Bundle  # noqa: PLC0415

    bundle = Bundle.load(bundle_path)
    root = Path(bundle_path).parent
    state = Path(out) / "work" / "state"
    with LocalSite(root / bundle.site, port=bundle.port, host=bundle.host):
        return run(root / bundle.recipes, state, out, crawl=crawl, clocks=bundle.at(), variables=bundle.vars)


def _tree_sha256(path: Path) -> str:
    """One hash over a recipe file, or over every file of a recipe folder with its relative name."""
    digest = hashlib.sha256()
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for file in files:
        digest.update(str(file.relative_to(path) if file != path else file.name).encode() + b"\0")
        digest.update(file.read_bytes())
    return digest.hexdigest()


def run_on(inputs: Sequence[Path], out: Path, progress: Progress | None, crawl: Crawl) -> Manifest:
    """The registry's run (SOURCE.run): a bundled world, its site served on its loopback port, its recipes checked
    at its clocks through `crawl`, rows built."""
    return run_bundle(Path(inputs[0]), out, crawl=crawl)
