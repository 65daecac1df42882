"""Resolve recipes at evaluation clocks: plan each page's URL, fetch them all in one crawl, evaluate, and write
`answers.parquet`, where every recipe gets an answer or a failure with its reason, never a guessed answer.

Each recipe is confined: its requests, and every redirect, reach its own host only (timelyqa.official.origin); a
host no operator named must be a public address; its selector and regex run in a worker bounded in time and memory
(timelyqa.official.bounded). A recipe that fails costs only itself: the others are answered.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl

from timelyqa.crawling import Crawl
from timelyqa.files import write_parquet
from timelyqa.official import bounded, clock
from timelyqa.official.extract import Fail, Value
from timelyqa.official.origin import check_origin, clip, named_hosts, origin_variable
from timelyqa.official.pages import Fetched, PageStore, fetch
from timelyqa.official.reasons import Failure, RecipeReject
from timelyqa.official.recipe import Recipe, recipe_path
from timelyqa.official.typed import typed
from timelyqa.record import RECORD_SCHEMA
from timelyqa.urls import why_not

ANSWERS = "answers.parquet"
LIVE_TOLERANCE = timedelta(hours=1)
"""How far from the moment of fetching an evaluation clock may be for a page that shows only the present (no date
in its URL): further, and the page cannot show the clock's answer (`not_live_clock`)."""
DATES = pl.List(pl.Struct({"name": pl.String(), "date": pl.Date()}))
EVIDENCE = pl.List(pl.Struct({"url": pl.String(), "fetched_at": pl.Datetime("us", "UTC"), "sha256": pl.String(),
                              "rendered": pl.Boolean()}))
ANSWER_SCHEMA = pl.Schema({
    "id": pl.String(), "status": pl.String(), "reason": pl.String(), "detail": pl.String(), "answer": pl.String(),
    "value": pl.Float64(), "unit": pl.String(), "at": pl.Datetime("us", "UTC"), "timezone": pl.String(),
    "dates": DATES, "evidence": EVIDENCE, "answer_aliases": RECORD_SCHEMA["answer_aliases"],
    "answer_type": RECORD_SCHEMA["answer_type"], "answer_value": RECORD_SCHEMA["answer_value"],
})
"""One row per recipe and clock: `status` ok (with `answer`, and `value` where numeric) or failed (with `reason` and
`detail`); `dates` the clock's dates in the recipe's zone; `evidence` each page read (URL, fetch time, sha256 of the
copy kept, rendered by Chromium or not); for an answer, as a release's row has them, its `answer_aliases`,
`answer_type` and `answer_value` (timelyqa.rewards grades a prediction against these four; null for a failure)."""
Fetcher = Callable[[list[tuple[str, str, str]], Path], dict[str, Fetched]]


@dataclass(frozen=True)
class Plan:
    """One recipe at one clock: the pages to read (in order), the dates they stand for, or why none can be read."""

    recipe: Recipe
    at: datetime
    urls: tuple[str, ...] = ()
    dates: tuple[tuple[str, date], ...] = ()
    fail: tuple[str, str] | None = None


@dataclass
class Answer:
    recipe: Recipe
    at: datetime
    dates: tuple[tuple[str, date], ...]
    reason: str | None = None
    detail: str | None = None
    value: Value | None = None
    evidence: list[dict[str, Any]] = field(default_factory=list)

    def row(self) -> dict[str, Any]:
        ok = self.value is not None
        gold = {"answer_aliases": None, "answer_type": None, "answer_value": None}
        if self.value is not None:
            items = self.value.value if isinstance(self.value.value, list) else None
            gold = typed(self.recipe, self.value.text, items).row()
            del gold["answer"]
        return {"id": self.recipe.id, "status": "ok" if ok else "failed", "reason": self.reason,
                "detail": self.detail, "answer": self.value.text if ok else None,
                "value": self.value.number if ok else None, "unit": self.recipe.unit, "at": self.at,
                "timezone": self.recipe.timezone, "dates": [{"name": n, "date": d} for n, d in self.dates],
                "evidence": self.evidence, **gold}


