"""One request model per source: its command builds it from the options, its flow from the parameters, so the same
options give the same request and a wrong value the same one-line reason on both; and every parameter a deployment
in prefect.yaml passes is a field of its source's request."""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from timelyqa.cli import app
from timelyqa.errors import ConfigError
from timelyqa.news.request import NewsRequest
from timelyqa.official.request import OfficialRequest, ResolveRequest
from timelyqa.settings import Settings
from timelyqa.site_tree.request import SiteTreeRequest
from timelyqa.wikipedia.request import WikipediaRequest

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "data" / "demo"
HISTORY, RECIPES = DEMO / "wikipedia-history.xml.bz2", DEMO / "official" / "recipes"

REQUESTS: dict[str, tuple[type[Settings], str]] = {
    "flows.news": (NewsRequest, "news_flow"),
    "flows.official": (OfficialRequest, "official_flow"),
    "flows.site_tree": (SiteTreeRequest, "site_tree_flow"),
    "flows.wikipedia": (WikipediaRequest, "wikipedia_flow"),
}
"""Each source's flow module, its request model and its flow's function."""


@dataclass
class Same:
    """One set of options, as a command's arguments and as its flow's parameters (`out` is added to both)."""

    name: str
    flow: str
    args: Callable[[Path], list[Any]]
    params: dict[str, Any]


SAME = [
    Same("site-tree", "flows.site_tree",
         lambda out: ["crawl", "site-tree", "--root", "http://127.0.0.1:9/docs/", "--out", out, "--max-depth", "2",
                      "--max-pages", "50", "--render", "never"],
         {"roots": ["http://127.0.0.1:9/docs/"], "max_depth": 2, "max_pages": 50, "render": "never"}),
    Same("wikipedia", "flows.wikipedia",
         lambda out: ["wikipedia", "--dump", HISTORY, "--start", "2024-01-01", "--end", "2024-02-01", "--out", out,
                      "--seed", "3", "--horizon-days", "14", "--cap-per-domain", "20"],
         {"dump": str(HISTORY), "start": "2024-01-01", "end": "2024-02-01", "seed": 3, "horizon_days": 14,
          "cap_per_domain": 20}),
    Same("news", "flows.news",
         lambda out: ["news", "--start", "2026-01-01", "--end", "2026-01-02", "--dump", HISTORY, "--out", out,
                      "--seed", "2", "--archive", "wayback", "--archive-base", "http://127.0.0.1:9/web/"],
         {"dump": str(HISTORY), "start": "2026-01-01", "end": "2026-01-02", "seed": 2, "archive": "wayback",
          "archive_base": "http://127.0.0.1:9/web/"}),
    Same("official", "flows.official",
         lambda out: ["official", "--recipes", RECIPES, "--out", out, "--broken-after", "2", "--var", "site=x"],
         {"recipes": RECIPES, "broken_after": 2, "variables": {"site": "x"}}),
]


@dataclass
class Bad:
    """One wrong value, given to a command and to its flow; both must stop with the same line naming it."""

    name: str
    flow: str
    args: Callable[[Path], list[Any]]
    params: Callable[[Path], dict[str, Any]]
    says: str


def _file(tmp: Path) -> Path:
    (tmp / "notes.txt").write_text("notes\n", encoding="utf-8")
    return tmp / "notes.txt"


