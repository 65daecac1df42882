"""The answer check and independence, against scripted OpenAI-compatible servers (tests/llmserver.py, a test
double: tests/test_llm_real.py runs the same check on a real model)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.llmserver import ScriptedLLM, Step, reply
from timelyqa.llm import prompts
from timelyqa.llm.check import Models, check_answers, normalize, sub_match
from timelyqa.llm.client import LLM
from timelyqa.llm.settings import LLMSettings

RAG = prompts.get("dailyqa/rag_answerer", 1)


@pytest.fixture
def servers() -> Iterator[tuple[ScriptedLLM, ScriptedLLM]]:
    with ScriptedLLM(models=("writer-7b",)) as writer, ScriptedLLM(models=("checker-8b",)) as checker:
        yield writer, checker


def client(server: ScriptedLLM, model: str) -> LLM:
    return LLM(LLMSettings.build(base_url=server.url, model=model, timeout=2.0))


@pytest.mark.parametrize(("predicted", "truth", "matched"), [
    ("Paris", "Paris", True),
    ("The capital is Paris.", "paris", True),
    ("Zürich", "Zurich", True),
    ("Olaf Scholz (SPD)", "Olaf Scholz", True),
    ("Parisian", "Paris", False),  # words, not letters
    ("Lyon", "Paris", False),
    ("", "Paris", False),
    ("anything", "", False),  # an empty truth never matches
])
def test_sub_match_is_dailyqas_metric_on_whole_words(predicted: str, truth: str, matched: bool) -> None:
    assert sub_match(predicted, truth) is matched


def test_normalize_drops_case_accents_punctuation_and_articles() -> None:
    assert normalize("  The Café — \u201cLe Dôme\u201d, an icon!  ") == "cafe le dome icon"


def by_question(request: dict[str, Any]) -> Step:
    """The checker's replies chosen by the question asked: ask_all has two requests in flight, so the order in
    which they arrive is not the order of the rows."""
    prompt = request["messages"][-1]["content"]
    if "chancellor" in prompt:
        return reply({"answer": "Olaf Scholz"})
    if "capital" in prompt:
        return reply({"answer": "Berlin"})
    return Step(content="no idea")


def test_a_separate_checker_is_independent_and_sees_only_the_checking_prompt(servers: tuple[ScriptedLLM, ScriptedLLM]
                                                                             ) -> None:
    writer_server, checker_server = servers
    checker_server.default = by_question
    models = Models.of(client(writer_server, "writer-7b"), client(checker_server, "checker-8b"))
    rows = [{"reference": "Chancellor: Olaf Scholz", "query": "Who is the chancellor of Germany?"},
            {"reference": "Capital: Bonn", "query": "What is the capital?"},
            {"reference": "x", "query": "y"}]
    checks = check_answers(models, RAG, rows, ["Olaf Scholz", "Bonn", "z"])
    assert [(c.passed, c.reason) for c in checks] == [(True, None), (False, "answer_mismatch"),
                                                      (False, "check_malformed_json")]
    assert "'Berlin'" in checks[1].detail and "'Bonn'" in checks[1].detail
    assert all(c.independent and c.method == "llm-answer-check:independent" for c in checks)
    assert {c.model for c in checks} == {"checker-8b"} and {c.prompt_id for c in checks} == {RAG.id}
    assert writer_server.calls == 0  # the writer is never asked to check itself
    assert any("Chancellor: Olaf Scholz" in r["messages"][-1]["content"] for r in checker_server.requests)
    assert models.usage()["llm_calls"] == checker_server.calls


@pytest.mark.parametrize("checker_model", [None, "writer-7b", "org/WRITER-7B"])
def test_the_same_model_is_never_called_an_independent_check(servers: tuple[ScriptedLLM, ScriptedLLM],
                                                             checker_model: str | None) -> None:
    writer_server, checker_server = servers
    writer = client(writer_server, "writer-7b")
    checker = None if checker_model is None else client(checker_server, checker_model)
    models = Models.of(writer, checker)
    (writer_server if checker is None else checker_server).then(reply({"answer": "Bonn"}))
    [check] = check_answers(models, RAG, [{"reference": "Capital: Bonn", "query": "What is the capital?"}], ["Bonn"])
    assert check.passed and not check.independent and not models.independent
    assert check.method == "llm-answer-check:same-model"