def plan(recipe: Recipe, at: datetime, variables: Mapping[str, str], *, now: datetime) -> Plan:
    """The URLs a recipe reads at clock `at` (its zone's dates, `{day}` for each day of `each_day`), or why none."""
    today = clock.today_in(at, recipe.timezone)
    names = {**recipe.vars, **variables}
    template = recipe.fetch.url
    dates: dict[tuple[str, date], None] = {("today", today): None}
    urls: list[str] = []
    try:
        if (origin := origin_variable(template)) is not None and origin in names:
            check_origin(origin, names[origin])
        days = clock.each_days(recipe.each_day.start, recipe.each_day.end, today) if recipe.each_day else [None]
        for day in days:
            url, used = clock.render(template, today=today, variables=names, day=day)
            if (why := why_not(url)) is not None:  # the one URL check: this recipe fails, the others are fetched
                raise ValueError(why)
            urls.append(url)
            dates.update(dict.fromkeys((name, date.fromisoformat(iso)) for name, iso in used.items()))
    except ValueError as exc:
        return Plan(recipe, at, fail=(str(RecipeReject.RECIPE_INVALID), f"fetch.url: {exc}"))
    if not clock.is_dated(template) and abs(now - at) > LIVE_TOLERANCE:
        return Plan(recipe, at, dates=tuple(dates), fail=(
            # The detail names the clock and the tolerance, not the distance to now: the same inputs give the same
            # rejects (and release bytes) whatever day the check runs.
            str(Failure.NOT_LIVE_CLOCK), f"{template} shows only the present; the clock {at.isoformat()} is more "
            f"than {_far(LIVE_TOLERANCE)} from the moment the page is fetched"))
    return Plan(recipe, at, urls=tuple(urls), dates=tuple(dates))


def _far(delta: timedelta) -> str:
    hours = abs(delta).total_seconds() / 3600
    return f"{hours / 24:.1f} days" if hours >= 48 else f"{hours:.1f} hours"


def request_key(url: str, render: str) -> str:
    return hashlib.blake2b(f"{render}\x1f{url}".encode(), digest_size=10).hexdigest()


def resolve(recipes: Sequence[Recipe], clocks: Sequence[datetime], work: Path, *, crawl: Crawl, store: PageStore,
            variables: Mapping[str, str] | None = None, now: datetime | None = None,
            fetcher: Fetcher | None = None, workflows: Mapping[str, Path] | None = None,
            workflow_timeout: float | None = None, allow_hosts: Iterable[str] = (),
            extract_seconds: float = bounded.SECONDS) -> list[Answer]:
    """Every recipe at every clock: the pages of all of them fetched in one crawl (each URL once) through `crawl`
    (the crawler's port; `fetcher`, when given, fetches instead), then evaluated.

    Trust by origin: the hosts of `variables` (the operator's --var), `allow_hosts` (--allow-host: `host` or
    `host:port`) and of recipes read from the operator's own files (recipe_path is set) may be private; any other
    recipe's host (a release's row, a model's draft) must be a public address, refused as `private_address` by the
    crawl's guard before a connection is tried. Each page's request, and its redirects, may reach its own host only.
    A recipe's reading of its pages runs `extract_seconds` at most (timelyqa.official.bounded).

    A recipe that names a Python workflow runs it (workflow.py) only when `workflows` maps its id to the script,
    which the operator's opt-in alone does; otherwise it fails with `workflow_not_allowed`, and nothing runs."""
    now = now or datetime.now(UTC)
    names = dict(variables or {})
    coded = [r for r in recipes if r.workflow is not None]
    plans = [_plan(r, at, names, now) for at in clocks for r in recipes if r.workflow is None]
    wanted = {request_key(u, p.recipe.fetch.render): (u, p.recipe.fetch.render)
              for p in plans if p.fail is None for u in p.urls}
    requests = [(key, url, render) for key, (url, render) in sorted(wanted.items())]
    named = named_hosts(allow=allow_hosts, values=names.values(),
                        urls=[u for p in plans if recipe_path(p.recipe) is not None for u in p.urls])
    fetched = (fetcher or _crawl(crawl, store, named))(requests, work) if requests else {}
    answers = [_isolated(p, fetched, store, extract_seconds) for p in plans]
    answers += [_run_workflow(r, at, (workflows or {}).get(r.id), workflow_timeout) for at in clocks for r in coded]
    return answers