BAD = [
    Bad("site-tree root without a host", "flows.site_tree",
        lambda tmp: ["crawl", "site-tree", "--root", "http://", "--out", tmp / "out"],
        lambda tmp: {"roots": ["http://"], "out": str(tmp / "out")}, "--root 'http://': not an http(s) URL"),
    Bad("site-tree out a file", "flows.site_tree",
        lambda tmp: ["crawl", "site-tree", "--root", "http://127.0.0.1:9/", "--out", _file(tmp)],
        lambda tmp: {"roots": ["http://127.0.0.1:9/"], "out": str(_file(tmp))}, "a file is there, not a folder"),
    Bad("site-tree max-pages 0", "flows.site_tree",
        lambda tmp: ["crawl", "site-tree", "--root", "http://127.0.0.1:9/", "--out", tmp / "out", "--max-pages", "0"],
        lambda tmp: {"roots": ["http://127.0.0.1:9/"], "out": str(tmp / "out"), "max_pages": 0},
        "setting max_pages 0: Input should be greater than or equal to 1"),
    Bad("wikipedia horizon-days negative", "flows.wikipedia",
        lambda tmp: ["wikipedia", "--dump", HISTORY, "--start", "2024-01-01", "--end", "2024-02-01",
                     "--out", tmp / "out", "--horizon-days", "-30"],
        lambda tmp: {"dump": str(HISTORY), "start": "2024-01-01", "end": "2024-02-01", "out": str(tmp / "out"),
                     "horizon_days": -30}, "--horizon-days -30: must be from 0 to 366"),
    Bad("wikipedia api an ftp URL", "flows.wikipedia",
        lambda tmp: ["wikipedia", "--api", "ftp://example.org/w/api.php", "--start", "2024-01-01", "--end",
                     "2024-02-01", "--out", tmp / "out"],
        lambda tmp: {"api": "ftp://example.org/w/api.php", "start": "2024-01-01", "end": "2024-02-01",
                     "out": str(tmp / "out")}, "--api 'ftp://example.org/w/api.php': not an http(s) URL"),
    Bad("wikipedia cap-per-domain 0", "flows.wikipedia",
        lambda tmp: ["wikipedia", "--dump", HISTORY, "--start", "2024-01-01", "--end", "2024-02-01",
                     "--out", tmp / "out", "--cap-per-domain", "0"],
        lambda tmp: {"dump": str(HISTORY), "start": "2024-01-01", "end": "2024-02-01", "out": str(tmp / "out"),
                     "cap_per_domain": 0}, "setting cap_per_domain 0: Input should be greater than or equal to 1"),
    Bad("news archive-base a file URL", "flows.news",
        lambda tmp: ["news", "--start", "2026-01-01", "--end", "2026-01-02", "--dump", HISTORY, "--out",
                     tmp / "out", "--archive", "wayback", "--archive-base", "file:///etc"],
        lambda tmp: {"start": "2026-01-01", "end": "2026-01-02", "dump": str(HISTORY), "out": str(tmp / "out"),
                     "archive": "wayback", "archive_base": "file:///etc"}, "--archive-base 'file:///etc'"),
    Bad("news start not a date", "flows.news",
        lambda tmp: ["news", "--start", "9 March 2026", "--end", "2026-01-02", "--dump", HISTORY, "--out",
                     tmp / "out"],
        lambda tmp: {"start": "9 March 2026", "end": "2026-01-02", "dump": str(HISTORY), "out": str(tmp / "out")},
        "--start '9 March 2026': not a date (YYYY-MM-DD)"),
    Bad("official state a file", "flows.official",
        lambda tmp: ["official", "--recipes", RECIPES, "--out", tmp / "out", "--state", _file(tmp)],
        lambda tmp: {"recipes": RECIPES, "out": tmp / "out", "state": _file(tmp)}, "--state "),
    Bad("official broken-after 0", "flows.official",
        lambda tmp: ["official", "--recipes", RECIPES, "--out", tmp / "out", "--broken-after", "0"],
        lambda tmp: {"recipes": RECIPES, "out": tmp / "out", "broken_after": 0},
        "setting broken_after 0: Input should be greater than or equal to 1"),
]


class Built(Exception):  # noqa: N818 - not an error: how the test stops a run once its request is built
    def __init__(self, request: Settings) -> None:
        super().__init__(type(request).__name__)
        self.request = request


def flow_fn(module: str) -> Callable[..., Any]:
    """The flow's function itself (no Prefect run, no server): a request refused raises its ConfigError."""
    import importlib  # noqa: PLC0415

    return getattr(importlib.import_module(module), REQUESTS[module][1]).fn


def command(args: list[Any]) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args], env={"TIMELYQA_QUIET": "1", "COLUMNS": "300"})


@pytest.mark.slow  # importing the flows (and Prefect) takes seconds
@pytest.mark.parametrize("case", SAME, ids=[c.name for c in SAME])
def test_the_command_and_the_flow_build_the_same_request(case: Same, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    model = REQUESTS[case.flow][0]
    built = model.of

    def stop(**values: Any) -> Settings:
        raise Built(built(**values))

    monkeypatch.setattr(model, "of", stop)
    out = tmp_path / "out"
    result = command(case.args(out))
    assert isinstance(result.exception, Built), (result.exception, result.stderr)
    with pytest.raises(Built) as from_flow:
        flow_fn(case.flow)(out=str(out), **case.params)
    assert from_flow.value.request == result.exception.request
    assert from_flow.value.request.out == out
    assert not out.exists(), "a request alone writes nothing"


@pytest.mark.slow  # importing the flows (and Prefect) takes seconds
@pytest.mark.parametrize("case", BAD, ids=[c.name for c in BAD])
def test_the_command_and_the_flow_refuse_a_wrong_value_with_the_same_line(case: Bad, tmp_path: Path) -> None:
    result = command(case.args(tmp_path))
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1, (result.exception, result.stderr)
    with pytest.raises(ConfigError) as from_flow:
        flow_fn(case.flow)(**case.params(tmp_path))
    assert lines[0] == f"error: {from_flow.value}"
    assert case.says in lines[0], lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) in ([], ["notes.txt"]), "nothing written before the refusal"


AT = "2026-11-16T09:00:00+00:00"


