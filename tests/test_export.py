"""verl and TRL exports of a release's train split: verl's exact columns, loadable, scored 1.0 for right answers."""

from __future__ import annotations

import ast
import hashlib
import re
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import datasets
import huggingface_hub.constants
import pandas as pd
import polars as pl
import pytest
from typer.testing import CliRunner

from publish.release import build_release
from tests import runs
from timelyqa.cli import app
from timelyqa.errors import ConfigError
from timelyqa.export import PROMPT_VERSION, export_trl, export_verl
from timelyqa import answers
from timelyqa.answers import Typed
from timelyqa.record import CANARY, AnswerType, AnswerValue, QARecord, Verification, WikidataRecord, record_id, to_frame
from timelyqa.rewards import answer_reward, compute_score

CREATED = datetime(2026, 6, 2, 8, 30, tzinfo=UTC)
AS_OF = datetime(2026, 5, 31, 12, 0, tzinfo=UTC)
CHECK = Verification(method="sparql", query="ASK {}", endpoint="http://127.0.0.1:7878/query", result_count=1,
                     passed=True)
# (entity, question, typed answer, event_date): typed as the sources type them.
# Newest event 2026-05-20, so May and April go to test, March to validation, earlier months to train.
FACTS = [
    ("Q1", "Who is the chief executive officer of Northwind Analytics?", answers.entity("Ravi Menon", ["R. Menon"]),
     date(2026, 1, 5)),
    ("Q2", "What is the population of Campo Alto?", answers.from_decimal("+163900"), date(2026, 1, 20)),
    ("Q3", "When did Atlantic Cup 2026 take place?", answers.date("19 July 2026"), date(2026, 2, 1)),
    ("Q4", "When was Serrano Atlético founded?", answers.date("February 1990"), date(2026, 2, 14)),
    ("Q5", "What is the height of Lucas Andrade, in metres?", answers.from_decimal("+1.85", "metre"),
     date(2026, 2, 28)),
    ("Q6", "Riyadh Falcons FC won which cup in 2026?", answers.entity("Atlantic Cup 2026"), date(2026, 1, 11)),
    ("Q7", "Who coaches Riyadh Falcons FC?", answers.entity("Mateo Ferreira"), date(2026, 3, 10)),  # validation
    ("Q8", "Who chairs Northwind Analytics?", answers.entity("Ana Lima"), date(2026, 5, 20)),  # test
]
NEWS = [("Who won the Riyadh derby?", answers.entity("Riyadh Falcons FC", ["Falcons"]), date(2026, 1, 15)),
        ("On 21 August 2026: Valmora CF sign Mateo Ferreira for a fee of how many euros, in millions?",
         answers.quantity("18 million", "EUR"), date(2026, 1, 16)),
        # A live question: its answer exists only when it is asked, so no trainer can reward it.
        ("Current time: 2026-01-17 09:00 (Europe/London). What is today's forecast high for Port Alder, in degrees "
         "Celsius?", Typed("", AnswerType.QUANTITY, AnswerValue(unit="°C")), date(2026, 1, 17))]
TRAIN = [fact for fact in FACTS if fact[3] < date(2026, 3, 1)]
FIXED = [n for n in NEWS if n[1].answer]


def wikidata_record(entity: str, question: str, answer: Typed, day: date) -> WikidataRecord:
    facts = (entity, "P1", answer.answer)
    return WikidataRecord(
        id=record_id("wikidata", *facts), question=question, **answer.fields(),
        source="wikidata", level="L1", event_date=day, as_of=AS_OF, verification=CHECK, generator="wikidata_l1_v1",
        answer_id="Q100", query_triples=[list(facts)], delta_triple=list(facts), sparql="SELECT ?x WHERE {}")


def news_record(question: str, answer: Typed, day: date) -> QARecord:
    return QARecord(id=record_id("news", question), question=question, **answer.fields(),
                    source="news", level="easy", event_date=day, as_of=AS_OF, verification=CHECK,
                    generator="news_llm_v1")


def write_source(folder: Path, rows: list[Any], model: type, source: str) -> Path:
    return runs.write_source(folder, to_frame(rows, model), source, as_of=AS_OF.isoformat())


