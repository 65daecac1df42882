"""`timelyqa official` and `timelyqa live ...`: the official-site source and its live operation (RT-QA), as commands
that run the same code as their Prefect flows (flows/official.py)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from timelyqa import checks
from timelyqa.cli.common import console, one_line_errors, print_questions, variables
from timelyqa.errors import ConfigError

live_app = typer.Typer(help="Real-time questions answered by recipes at evaluation time (RT-QA): resolve them, "
                       "check their health, repair and draft them.", no_args_is_help=True)

RecipesOption = Annotated[Path, typer.Option(help="a recipe file, a folder of them, or a release's official_site "
                                             "parquet file (whose recipes never run code)")]
VarsOption = Annotated[list[str] | None, typer.Option("--var", help="NAME=VALUE for a recipe's {NAME} (a mirror, a "
                                                      "test site); repeat for several. A host you give here may be "
                                                      "a private or loopback address")]
AllowHostOption = Annotated[list[str] | None, typer.Option(
    "--allow-host", help="HOST or HOST:PORT that recipes may reach even though it is a private, loopback or "
    "link-local address (a release's recipes reach public addresses only unless you name the host here or in "
    "--var); repeat for several")]


SOME_FAILED = 1
"""`live resolve`'s exit status when a recipe failed or was refused: a script sees that answers are missing."""


def clock_of(text: str | None) -> datetime:
    """`--at` as given, or now."""
    from timelyqa.official.request import clock_of as given

    return datetime.now(UTC) if text is None else given(text)


@live_app.command("resolve")
def resolve(
    recipes: RecipesOption,
    out: Annotated[Path, typer.Option(help="folder for answers.parquet (and the page copies read, in pages/)")],
    at: Annotated[str | None, typer.Option(help="the evaluation clock, ISO with its offset "
                                           "(2026-11-16T09:00:00+00:00); default now")] = None,
    var: VarsOption = None,
    allow_workflows: Annotated[bool, typer.Option(help="run the trusted Python workflows your own recipe files "
                                                  "name (in bubblewrap: no network, no credentials, a time limit)")] = False,
    workflow_timeout: Annotated[float, typer.Option(min=1, help="seconds a workflow may run")] = 60.0,
    allow_host: AllowHostOption = None,
    extract_timeout: Annotated[float, typer.Option(min=0.1, help="seconds one recipe may spend reading its pages "
                                                   "at a clock (its selector and regex); past them it fails "
                                                   "extract_limit")] = 10.0,
) -> None:
    """Answer every recipe at the clock: `answers.parquet` gets each recipe's answer, or its failure and reason.
    Each recipe reaches its own host only; a release's recipes reach public addresses only, unless you name a host
    with --allow-host or --var. Exit status: 0 every recipe answered, 1 some failed or were refused (answers.parquet
    is written all the same), 2 bad input (nothing is resolved)."""
    import polars as pl

    from spiders.run import crawl
    from timelyqa.official.request import ResolveRequest, recipes_of
    from timelyqa.official.request import resolve as resolve_request

    with one_line_errors():
        request = ResolveRequest.of(recipes=recipes, out=out, at=at, variables=variables(var),
                                    allow_hosts=allow_host or [], allow_workflows=allow_workflows,
                                    workflow_timeout=workflow_timeout, extract_timeout=extract_timeout)
        catalog = recipes_of(request)
        for dropped in catalog.refused:
            console.print(f"refused: {dropped.detail}", highlight=False, markup=False, soft_wrap=True)
        resolved = resolve_request(request, catalog, crawl=crawl)
    frame = pl.read_parquet(resolved.path)
    table = Table(title=f"answers at {resolved.clock.isoformat()}")
    for column in ("recipe", "status", "answer or reason"):
        table.add_column(column)
    for row in frame.iter_rows(named=True):
        table.add_row(row["id"], row["status"], row["answer"] if row["status"] == "ok" else
                      f"{row['reason']}: {row['detail']}")
    console.print(table)
    ok = frame.filter(pl.col("status") == "ok").height
    refused = f"; {len(catalog.refused)} recipe(s) refused" if catalog.refused else ""
    typer.echo(f"{ok} of {frame.height} recipes answered in {resolved.path}{refused}")
    if ok < frame.height or catalog.refused:
        raise typer.Exit(SOME_FAILED)


