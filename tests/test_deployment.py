"""The path users run: a local Prefect server, a process work pool, `prefect deploy --all`, a worker, two runs."""

from __future__ import annotations

import importlib
import inspect
import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from tests.prefect_server import (
    REPO,
    Background,
    free_port,
    prefect,
    prefect_env,
    start_server,
    start_worker,
)
from timelyqa.official.catalog import load
from timelyqa.sources import sources

# Relative, as a user types them from the repository root: they resolve only if the worker runs the
# flow in its own checkout, which is what prefect.yaml's pull step and working_dir promise.
CONFIG = yaml.safe_load((REPO / "prefect.yaml").read_text(encoding="utf-8"))
SERVE_DEMO: dict[str, dict[str, Any]] = CONFIG["definitions"]["demo"]
"""What `make serve-demo` deploys each deployment with (prefect.yaml's `definitions.demo`)."""
DEMO = {name: {k: v for k, v in params.items() if k != "out"} for name, params in SERVE_DEMO.items()
        if name not in ("release-weekly", "publish-release", "evaluate")}
"""The bundled demo inputs of each source deployment: explicit parameters, as prefect.yaml's comments give them."""
HISTORY = DEMO["wikipedia-weekly"]["dump"]


def deployments() -> dict[str, dict[str, Any]]:
    config = yaml.safe_load((REPO / "prefect.yaml").read_text(encoding="utf-8"))
    assert config["build"] is None and config["push"] is None
    return {d["name"]: d for d in config["deployments"]}


def test_prefect_yaml_deploys_real_flows_with_defaults_they_accept() -> None:
    found = deployments()
    assert set(found) == {"wikidata-weekly", "wikipedia-weekly", "site-tree-monthly", "news-daily", "official-daily",
                          "release-weekly", "publish-release", "evaluate"}
    by_hand = {"publish-release": {"repo": "timelyqa/timelyqa"},  # what `--param` must add to a manual run
               "evaluate": {"model": "some-model", "base_url": "http://127.0.0.1:8080/v1"}}
    for name, deployment in found.items():
        path, func = deployment["entrypoint"].split(":")
        assert not path.endswith(".py"), f"{name}: a file entrypoint puts flows/ first on sys.path (see prefect.yaml)"
        flow = getattr(importlib.import_module(path), func)
        # what the server checks when a run is created
        flow.validate_parameters({**deployment["parameters"], **by_hand.get(name, {})})
        assert deployment["work_pool"]["name"] == "local", name
        assert bool(deployment.get("schedules")) == (name not in by_hand), name
    wikidata, wikipedia = found["wikidata-weekly"]["parameters"], found["wikipedia-weekly"]["parameters"]
    site_tree, news = found["site-tree-monthly"]["parameters"], found["news-daily"]["parameters"]
    official = found["official-daily"]["parameters"]
    assert found["release-weekly"]["parameters"]["sources"] == [wikidata["out"], wikipedia["out"], site_tree["out"],
                                                                news["out"], official["out"]]


def test_every_source_deployment_reads_its_live_source_by_default() -> None:
    found = deployments()
    for name, deployment in found.items():
        assert "data/demo" not in json.dumps(deployment["parameters"]), f"{name} defaults to a demo input"
    wikidata, wikipedia = found["wikidata-weekly"]["parameters"], found["wikipedia-weekly"]["parameters"]
    assert wikidata["api"].startswith("https://") and wikidata["days"] == 7
    assert not {"before", "after", "since", "until"} & set(wikidata)
    # Last week's release is re-checked by the sources whose answers can stop holding.
    assert wikidata["previous"] == wikipedia["previous"] == found["site-tree-monthly"]["parameters"]["previous"] == \
        found["release-weekly"]["parameters"]["out"]
    # No fixed window: the flow takes the `days` before the run's scheduled day.
    assert wikipedia["api"].startswith("https://") and wikipedia["days"] == 7
    assert not {"dump", "start", "end"} & set(wikipedia)
    news = found["news-daily"]["parameters"]
    assert news["api"].startswith("https://") and news["days"] == 1 and not {"archive_dir", "start", "end"} & set(news)
    site_tree = found["site-tree-monthly"]["parameters"]
    assert "site" not in site_tree and site_tree["roots"]
    assert all(urlsplit(root).scheme == "https" and urlsplit(root).hostname not in ("127.0.0.1", "localhost")
               for root in site_tree["roots"])
    official = found["official-daily"]["parameters"]
    assert official["bundle"] is None and "state" not in official, "the state lives beside the rows, per `out`"
    catalog = load(REPO / official["recipes"])
    assert len(catalog.recipes) >= 2 and not catalog.refused, catalog.refused
    assert all(r.fetch.url.startswith("https://") for r in catalog.recipes), "live recipes read public pages"