@pytest.fixture
def release(tmp_path: Path) -> Path:
    sources = [write_source(tmp_path / "wikidata", [wikidata_record(*f) for f in FACTS], WikidataRecord, "wikidata"),
               write_source(tmp_path / "news", [news_record(*n) for n in NEWS], QARecord, "news")]
    build_release(sources, tmp_path / "release", created=CREATED)
    return tmp_path / "release"


@pytest.fixture
def load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """datasets.load_dataset("parquet", ...) offline, with a cache of this test's own."""
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.setenv(name, "1")
        monkeypatch.setattr(datasets.config, name, True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")  # for code given no cache_dir
    return lambda path: datasets.load_dataset("parquet", data_files=str(path), split="train",
                                              cache_dir=str(tmp_path / "hf-cache"))


def test_verl_rows_have_verls_fields_and_types(release: Path, tmp_path: Path, load: Any) -> None:
    path = export_verl(release, tmp_path / "verl").path
    assert path == tmp_path / "verl" / "train.parquet"
    ds = load(path)
    assert ds.column_names == ["data_source", "prompt", "ability", "reward_model", "extra_info"]
    features = ds.features
    assert features["data_source"] == datasets.Value("string")
    assert features["ability"] == datasets.Value("string")
    assert features["prompt"] == datasets.List({"role": datasets.Value("string"), "content": datasets.Value("string")})
    assert features["reward_model"]["ground_truth"]["target"] == datasets.List(datasets.Value("string"))
    assert features["reward_model"]["ground_truth"]["answer_type"] == datasets.Value("string")
    assert features["reward_model"]["ground_truth"]["answer_value"]["number"] == datasets.Value("string")
    assert features["extra_info"]["index"] == datasets.Value("int64")
    assert features["extra_info"]["split"] == datasets.Value("string")
    row = next(r for r in ds if r["extra_info"]["answer"] == "19 July 2026")
    assert row["data_source"] == "timelyqa/wikidata" and row["ability"] == "temporal_qa"
    truth = row["reward_model"]["ground_truth"]
    assert row["reward_model"]["style"] == "rule" and truth["target"] == ["19 July 2026", "2026-07-19", "July 19, 2026"]
    assert truth["answer_type"] == "date" and truth["answer_value"]["date"] == "2026-07-19"
    assert [m["role"] for m in row["prompt"]] == ["user"]
    content = row["prompt"][0]["content"]
    assert content.startswith("As of 2026-05-31, when did Atlantic Cup 2026 take place?")
    assert "<answer>" in content and "</answer>" in content and "(a date, no explanation)" in content
    extra = row["extra_info"]
    assert (extra["split"], extra["event_date"], extra["as_of"]) == ("train", "2026-02-01", "2026-05-31T12:00:00+00:00")
    assert extra["prompt_version"] == PROMPT_VERSION and extra["canary"] == CANARY
    assert ds["extra_info"][0]["index"] == 0 and [e["index"] for e in ds["extra_info"]] == list(range(ds.num_rows))


def test_verl_rows_are_the_train_split_of_every_source(release: Path, tmp_path: Path, load: Any) -> None:
    ds = load(export_verl(release, tmp_path / "verl").path)
    got = {e["answer"] for e in ds["extra_info"]}
    assert got == {f[2].answer for f in TRAIN} | {n[1].answer for n in FIXED}  # not Q7 (validation), Q8 (test)
    assert {e["split"] for e in ds["extra_info"]} == {"train"}
    assert set(ds["data_source"]) == {"timelyqa/wikidata", "timelyqa/news"}
    validation = load(export_verl(release, tmp_path / "val", split="validation").path)
    assert [e["answer"] for e in validation["extra_info"]] == ["Mateo Ferreira"]
    news = load(export_verl(release, tmp_path / "news", config="news").path)
    assert news["data_source"] == ["timelyqa/news"] * len(FIXED)


def test_compute_score_gives_1_for_every_answer_and_alias_after_the_parquet_round_trip(
        release: Path, tmp_path: Path, load: Any) -> None:
    path = export_verl(release, tmp_path / "verl").path
    # verl reads the file with datasets (RLHFDataset) and, in older versions and Search-R1 scripts, with pandas.
    rows = list(load(path)) + pd.read_parquet(path).to_dict("records")
    assert len(rows) == 2 * (len(TRAIN) + len(FIXED))
    for row in rows:
        args = (row["data_source"], row["reward_model"]["ground_truth"], row["extra_info"])
        answer, aliases = row["extra_info"]["answer"], list(row["extra_info"]["answer_aliases"])
        for accepted in [answer, *aliases]:
            assert compute_score(args[0], f"<answer>{accepted}</answer>", *args[1:]) == 1.0, accepted
        assert compute_score(args[0], "<answer>Lucas Andrade</answer>", *args[1:]) == 0.0
        assert compute_score(args[0], "", *args[1:]) == 0.0


def test_trl_rows_have_a_prompt_column_and_the_reward_gives_1_for_right_answers(
        release: Path, tmp_path: Path, load: Any) -> None:
    ds = load(export_trl(release, tmp_path / "trl").path)
    assert ds.column_names[0] == "prompt" and {"answer", "answer_aliases", "id", "as_of"} <= set(ds.column_names)
    # One statement of time each: "As of", or the question's own ("On 21 August 2026: ...").
    assert all(m[0]["role"] == "user" and m[0]["content"].startswith(("As of 2026-05-31, ", "On 21 August 2026: "))
               for m in ds["prompt"])
    assert sorted(ds["answer"]) == sorted([f[2].answer for f in TRAIN] + [n[1].answer for n in FIXED])
    # As GRPOTrainer calls it: every column but `prompt` as a keyword, completions as chat messages.
    columns = {name: ds[name] for name in ds.column_names if name != "prompt"}
    right = [[{"role": "assistant", "content": f"Let me think.\n<answer>{a}</answer>"}] for a in ds["answer"]]
    assert answer_reward(prompts=ds["prompt"], completions=right, completion_ids=None, trainer_state=None,
                         **columns) == [1.0] * ds.num_rows
    wrong = [[{"role": "assistant", "content": "<answer>Lucas Andrade</answer>"}]] * ds.num_rows
    assert answer_reward(completions=wrong, **columns) == [0.0] * ds.num_rows
    by_alias = [f"<answer>{aliases[-1] if aliases else a}</answer>" for a, aliases in
                zip(ds["answer"], ds["answer_aliases"], strict=True)]
    assert answer_reward(completions=by_alias, **columns) == [1.0] * ds.num_rows


def test_exports_are_byte_identical_on_rerun(release: Path, tmp_path: Path) -> None:
    for export in (export_verl, export_trl):
        first = hashlib.sha256(export(release, tmp_path / "a").path.read_bytes()).hexdigest()
        assert hashlib.sha256(export(release, tmp_path / "b").path.read_bytes()).hexdigest() == first


@pytest.mark.parametrize(("config", "split", "message"), [
    ("news", "test", "config 'news' has no 'test' split (splits: train)"),
    ("bulletin", "train", "no config 'bulletin' in this release (configs: default, news, wikidata)"),
])
def test_a_missing_split_or_config_is_refused_naming_the_folder(release: Path, tmp_path: Path, config: str,
                                                                split: str, message: str) -> None:
    for export in (export_verl, export_trl):
        with pytest.raises(ConfigError) as caught:
            export(release, tmp_path / "out", config=config, split=split)
        assert str(caught.value) == f"{release}: {message}"
    assert not (tmp_path / "out").exists()


def test_a_missing_release_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=f"^{tmp_path / 'nowhere'}: no such release folder$"):
        export_verl(tmp_path / "nowhere", tmp_path / "out")


