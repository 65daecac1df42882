"""The source contract: every registered source has every part, runs through the stage writer, and a new source
needs one module and one registry entry to reach a release, its card, its split and its funnel."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
import yaml

from publish.card import render_card
from publish.release import build_release, load_run
from tests import toy_source
from spiders import run as spiders_run
from timelyqa.errors import ConfigError
from timelyqa.manifest import Manifest
from timelyqa.names import is_versioned
from timelyqa.reasons import SNAKE
from timelyqa.record import RECORD_SCHEMA, QARecord
from timelyqa.sources import BUILTIN, ROOT, SourceSpec, register, sources, unregister

REGISTERED = sorted(sources())
CRAWLED = {"news", "site_tree", "official_site"}
"""Sources whose fixture run is a crawl in a Scrapy process (Chromium included): end to end, so marked slow."""
CRON = re.compile(r"^(\S+\s){4}\S+$")


@pytest.fixture
def toy() -> Iterator[SourceSpec]:
    register(toy_source.SOURCE)
    yield toy_source.SOURCE
    unregister("toy")


@pytest.mark.parametrize("name", REGISTERED)
def test_every_registered_source_has_every_part(name: str) -> None:
    spec = sources()[name]
    assert SNAKE.match(spec.name) and spec.name == name
    assert issubclass(spec.record, QARecord)
    assert list(spec.schema.items())[: len(RECORD_SCHEMA)] == list(RECORD_SCHEMA.items())
    assert spec.group_key is None or spec.group_key.column in spec.schema
    assert spec.licence and spec.card.summary
    assert spec.stages and len({s.name for s in spec.stages}) == len(spec.stages)
    assert len(set(spec.funnel)) == len(spec.funnel) and all(SNAKE.match(line.lower()) for line in spec.funnel)
    assert spec.reasons, "a source that never drops anything has not looked"
    assert CRON.match(spec.deployment.cron) and re.match(r"^[a-z][a-z0-9-]*$", spec.deployment.name)
    for path in (*spec.demo_inputs, *spec.fixtures):
        assert (ROOT / path).is_file() and (ROOT / path).stat().st_size > 0, f"{name}: {path} is missing"
    assert spec.fixtures and set(spec.fixtures).isdisjoint(spec.demo_inputs), "tests read inputs of their own"


@pytest.mark.parametrize("name", REGISTERED)
def test_prefect_yaml_deploys_every_source_as_the_registry_says(name: str) -> None:
    """The built-in sources are in prefect.yaml as their entries say; a source of another package is deployed from
    its entry by `make serve` (flows/deployments.py), as if prefect.yaml listed it."""
    from flows.deployments import with_registry

    spec = sources()[name]
    config = yaml.safe_load((ROOT / "prefect.yaml").read_text(encoding="utf-8"))
    if name not in BUILTIN:
        config = with_registry(config)
    deployments = {d["name"]: d for d in config["deployments"]}
    found = deployments.get(spec.deployment.name)
    assert found is not None, f"prefect.yaml has no deployment {spec.deployment.name!r}"
    assert found["entrypoint"] == spec.deployment.entrypoint
    assert [s["cron"] for s in found["schedules"]] == [spec.deployment.cron]
    assert found["parameters"]["out"] in deployments["release-weekly"]["parameters"]["sources"]


def test_every_reject_reason_is_snake_case_unique_and_explained_in_the_card() -> None:
    for name in REGISTERED:
        spec = sources()[name]
        values = [str(r) for r in spec.reasons]
        assert len(values) == len(set(values)), name
        for reason in spec.reasons:
            assert SNAKE.match(reason), reason
            assert reason.explanation and "\n" not in reason.explanation, reason
        manifest = {"version": "v1", "created": "2026-06-01T00:00:00+00:00", "code_version": "x", "canary": "c",
                    "configs": {"default": {"splits": {}}, name: {"splits": {}}}, "files": {},
                    "counts": {"default": {}, name: {}}, "split_rule": "", "split_dates": {"newest_event_date": None,
                                                                                         "test_from": None},
                    "sources": {name: {"rows": 0, "runs": [], "duplicates_dropped": 0, "group_key": "k",
                                       "funnel": [], "generators": [], "usage": {},
                                       "rejects": {str(r): 1 for r in spec.reasons}}}}
        card = render_card(manifest)
        for reason in spec.reasons:
            assert f"| `{reason}` | 1 | {reason.explanation} |" in card


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in CRAWLED else n for n in REGISTERED])
@pytest.mark.slow
def test_each_source_runs_on_its_fixtures_through_the_stage_writer(name: str, tmp_path: Path) -> None:
    spec = sources()[name]
    manifest = spec.run_on([ROOT / p for p in spec.fixtures], tmp_path / name, None, crawl=spiders_run.crawl)
    assert Manifest.read(tmp_path / name) == manifest
    questions = pl.read_parquet(tmp_path / name / "questions.parquet")
    rejected = pl.read_parquet(tmp_path / name / "rejected.parquet")
    assert questions.schema == spec.schema and questions.height == manifest.counts["questions"] > 0
    assert list(manifest.counts) == [line for line in spec.funnel if line in manifest.counts], "funnel order"
    assert dict(rejected["reason"].value_counts().iter_rows()) == manifest.rejects
    assert list(manifest.rejects) == [r for r in map(str, spec.reasons) if r in manifest.rejects]
    assert all(spec.reason_stage[row["reason"]] == row["stage"] for row in rejected.iter_rows(named=True))
    assert manifest.generators and all(is_versioned(g) for g in manifest.generators), manifest.generators
    assert load_run(tmp_path / name).questions.height == questions.height
    # Every row is typed by what its source knows, in the record's six types, with the value its type needs.
    types = set(questions.get_column("answer_type").to_list())
    assert types <= {"entity", "number", "quantity", "date", "list", "text"}, types
    numeric = questions.filter(pl.col("answer_type").is_in(["number", "quantity"]) & (pl.col("answer") != ""))
    assert numeric.filter(pl.col("answer_value").struct.field("number").is_null()).is_empty()
    dated = questions.filter((pl.col("answer_type") == "date") & (pl.col("answer") != ""))
    assert dated.filter(pl.col("answer_value").struct.field("date").is_null()).is_empty()


@pytest.mark.slow
def test_a_new_source_needs_one_module_and_one_registry_entry(toy: SourceSpec, tmp_path: Path) -> None:
    import datasets

    manifest = toy.demo(tmp_path / "toy", crawl=spiders_run.crawl)
    assert manifest.counts == {"lines": 6, "questions": 4}
    assert manifest.rejects == {"not_json": 1, "no_mayor": 1}
    wikidata = sources()["wikidata"]
    wikidata.run_on([ROOT / p for p in wikidata.fixtures], tmp_path / "wikidata", None, crawl=spiders_run.crawl)
    release = build_release([tmp_path / "toy", tmp_path / "wikidata"], tmp_path / "release",
                            created=datetime(2026, 6, 2, tzinfo=UTC))
    assert set(release["configs"]) == {"default", "toy", "wikidata"}
    rows = pl.concat([pl.read_parquet(tmp_path / "release" / p) for s in release["configs"]["toy"]["splits"].values()
                      for p in s])
    assert rows.columns == list(toy.schema) and rows.height == 4
    assert rows.group_by("city").agg(pl.col("split").n_unique())["split"].max() == 1, "a city stays in one split"
    loaded = datasets.load_dataset(str(tmp_path / "release"), "toy", split="train")
    assert "city" in loaded.column_names
    card = (tmp_path / "release" / "README.md").read_text(encoding="utf-8")
    assert "**toy** (mayors of toy cities)" in card and "## Toy: mayors" in card
    assert "- `toy`: the city (`city`)" in card and "`toy`: CC-BY-4.0" in card
    assert "| `lines` | 6 |" in card and "| `no_mayor` | 1 | the line names no mayor |" in card


def test_a_run_killed_while_finishing_leaves_no_folder_that_looks_complete(toy: SourceSpec, tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "toy"
    toy.demo(out, crawl=spiders_run.crawl)
    before = (out / "questions.parquet").read_bytes()

    def killed(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt  # stands for the process dying between two files
    monkeypatch.setattr("timelyqa.stages.sha256_file", killed)
    with pytest.raises(KeyboardInterrupt):
        toy.demo(out, crawl=spiders_run.crawl)
    assert not (out / "manifest.json").exists(), "the old manifest would vouch for new files"
    assert not list(out.glob(".*partial*")), "no temporary file is left behind"
    with pytest.raises(ConfigError, match="no manifest.json"):
        load_run(out)
    monkeypatch.undo()
    toy.demo(out, crawl=spiders_run.crawl)
    assert (out / "questions.parquet").read_bytes() == before, "a re-run writes the same bytes"


def test_a_reason_or_funnel_line_the_source_does_not_declare_is_refused(toy: SourceSpec, tmp_path: Path) -> None:
    from timelyqa.stages import StageWriter
    from timelyqa.wikidata.filters import Drop

    ledger = StageWriter(toy, tmp_path)
    with pytest.raises(ValueError, match="not a reject reason of source 'toy'"):
        ledger.reject({}, Drop.TIME_TOO_COARSE, "a Wikidata reason in the toy source")
    with pytest.raises(ValueError, match="not a funnel line"):
        ledger.count("pages_read")


def test_rows_kept_as_a_frame_without_an_answer_type_are_refused(toy: SourceSpec, tmp_path: Path) -> None:
    """A source that keeps polars frames skips the record model's check: the writer makes it anyway."""
    from timelyqa.stages import StageWriter

    toy.demo(tmp_path / "toy", crawl=spiders_run.crawl)
    rows = pl.read_parquet(tmp_path / "toy" / "questions.parquet")
    ledger = StageWriter(toy, tmp_path / "again")
    ledger.keep_frame(rows.with_columns(pl.when(pl.col("id") == rows["id"][0]).then(None)
                                        .otherwise(pl.col("answer_type")).alias("answer_type")))
    with pytest.raises(ValueError, match=rf"source 'toy': 1 rows without an answer_type \(first: {rows['id'][0]}\)"):
        ledger.questions()


