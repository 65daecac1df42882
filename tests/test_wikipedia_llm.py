"""The Wikipedia source with DailyQA's LLM writer and an independent checker, on scripted OpenAI-compatible servers.

The servers are test doubles (tests/llmserver.py): what a model writes cannot be chosen at will from a
real one. Each page's script is chosen by its title, so the expected outcome of every page is written
here, beside its script; tests/test_llm_real.py and the real-model test below run a real model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tests.llmserver import ScriptedLLM, Step, reply
from tests.wikiworld import Rev, WikiPage, write_export
from timelyqa.errors import ConfigError
from timelyqa.llm.check import Models
from timelyqa.llm.client import LLM
from timelyqa.llm.settings import LLMSettings
from timelyqa.wikipedia.options import Settings
from timelyqa.wikipedia.pipeline import run
from timelyqa.wikipedia.writers import LLMDomains, LLMWriter, llm_writer

START = datetime(2026, 3, 1, tzinfo=UTC)
END = START + timedelta(days=7)
WINDOW = Settings(start=START, end=END)
OLD, NEW = "Ajax", "Celtic"

# title: (what the writer answers, what the checker answers, the reject reason or None when kept)
SCRIPT: dict[str, tuple[Step, Step | None, str | None]] = {
    "Ana Lima": (reply({"query": "Which club does the footballer Ana Lima currently play for?"}),
                 reply({"answer": NEW}), None),
    "Bo Chen": (reply({"query": "Which club does he currently play for?"}), None, "subject_not_named"),
    "Cy Dorn": (reply({"query": f"Does Cy Dorn play for {NEW}?"}), None, "answer_in_question"),
    "Di Eze": (reply({"query": "Which club did Di Eze join on 3 March 2026?"}), None, "date_in_question"),
    "Ed Fox": (reply({"query": "Which club does Ed Fox currently play for?"}), reply({"answer": OLD}),
               "answer_mismatch"),
    "Flo Gil": (Step(content="Celtic, I think."), None, "writer_malformed_json"),
    "Gus Hale": (reply({"query": "Which club does Gus Hale play for?"}), Step(content="no idea"),
                 "check_malformed_json"),
    "Hana Ito": (Step(refusal="I cannot help with that."), None, "writer_refused"),
}


def _player(pid: int, title: str) -> WikiPage:
    def text(club: str) -> str:
        return (f"{{{{Infobox football biography\n| name = {title}\n| currentclub = [[{club}]]<ref>{{{{cite web|"
                f"title=Squad}}}}</ref>\n| position = [[Midfielder]]\n}}}}\n'''{title}''' is a footballer.\n")
    return WikiPage(id=pid, title=title, ns=0, template="Infobox football biography", revisions=[
        Rev(pid * 10, None, START - timedelta(days=5), text(OLD), {"name": title, "currentclub": OLD}, "create"),
        Rev(pid * 10 + 1, pid * 10, START + timedelta(days=2), text(NEW), {"name": title, "currentclub": NEW}, "fact"),
    ])


def _title_in(request: dict[str, Any], pattern: str) -> str:
    match = re.search(pattern, request["messages"][-1]["content"])
    return match.group(1) if match else ""


def writer_script(request: dict[str, Any]) -> Step:
    # DailyQA's prompt names the page: "a wiki page with title [T]"; a repair re-ask carries the first message.
    first = {**request, "messages": [m for m in request["messages"] if m["role"] == "user"][:1]}
    return SCRIPT.get(_title_in(first, r"with title \[(.+?)\]"), (Step(status=500),))[0]


def checker_script(request: dict[str, Any]) -> Step:
    first = {**request, "messages": [m for m in request["messages"] if m["role"] == "user"][:1]}
    return SCRIPT[_title_in(first, r"Title: (.+?)\n")][1] or Step(status=500)


@pytest.fixture
def export(tmp_path: Path) -> Path:
    return write_export([_player(n, title) for n, title in enumerate(SCRIPT, start=1)], tmp_path / "players.xml")


@pytest.fixture
def servers() -> Iterator[tuple[ScriptedLLM, ScriptedLLM]]:
    with ScriptedLLM(models=("writer-7b",), default=writer_script) as writer, \
            ScriptedLLM(models=("checker-8b",), default=checker_script) as checker:
        yield writer, checker


def _writer(servers: tuple[ScriptedLLM, ScriptedLLM], cache: Path | None, *, same: bool = False) -> LLMWriter:
    writer_server, checker_server = servers
    settings = {"timeout": 5.0, "cache_dir": cache, "repairs": 1, "backoff": 0.0}
    writer = LLM(LLMSettings.build(base_url=writer_server.url, model="writer-7b", **settings))
    checker = None if same else LLM(LLMSettings.build(base_url=checker_server.url, model="checker-8b", **settings))
    return LLMWriter(Models.of(writer, checker))


def test_every_page_gets_the_outcome_its_script_calls_for(export: Path, servers: tuple[ScriptedLLM, ScriptedLLM],
                                                          tmp_path: Path) -> None:
    manifest = run(export, tmp_path / "out", WINDOW, writer=_writer(servers, None)).model_dump(mode="json")
    questions = pl.read_parquet(tmp_path / "out" / "questions.parquet")
    rejected = pl.read_parquet(tmp_path / "out" / "rejected.parquet")
    assert questions["page_title"].to_list() == ["Ana Lima"]
    row = questions.row(0, named=True)
    assert row["question"] == "Which club does the footballer Ana Lima currently play for?" and row["answer"] == NEW
    assert row["generator"] == "dailyqa_query_writer_v1+wikipedia_unit_phrase_v1+llm:writer-7b"
    assert row["verification"]["method"] == "llm-answer-check:independent"
    assert row["verification"]["endpoint"] == "llm:checker-8b" and row["verification"]["passed"]
    assert "dailyqa_rag_answerer_v1" in row["verification"]["query"]
    reasons = {json.loads(r["item"])["page"]: r["reason"] for r in rejected.iter_rows(named=True)}
    assert reasons == {title: reason for title, (_, _, reason) in SCRIPT.items() if reason}
    mismatch = rejected.filter(pl.col("reason") == "answer_mismatch").row(0, named=True)
    assert "'Ajax'" in mismatch["detail"] and "'Celtic'" in mismatch["detail"] and "Ed Fox" in mismatch["detail"]
    assert json.loads(mismatch["item"])["question"] == "Which club does Ed Fox currently play for?"
    assert manifest["generators"] == ["dailyqa_query_writer_v1+wikipedia_unit_phrase_v1+llm:writer-7b"]
    assert manifest["settings"]["generator"] == "llm"
    # The checker is asked only about questions that passed the rule checks; the writer about every page.
    writer_server, checker_server = servers
    assert checker_server.calls == 3 + 1  # Ana, Ed, Gus, and Gus's one repair
    assert manifest["usage"]["llm_calls"] == writer_server.calls + checker_server.calls


def test_a_rerun_makes_no_model_call_and_gives_the_same_rows(export: Path, servers: tuple[ScriptedLLM, ScriptedLLM],
                                                             tmp_path: Path) -> None:
    run(export, tmp_path / "a", WINDOW, writer=_writer(servers, tmp_path / "cache"))
    calls = sum(s.calls for s in servers)
    manifest = run(export, tmp_path / "b", WINDOW, writer=_writer(servers, tmp_path / "cache")).model_dump(mode="json")
    assert sum(s.calls for s in servers) == calls
    assert manifest["usage"]["llm_calls"] == 0 and manifest["usage"]["llm_cached"] > 0
    for name in ("questions.parquet", "rejected.parquet"):
        assert pl.read_parquet(tmp_path / "a" / name).equals(pl.read_parquet(tmp_path / "b" / name))


def test_a_writer_checking_itself_is_recorded_as_not_independent(export: Path,
                                                                 servers: tuple[ScriptedLLM, ScriptedLLM],
                                                                 tmp_path: Path) -> None:
    writer_server, checker_server = servers

    def both(request: dict[str, Any]) -> Step:
        prompt = request["messages"][0]["content"]
        return checker_script(request) if "Title: " in prompt else writer_script(request)

    writer_server.default = both
    run(export, tmp_path / "out", WINDOW, writer=_writer(servers, None, same=True))
    row = pl.read_parquet(tmp_path / "out" / "questions.parquet").row(0, named=True)
    assert row["verification"]["method"] == "llm-answer-check:same-model"
    assert row["verification"]["endpoint"] == "llm:writer-7b"
    assert checker_server.calls == 0


def test_settings_come_from_the_environment_and_a_missing_model_stops_before_any_work(
        servers: tuple[ScriptedLLM, ScriptedLLM], tmp_path: Path) -> None:
    writer_server, checker_server = servers
    env = {"TIMELYQA_LLM_BASE_URL": writer_server.url, "TIMELYQA_LLM_MODEL": "writer-7b",
           "TIMELYQA_CHECK_LLM_BASE_URL": checker_server.url, "TIMELYQA_CHECK_LLM_MODEL": "checker-8b"}
    made = llm_writer(cache_dir=tmp_path / "cache", environ=env)
    assert made.models.independent and made.models.writer.settings.cache_dir == tmp_path / "cache"
    with pytest.raises(ConfigError, match="does not serve model 'checker-9b'"):
        llm_writer(cache_dir=tmp_path, environ={**env, "TIMELYQA_CHECK_LLM_MODEL": "checker-9b"})
    with pytest.raises(ConfigError, match="TIMELYQA_LLM_BASE_URL"):
        llm_writer(cache_dir=tmp_path, environ={})
    assert writer_server.calls == checker_server.calls == 0  # preflight lists models; it asks nothing


def test_domains_come_from_the_model_only_when_asked_and_a_bad_label_keeps_the_rules(
        export: Path, servers: tuple[ScriptedLLM, ScriptedLLM], tmp_path: Path) -> None:
    writer_server, _ = servers
    labels = {"Ana Lima": reply({"domain": "Culture and Arts"}), "Bo Chen": reply({"domain": "Cooking"})}
    model = _labeller(writer_server, labels)
    ruled = run(export, tmp_path / "rule", WINDOW).model_dump(mode="json")
    asked = run(export, tmp_path / "llm", WINDOW, domains=LLMDomains(model)).model_dump(mode="json")
    by_rule = pl.read_parquet(tmp_path / "rule" / "questions.parquet")
    by_llm = pl.read_parquet(tmp_path / "llm" / "questions.parquet")
    assert set(by_rule["domain"]) == {"sports_and_entertainment"}
    assert ruled["settings"]["domains"].startswith("wikipedia_domain_rule_v")
    assert dict(zip(by_llm["page_title"], by_llm["domain"], strict=True)) == {
        title: {"Ana Lima": "culture_and_arts", "Bo Chen": "sports_and_entertainment"}.get(title, "others")
        for title in by_rule["page_title"]}
    assert asked["counts"]["domains_by_llm"] == len(SCRIPT) - 1 and asked["counts"]["domains_by_rule"] == 1
    assert asked["settings"]["domains"] == "dailyqa_domain_classifier_v1+llm:writer-7b"
    assert asked["usage"]["llm_calls"] == writer_server.calls == len(SCRIPT)
    assert any("Query: [Which club does Ana Lima play for?]" in r["messages"][0]["content"]
               for r in writer_server.requests), "the model classifies the question, with its page"


def test_why_the_model_gave_no_domain_is_counted_in_the_manifest(
        export: Path, servers: tuple[ScriptedLLM, ScriptedLLM], tmp_path: Path) -> None:
    writer_server, _ = servers
    labels = {"Bo Chen": reply({"domain": "Cooking"}), "Cy Dorn": Step(content="Sports, I would say."),
              "Di Eze": Step(refusal="I cannot help with that.")}
    model = _labeller(writer_server, labels)
    run(export, tmp_path / "llm", WINDOW, domains=LLMDomains(model))
    questions = pl.read_parquet(tmp_path / "llm" / "questions.parquet")
    domains = dict(zip(questions["page_title"], questions["domain"], strict=True))
    assert {domains[t] for t in labels} == {"sports_and_entertainment"}  # the rule's label, kept
    counts = json.loads((tmp_path / "llm" / "manifest.json").read_text())["counts"]
    assert counts["domains_by_rule"] == 3 and counts["domains_by_llm"] == len(SCRIPT) - 3
    assert {k: v for k, v in counts.items() if k.startswith("domains_by_rule_")} == {
        "domains_by_rule_wrong_shape": 1, "domains_by_rule_malformed_json": 1, "domains_by_rule_refused": 1}
    funnel = list(counts)  # each reason under the count it splits, where the funnel reads top to bottom
    assert funnel.index("domains_by_rule") < funnel.index("domains_by_rule_wrong_shape") < funnel.index("questions")


def _labeller(server: ScriptedLLM, labels: dict[str, Step]) -> LLM:
    """The domain model, answering each page's classification as `labels` says, and "Others" for the rest."""
    def classify(request: dict[str, Any]) -> Step:
        first = request["messages"][0]["content"]
        return labels.get(_title_in({"messages": [{"content": first}]}, r"Wikipedia page \[(.+?)\]"),
                          reply({"domain": "Others"}))

    server.default = classify
    return LLM(LLMSettings.build(base_url=server.url, model="writer-7b", timeout=5.0, repairs=0))
