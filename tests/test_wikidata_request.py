"""One request model for the Wikidata source (timelyqa.wikidata.request): `timelyqa wikidata` builds it from its
options, the `wikidata` flow from its parameters; a wrong value is the same line from both, the same options the
same request, and the flow's parameters (those prefect.yaml sets among them) are its fields with its defaults."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import flows.wikidata
import timelyqa.cli.wikidata
from flows.wikidata import wikidata_flow
from tests.test_deployment import deployments
from timelyqa.cli import app
from timelyqa.errors import ConfigError
from timelyqa.wikidata.request import CLI_ONLY, FLOW_ONLY, WikidataRequest

DEMO = Path(__file__).resolve().parent.parent / "data" / "demo"
T0, T1 = DEMO / "wikidata-t0.json.gz", DEMO / "wikidata-t1.json.bz2"

BAD = [  # (option, its text as typed, the flow's parameter, its value)
    ("--read-parts", "0", "read_parts", 0),
    ("--buckets", "3", "buckets", 3),
    ("--max-anchors", "0", "max_anchors", 0),
    ("--concurrency", "9", "concurrency", 9),
    ("--endpoint", "file:///etc/passwd", "endpoint", "file:///etc/passwd"),
    ("--endpoint-before", "not-a-url", "before_endpoint", "not-a-url"),
]


def command(*args: Any) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["wikidata", *map(str, args)], env={"COLUMNS": "400", "TIMELYQA_QUIET": "1"})
    return result.exit_code, result.output


@pytest.mark.parametrize(("option", "typed", "param", "value"), BAD, ids=[b[0] for b in BAD])
def test_the_command_and_the_flow_refuse_a_bad_value_with_the_same_line(tmp_path: Path, option: str, typed: str,
                                                                        param: str, value: Any) -> None:
    code, output = command("--before", T0, "--after", T1, "--out", tmp_path / "cli", option, typed)
    with pytest.raises(ConfigError) as refused:
        wikidata_flow.fn(before=str(T0), after=str(T1), out=str(tmp_path / "flow"), **{param: value})
    line = str(refused.value)
    assert code == 2 and output.strip() == f"error: {line}"
    assert line.startswith(f"Wikidata setting {param} ({option}) {value!r}: ")
    assert not (tmp_path / "cli").exists() and not (tmp_path / "flow").exists()


@pytest.mark.parametrize("given", [{}, {"seed": 3, "read_parts": 2, "buckets": 4, "max_anchors": 7,
                                        "before_endpoint": "http://127.0.0.1:9/sparql", "subgraphs": False}])
def test_the_same_options_give_the_same_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                given: dict[str, Any]) -> None:
    asked: dict[str, WikidataRequest] = {}
    monkeypatch.setattr(timelyqa.cli.wikidata, "run_request", lambda ask: asked.setdefault("command", ask))
    monkeypatch.setattr(flows.wikidata, "run_request", lambda ask: asked.setdefault("flow", ask))
    options = []
    for name, value in given.items():
        flag = "--endpoint-before" if name == "before_endpoint" else "--" + name.replace("_", "-")
        options += [f"--no-{flag[2:]}"] if value is False else [flag, value]
    code, output = command("--before", T0, "--after", T1, "--out", tmp_path / "out", *options)
    assert code == 0, output
    wikidata_flow.fn(before=str(T0), after=str(T1), out=str(tmp_path / "out"), **given)
    assert asked["command"] == asked["flow"]
    assert asked["flow"].settings().seed == given.get("seed", 0)
    assert {k: getattr(asked["flow"], k) for k in given} == given


def test_the_flows_parameters_are_the_requests_fields_with_its_defaults() -> None:
    fields = WikidataRequest.model_fields
    params = inspect.signature(wikidata_flow.fn).parameters
    assert set(params) == set(fields) - set(CLI_ONLY)
    for name, param in params.items():
        assert WikidataRequest.of(**{name: param.default}) == WikidataRequest(), name
    options = inspect.signature(timelyqa.cli.wikidata.wikidata).parameters
    named = {"before_endpoint" if name == "endpoint_before" else name for name in options}
    assert named == set(fields) - set(FLOW_ONLY)
    for name, option in options.items():  # the command's only defaults: a required --out, a flag's off
        assert option.default in (None, False, inspect.Parameter.empty), name
    for deployment in deployments().values():
        if deployment["entrypoint"] == "flows.wikidata:wikidata_flow":
            assert set(deployment["parameters"]) <= set(params), deployment["name"]


def test_an_empty_value_is_none_given_not_the_current_folder() -> None:
    ask = WikidataRequest.of(previous="", endpoint="", before="", dask_address="")
    assert ask.previous is None and ask.endpoint is None and ask.before is None
    assert ask.dask_address == ""  # empty: the flow's own runner even when TIMELYQA_DASK_ADDRESS is set