@pytest.mark.usefixtures("load")  # offline, and a datasets cache of this test's own
def test_the_cards_training_snippet_runs_on_an_export(release: Path, tmp_path: Path) -> None:
    """The card's code, run as a user would with DIR their export folder, gives TRL a Dataset and the stated scores."""
    card = (release / "README.md").read_text()
    code = card.split("## Training with RLVR", 1)[1].split("```python\n", 1)[1].split("\n```", 1)[0]
    assert "reward.custom_reward_function.path=" in code and "reward.custom_reward_function.name=compute_score" in code
    assert not re.search(r"(?<![\w.])custom_reward_function\.", card), "verl's legacy top-level keys"
    out = tmp_path / "trl"
    export_trl(release, out)
    namespace: dict[str, Any] = {}
    exec(code.replace("DIR", str(out)), namespace)  # noqa: S102 - the card's own example
    train = namespace["train"]
    assert isinstance(train, datasets.Dataset)  # GRPOTrainer refuses a DatasetDict
    assert train.num_rows == len(TRAIN) + len(FIXED) and train.column_names[0] == "prompt"
    stated = [re.fullmatch(r"(.+?)  # (\[?[\d.]+\]?)", line) for line in code.splitlines()]
    assert sum(1 for m in stated if m) == 2
    for m in filter(None, stated):
        assert eval(m[1], namespace) == ast.literal_eval(m[2]), m[0]  # noqa: S307 - the card's own example