@live_app.command("health")
def health_check(
    recipes: RecipesOption,
    state: Annotated[Path, typer.Option(help="the state folder: the history of checks and the page copies")],
    at: Annotated[str | None, typer.Option(help="the clock to check at (default now)")] = None,
    var: VarsOption = None,
    broken_after: Annotated[int, typer.Option(min=1, help="days in a row of failures that make a recipe broken")]
    = 3,
    allow_host: AllowHostOption = None,
) -> None:
    """Check every recipe now (or at --at), add the answers to the history, and show each recipe's health."""
    from spiders.run import crawl
    from timelyqa.official import health
    from timelyqa.official.catalog import load
    from timelyqa.official.request import allowed_hosts

    with one_line_errors():
        checks.out_folder(state, "--state")
        moment, names, allowed = clock_of(at), variables(var), allowed_hosts(allow_host or [])
        catalog = load(recipes, repaired=state / "repaired")
        health.check(catalog.recipes, [moment], state, crawl=crawl, variables=names, allow_hosts=allowed)
        status = health.statuses(health.history(state), broken_after=broken_after)
    table = Table(title=f"recipe health (broken after {broken_after} days failing)")
    for column in ("recipe", "days failing", "since", "reason", "broken"):
        table.add_column(column)
    for s in status.values():
        table.add_row(s.recipe, str(s.days_failing), str(s.failing_since or ""), s.reason or "", "yes" if s.broken
                      else "")
    console.print(table)
    typer.echo(f"{sum(s.broken for s in status.values())} broken, {sum(s.days_failing > 0 for s in status.values())} "
               f"failing, of {len(status)} recipes; history in {health.answers_dir(state)}")


def official(
    recipes: RecipesOption,
    out: Annotated[Path, typer.Option(help="folder for questions.parquet, rejected.parquet, manifest.json")],
    state: Annotated[Path | None, typer.Option(help="the health state folder (default: OUT/state)")] = None,
    at: Annotated[list[str] | None, typer.Option(help="check the recipes at this clock first (repeat for several); "
                                                 "none: build from the history as it is")] = None,
    var: VarsOption = None,
    broken_after: Annotated[int, typer.Option(help="days in a row of failures that make a recipe broken (1 or "
                                              "more)")] = 3,
    allow_host: AllowHostOption = None,
) -> None:
    """Rows for the release from the recipes and their history: resolved snapshots (train, validation) and live
    questions with their recipes (test); a broken recipe leaves the test split until repaired."""
    from spiders.run import crawl
    from timelyqa.official.request import OfficialRequest, run

    with one_line_errors():
        request = OfficialRequest.of(recipes=recipes, out=out, state=state, at=at or [], variables=variables(var),
                                     broken_after=broken_after, allow_hosts=allow_host or [])
        manifest = run(request, crawl=crawl)
    print_questions(manifest, out)


@live_app.command("repair")
def repair_broken(
    recipes: RecipesOption,
    state: Annotated[Path, typer.Option(help="the state folder of `live health` (history and page copies)")],
    broken_after: Annotated[int, typer.Option(min=1, help="days in a row of failures that make a recipe broken")]
    = 3,
    failing: Annotated[bool, typer.Option(help="try every failing recipe, not only the broken ones")] = False,
) -> None:
    """Propose a new extraction for each broken recipe with the LLM layer (TIMELYQA_LLM_*), accepted only when it
    reproduces the last good answer on the page stored then and reads a valid value on the live page; accepted
    recipes go to STATE/repaired/ (used by the next check), held ones to STATE/review/, each in STATE/repairs.jsonl."""
    from timelyqa.llm.check import models_from_env
    from timelyqa.official import mend
    from timelyqa.official.catalog import load

    with one_line_errors():
        checks.out_folder(state, "--state")
        catalog = load(recipes, repaired=mend.repaired_dir(state))
        llm = models_from_env(cache_dir=state / "llm-cache").writer
        done = mend.mend(catalog.recipes, state, llm, broken_after=broken_after, only_broken=not failing)
    table = Table(title="repairs")
    for column in ("recipe", "status", "why", "recipe file"):
        table.add_column(column)
    for m in done:
        table.add_row(m.repair.recipe_id, m.repair.status, f"{m.repair.reason} {m.repair.detail}".strip(),
                      str(m.recipe_file or ""))
    console.print(table)
    accepted = sum(m.repair.status == "accepted" for m in done)
    typer.echo(f"{accepted} accepted, {len(done) - accepted} held, of {len(done)} repairs tried; log in "
               f"{state / 'repairs.jsonl'}")