def test_demo_inputs_are_explicit_parameters_that_the_flows_accept_and_make_demo_runs_on() -> None:
    found = deployments()
    text = (REPO / "prefect.yaml").read_text(encoding="utf-8")
    by_deployment = {spec.deployment.name: spec for spec in sources().values()}
    assert set(DEMO) == set(by_deployment), "every source deployment has its demo inputs"
    for name, demo in DEMO.items():
        deployment = found[name]
        path, func = deployment["entrypoint"].split(":")
        getattr(importlib.import_module(path), func).validate_parameters({**deployment["parameters"], **demo})
        for key, value in demo.items():
            assert f"--param {key}={'null' if value is None else value}" in text, f"{name}: {key} not documented"
        # The same inputs `make demo` (timelyqa demo) runs the source on: a file of its demo_inputs or their folder.
        demo_inputs = {REPO / p for p in by_deployment[name].demo_inputs}
        shared = demo_inputs | {p.parent for p in demo_inputs}
        for key, value in demo.items():
            if isinstance(value, str) and value.startswith("data/"):
                assert REPO / value in shared and (REPO / value).exists(), (name, key, value)


def ok(result: subprocess.CompletedProcess[str], what: str) -> str:
    assert result.returncode == 0, (f"{what} exited {result.returncode}:\n"
                                    f"{result.stdout[-4000:]}\n{result.stderr[-4000:]}")
    return result.stdout


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[tuple[dict[str, str], Background]]:
    """Server, pool, deployments and a worker started from the repository root; torn down whatever happens."""
    home = tmp_path / "prefect-home"
    home.mkdir()
    env = prefect_env(home, free_port())
    server = start_server(home, env, timeout=90)
    worker: Background | None = None
    try:
        ok(prefect(["work-pool", "create", "local", "--type", "process"], env=env, cwd=home), "work-pool create")
        ok(prefect(["--no-prompt", "deploy", "--all"], env=env, cwd=REPO, timeout=120), "deploy --all")
        worker = start_worker("local", env, cwd=REPO, log=home / "worker.log")
        yield env, worker
    finally:
        if worker is not None:
            worker.stop()
        server.stop()