def _run_workflow(recipe: Recipe, at: datetime, script: Path | None, timeout: float | None) -> Answer:
    from timelyqa.official import workflow  # noqa: PLC0415 - only an operator's opt-in runs code

    today = clock.today_in(at, recipe.timezone)
    answer = Answer(recipe, at, (("today", today),))
    if script is None:
        answer.reason = str(RecipeReject.WORKFLOW_NOT_ALLOWED)
        answer.detail = (f"{recipe.id}: runs {recipe.workflow}; trusted workflows run only with --allow-workflows, "
                         "and never from a release")
        return answer
    outcome = workflow.run(recipe, script, at, timeout=timeout or workflow.TIMEOUT)
    if isinstance(outcome, Fail):
        answer.reason, answer.detail = str(outcome.reason), outcome.detail
    else:
        answer.value = outcome
    return answer


def _crawl(crawl: Crawl, store: PageStore, named: frozenset[str]) -> Fetcher:
    def run(requests: list[tuple[str, str, str]], work: Path) -> dict[str, Fetched]:
        return fetch(requests, work, crawl=crawl, store=store.root, fresh=True, named_private=named)
    return run


def _plan(recipe: Recipe, at: datetime, variables: Mapping[str, str], now: datetime) -> Plan:
    try:
        return plan(recipe, at, variables, now=now)
    except Exception as exc:  # noqa: BLE001 - a stranger's recipe costs only itself, whatever it holds
        return Plan(recipe, at, fail=(str(RecipeReject.RECIPE_INVALID), f"fetch.url: {type(exc).__name__}: "
                                      f"{clip(str(exc)[:300])}"))


def _isolated(p: Plan, fetched: Mapping[str, Fetched], store: PageStore, seconds: float) -> Answer:
    try:
        return _answer(p, fetched, store, seconds)
    except Exception as exc:  # noqa: BLE001 - a stranger's recipe costs only itself, whatever it holds
        answer = Answer(p.recipe, p.at, p.dates)
        answer.reason = str(Failure.EXTRACT_ERROR)
        answer.detail = f"{type(exc).__name__}: {clip(str(exc)[:300])}"
        return answer


def _answer(p: Plan, fetched: Mapping[str, Fetched], store: PageStore, seconds: float) -> Answer:
    answer = Answer(p.recipe, p.at, p.dates)
    if p.fail is not None:
        answer.reason, answer.detail = p.fail
        return answer
    pages: list[str] = []
    for url in p.urls:
        got = fetched.get(request_key(url, p.recipe.fetch.render))
        if got is None:
            answer.reason, answer.detail = str(Failure.SITE_DOWN), f"{url}: the crawl gave no answer for it"
            return answer
        if got.sha256:
            answer.evidence.append({"url": got.url, "fetched_at": got.fetched_at, "sha256": got.sha256,
                                    "rendered": got.rendered})
        if got.failure is not None:
            answer.reason, answer.detail = got.failure, f"{url}: {got.detail or got.failure}"
            return answer
        html = got.html if got.html is not None else (store.get(got.sha256) if got.sha256 else None)
        if html is None:
            answer.reason, answer.detail = str(Failure.SITE_DOWN), f"{url}: no copy of the page was kept"
            return answer
        pages.append(html)
    outcome = bounded.shared_reader().evaluate(p.recipe, pages, seconds=seconds)
    if isinstance(outcome, Fail):
        answer.reason, answer.detail = str(outcome.reason), outcome.detail
    else:
        answer.value = outcome
    return answer


def answers_frame(answers: Sequence[Answer]) -> pl.DataFrame:
    return pl.DataFrame([a.row() for a in answers], schema=ANSWER_SCHEMA, orient="row").sort("id", "at")


def write_answers(answers: Sequence[Answer], out: Path) -> Path:
    path = Path(out) / ANSWERS
    write_parquet(answers_frame(answers), path)
    return path


def dates_json(row: Mapping[str, Any]) -> str:
    """A row's resolved dates as the record's `dates` JSON: {name: ISO date, or a list for each day}."""
    found: dict[str, Any] = {}
    for item in row["dates"]:
        name, day = item["name"], item["date"].isoformat()
        if name == "day":
            found.setdefault("day", []).append(day)
        else:
            found[name] = day
    return json.dumps(found, sort_keys=True)