def test_a_shard_changed_after_the_release_was_built_is_refused_naming_it(release: Path, tmp_path: Path) -> None:
    # A release a killed build or a hand edit left must not become a training file: each shard's bytes are checked
    # against the sha256 its manifest records.
    shard = next((release / "default").glob("train-*-of-*.parquet"))
    pl.read_parquet(shard).head(1).write_parquet(shard)
    with pytest.raises(ConfigError, match=f"^{shard}: not the file {release / 'manifest.json'} records"):
        export_verl(release, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_live_question_is_never_a_training_row_and_the_export_says_so(release: Path, tmp_path: Path) -> None:
    """The news config here holds a live row (no fixed answer): it is left out and counted, in both exports and
    in the line the command prints."""
    for export in (export_verl, export_trl):
        exported = export(release, tmp_path / export.__name__, config="news")
        assert (exported.rows, exported.left_out) == (len(FIXED), {"live_question": 1})
        assert pl.read_parquet(exported.path).height == len(FIXED)
    result = CliRunner().invoke(app, ["export", "verl", str(release), "--out", str(tmp_path / "cli"),
                                      "--config", "news"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == (f"verl: {len(FIXED)} rows in {tmp_path / 'cli' / 'train.parquet'}; "
                                     "left out: 1 live_question (no fixed answer to train on)")


def test_the_prompt_states_the_time_once_and_names_the_answers_form(release: Path, tmp_path: Path) -> None:
    prompts = {row["answer"]: row["prompt"][0]["content"]
               for row in pl.read_parquet(export_trl(release, tmp_path / "trl").path).to_dicts()}
    assert prompts["1.85 m"].startswith("As of 2026-05-31, what is the height of Lucas Andrade, in metres?")
    assert "(a number in metres, no explanation)" in prompts["1.85 m"]
    assert "(a number in millions of euros, no explanation)" in prompts["18 million"]
    # The news question says its own date: no "As of" before it.
    assert prompts["18 million"].startswith("On 21 August 2026: Valmora CF")
    assert "(a name, no explanation)" in prompts["Ravi Menon"] and "(a date, no explanation)" in prompts["19 July 2026"]
    assert all(p.count("As of") + p.count("Current time") <= 1 for p in prompts.values())


def test_other_forms_of_a_typed_gold_score_1_through_both_exports(release: Path, tmp_path: Path) -> None:
    """What a prompt-following model writes for the instruction's form, graded as each trainer calls the grader."""
    forms = {"1.85 m": (["1.85", "185 cm", "1.850 metres"], ["1.86", "1.85 kg"]),
             "163,900": (["163900", "163 900"], ["163,901", "164,000"]),
             "18 million": (["18", "18,000,000", "€18m", "EUR 18 million"], ["19", "£18 million"]),
             "19 July 2026": (["2026-07-19", "July 19, 2026", "Sunday 19 July 2026"], ["18 July 2026", "July 2026"]),
             "February 1990": (["1990-02", "5 February 1990"], ["1990", "March 1990"])}
    verl = pl.read_parquet(export_verl(release, tmp_path / "verl").path).to_dicts()
    trl = pl.read_parquet(export_trl(release, tmp_path / "trl").path).to_dicts()
    for answer, (right, wrong) in forms.items():
        row = next(r for r in verl if r["extra_info"]["answer"] == answer)
        truth = row["reward_model"]["ground_truth"]
        for form, score in [*((f, 1.0) for f in right), *((f, 0.0) for f in wrong)]:
            assert compute_score(row["data_source"], f"<answer>{form}</answer>", truth, row["extra_info"]) == score, \
                (answer, form)
        columns = next(r for r in trl if r["answer"] == answer)
        completions = [f"<answer>{f}</answer>" for f in [*right, *wrong]]
        n = len(completions)
        got = answer_reward(completions, answer=[answer] * n, answer_aliases=[columns["answer_aliases"]] * n,
                            answer_type=[columns["answer_type"]] * n, answer_value=[columns["answer_value"]] * n)
        assert got == [1.0] * len(right) + [0.0] * len(wrong), answer