def run_deployment(name: str, params: dict[str, object], env: dict[str, str], worker: Background) -> str:
    args = ["deployment", "run", name, "--watch", "--watch-interval", "2", "--watch-timeout", "150"]
    for key, value in params.items():
        args += ["--param", f"{key}={value if isinstance(value, str) else json.dumps(value)}"]
    result = prefect(args, env=env, cwd=REPO, timeout=180)
    assert result.returncode == 0, (f"{name} exited {result.returncode}:\n{result.stdout[-4000:]}\n"
                                    f"{result.stderr[-2000:]}\nworker log:\n{worker.tail()}")
    return result.stdout


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_deployed_flows_run_on_a_worker_and_the_release_loads(stack: tuple[dict[str, str], Background],
                                                               tmp_path: Path) -> None:
    env, worker = stack
    wd, wp, st, release = tmp_path / "wd", tmp_path / "wp", tmp_path / "st", tmp_path / "release"

    run_deployment("wikidata/wikidata-weekly", {**DEMO["wikidata-weekly"], "out": str(wd)}, env, worker)
    manifest = json.loads((wd / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["counts"]["questions"] > 0 and (wd / "questions.parquet").is_file()

    # The demo export and its window, given as a user gives them (the deployment's default is the live API).
    run_deployment("wikipedia/wikipedia-weekly", {**DEMO["wikipedia-weekly"], "out": str(wp)}, env, worker)
    manifest = json.loads((wp / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["counts"]["questions"] > 0 and manifest["inputs"]["dump"]["path"] == HISTORY

    # The monthly crawl on the bundled site served for the run, rendered where scripts build it.
    run_deployment("site-tree/site-tree-monthly", {**DEMO["site-tree-monthly"], "out": str(st)}, env, worker)
    manifest = json.loads((st / "manifest.json").read_text(encoding="utf-8"))
    crawled = json.loads((st / "crawl" / "crawl_stats.json").read_text(encoding="utf-8"))
    assert manifest["counts"]["questions"] > 0 and crawled["rendered"] > 0 and crawled["pages"] >= 30

    # The news archive and the official world, served on their fixed ports for the run (as `make serve-demo` runs them).
    news, official = tmp_path / "news", tmp_path / "official"
    watched = run_deployment("news/news-daily", {**DEMO["news-daily"], "out": str(news)}, env, worker)
    assert "news data/demo/news" in " ".join(watched.split()), "named by the archive it read"
    assert json.loads((news / "manifest.json").read_text(encoding="utf-8"))["counts"]["questions"] > 0
    watched = run_deployment("official/official-daily", {**DEMO["official-daily"], "out": str(official)}, env, worker)
    assert "official data/demo/official/bundle.yaml" in " ".join(watched.split())
    assert json.loads((official / "manifest.json").read_text(encoding="utf-8"))["counts"]["questions"] > 0

    run_deployment("release/release-weekly", {"sources": [str(wd), str(wp), str(st), str(news), str(official)],
                                              "out": str(release)}, env, worker)
    assert (release / "README.md").is_file()
    assert sorted(release.glob("wikidata/test-*.parquet")), sorted(p.name for p in release.rglob("*"))

    assert load_test_split(release, env, "wikidata") > 0
    assert load_test_split(release, env, "wikipedia") > 0
    assert load_test_split(release, env, "site_tree") > 0


def load_test_split(release: Path, env: dict[str, str], config: str) -> int:
    """Load the release as a user would, in a fresh offline process whose caches live in the scratch folder."""
    code = ("import sys, datasets; "
            "ds = datasets.load_dataset(sys.argv[1], sys.argv[2], split='test'); "
            "print(ds.num_rows)")
    result = subprocess.run([sys.executable, "-c", code, str(release), config],
                            env={**env, "HF_HOME": str(release.parent / "hf-home")},
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr[-4000:]
    return int(result.stdout.strip().splitlines()[-1])


def test_live_windows_are_the_days_before_the_runs_scheduled_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Monday 03:00 run reads the week to Monday 00:00 and names itself so, even when a worker starts it late."""
    from prefect.runtime import flow_run

    from flows import news, wikidata, wikipedia
    from flows.common import run_clock

    scheduled = datetime(2026, 11, 23, 3, 0, tzinfo=UTC)
    monkeypatch.setitem(flow_run.FIELDS, "scheduled_start_time", lambda: scheduled)
    assert run_clock() == scheduled
    found = deployments()
    assert wikipedia._name(found["wikipedia-weekly"]["parameters"]) == "wikipedia 2026-11-16..2026-11-23"
    assert wikipedia._window(found["wikipedia-weekly"]["parameters"]) == (datetime(2026, 11, 16, tzinfo=UTC),
                                                                          datetime(2026, 11, 23, tzinfo=UTC))
    assert news._name(found["news-daily"]["parameters"]) == "news 2026-11-22"
    assert wikidata._window(found["wikidata-weekly"]["parameters"]) == "2026-11-16..2026-11-23"
    assert wikidata.api_window(None, None, days=7) == (datetime(2026, 11, 16, tzinfo=UTC),
                                                       datetime(2026, 11, 23, tzinfo=UTC))
    assert news._name({"days": 7}) == "news 2026-11-16..2026-11-22"


# The README's table of deployments: what each reads and writes by default, when it runs, and what `make serve-demo`
# gives it instead; computed here from prefect.yaml and the flows' signatures, so neither the table below nor the
# README's copy of it can drift from them.
INPUTS = {"wikidata-weekly": ("api", "days"), "wikipedia-weekly": ("api", "days"),
          "site-tree-monthly": ("roots", "max_depth", "max_pages"), "news-daily": ("api", "days"),
          "official-daily": ("recipes",), "release-weekly": ("sources",), "publish-release": ("release", "repo"),
          "evaluate": ("release",)}
"""The parameters that say what a deployment reads (the rest tune how)."""
TABLE_HEADER = "| deployment | runs (UTC) | reads by default | writes | re-checks | `make serve-demo` reads |"
DEPLOYMENTS_TABLE = """\
| deployment | runs (UTC) | reads by default | writes | re-checks | `make serve-demo` reads |
|---|---|---|---|---|---|
| wikidata-weekly | `0 3 * * 1` | api=https://www.wikidata.org/w/api.php, days=7 | out/wikidata | out/release | before=data/demo/wikidata-t0.json.gz, after=data/demo/wikidata-t1.json.bz2 |
| wikipedia-weekly | `0 3 * * 1` | api=https://en.wikipedia.org/w/api.php, days=7 | out/wikipedia | out/release | dump=data/demo/wikipedia-history.xml.bz2, start=2026-06-01T00:00:00+00:00, end=2026-11-16T00:00:00+00:00 |
| site-tree-monthly | `0 4 1 * *` | roots=https://www.apache.org/ https://www.python.org/psf/, max_depth=4, max_pages=500 | out/site_tree | out/release | site=data/demo/site, domain=education |
| news-daily | `0 6 * * *` | api=https://en.wikipedia.org/w/api.php, days=1 | out/news | — | archive_dir=data/demo/news |
| official-daily | `0 5 * * *` | recipes=data/live/official/recipes | out/official_site | — | bundle=data/demo/official/bundle.yaml |
| release-weekly | `0 6 * * 1` | sources=out/wikidata out/wikipedia out/site_tree out/news out/official_site | out/release | — | sources=out/serve-demo/wikidata out/serve-demo/wikipedia out/serve-demo/site_tree out/serve-demo/news out/serve-demo/official_site |
| publish-release | by hand | release=out/release, repo=(give it) | — | — | release=out/serve-demo/release |
| evaluate | by hand | release=out/release | out/eval | — | release=out/serve-demo/release |
"""
"""The table for the README (lines over 120 characters: a Markdown table row cannot wrap)."""


def shown(value: Any) -> str:
    """A value as the table shows it: a parameter with no default must be given (`--param`), none is a dash."""
    if value is inspect.Parameter.empty:
        return "(give it)"
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return "—" if value is None else str(value)


def deployments_table() -> str:
    """One row per deployment of prefect.yaml: its schedule, and its effective defaults (the flow's signature
    overridden by the deployment's parameters)."""
    rows = [TABLE_HEADER, "|---|---|---|---|---|---|"]
    for name, deployment in deployments().items():
        path, func = deployment["entrypoint"].split(":")
        signature = inspect.signature(getattr(importlib.import_module(path), func).fn)
        values = {**{k: p.default for k, p in signature.parameters.items()}, **deployment["parameters"]}
        runs = ", ".join(f"`{s['cron']}`" for s in deployment.get("schedules") or []) or "by hand"
        reads = ", ".join(f"{k}={shown(values[k])}" for k in INPUTS[name])
        demo = ", ".join(f"{k}={shown(v)}" for k, v in SERVE_DEMO[name].items() if v is not None and k != "out")
        rows.append(f"| {name} | {runs} | {reads} | {shown(values.get('out'))} | {shown(values.get('previous'))} "
                    f"| {demo} |")
    return "\n".join(rows) + "\n"


def test_the_deployments_table_says_what_prefect_yaml_and_the_flows_do() -> None:
    assert deployments_table() == DEPLOYMENTS_TABLE


def test_the_readmes_table_of_deployments_is_this_table() -> None:
    """The README carries DEPLOYMENTS_TABLE as is (its header line marks it): a default changed in prefect.yaml or a
    flow, and not in the README, fails here."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert TABLE_HEADER in readme, "the README lost its table of deployments"
    at = readme.index(TABLE_HEADER)
    lines = readme[at:].splitlines()
    table = lines[:next((i for i, line in enumerate(lines) if not line.startswith("|")), len(lines))]
    assert "\n".join(table) + "\n" == DEPLOYMENTS_TABLE


def test_serve_demo_deploys_everything_on_bundled_inputs_with_no_network() -> None:
    """`make serve-demo`'s parameters: every deployment has them, the flows accept them, each input is a bundled file
    or folder, none is a URL, and the release reads what the sources write."""
    found = deployments()
    assert set(SERVE_DEMO) == set(found)
    by_hand = {"publish-release": {"repo": "timelyqa/timelyqa"}, "evaluate": {"predictions": "p.jsonl"}}
    for name, deployment in found.items():
        demo = {**deployment["parameters"], **SERVE_DEMO[name], **by_hand.get(name, {})}
        path, func = deployment["entrypoint"].split(":")
        getattr(importlib.import_module(path), func).validate_parameters(demo)
        assert "http" not in json.dumps(SERVE_DEMO[name]), f"{name}: a URL in its demo parameters"
        assert str(SERVE_DEMO[name].get("out", "out/serve-demo/")).startswith("out/serve-demo/"), name
        for key, value in SERVE_DEMO[name].items():
            if isinstance(value, str) and value.startswith("data/"):
                assert (REPO / value).exists(), (name, key, value)
    sources = [SERVE_DEMO[name]["out"] for name in DEMO]
    assert SERVE_DEMO["release-weekly"]["sources"] == sources
    assert SERVE_DEMO["evaluate"]["release"] == SERVE_DEMO["publish-release"]["release"] == \
        SERVE_DEMO["release-weekly"]["out"]
