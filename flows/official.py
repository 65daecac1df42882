"""The official-site flows: resolve recipes at a clock, and the daily check that keeps them healthy and builds the
source's rows for the release.

`official_flow` (deployment `official-daily`) checks every recipe at the run's clock (one crawl), adds the answers
to the state folder's history, classifies failures (a recipe failing N days in a row is broken), and builds the
source's rows; by default on the bundled demo world, served for the run and checked at its fixed clocks.
`official_resolve_flow` answers recipes at one clock into answers.parquet, as `timelyqa live resolve` does.
"""

from __future__ import annotations

from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl
from prefect import flow, get_run_logger, task
from prefect.artifacts import create_table_artifact
from prefect.cache_policies import NONE

from flows.common import publish_funnel, reported, run_clock, run_name, secret
from spiders.run import crawl
from timelyqa.localsite import LocalSite
from timelyqa.manifest import Manifest
from timelyqa.official import health, pipeline
from timelyqa.official.bundle import Bundle
from timelyqa.official.catalog import load
from timelyqa.official.mend import mend, repaired_dir
from timelyqa.official.request import OfficialRequest, ResolveRequest, recipes_of, resolve


@task(cache_policy=NONE)
def check_recipes(recipes: Path) -> int:
    """Fail the run before any work when the recipes path holds nothing readable; count what loads."""
    return len(load(recipes).recipes)


@task(timeout_seconds=2 * 3600, tags=["crawl"], cache_policy=NONE)
def check_health(recipes: Path, clocks: list[datetime], state: Path, variables: dict[str, str],
                 broken_after: int) -> dict[str, Any]:
    """Every recipe resolved at each clock (one crawl), the answers added to the history; the health table."""
    answers = health.check(load(recipes, repaired=repaired_dir(state)).recipes, clocks, state, crawl=crawl,
                           variables=variables)
    status = health.statuses(health.history(state), broken_after=broken_after)
    rows = [{"recipe": s.recipe, "days failing": s.days_failing, "since": str(s.failing_since or ""),
             "reason": s.reason or "", "broken": s.broken} for s in status.values()]
    create_table_artifact(rows, key="official-health",
                          description=f"official_site: each recipe's health (broken after {broken_after} days)")
    counts = answers.group_by("status", "reason").len().sort("status", "reason")
    return {f"{s} {r or ''}".strip(): n for s, r, n in counts.iter_rows()}


@task(cache_policy=NONE)
def repair_recipes(recipes: Path, state: Path, broken_after: int, llm_secret_block: str | None) -> int:
    """One proposal for each broken recipe a new extraction can mend; how many were accepted."""
    from timelyqa.llm.check import models_from_env  # noqa: PLC0415 - only runs that repair need a model

    llm = models_from_env(cache_dir=state / "llm-cache", api_key=secret(llm_secret_block)).writer
    done = mend(load(recipes, repaired=repaired_dir(state)).recipes, state, llm, broken_after=broken_after)
    create_table_artifact([{"recipe": m.repair.recipe_id, "status": m.repair.status,
                            "why": f"{m.repair.reason} {m.repair.detail}".strip()} for m in done],
                          key="official-repairs", description="official_site: repairs of broken recipes")
    return sum(m.repair.status == "accepted" for m in done)


@task(cache_policy=NONE)
def build_rows(recipes: Path, state: Path, out: Path, broken_after: int) -> Manifest:
    catalog = load(recipes, repaired=repaired_dir(state))
    return pipeline.build(catalog.recipes, catalog.refused, state, out, broken_after=broken_after)


def _name(params: dict[str, Any]) -> str:
    """`official 2026-11-24T05:00Z` (the recipes' clock), or the bundled world as given
    (`official data/demo/official/bundle.yaml`)."""
    if params.get("recipes"):
        return f"official {run_clock():%Y-%m-%dT%H:%MZ}"
    return f"official {params['bundle']}"


@flow(name="official", flow_run_name=run_name(_name, "official"))
@reported
def official_flow(out: Path = Path("out/official"), bundle: Path | None = None,
                  recipes: Path | None = None, state: Path | None = None, variables: dict[str, str] | None = None,
                  broken_after: int = health.BROKEN_AFTER, repair: bool = False,
                  llm_secret_block: str | None = None) -> Manifest:
    """The daily check: `recipes` at the run's clock (state in `state`, default `out/state`), or a `bundle` (the
    demo's is data/demo/official/bundle.yaml), its world served for the run and checked at its clocks; one of
    them. With `repair`, broken recipes get a proposal from the model (TIMELYQA_LLM_*, its key in the Secret block
    `llm_secret_block`); when one is accepted the recipes are checked again at the last clock, so a mended recipe is
    back in the rows at once."""
    request = OfficialRequest.of(out=out, bundle=bundle, recipes=recipes, state=state, variables=variables or {},
                                 broken_after=broken_after, repair=repair, llm_secret_block=llm_secret_block)
    out, state = request.out, request.state_dir
    with ExitStack() as stack:
        if request.bundle is not None:
            world = Bundle.load(request.bundle)
            root = request.bundle.parent
            stack.enter_context(LocalSite(root / world.site, port=world.port, host=world.host))
            recipes, clocks, names = root / world.recipes, world.at(), {**world.vars, **request.variables}
        else:
            recipes, clocks, names = request.recipes, [datetime.now(UTC)], dict(request.variables)
        check_recipes(Path(recipes))
        check_health(Path(recipes), clocks, state, names, broken_after)
        if repair and repair_recipes(Path(recipes), state, broken_after, llm_secret_block):
            check_health(Path(recipes), clocks[-1:], state, names, broken_after)
        manifest = build_rows(Path(recipes), state, out, broken_after)
    publish_funnel(manifest, out=str(out))
    return manifest


@flow(name="official-resolve", flow_run_name="resolve {recipes}")
@reported
def official_resolve_flow(recipes: Path, out: Path, at: str | None = None,
                          variables: dict[str, str] | None = None, allow_hosts: list[str] | None = None,
                          extract_timeout: float = 10.0) -> Path:
    """Answer every recipe at clock `at` (ISO with its offset; default now) into `out/answers.parquet`, as `timelyqa
    live resolve` does (one request model, timelyqa.official.request.ResolveRequest). `allow_hosts` (`host` or
    `host:port`): hosts the operator names, which a release's recipes may reach even when they are private addresses
    (timelyqa.official.origin). A release's recipes never run code here."""
    request = ResolveRequest.of(recipes=recipes, out=out, at=at, variables=variables or {},
                                allow_hosts=allow_hosts or [], extract_timeout=extract_timeout)
    catalog = recipes_of(request)
    for dropped in catalog.refused:
        get_run_logger().warning("refused: %s", dropped.detail)
    resolved = resolve(request, catalog, crawl=crawl)
    frame = pl.read_parquet(resolved.path)
    create_table_artifact([{"recipe": r["id"], "status": r["status"], "answer": r["answer"] or "",
                            "reason": r["reason"] or ""} for r in frame.iter_rows(named=True)],
                          key="official-answers",
                          description=f"official_site: answers at {resolved.clock.isoformat()}")
    return resolved.path