@pytest.mark.slow  # importing the flows (and Prefect) takes seconds
def test_live_resolve_and_the_resolve_flow_build_the_same_request(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from flows.official import official_resolve_flow

    built = ResolveRequest.of

    def stop(**values: Any) -> Settings:
        raise Built(built(**values))

    monkeypatch.setattr(ResolveRequest, "of", stop)
    out = tmp_path / "out"
    result = command(["live", "resolve", "--recipes", RECIPES, "--out", out, "--at", AT, "--var", "site=x",
                      "--allow-host", "10.0.0.5:8080", "--extract-timeout", "5"])
    assert isinstance(result.exception, Built), (result.exception, result.stderr)
    with pytest.raises(Built) as from_flow:
        official_resolve_flow.fn(recipes=RECIPES, out=str(out), at=AT, variables={"site": "x"},
                                 allow_hosts=["10.0.0.5:8080"], extract_timeout=5)
    assert from_flow.value.request == result.exception.request
    assert from_flow.value.request.at.isoformat() == AT and not out.exists()


@pytest.mark.slow  # importing the flows (and Prefect) takes seconds
@pytest.mark.parametrize(("option", "parameter", "says"), [
    (["--at", "yesterday"], {"at": "yesterday"}, "--at 'yesterday': clock 'yesterday': not an ISO date-time"),
    (["--allow-host", "http://x/"], {"allow_hosts": ["http://x/"]}, "--allow-host 'http://x/': not HOST or HOST:PORT"),
], ids=["at", "allow-host"])
def test_live_resolve_and_the_resolve_flow_refuse_a_wrong_value_with_the_same_line(
        option: list[str], parameter: dict[str, Any], says: str, tmp_path: Path) -> None:
    from flows.official import official_resolve_flow

    result = command(["live", "resolve", "--recipes", RECIPES, "--out", tmp_path / "out", *option])
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1, (result.exception, result.stderr)
    with pytest.raises(ConfigError) as from_flow:
        official_resolve_flow.fn(recipes=RECIPES, out=str(tmp_path / "out"), **parameter)
    assert lines[0] == f"error: {from_flow.value}" and says in lines[0]
    assert not (tmp_path / "out").exists(), "nothing written before the refusal"


def flow_parameters(module: str) -> list[str]:
    """The flow function's parameters, read from its source (no Prefect import)."""
    path = ROOT / (module.replace(".", "/") + ".py")
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef) and node.name == REQUESTS[module][1]:
            return [a.arg for a in node.args.args + node.args.kwonlyargs]
    raise AssertionError(f"{path}: no function {REQUESTS[module][1]}")


def test_every_parameter_of_the_resolve_flow_is_a_field_of_its_request() -> None:
    path = ROOT / "flows" / "official.py"
    flow = next(node for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                if isinstance(node, ast.FunctionDef) and node.name == "official_resolve_flow")
    assert [a.arg for a in flow.args.args if a.arg not in ResolveRequest.model_fields] == []


@pytest.mark.parametrize("module", sorted(REQUESTS))
def test_every_flow_parameter_is_a_field_of_the_source_request(module: str) -> None:
    model = REQUESTS[module][0]
    missing = [name for name in flow_parameters(module) if name not in model.model_fields]
    assert not missing, f"{module}.{REQUESTS[module][1]} parameters not in {model.__name__}: {missing}"


def test_every_parameter_a_deployment_passes_is_a_field_of_its_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the deployments' paths are relative to the checkout
    spec = yaml.safe_load((ROOT / "prefect.yaml").read_text(encoding="utf-8"))
    demo = spec["definitions"]["demo"]
    seen = set()
    for deployment in spec["deployments"]:
        module = deployment["entrypoint"].split(":")[0]
        if module not in REQUESTS:
            continue
        seen.add(module)
        model = REQUESTS[module][0]
        live = deployment.get("parameters") or {}
        for given in (live, demo.get(deployment["name"]) or {}):
            for name in given:
                assert name in model.model_fields, (
                    f"deployment {deployment['name']} passes {name!r}, which is not a field of {model.__name__}")
        # Its values too: the live run's parameters, and the demo's put over them as `make serve-demo` does.
        for given in (live, {**live, **(demo.get(deployment["name"]) or {})}):
            model.of(**{k: v for k, v in given.items() if k != "previous"})
    assert seen == set(REQUESTS), f"no deployment for {sorted(set(REQUESTS) - seen)}"


@pytest.mark.parametrize(("model", "values", "says"), [
    (SiteTreeRequest, {"out": "o"}, "give roots (a list of URLs) or site (a folder to serve), one of them"),
    (OfficialRequest, {"out": "o", "recipes": "r", "bundle": "b"}, "one of them (recipes r, bundle b): set the other"),
    (NewsRequest, {"out": "o", "end": "2026-13-01"}, "--end '2026-13-01': not a date (YYYY-MM-DD)"),
    (WikipediaRequest, {"out": "o", "days": 0}, "setting days 0: Input should be greater than or equal to 1"),
])
def test_a_request_refuses_a_wrong_value_in_one_line_naming_it(model: type[Settings], values: dict[str, Any],
                                                              says: str) -> None:
    with pytest.raises(ConfigError) as refused:
        model.of(**values)
    assert says in str(refused.value) and "\n" not in str(refused.value)