def test_an_unknown_source_is_a_config_error_naming_the_known_ones() -> None:
    from timelyqa.sources import get

    with pytest.raises(ConfigError, match="source 'myspace' is not registered .known: news, official_site, site_tree, wikidata, wikipedia"):
        get("myspace")


def test_registering_a_taken_name_or_a_reason_twice_is_refused(toy: SourceSpec) -> None:
    from dataclasses import replace

    with pytest.raises(ValueError, match="registered already"):
        register(replace(toy))
    unregister("toy")
    with pytest.raises(ValueError, match="declared twice"):
        register(replace(toy, stages=(*toy.stages, replace(toy.stages[0], name="again", counts=()))))
    register(toy)


@pytest.mark.slow  # the official source's fixture run serves its site
def test_the_card_says_what_the_quality_gate_let_through_and_sent_back(tmp_path: Path) -> None:
    """Per source, in the funnel section: the candidates that passed the gate, and those it sent back by reason."""
    spec = sources()["official_site"]
    manifest = spec.run_on([ROOT / p for p in spec.fixtures], tmp_path / "official", None, crawl=spiders_run.crawl)
    build_release([tmp_path / "official"], tmp_path / "release", created=datetime(2026, 11, 20, tzinfo=UTC))
    card = (tmp_path / "release" / "README.md").read_text(encoding="utf-8")
    gated = {r: n for r, n in manifest.rejects.items() if spec.reason_stage[r] == "quality"}
    sent_back = sum(gated.values())
    line = next(line for line in card.splitlines() if line.startswith("Question-quality gate: "))
    assert line.startswith(f"Question-quality gate: {manifest.counts['questions_gated']} candidates passed, "
                           f"{sent_back} sent back")
    assert all(f"`{reason}` {n}" in line for reason, n in gated.items())
