"""The site-tree source with WebWalker's LLM writer and strict verifier, on scripted OpenAI-compatible servers.

The servers are test doubles (tests/llmserver.py) standing in for a paid LLM API: what a model writes cannot be
chosen at will from a real one. The pages are the conference site's real HTML as a crawl stores them (trafilatura's
markdown and text); each chosen page or pair of pages has its script here, beside the outcome it must end in.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from spiders.content import read
from tests.llmserver import ScriptedLLM, Step, reply
from tests.sites import conference_site
from tests.test_site_tree_questions import BASE, crawl
from timelyqa.llm.check import Models
from timelyqa.llm.client import LLM
from timelyqa.llm.settings import LLMSettings
from timelyqa.rewards import Gold, grade
from timelyqa.site_tree import pipeline
from timelyqa.site_tree.candidates import trim
from timelyqa.site_tree.llm import SiteLLMWriter
from timelyqa.site_tree.source import SOURCE

pytestmark = pytest.mark.slow  # real model stand-ins and real pages: a second or more a test, in make test

SETTINGS = pipeline.Settings(domain="conference", pages_per_root=6, pairs_per_root=4)
ACCEPT, REJECT = reply({"reason": "Correct, concise and needs the page.", "decision": True}), \
    reply({"reason": "The query is unnatural.", "decision": False})
MALFORMED = Step(content="The answer is fine, I think.")


def qa(query: str, answer: str, *sublinks: str) -> Step:
    pair = {"sublink_reason": "Related pages.", "sublinks": [BASE + s for s in sublinks]} if sublinks else {}
    return reply({**pair, "reason": "It takes reading the page.", "query": query, "answer": answer})


# The pages seed 0 chooses (`pages_per_root=6`: two at each depth), and for each: (what the writer replies, what the
# verifier replies, the reject reason or None when kept).
SINGLE: dict[str, tuple[Step, Step | None, str | None]] = {
    "/awards": (qa("How much prize money comes with the award that Nordlicht Data sponsors?", "EUR 1,000"),
                ACCEPT, None),
    "/program/day-1/session-1": (qa("When does the talk 'Which Page Was True in 2019?' start?", "10:00"),
                                 REJECT, "verifier_rejected"),
    "/calendar/2026/04": (MALFORMED, None, "writer_malformed_json"),
    "/news/2026": (qa("Which page of the news lists the News 2026 announcements?", "News 2026"), None,
                   "answer_in_question"),
    "/awards/best-paper": (qa("Which award did 'Answers That Expire' win?", "Best Paper"), None,
                           "answer_on_click_path"),  # /awards, on the way there, names it
    "/papers/p1": (qa("Who wrote 'Dense Retrieval over Dated Snapshots'?", "Mei Chen"), None,
                   "answer_not_on_page"),
}
# The pairs it chooses (`pairs_per_root=4`): (writer, verifier, what the checker answers from each page alone, reason).
SESSION2, CAL04, COMMITTEE, P1 = "/program/day-1/session-2", "/calendar/2026/04", "/committee", "/papers/p1"
MULTI: dict[tuple[str, str], tuple[Step, Step | None, dict[str, Step], str | None]] = {
    ("/calendar/2026/01", "/program/day-2/session-1"): (
        qa("Which session is on the second day?", "Evaluation", "/program/day-2/session-1"), None, {},
        "writer_wrong_sublinks"),
    (COMMITTEE, P1): (
        qa("Where does the general chair of the workshop that presents 'Dense Retrieval over Dated Snapshots' work?",
           "University of Porto", COMMITTEE, P1), ACCEPT,
        {COMMITTEE: reply({"answer": "University of Porto"}), P1: reply({"answer": "Porto"})},
        "verifier_single_page_suffices"),
    (SESSION2, CAL04): (
        qa("Which talk starts half an hour after the first talk of the Agents session, in a month with no events?",
           "Menus Made of Script", SESSION2, CAL04), ACCEPT,
        {SESSION2: reply({"answer": "Walking the Web with Fewer Clicks"}), CAL04: reply({"answer": "none"})}, None),
    ("/calls", "/calendar/2026/02"): (
        qa("How long may a paper be, for a workshop whose February calendar is empty?", "8 pages", "/calls",
           "/calendar/2026/02"), MALFORMED, {}, "verifier_malformed_json"),
}
UNSCRIPTED = qa("Which page is this?", "a page of no site")
"""What the writer answers for a page or pair no test above chose (the command's default limits choose more)."""
EXPECTED = {**{(p,): why for p, (_, _, why) in SINGLE.items()}, **{pair: why for pair, (*_, why) in MULTI.items()}}


def _first_user(request: dict[str, Any]) -> str:
    # a repair re-ask carries the first message again: the script answers it the same way
    return next(m["content"] for m in request["messages"] if m["role"] == "user")


def _paths(urls: list[str]) -> tuple[str, ...]:
    return tuple(u.removeprefix(BASE) for u in urls)


def writer_script(request: dict[str, Any]) -> Step:
    text = _first_user(request)
    if text.startswith("Below are two documents"):  # WebWalker's single-source writer: the page is Doc2
        return SINGLE.get(_paths(re.findall(r"\nDoc2: (\S+?); ", text))[0], (UNSCRIPTED,))[0]
    pair = _paths(re.findall(r"^(http://\S+?); ", text, re.MULTILINE))
    return MULTI[pair][0] if pair in MULTI else UNSCRIPTED


def checker_script(request: dict[str, Any]) -> Step:
    text = _first_user(request)
    if text.startswith("This is the retrieval augmented generation"):  # one page of a pair, alone
        page = _paths(re.findall(r"as follows: \[(\S+?); ", text))[0]
        return next(probes[page] for _, _, probes, _ in MULTI.values() if page in probes)
    docs = _paths(re.findall(r"\nDoc[12]: (\S+?); ", text))
    step = SINGLE[docs[1]][1] if "current knowledge from doc2" in text else MULTI[docs][1]  # type: ignore[index]
    return step or Step(status=500)


def with_text(pages: pl.DataFrame) -> pl.DataFrame:
    """The pages with the `markdown` and `text` columns a crawl stores (spiders.content.read)."""
    contents = [read(html, url, with_facts=False) for html, url in zip(pages["html"], pages["url"])]
    extracted = [(c["markdown"], c["text"]) for c in contents]
    return pages.with_columns(pl.Series("markdown", [m for m, _ in extracted], dtype=pl.String()),
                              pl.Series("text", [t for _, t in extracted], dtype=pl.String()))


@pytest.fixture(scope="module")
def crawl_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("crawl")
    with_text(crawl(conference_site())).write_parquet(folder / "pages.parquet")
    return folder


@pytest.fixture
def servers() -> Iterator[tuple[ScriptedLLM, ScriptedLLM]]:
    with ScriptedLLM(models=("writer-7b",), default=writer_script) as writer, \
            ScriptedLLM(models=("checker-8b",), default=checker_script) as checker:
        yield writer, checker


def _writer(servers: tuple[ScriptedLLM, ScriptedLLM], cache: Path | None, *, same: bool = False) -> SiteLLMWriter:
    writer_server, checker_server = servers
    settings = {"timeout": 5.0, "cache_dir": cache, "repairs": 1, "backoff": 0.0}
    writer = LLM(LLMSettings.build(base_url=writer_server.url, model="writer-7b", **settings))
    checker = None if same else LLM(LLMSettings.build(base_url=checker_server.url, model="checker-8b", **settings))
    return SiteLLMWriter(Models.of(writer, checker))


def outcomes(out: Path) -> dict[tuple[str, ...], str | None]:
    questions = pl.read_parquet(out / "questions.parquet")
    rejected = pl.read_parquet(out / "rejected.parquet")
    kept = {_paths(urls): None for urls in questions["source_urls"].to_list()}
    return {**kept, **{_paths(json.loads(item)["urls"]): reason for item, reason in rejected.select("item", "reason")
                       .iter_rows()}}


def test_every_page_and_pair_ends_as_its_script_calls_for(crawl_dir: Path, servers: tuple[ScriptedLLM, ScriptedLLM],
                                                          tmp_path: Path) -> None:
    manifest = pipeline.run(crawl_dir, tmp_path, SETTINGS, writer=_writer(servers, None)).model_dump(mode="json")
    assert outcomes(tmp_path) == EXPECTED
    rows = {r["type"]: r for r in pl.read_parquet(tmp_path / "questions.parquet").iter_rows(named=True)}
    single, multi = rows["single_source"], rows["multi_source"]
    # the answer is the whole of the page's fact "Prize", a sum: typed as a quantity in euros, and the question,
    # as released, gated and verified, says the unit and names its page (the verification names what the checker
    # judged)
    written = ('On the WebQA 2026 website, on the "Awards" page: How much prize money comes with the award that '
               "Nordlicht Data sponsors, in euros?")
    assert (single["question"], single["answer"]) == (written, "EUR 1,000")
    assert multi["question"].startswith('On the WebQA 2026 website, on the "Session: Agents" and "Calendar 2026-04" pages: ')
    assert (single["answer_type"], single["answer_value"]["unit"], single["answer_value"]["number"]) == \
        ("quantity", "EUR", "1000")
    gold = Gold.of(single["answer"], single["answer_aliases"], single["answer_type"], single["answer_value"])
    assert [grade(p, gold) for p in ("1000", "€1,000", "1,000 euros", "900", "£1,000")] == [1, 1, 1, 0, 0]
    assert multi["answer_type"] == "text"  # prose the writer composed from two pages: no fact says its kind
    assert single["generator"] == "webwalker_single_source_qa_writer_v1+llm:writer-7b"
    assert single["golden_path"] == [[f"{BASE}/", f"{BASE}/sponsors", f"{BASE}/awards"]]
    assert single["difficulty"] == "easy" and single["domain"] == "conference"
    assert json.loads(single["facts"]) == [{"url": f"{BASE}/awards", "label": "Prize", "value": "EUR 1,000"}]
    assert single["verification"] == {"method": "llm-verify:independent", "endpoint": "llm:checker-8b",
                                      "query": f"webwalker_single_source_verifier_v1: {written}",
                                      "result_count": 1, "passed": True}
    assert multi["generator"] == "webwalker_multi_source_qa_writer_v1+llm:writer-7b"
    assert multi["source_urls"] == [BASE + SESSION2, BASE + CAL04] and multi["difficulty"] == "hard"
    assert multi["verification"]["query"].startswith("webwalker_multi_source_verifier_v1+dailyqa_rag_answerer_v1: ")
    assert multi["verification"]["result_count"] == 3
    rejected = pl.read_parquet(tmp_path / "rejected.parquet")
    assert set(rejected["source"]) == {SOURCE.name}
    details = dict(zip(rejected["reason"], rejected["detail"], strict=True))
    assert "The query is unnatural." in details["verifier_rejected"]
    assert f"from {BASE}{COMMITTEE} alone the checker answers 'University of Porto'" in \
        details["verifier_single_page_suffices"]
    c = manifest["counts"]
    assert (c["single_pages_chosen"], c["pair_pages_chosen"], c["questions_written"], c["questions_gated"],
            c["questions_verified"], c["questions"]) == (6, 4, 7, 5, 2, 2)
    gated = rejected.filter(pl.col("stage") == "quality")
    assert sorted(gated["reason"]) == ["answer_in_question", "answer_not_on_page"]
    assert manifest["settings"]["generator"] == "llm"
    assert manifest["generators"] == ["webwalker_multi_source_qa_writer_v1+llm:writer-7b",
                                      "webwalker_single_source_qa_writer_v1+llm:writer-7b"]
    writer_server, checker_server = servers
    assert writer_server.calls == 10 + 1  # a page or pair each, and one repair of the malformed reply
    assert checker_server.calls == 5 + 1 + 4  # the written five, a repair, each page of two accepted pairs alone
    assert manifest["usage"]["llm_calls"] == writer_server.calls + checker_server.calls


def test_the_writer_reads_the_page_and_the_pages_on_the_way_to_it(crawl_dir: Path,
                                                                   servers: tuple[ScriptedLLM, ScriptedLLM],
                                                                   tmp_path: Path) -> None:
    pipeline.run(crawl_dir, tmp_path, SETTINGS, writer=_writer(servers, None))
    asked = next(t for r in servers[0].requests if f"\nDoc2: {BASE}/awards; " in (t := _first_user(r)))
    known, current = asked.split("\nDoc2: ")
    assert f"Doc1: {BASE}/; " in known and f"\n\n{BASE}/sponsors; " in known and "Nordlicht Data" in known
    assert "Prize\nEUR 1,000" in current and "Doc1" not in current


def test_a_rerun_makes_no_model_call_and_gives_the_same_rows(crawl_dir: Path, servers: tuple[ScriptedLLM, ScriptedLLM],
                                                             tmp_path: Path) -> None:
    pipeline.run(crawl_dir, tmp_path / "a", SETTINGS, writer=_writer(servers, tmp_path / "cache"))
    calls = sum(s.calls for s in servers)
    again = pipeline.run(crawl_dir, tmp_path / "b", SETTINGS, writer=_writer(servers, tmp_path / "cache"))
    assert sum(s.calls for s in servers) == calls
    assert again.usage["llm_calls"] == 0 and again.usage["llm_cached"] == calls
    for name in ("questions.parquet", "rejected.parquet"):
        assert pl.read_parquet(tmp_path / "a" / name).equals(pl.read_parquet(tmp_path / "b" / name))


def test_a_writer_verifying_itself_is_recorded_as_same_model(crawl_dir: Path,
                                                             servers: tuple[ScriptedLLM, ScriptedLLM],
                                                             tmp_path: Path) -> None:
    writer_server, checker_server = servers
    writer_server.default = lambda request: (writer_script(request) if _first_user(request).startswith("Below are")
                                             else checker_script(request))
    pipeline.run(crawl_dir, tmp_path, SETTINGS, writer=_writer(servers, None, same=True))
    assert outcomes(tmp_path) == EXPECTED
    verification = pl.read_parquet(tmp_path / "questions.parquet")["verification"].to_list()
    assert {(v["method"], v["endpoint"]) for v in verification} == {("llm-verify:same-model", "llm:writer-7b")}
    assert checker_server.calls == 0


def test_the_template_generator_stays_the_default_and_calls_no_model(crawl_dir: Path, tmp_path: Path) -> None:
    manifest = pipeline.run(crawl_dir, tmp_path)
    assert manifest.settings["generator"] == "template" and "llm_calls" not in manifest.usage
    assert manifest.generators == ["site_tree_multi_template_v5", "site_tree_single_template_v5"]
    assert "questions_written" not in manifest.counts


def test_a_page_is_cut_at_a_word_to_its_budget() -> None:
    text = "Dates\n\n\n\n8-9 June 2026 " + "word " * 100
    cut = trim(text, 40)
    assert cut == "Dates\n\n8-9 June 2026 word word [...]" and len(cut) <= 40
    assert trim("short", 40) == "short"


@pytest.mark.slow
def test_the_command_writes_with_models_named_by_the_environment_and_refuses_an_unserved_one(
        crawl_dir: Path, servers: tuple[ScriptedLLM, ScriptedLLM], tmp_path: Path) -> None:
    writer_server, checker_server = servers
    env = {**os.environ, "TIMELYQA_QUIET": "1", "COLUMNS": "200", "TIMELYQA_LLM_BASE_URL": writer_server.url,
           "TIMELYQA_LLM_MODEL": "writer-7b", "TIMELYQA_LLM_BACKOFF": "0", "TIMELYQA_LLM_API_KEY": "sk-test-5e1a7c",
           "TIMELYQA_CHECK_LLM_BASE_URL": checker_server.url, "TIMELYQA_CHECK_LLM_MODEL": "checker-8b"}
    command = [str(Path(sys.executable).with_name("timelyqa")), "site-tree", "--crawl", str(crawl_dir),
               "--out", str(tmp_path / "out"), "--generator", "llm", "--domain", "conference"]

    def run(**extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(command, capture_output=True, text=True, timeout=300, env={**env, **extra})

    done = run()
    assert done.returncode == 0, done.stderr
    assert "sk-test-5e1a7c" not in done.stdout + done.stderr
    questions = pl.read_parquet(tmp_path / "out" / "questions.parquet")
    assert questions.height > 0 and (tmp_path / "out" / "llm-cache").is_dir()
    assert set(questions["generator"]) <= {"webwalker_single_source_qa_writer_v1+llm:writer-7b",
                                           "webwalker_multi_source_qa_writer_v1+llm:writer-7b"}
    calls = writer_server.calls + checker_server.calls
    refused = run(TIMELYQA_LLM_MODEL="writer-70b")
    lines = [line for line in refused.stderr.splitlines() if line.strip()]
    assert refused.returncode == 2 and len(lines) == 1 and "does not serve model 'writer-70b'" in lines[0]
    assert writer_server.calls + checker_server.calls == calls, "refused before any work"