@live_app.command("new")
def new_recipes(
    url: Annotated[str, typer.Option(help="the official page to ask about")],
    topic: Annotated[str, typer.Option(help="what the questions should be about, in words")],
    out: Annotated[Path, typer.Option(help="the review folder: drafts that resolved, as recipe files")],
    timezone: Annotated[str, typer.Option(help="the zone the questions' dates are taken in")] = "UTC",
    variants: Annotated[bool, typer.Option(help="also write L2/L3 variants of each L1 draft")] = True,
) -> None:
    """Draft real-time questions and their recipes for a page with the LLM layer (RT-QA's generation prompt), keep
    those that resolve now, and write them to a review folder (with dropped.jsonl saying why the others went)."""
    import json

    from spiders.run import crawl
    from timelyqa.llm.check import models_from_env
    from timelyqa.llm.client import LLM
    from timelyqa.official.clock import today_in
    from timelyqa.official.draft import draft, origin, write_review
    from timelyqa.official.origin import named_hosts
    from timelyqa.official.pages import PageStore, fetch
    from timelyqa.official.reasons import reason_of
    from timelyqa.official.recipe import Recipe
    from timelyqa.official.resolve import resolve as resolve_all
    from timelyqa.official.resolve import write_answers
    from timelyqa.reasons import Dropped

    with one_line_errors():
        checks.out_folder(out, "--out")
        checks.http_url(url, "--url")
        site, now = origin(url), datetime.now(UTC)
        writer = models_from_env(cache_dir=out / "llm-cache").writer
        # several recipes in one reply: more room than one question needs
        llm = LLM(writer.settings.model_copy(update={"max_tokens": max(writer.settings.max_tokens, 4096)}))
        # the operator named --url: its host may be private; the drafts reach it through {site}, also named
        page = fetch([("page", url, "auto")], out / "work" / "page", crawl=crawl, store=out / "pages",
                     named_private=named_hosts(urls=[url]))["page"]
        if page.failure is not None or page.html is None:
            raise ConfigError(f"--url {url}: {page.failure}: {page.detail}")
        drafts = draft(llm, url, topic, page.html, timezone=timezone, today=today_in(now, timezone),
                       variants=variants)
        recipes = [d for d in drafts if isinstance(d, Recipe)]
        answers = resolve_all(recipes, [now], out / "work", crawl=crawl, store=PageStore(out / "pages"),
                              variables={"site": site})
        write_answers(answers, out)
        kept: list[Recipe | Dropped] = [d for d in drafts if isinstance(d, Dropped)]
        for answer in answers:
            if answer.value is None:
                kept.append(Dropped({"id": answer.recipe.id}, reason_of(answer.reason or ""), answer.detail or ""))
            else:
                kept.append(answer.recipe)
        write_review(kept, out)
    for item in kept:
        if isinstance(item, Dropped):
            console.print(f"dropped: {json.dumps(item.item)}: {item.reason}: {item.detail}", highlight=False,
                          markup=False, soft_wrap=True)
    typer.echo(f"{sum(isinstance(k, Recipe) for k in kept)} drafts resolved now and wait for review in {out}; "
               f"{sum(isinstance(k, Dropped) for k in kept)} dropped")

