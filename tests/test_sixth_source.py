"""A sixth crawled source is one package and one entry (issue 25): tests/fixtures/sixth (a weather-station site's
package: its entry, spider, pipeline, flow, command, demo site and fixture site) installed the way a user installs
a plug-in, and nothing of timelyqa edited, is in `timelyqa --help`, runs as a Prefect flow, is deployed by
`make serve` and `make serve-demo`, and is in `timelyqa demo`'s release and its card.

The installed tests run everything in new processes, with the package on PYTHONPATH (`uv pip install --no-deps
--target`), as a user's shell would; the others check each part on the toy source in this process.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import typer
import yaml

from tests import toy_source
from timelyqa.cli import app, register_sources
from timelyqa.errors import ConfigError
from timelyqa.sources import BUILTIN, ROOT, SourceSpec, outputs, register, sources, unregister

PACKAGE = ROOT / "tests" / "fixtures" / "sixth"
UV = Path(sys.executable).with_name("uv")
BIN = Path(sys.executable).parent
PLAN = """
import json, sys
sys.path.insert(0, "scripts")
import serve
from flows.deployments import runner_deployment
from timelyqa.sources import sources
planned = serve.planned(serve.REPO / "prefect.yaml")
demo = serve.demo_deployments(serve.REPO / "prefect.yaml")
entry = next(d for d in planned["deployments"] if d["name"] == "weather-station-daily")
built = runner_deployment(entry)
print(json.dumps({"planned": planned["deployments"], "demo": demo["deployments"], "sources": list(sources()),
                  "built": {"name": built.name, "flow": built.flow_name, "parameters": built.parameters,
                            "cron": [s.schedule.cron for s in built.schedules]}}))
