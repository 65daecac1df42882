"""The LLM layer against a real model through the real HTTP API: SmolLM2-135M-Instruct served by
llama.cpp's OpenAI-compatible server (tests/smollm2.py). The model is small and writes poor text; these
tests assert what the layer guarantees with any model, not what the model knows."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

from tests.smollm2 import ALIAS, serve
from tests.test_wikipedia_llm import END, SCRIPT, START, _player
from tests.wikiworld import write_export
from timelyqa.errors import ConfigError
from timelyqa.llm import prompts
from timelyqa.llm.check import Models, check_answers
from timelyqa.llm.client import LLM
from timelyqa.llm.settings import LLMSettings
from timelyqa.llm.shapes import QueryOut
from timelyqa.wikipedia.options import Settings
from timelyqa.wikipedia.pipeline import run
from timelyqa.wikipedia.questions import descriptive, well_formed
from timelyqa.wikipedia.writers import LLMWriter

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

INFOBOX = {"name": "Riverside Rovers F.C.", "ground": "Mill Lane", "manager": "Ada Okafor", "league": "Northern League"}
UNIT = {"value": "Ada Okafor", "name": "manager", "infobox": repr(INFOBOX), "title": "Riverside Rovers F.C.",
        "url": "https://en.wikipedia.org/wiki/Riverside_Rovers_F.C.",
        "first_paragraph": "Riverside Rovers Football Club is an English football club based in Riverside."}


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with serve() as root:
        yield root


def model(url: str, cache: Path | None, **overrides: object) -> LLM:
    return LLM(LLMSettings.build(base_url=url, model=ALIAS, max_tokens=96, timeout=120.0, cache_dir=cache,
                                 **overrides))


def test_preflight_sees_the_served_model_and_refuses_another(url: str) -> None:
    model(url, None).preflight()
    with pytest.raises(ConfigError, match=f"does not serve model 'gpt-4.1'; it serves: {ALIAS}"):
        LLM(LLMSettings.build(base_url=url, model="gpt-4.1")).preflight()


def test_a_real_model_answers_dailyqas_prompt_in_the_shape_asked_and_a_rerun_replays_it(url: str,
                                                                                       tmp_path: Path) -> None:
    writer = prompts.get("dailyqa/query_writer")
    first = model(url, tmp_path)
    replies = first.ask_all(writer, [UNIT, {**UNIT, "value": "Mill Lane", "name": "ground"}])
    for reply in replies:
        # The server constrains the reply to the shape's schema, so it parses; what it says is the model's.
        assert reply.ok, f"{reply.reason}: {reply.detail}"
        assert isinstance(reply.value, QueryOut) and reply.value.query.strip()
        assert (reply.prompt_id, reply.model) == ("dailyqa_query_writer_v1", ALIAS)
    spent = first.usage.as_manifest()
    assert spent["llm_calls"] >= 2 and spent["llm_completion_tokens"] > 0 and spent["llm_seconds"] > 0

    again = model(url, tmp_path)
    assert [r.value for r in again.ask_all(writer, [UNIT, {**UNIT, "value": "Mill Lane", "name": "ground"}])] == [
        r.value for r in replies]
    assert again.usage.as_manifest()["llm_calls"] == 0


def test_the_check_rejects_a_wrong_answer_with_its_reason_and_is_not_called_independent(url: str) -> None:
    """The same model writes and checks here, so the check must say it is not independent."""
    same = model(url, None)
    rag = prompts.get("dailyqa/rag_answerer")
    reference = "Riverside Rovers F.C. Manager: Ada Okafor. Ground: Mill Lane."
    rows = [{"reference": reference, "query": "Who is the manager of Riverside Rovers F.C.?"}] * 2
    # The second truth is not in the reference: whatever the model answers, it cannot sub-match it.
    checks = check_answers(Models.of(same), rag, rows, ["Ada Okafor", "Zebedee Quartermain-Xylophone"])
    assert checks[1].passed is False and checks[1].reason in {"answer_mismatch", "check_malformed_json",
                                                              "check_wrong_shape", "check_truncated"}
    assert checks[1].detail
    assert all(not c.independent and c.method == "llm-answer-check:same-model" for c in checks)


def test_the_wikipedia_pipeline_runs_end_to_end_on_a_real_model_and_refuses_with_reasons(url: str,
                                                                                        tmp_path: Path) -> None:
    """SmolLM2 writes DailyQA's questions and checks them itself: poor questions, but every page ends as a
    checked question or a reject that says why, and no check is called independent."""
    export = write_export([_player(n, title) for n, title in enumerate(list(SCRIPT)[:4], start=1)],
                          tmp_path / "players.xml")
    writer = LLMWriter(Models.of(model(url, tmp_path / "cache")))
    manifest = run(export, tmp_path / "out", Settings(start=START, end=END), writer=writer).model_dump(mode="json")
    questions = pl.read_parquet(tmp_path / "out" / "questions.parquet")
    rejected = pl.read_parquet(tmp_path / "out" / "rejected.parquet")
    pages = {json.loads(r["item"])["page"]: r for r in rejected.iter_rows(named=True)}
    assert set(questions["page_title"]) | set(pages) == set(list(SCRIPT)[:4])
    known = {"subject_not_named", "answer_in_question", "date_in_question", "answer_mismatch"}
    for row in pages.values():
        assert row["reason"] in known or row["reason"].startswith(("writer_", "check_")), row
        assert row["detail"]
    for row in questions.iter_rows(named=True):  # what was kept passed every check
        infobox = json.loads(row["infobox"])
        assert descriptive(row["question"], row["page_title"], infobox) is None
        assert well_formed(row["question"], row["answer"], row["page_title"], infobox) is None
        assert row["verification"]["method"] == "llm-answer-check:same-model"
    assert manifest["usage"]["llm_calls"] >= 4
    assert manifest["generators"] in ([], [f"dailyqa_query_writer_v1+llm:{ALIAS}"])