"""


# --- installed: what a user sees -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The package installed from a copy of its folder into a folder of its own; the environment that finds it."""
    scratch = tmp_path_factory.mktemp("sixth")
    copy = shutil.copytree(PACKAGE, scratch / "weather-station-src")  # a new path: uv builds it afresh
    target = scratch / "site-packages"
    install = [str(UV), "pip", "install", "--no-deps", "--python", sys.executable, "--target", str(target), str(copy)]
    done = subprocess.run([*install, "--offline"], capture_output=True, text=True, timeout=300, check=False)
    if done.returncode:  # a machine whose uv cache lacks the build backend (hatchling) fetches it once
        done = subprocess.run(install, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    path = os.pathsep.join(p for p in (str(ROOT), str(target), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path, "TIMELYQA_QUIET": "1", "COLUMNS": "200",
            "PREFECT_HOME": str(scratch / "prefect-home"), "SITE": str(target / "weather_station")}


def run(args: list[str], env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False)


def ok(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


@pytest.mark.slow
def test_its_command_is_in_timelyqa_help_and_crawls_its_site(installed: dict[str, str], tmp_path: Path) -> None:
    shown = ok(run([str(BIN / "timelyqa"), "--help"], installed))
    assert "weather-station" in shown and "Questions about weather stations' latest readings" in shown
    site = Path(installed["SITE"]) / "fixture" / "stations"
    proc = run([str(BIN / "timelyqa"), "weather-station", "--site", str(site), "--out", str(tmp_path / "ws")],
               installed)
    assert ok(proc).strip().endswith(f"2 questions in {tmp_path / 'ws' / 'questions.parquet'}")
    questions = pl.read_parquet(tmp_path / "ws" / "questions.parquet")
    assert sorted(questions["answer"]) == ["13.0 °C", "8 °C"]
    assert "What maximum temperature did the Alpha Ridge weather station (FX001) record on 2 May 2026?" in \
        questions["question"].to_list()
    rejected = pl.read_parquet(tmp_path / "ws" / "rejected.parquet")
    assert sorted(rejected["reason"]) == ["no_reading", "not_a_station", "not_a_temperature", "not_a_temperature"]
    assert any(d.endswith("/empty.html: not HTML (Document is empty)") for d in rejected["detail"])
    # Crawled as every timelyqa crawl is: robots.txt obeyed, the guard keeping it on its site, each counted; a link
    # to a file that is no page costs only itself.
    stats = json.loads((tmp_path / "ws" / "crawl" / "crawl_stats.json").read_text(encoding="utf-8"))
    assert stats["pages"] == 6
    assert stats["errors"] == {"http_404": 1, "not_html": 1, "off_site": 1, "robots_disallowed": 1}
    # A wrong option is one line naming it, before any work.
    proc = run([str(BIN / "timelyqa"), "weather-station", "--out", str(tmp_path / "none")], installed)
    assert proc.returncode == 2 and proc.stderr.strip() == "error: give --root or --site, one of them"


@pytest.mark.slow
def test_it_holds_to_the_source_contract_every_built_in_source_holds_to(installed: dict[str, str]) -> None:
    """tests/test_sources.py's checks of every registered source, in a process where it is installed: every part,
    its fixture run through the stage writer, its reasons in the card, its deployment as serve plans it."""
    proc = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                "tests/test_sources.py", "-k", "weather_station"], installed)
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert "\n3 passed, " in proc.stdout, proc.stdout[-2000:]  # every part, prefect.yaml, its fixture run


@pytest.mark.slow
def test_it_runs_as_a_flow_and_serve_deploys_it_live_and_on_its_demo_site(installed: dict[str, str],
                                                                          tmp_path: Path) -> None:
    plan = json.loads(ok(run([sys.executable, "-c", PLAN], installed)).splitlines()[-1])
    assert plan["sources"] == [*BUILTIN, "weather_station"]
    planned = {d["name"]: d for d in plan["planned"]}
    names = list(planned)
    assert names.index("weather-station-daily") == names.index("release-weekly") - 1, names
    deployed = planned["weather-station-daily"]
    assert deployed["entrypoint"] == "weather_station.flow:weather_station_flow"
    assert deployed["schedules"] == [{"cron": "30 5 * * *", "timezone": "UTC", "active": True}]
    assert deployed["parameters"] == {"out": "out/weather_station", "root": "https://stations.example.org/"}
    assert deployed["work_pool"]["name"] == "local"
    assert planned["release-weekly"]["parameters"]["sources"] == outputs() + ["out/weather_station"]
    demo = {d["name"]: d for d in plan["demo"]}
    assert demo["weather-station-daily"]["parameters"] == {
        "out": "out/serve-demo/weather_station", "root": None, "site": str(Path(installed["SITE"]) / "demo/stations")}
    assert demo["release-weekly"]["parameters"]["sources"][-1] == "out/serve-demo/weather_station"
    # Prefect builds it (no server needed): its flow, parameters and schedule as the entry says.
    assert plan["built"] == {"name": "weather-station-daily", "flow": "weather-station",
                             "parameters": deployed["parameters"], "cron": ["30 5 * * *"]}
    # The flow runs (Prefect's temporary server) on the parameters `make serve-demo` gives it.
    out = tmp_path / "flow"
    code = ("import json, sys; from weather_station.flow import weather_station_flow as f; "
            "print(json.dumps(f(site=sys.argv[1], out=sys.argv[2])['counts']))")
    counts = json.loads(ok(run([sys.executable, "-c", code, demo["weather-station-daily"]["parameters"]["site"],
                                str(out)], installed)).splitlines()[-1])
    assert counts == {"station_pages": 8, "stations_read": 6, "questions": 6}
    assert (out / "manifest.json").is_file()


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_serve_demo_s_deployment_of_it_runs_on_a_worker(installed: dict[str, str], tmp_path: Path) -> None:
    """The entry `make serve-demo` deploys, deployed with `prefect deploy` on a real server (one deployment of
    its file: the others are prefect.yaml's, tested in test_deployment.py) and run by a worker."""
    from tests.prefect_server import free_port, prefect, prefect_env, start_server, start_worker

    code = ("import sys, yaml; sys.path.insert(0, 'scripts'); import serve; "
            "config = serve.demo_deployments(serve.REPO / 'prefect.yaml'); "
            "config['deployments'] = [d for d in config['deployments'] if d['name'] == 'weather-station-daily']; "
            "print(yaml.safe_dump(config, sort_keys=False))")
    deploy_file = tmp_path / "prefect-demo.yaml"
    deploy_file.write_text(ok(run([sys.executable, "-c", code], installed)), encoding="utf-8")
    home = tmp_path / "prefect-home"
    home.mkdir()
    env = prefect_env(home, free_port(), base=installed)
    server = start_server(home, env, timeout=120)
    worker = None
    try:
        ok(prefect(["work-pool", "create", "local", "--type", "process"], env=env, cwd=home))
        ok(prefect(["--no-prompt", "deploy", "--all", "--prefect-file", str(deploy_file)], env=env, cwd=ROOT,
                   timeout=180))
        worker = start_worker("local", env, cwd=ROOT, log=home / "worker.log")
        out = tmp_path / "ws"
        watched = prefect(["deployment", "run", "weather-station/weather-station-daily", "--param", f"out={out}",
                           "--watch", "--watch-interval", "2", "--watch-timeout", "200"], env=env, cwd=ROOT,
                          timeout=240)
        assert watched.returncode == 0, f"{watched.stdout[-3000:]}\n{worker.tail()}"
        assert "weather_station " + str(Path(installed["SITE"]) / "demo" / "stations") in " ".join(
            watched.stdout.split()), "named by the site it read"
        manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
        assert manifest["counts"]["questions"] == 6
    finally:
        if worker is not None:
            worker.stop()
        server.stop()


@pytest.mark.slow  # the whole demo; it serves the demo's sites on fixed ports: run it under `flock /work/ports.lock`
@pytest.mark.timeout(1200)
def test_timelyqa_demo_runs_it_into_the_release_and_the_card(installed: dict[str, str], tmp_path: Path) -> None:
    stdout = ok(run([str(BIN / "timelyqa"), "demo", "--out", str(tmp_path / "demo")], installed, timeout=1100))
    assert "timelyqa demo: 6 sources on the bundled inputs" in stdout
    assert "step 6/7: weather_station from " in stdout and "step 7/7: release of 6 sources" in stdout
    release = tmp_path / "demo" / "release"
    manifest = json.loads((release / "manifest.json").read_text(encoding="utf-8"))
    assert "weather_station" in manifest["configs"]
    rows = sum(sum(levels.values()) for levels in manifest["counts"]["weather_station"].values())
    assert rows == 6
    card = (release / "README.md").read_text(encoding="utf-8")
    assert "**weather_station** (weather stations' latest daily maximum temperatures" in card
    assert "## Weather stations: latest readings" in card
    assert "- `weather_station`: the weather station (`station_id`)" in card
    assert "| `no_reading` | 1 | the station page has no dated reading |" in card
    code = ("import sys, datasets; d = datasets.load_dataset(sys.argv[1], 'weather_station'); "
            "print(sum(s.num_rows for s in d.values()), sorted({r['station_id'] for s in d.values() for r in s}))")
    loaded = ok(run([sys.executable, "-c", code, str(release)], {**installed, "HF_HOME": str(tmp_path / "hf"),
                                                                 "HF_DATASETS_OFFLINE": "1"})).splitlines()[-1]
    assert loaded == "6 ['ES8416', 'IS1475', 'SN18700', 'SN50540', 'SN90450', 'USW00023062']"


# --- each part, on the toy source -----------------------------------------------------------------------------


def command_of_toy(city: str = "Springfield") -> None:
    """The toy source's command (a function Typer makes a command of)."""
    typer.echo(f"toy {city}")


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> Iterator[SourceSpec]:
    from dataclasses import replace

    spec = replace(toy_source.SOURCE, command="tests.test_sixth_source:command_of_toy")
    register(spec)
    yield spec
    unregister("toy")


def test_the_cli_registers_the_command_of_a_source_of_another_package(toy: SourceSpec) -> None:
    from typer.testing import CliRunner

    standin = typer.Typer()
    standin.command()(lambda: None)
    assert register_sources(standin) == ["command-of-toy"]
    assert CliRunner().invoke(standin, ["command-of-toy", "--city", "Ogdenville"]).output == "toy Ogdenville\n"


def test_a_command_that_does_not_load_or_whose_name_is_taken_costs_only_itself(
        toy: SourceSpec, capsys: pytest.CaptureFixture[str]) -> None:
    from dataclasses import replace

    standin = typer.Typer()
    standin.command("command-of-toy")(lambda: None)
    assert register_sources(standin) == []
    assert capsys.readouterr().err == ("timelyqa: source 'toy': command = 'tests.test_sixth_source:command_of_toy': "
                                       "the name 'command-of-toy' is taken\n")
    unregister("toy")
    register(replace(toy, command="tests.test_sixth_source:nothing_here"))
    assert register_sources(typer.Typer()) == []
    err = capsys.readouterr().err
    assert err.startswith("timelyqa: source 'toy': command = 'tests.test_sixth_source:nothing_here' does not load "
                          "(AttributeError") and err.count("\n") == 1


def test_every_built_in_command_the_registry_names_is_the_one_the_cli_lists() -> None:
    listed = {c.callback for c in app.registered_commands} | {g.typer_instance for g in app.registered_groups}
    for name in BUILTIN:
        spec = sources()[name]
        assert spec.command is not None and spec.command_object in listed, name


def test_the_registry_s_spiders_are_crawlers_the_project_runs() -> None:
    from spiders.loader import SpiderLoader
    from tests.test_spider_loader import project

    found = SpiderLoader.from_settings(project())
    for name, spec in sources().items():
        if spec.spider is not None:
            assert found.load(spec.spider).name == spec.spider, name


def test_the_release_reads_every_registered_source_by_default_where_prefect_yaml_writes_them() -> None:
    import inspect

    from flows.release import release_flow

    config = yaml.safe_load((ROOT / "prefect.yaml").read_text(encoding="utf-8"))
    release = next(d for d in config["deployments"] if d["name"] == "release-weekly")
    assert outputs() == release["parameters"]["sources"]
    assert outputs("out/serve-demo") == config["definitions"]["demo"]["release-weekly"]["sources"]
    assert inspect.signature(release_flow.fn).parameters["sources"].default is None  # None: outputs()


def test_serve_adds_a_deployment_for_a_source_prefect_yaml_does_not_list(toy: SourceSpec) -> None:
    from flows.deployments import runner_deployment, with_registry

    config = yaml.safe_load((ROOT / "prefect.yaml").read_text(encoding="utf-8"))
    planned = with_registry(config)
    names = [d["name"] for d in planned["deployments"]]
    assert names == [*(d["name"] for d in config["deployments"][:5]), "toy-daily",
                     *(d["name"] for d in config["deployments"][5:])]
    assert config == yaml.safe_load((ROOT / "prefect.yaml").read_text(encoding="utf-8")), "the input is left as is"
    release = next(d for d in planned["deployments"] if d["name"] == "release-weekly")
    assert release["parameters"]["sources"][-1] == "out/toy"
    assert planned["definitions"]["demo"]["toy-daily"] == {"out": "out/serve-demo/toy"}
    assert with_registry(planned) == planned, "a listed deployment is not added twice"
    # The toy's entry names a flow that is not there: said in one line naming the deployment.
    toy_daily = next(d for d in planned["deployments"] if d["name"] == "toy-daily")
    with pytest.raises(ConfigError, match=r"^deployment toy-daily: entrypoint 'flows.toy:toy_flow' does not load "
                                          r"\(ModuleNotFoundError"):
        runner_deployment(toy_daily)


def test_a_flow_that_refuses_the_entry_s_parameters_is_named() -> None:
    from flows.deployments import runner_deployment

    entry: dict[str, Any] = {"name": "release-weekly", "entrypoint": "flows.release:release_flow",
                             "parameters": {"out": "out/release", "no_such_parameter": 1}}
    with pytest.raises(ConfigError, match=r"^deployment release-weekly: .*no_such_parameter"):
        runner_deployment(entry)
