"""The news source end to end on an archive it was never tuned on (tests/fixtures/news/world): the portal's day pages
in both wikitext forms, three outlets on hosts of their own and one off the list, each served with a log of what
it was asked. What a user of the output sees is stated here by hand from the pages: every event, every article and
every drop with its reason, no request off the list, every answer in its article; then the release built from it
(splits by event date, no article text), the LLM writer's path with its longitudinal split, the human review, and
`timelyqa news` as a user types it."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import datasets
import huggingface_hub.constants
import polars as pl
import pytest

from publish.release import build_release
from spiders.render import browser_path
from tests.llmserver import ScriptedLLM, Step, reply
from tests.newsworld import NewsHost
from spiders import run as spiders_run
from timelyqa.llm.check import Models, sub_match
from timelyqa.llm.client import LLM
from timelyqa.llm.settings import LLMSettings
from timelyqa.manifest import Manifest
from timelyqa.news import pipeline
from timelyqa.news.gate import RULES, masked
from timelyqa.news.llm import NewsLLMWriter
from timelyqa.quality import judge

pytestmark = pytest.mark.slow  # each run crawls in its own Scrapy process, the scripted story through Chromium

if browser_path() is None:  # `make test` installs Debian's chromium when no browser is found
    raise RuntimeError("no Chromium: run `make test`, or set TIMELYQA_CHROMIUM")

ROOT = Path(__file__).resolve().parent.parent
WORLD = ROOT / "tests" / "fixtures" / "news" / "world"
PORTAL, OUTLETS = WORLD / "portal.xml", WORLD / "outlets.yaml"
KESTREL, MARROWBY, SALTMARSH, GOSSIP = (f"http://127.0.0.{n}:47312" for n in (21, 22, 23, 24))
CREATED = datetime(2026, 10, 20, 9, 0, tzinfo=UTC)
YEAR = "May change within one year"

# (day, category, topic, summary, [(url, outlet as cited)]), in page order: what the day pages say
EVENTS = [
    (date(2026, 3, 9), "Business and economy", "Tessaly Rail",
     "Tessaly Rail orders 42 hydrogen trains from Korvath Works for 610 million crowns.",
     [(KESTREL + "/2026/03/09/tessaly-rail-hydrogen-order.html", "Kestrel Courier"),
      (GOSSIP + "/2026/03/09/tessaly-trains-secret.html", "Gossip Hour")]),
    (date(2026, 4, 22), "Disasters and accidents", None,
     "A landslide buries the coast road between Ostrel and Veyne, injuring 17 people.",
     [(SALTMARSH + "/news/landslide-ostrel-veyne-road/", "Saltmarsh Gazette"),
      (KESTREL + "/2026/04/22/ostrel-landslide.html", "Kestrel Courier")]),
    (date(2026, 5, 30), "Politics and elections", "2026 Ostrel free port referendum",
     "Voters in Ostrel approve joining the Veyne Free Port with 63 percent in favour.",
     [(KESTREL + "/2026/05/30/ostrel-votes-free-port.html", "Kestrel Courier"),
      (MARROWBY + "/politics/2026-05-31/ostrel-referendum-result/", "Marrowby Ledger"),
      (SALTMARSH + "/news/ostrel-referendum-free-port/", "Saltmarsh Gazette")]),
    (date(2026, 5, 30), "Politics and elections", "Ostrel–Veyne relations",
     "The fishermen's union of Ostrel asks the regional court to review the referendum question.", []),
    (date(2026, 5, 30), "Sports", None,
     "Thessa Adler wins the Marrowby Marathon in 2 hours 21 minutes, a course record.",
     [(MARROWBY + "/sport/2026-05-31/adler-marathon-record/", "Marrowby Ledger")]),
    (date(2026, 7, 18), "Science and technology", None,
     "The Corvin Space Agency launches the Lanternfly probe toward the asteroid 1204 Idris.",
     [(MARROWBY + "/science/2026-07-18/lanternfly-launch/", "Marrowby Ledger")]),
    (date(2026, 8, 5), "Arts and culture", None,
     "Ilse Varga's novel The Salt Orchard wins the Northern Crown Prize, worth 50,000 crowns.",
     [(KESTREL + "/2026/07/20/salt-orchard-shortlist.html", "Kestrel Courier"),
      (SALTMARSH + "/culture/", "Saltmarsh Gazette"),
      (MARROWBY + "/culture/2026-08-05/northern-crown-prize/", "Marrowby Ledger")]),
    (date(2026, 9, 14), "Health and environment", None,
     "Brisk Harbour launches a floating clinic that will serve 12 islands.",
     [(KESTREL + "/members/2026/09/14/floating-clinic-costs.html", "Kestrel Courier"),
      (SALTMARSH + "/news/brisk-harbour-floating-clinic/", "Saltmarsh Gazette")]),
    (date(2026, 10, 2), "Business and economy", "Korvath Works",
     "Korvath Works cuts 900 jobs at its Veyne plant after losing a tram contract.",
     [(KESTREL + "/2026/10/02/korvath-job-cuts.html", "Kestrel Courier")]),
]

# url: (outlet, title, published, author, rendered, words the body states)
ARTICLES = {
    KESTREL + "/2026/03/09/tessaly-rail-hydrogen-order.html": (
        "Kestrel Courier", "Tessaly Rail places 610 million crown order for hydrogen trains", date(2026, 3, 9),
        "Piet Hallorann", False, "Tessaly Rail has ordered 42 hydrogen trains from Korvath Works"),
    SALTMARSH + "/news/landslide-ostrel-veyne-road/": (
        "Saltmarsh Gazette", "Landslide cuts Ostrel–Veyne road, 17 hurt", date(2026, 4, 23), "Maren Quist", False,
        "Of the 17 injured, four were taken to hospital in Veyne"),
    KESTREL + "/2026/05/30/ostrel-votes-free-port.html": (
        "Kestrel Courier", "Ostrel votes to join the Veyne Free Port", date(2026, 5, 30), "Piet Hallorann", False,
        "Turnout in the referendum was 71 percent."),
    MARROWBY + "/politics/2026-05-31/ostrel-referendum-result/": (
        "Marrowby Ledger", "A clear yes in Ostrel", date(2026, 5, 31), "Oskar Lindgren", False,
        "The mayor of Ostrel, Rune Ekdahl, said talks"),
    SALTMARSH + "/news/ostrel-referendum-free-port/": (
        "Saltmarsh Gazette", "Ostrel says yes to the free port", date(2026, 5, 31), "Maren Quist", False,
        "In the harbour district the yes vote reached 70 percent."),
    MARROWBY + "/sport/2026-05-31/adler-marathon-record/": (
        "Marrowby Ledger", "Adler breaks the Marrowby Marathon record", date(2026, 5, 31), "Lena Viklund", False,
        "More than 6,000 runners took part."),
    MARROWBY + "/science/2026-07-18/lanternfly-launch/": (
        "Marrowby Ledger", "Lanternfly lifts off for asteroid Idris", date(2026, 7, 18), "Oskar Lindgren", True,
        "meant to bring back 300 grams of rock"),
    MARROWBY + "/culture/2026-08-05/northern-crown-prize/": (
        "Marrowby Ledger", "Varga's The Salt Orchard takes the Northern Crown Prize", date(2026, 8, 5),
        "Lena Viklund", False, "since it was founded in 1987"),
    SALTMARSH + "/news/brisk-harbour-floating-clinic/": (
        "Saltmarsh Gazette", "Brisk Harbour launches floating clinic", date(2026, 9, 14), "Maren Quist", False,
        "paid 8.5 million crowns for the refit"),
    KESTREL + "/2026/10/02/korvath-job-cuts.html": (
        "Kestrel Courier", "Korvath Works to cut 900 jobs in Veyne", date(2026, 10, 2), "Piet Hallorann", False,
        "The cuts amount to almost a third of the plant's workforce."),
}

# url: (reason, outlet, words of its detail)
DROPS = {
    GOSSIP + "/2026/03/09/tessaly-trains-secret.html": ("outlet_not_allowed", "Gossip Hour", "127.0.0.24"),
    KESTREL + "/2026/04/22/ostrel-landslide.html": ("dead_link", "Kestrel Courier", "http_404"),
    KESTREL + "/2026/07/20/salt-orchard-shortlist.html": ("outside_window", "Kestrel Courier",
                                                          "published 2026-07-20, event on 2026-08-05"),
    SALTMARSH + "/culture/": ("not_article", "Saltmarsh Gazette", "words of text"),
    KESTREL + "/members/2026/09/14/floating-clinic-costs.html": ("robots_disallowed", "Kestrel Courier",
                                                                 "robots.txt of 127.0.0.21:47312 forbids it"),
}


class Logged:
    """Serves each outlet of the archive with NewsHost, which records every path it is asked, by host."""

    def __init__(self) -> None:
        self.hosts: dict[str, NewsHost] = {}

    def __call__(self, folder: Path, host: str, port: int) -> NewsHost:
        self.hosts[host] = NewsHost(host, folder, port)
        return self.hosts[host]

    def asked(self) -> dict[str, list[str]]:
        return {host: server.asked() for host, server in self.hosts.items()}


def run(out: Path, **kwargs: Any) -> tuple[Manifest, dict[str, list[str]]]:
    logged = Logged()
    manifest = pipeline.run_archive(PORTAL, OUTLETS, out, serve=logged, **kwargs, crawl=spiders_run.crawl)
    return manifest, logged.asked()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The template run, twice (each in a folder of its own), with what each outlet was asked."""
    tmp = tmp_path_factory.mktemp("news-world")
    manifest, asked = run(tmp / "run1")
    again, _ = run(tmp / "run2")
    return {"out": tmp / "run1", "again": tmp / "run2", "manifest": manifest, "second": again, "asked": asked,
            "tmp": tmp}


def frame(out: Path, name: str) -> pl.DataFrame:
    return pl.read_parquet(out / f"{name}.parquet")


def served(url: str) -> bytes:
    """The bytes the archive serves at `url`."""
    host, _, path = url.removeprefix("http://").partition("/")
    target = WORLD / "outlets" / host.split(":")[0] / path
    return (target / "index.html" if url.endswith("/") else target).read_bytes()


def test_the_archive_is_what_its_script_writes(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(WORLD / "make_world.py"), str(tmp_path)], check=True, timeout=60)

    def tree(root: Path) -> dict[str, bytes]:
        return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
                if p.is_file() and p.suffix != ".py" and "__pycache__" not in p.parts}

    written, on_disk = tree(tmp_path), tree(WORLD)
    assert set(on_disk) == set(written), "run tests/fixtures/news/world/make_world.py after editing the world"
    assert [name for name in written if written[name] != on_disk[name]] == [], "files differ from the script's"


def test_every_event_is_read_as_the_day_pages_state_it(world: dict[str, Any]) -> None:
    events = frame(world["out"], "events")
    got = [(r["date"], r["category"], r["topic"], r["summary"], list(zip(r["urls"], r["outlets"], strict=True)))
           for r in events.iter_rows(named=True)]
    assert got == EVENTS
    assert set(events["page"]) == {f"Portal:Current events/2026 {d:%B} {d.day}" for d, *_ in EVENTS}
    counts = world["manifest"].counts
    assert (counts["day_pages"], counts["events"], counts["links_cited"]) == (7, 9, 15)
    span = (date(2026, 10, 2) - date(2026, 3, 9)).days + 1
    assert world["manifest"].rejects["day_page_missing"] == span - 7, "every day of the span without a page, named"


def test_every_article_is_kept_with_what_its_page_says(world: dict[str, Any]) -> None:
    articles = frame(world["out"], "articles")
    by_url = {r["url"]: r for r in articles.iter_rows(named=True)}
    assert set(by_url) == set(ARTICLES)
    for url, (outlet, title, published, author, rendered, words) in ARTICLES.items():
        row = by_url[url]
        assert (row["outlet"], row["title"], row["published"], row["author"], row["rendered"]) == (
            outlet, title, published, author, rendered), url
        assert words in row["text"] and row["final_url"] == url and row["archive_url"] is None, url
        assert row["fetched_at"] is not None
        if not rendered:
            assert row["sha256"] == hashlib.sha256(served(url)).hexdigest(), url
    for row in by_url.values():
        for chrome in ("We use cookies", "Accept all", "Related stories", "Contact the newsroom", "independent since"):
            assert chrome not in row["text"], (row["url"], chrome)
    events = {r["summary"]: r["event_id"] for r in frame(world["out"], "events").iter_rows(named=True)}
    assert by_url[KESTREL + "/2026/10/02/korvath-job-cuts.html"]["event_id"] == events[EVENTS[-1][3]]


def test_a_story_built_by_a_script_is_read_from_chromium(world: dict[str, Any]) -> None:
    url = MARROWBY + "/science/2026-07-18/lanternfly-launch/"
    row = frame(world["out"], "articles").filter(pl.col("url") == url).row(0, named=True)
    assert b"300 grams" not in served(url).split(b"<script")[0], "the page as served has no body to read"
    assert row["rendered"] and "four-year journey to the asteroid 1204 Idris" in row["text"]
    assert len(row["sha256"]) == 64 and row["sha256"] != hashlib.sha256(served(url)).hexdigest(), \
        "the digest is of the page Chromium gave, which the text was read from"
    assert world["asked"]["127.0.0.22"].count("/science/2026-07-18/lanternfly-launch/") == 1, \
        "asked once: Chromium is handed the page as served, and runs its script"


def test_every_drop_has_its_reason_and_link_in_rejected_and_the_manifest(world: dict[str, Any]) -> None:
    rejected = frame(world["out"], "rejected")
    links = rejected.filter(pl.col("stage") == "articles")
    got = {}
    for row in links.iter_rows(named=True):
        item = json.loads(row["item"])
        got[item["url"]] = (row["reason"], item["outlet"], row["detail"])
        assert row["detail"].startswith(item["url"] + ": "), "the one-line reason names the link"
    assert set(got) == set(DROPS)
    for url, (reason, outlet, words) in DROPS.items():
        assert got[url][:2] == (reason, outlet) and words in got[url][2], (url, got[url])
    manifest = world["manifest"]
    assert manifest.rejects == {"day_page_missing": manifest.rejects["day_page_missing"], "outlet_not_allowed": 1,
                                "robots_disallowed": 1, "dead_link": 1, "not_article": 1, "outside_window": 1,
                                "no_article": 1, "answer_in_columns": 7, "summary_answers": 4}
    uncited = rejected.filter(pl.col("reason") == "no_article").row(0, named=True)
    assert "The fishermen's union of Ostrel" in uncited["item"] and "0 cited link(s)" in uncited["detail"]
    assert (manifest.counts["links_allowed"], manifest.counts["articles_fetched"],
            manifest.counts["articles_kept"]) == (14, 12, 10)


def test_nothing_off_the_list_nor_forbidden_is_requested(world: dict[str, Any]) -> None:
    asked = world["asked"]
    assert asked["127.0.0.24"] == [], "the outlet off the list is served, and never asked"
    assert not any(p.startswith("/members/") for p in asked["127.0.0.21"]), "robots.txt is obeyed"
    for host, paths in asked.items():
        cited = {u.split(":47312", 1)[1] for _, _, _, _, links in EVENTS for u, _ in links if f"//{host}:" in u}
        assert set(paths) - {"/robots.txt"} <= cited, f"{host} was asked only for cited pages and its robots.txt"


def test_every_answer_is_stated_in_its_article_and_the_evidence_names_it(world: dict[str, Any]) -> None:
    questions = frame(world["out"], "questions")
    articles = {r["url"]: r for r in frame(world["out"], "articles").iter_rows(named=True)}
    events = {r["event_id"]: r for r in frame(world["out"], "events").iter_rows(named=True)}
    # one question an event with an article, but for the two (the landslide, Korvath's job cuts) whose articles state
    # nothing the summary does not and whose headline gives the summary's answer away ("... 17 hurt", "cut 900 jobs")
    assert questions.height == world["manifest"].counts["questions"] == 6
    assert questions["event_id"].n_unique() == 6 and world["manifest"].rejects["answer_in_columns"] >= 2
    for row in questions.iter_rows(named=True):
        article = articles[row["article_url"]]
        assert sub_match(article["text"], row["answer"]), (row["question"], row["answer"])
        assert not sub_match(row["question"], row["answer"]), row["question"]
        evidence = row["evidence"][0]
        assert (evidence["url"], evidence["title"], evidence["sha256"], evidence["fetched_at"]) == (
            article["url"], article["title"], article["sha256"], article["fetched_at"])
        assert article["event_id"] == row["event_id"]
        event = events[row["event_id"]]
        assert (row["event_date"], row["category"]) == (event["date"], event["category"])
        # the summary and topic as released: the event's, with the answer masked
        assert row["event_summary"] == masked(event["summary"], [row["answer"], *row["answer_aliases"]])
        assert row["topic"] == masked(event["topic"], [row["answer"], *row["answer_aliases"]])
        assert not sub_match(row["event_summary"], row["answer"])
        # a span of the summary is masked in it; a fact of the article leaves it whole, after it in the question
        assert ("___" in row["event_summary"]) != row["question"].startswith(
            f"On {event['date'].day} {event['date']:%B %Y}: {event['summary']} ")
        assert row["question"].startswith(f"On {event['date'].day} {event['date']:%B %Y}: ")
        assert row["question"].endswith("?") and "___" not in row["question"]
        assert judge(row, RULES) is None, row["question"]
        assert row["outlet"] == article["outlet"] and row["published"] == article["published"]
        assert row["generator"] == "news_template_v4" and row["split"] is None


def test_ids_are_the_same_on_a_second_run(world: dict[str, Any]) -> None:
    for name, key in (("events", "event_id"), ("questions", "id")):
        first, second = frame(world["out"], name), frame(world["again"], name)
        assert sorted(first[key]) == sorted(second[key]) and first[key].n_unique() == first.height, name
    first, second = frame(world["out"], "questions"), frame(world["again"], "questions")
    assert first.select("id", "question", "answer").sort("id").equals(second.select("id", "question", "answer")
                                                                       .sort("id"))
    assert world["second"].counts == world["manifest"].counts


@pytest.fixture
def load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Any]:
    """datasets.load_dataset, offline, with a cache of this test's own."""
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.setenv(name, "1")
        monkeypatch.setattr(datasets.config, name, True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    return lambda *args, **kwargs: datasets.load_dataset(*args, cache_dir=str(tmp_path / "hf-cache"), **kwargs)


def test_the_release_splits_events_by_date_and_ships_no_article_text(world: dict[str, Any], tmp_path: Path,
                                                                      load: Callable[..., Any]) -> None:
    release = tmp_path / "release"
    manifest = build_release([world["out"]], release, created=CREATED)
    assert set(manifest["configs"]["news"]["splits"]) == {"train", "validation", "test"}
    by_split = {split: load(str(release), "news", split=split) for split in ("train", "validation", "test")}
    assert sum(d.num_rows for d in by_split.values()) == 6
    for loaded in by_split.values():
        assert "text" not in loaded.column_names and "article_text" not in loaded.column_names
        assert {"question", "answer", "article_url", "event_id", "event_date"} <= set(loaded.column_names)
    dates = {split: sorted(d["event_date"]) for split, d in by_split.items()}
    # newest event asked 14 September 2026 (Korvath's job cuts of 2 October get no question): test August and
    # September, validation July, train before
    assert {d.month for d in dates["test"]} == {8, 9} and {d.month for d in dates["validation"]} == {7}
    assert max(dates["train"]) < min(dates["validation"]) and max(dates["validation"]) < min(dates["test"])
    events = [set(d["event_id"]) for d in by_split.values()]
    assert all(not (a & b) for i, a in enumerate(events) for b in events[i + 1:]), "an event never in two splits"
    texts = {r["text"] for r in frame(world["out"], "articles").iter_rows(named=True)}
    shipped = b"".join(p.read_bytes() for p in release.rglob("*.parquet"))
    assert not any(text[:80].encode() in shipped for text in texts), "no article body in the release"


def test_the_review_gives_a_human_verified_news_split(world: dict[str, Any], tmp_path: Path,
                                                     load: Callable[..., Any]) -> None:
    release = tmp_path / "release"
    build_release([world["out"]], release, created=CREATED)
    review = tmp_path / "review.jsonl"
    exported = timelyqa("review", "export", release, "--config", "news", "--out", review,
                        "--articles", world["out"] / "articles.parquet")
    assert exported.returncode == 0, exported.stderr
    items = [json.loads(line) for line in review.read_text(encoding="utf-8").splitlines()]
    test_rows = load(str(release), "news", split="test")
    assert sorted(i["id"] for i in items) == sorted(test_rows["id"])
    texts = {r["url"]: r["text"] for r in frame(world["out"], "articles").iter_rows(named=True)}
    for item in items:
        assert item["decision"] == "" and item["answer"] in item["excerpt"]
        text = texts[test_rows["article_url"][test_rows["id"].index(item["id"])]]
        assert " ".join(item["excerpt"].strip(" …").split()) in " ".join(text.split()), "an excerpt of its article"
    items[0]["decision"], items[1]["decision"] = "accept", "reject"
    review.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    imported = timelyqa("review", "import", review, "--release", release)
    assert imported.returncode == 0, imported.stderr
    assert "2 decisions taken (accept 1, reject 1)" in imported.stdout
    verified = load(str(release), "news", split="human_verified")
    assert verified["id"] == [items[0]["id"]] and verified["question"] == [items[0]["question"]]


# The LLM writer on the archive's kept articles, scripted: each article's pair, by a sentence only it has.
# sentence of the article: (question, answer, temporal stability)
PAIRS = {
    # a fact of the article: the portal's line says "42 hydrogen trains", so "how many trains?" would be sent back
    "Tessaly Rail has ordered 42": ("In what year are the first hydrogen trains that Tessaly Rail ordered from Korvath "
                                    "Works in March 2026 due to run?", "2028", "Unlikely to change over time"),
    "Seventeen people were hurt": ("How many of those hurt in the April 2026 landslide on the Ostrel–Veyne coast road "
                                   "were taken to hospital with serious injuries?", "four",
                                   "Unlikely to change over time"),
    "Voters in Ostrel have approved": ("What was the turnout in Ostrel's free port referendum of May 2026?",
                                       "71 percent", "Unlikely to change over time"),
    "Ostrel's referendum ended": ("Who is the mayor of Ostrel that leads its talks with the Veyne Free Port's board?",
                                  "Rune Ekdahl", YEAR),
    "Ostrel will join the Veyne": ("What share of the vote did the yes side win in Ostrel's harbour district in the "
                                   "May 2026 free port referendum?", "70 percent", "Unlikely to change over time"),
    "Thessa Adler won the Marrowby": ("How many runners took part in the Marrowby Marathon that Thessa Adler won in "
                                      "May 2026?", "more than 6,000", "Unlikely to change over time"),
    "The Corvin Space Agency launched": ("How much rock is the Lanternfly probe, launched in July 2026, meant to "
                                         "bring back from 1204 Idris?", "300 grams", "Unlikely to change over time"),
    "Ilse Varga's novel The Salt Orchard has won": ("In what year was the literary prize Ilse Varga won in August "
                                                    "2026 founded?", "1987", "Unlikely to change over time"),
    "A floating clinic that will serve": ("How much did the regional health board pay to refit the ferry that became "
                                          "Brisk Harbour's floating clinic?", "8.5 million crowns",
                                          "Unlikely to change over time"),
    "Korvath Works will cut 900": ("What share of its Veyne plant's workforce do the job cuts Korvath Works "
                                   "announced in October 2026 amount to?", "almost a third",
                                   "Unlikely to change over time"),
}


def scripted(request: dict[str, Any]) -> Step:
    """Every prompt of the news path: relevant, the article's pair, the same answer found, graded A, compliant."""
    text = next(m["content"] for m in request["messages"] if m["role"] == "user")
    if text.startswith("You are presented with a news event summary"):
        return reply({"reason": "The article reports the event.", "relevant": True})
    if text.startswith("Please generate a single factual Q&A pair"):
        question, answer, stability = next(p for key, p in PAIRS.items() if key in text)
        return reply({"question": question, "answer": answer, "temporal_stability": stability,
                      "explanation": "Stated in the article; needs the event's details."})
    if text.startswith("Below are a question and the news article"):
        answer = next(a for q, a, _ in PAIRS.values() if f"{q}" in text)
        return reply({"reasoning": "The article states it.", "answer": answer})
    if text.startswith("Your job is to look at a question"):
        return reply({"grade": "A"})
    if text.startswith("Below are the guidelines"):
        return reply({"reasoning": "Factual and self-contained.", "compliant": True})
    return Step(status=500, body=b'{"error": "unknown prompt"}')


@pytest.fixture(scope="module")
def llm_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Manifest]]:
    out = tmp_path_factory.mktemp("news-llm") / "out"
    with ScriptedLLM(models=("writer-7b",), default=scripted) as writer, \
            ScriptedLLM(models=("checker-8b",), default=scripted) as checker:
        settings = {"timeout": 5.0, "repairs": 1, "backoff": 0.0, "retries": 0}
        models = Models.of(LLM(LLMSettings.build(base_url=writer.url, model="writer-7b", **settings)),
                           LLM(LLMSettings.build(base_url=checker.url, model="checker-8b", **settings)))
        manifest, _ = run(out, writer=NewsLLMWriter(models))
        yield out, manifest


def test_the_llm_writer_sets_aside_a_pair_that_may_change_as_longitudinal(llm_run: tuple[Path, Manifest],
                                                                          tmp_path: Path,
                                                                          load: Callable[..., Any]) -> None:
    out, manifest = llm_run
    questions = frame(out, "questions")
    articles = {r["url"]: r for r in frame(out, "articles").iter_rows(named=True)}
    assert questions.height == manifest.counts["questions"] == 10, manifest.rejects
    assert set(questions["article_url"]) == set(ARTICLES)
    for row in questions.iter_rows(named=True):
        assert sub_match(articles[row["article_url"]]["text"], row["answer"]), row
        assert row["evidence"][0]["sha256"] == articles[row["article_url"]]["sha256"]
        assert row["generator"] == "livenewsbench_qa_writer_v1+llm:writer-7b"
    mayor = questions.filter(pl.col("answer") == "Rune Ekdahl").row(0, named=True)
    assert (mayor["split"], mayor["temporal_stability"], mayor["event_date"]) == ("longitudinal", YEAR,
                                                                                  date(2026, 5, 30))
    release = tmp_path / "release"
    built = build_release([out], release, created=CREATED)
    assert "longitudinal" in built["configs"]["news"]["splits"]
    longitudinal = load(str(release), "news", split="longitudinal")
    assert longitudinal["answer"] == ["Rune Ekdahl"] and "text" not in longitudinal.column_names
    rest = sum(load(str(release), "news", split=s).num_rows for s in ("train", "validation", "test"))
    assert rest == 9, "the other pairs are split by their event's date"


def timelyqa(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The installed command in a new interpreter, on this checkout's code."""
    exe = Path(sys.executable).with_name("timelyqa")
    env = {**os.environ, "TIMELYQA_QUIET": "1", "COLUMNS": "200", "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([str(exe), *map(str, args)], cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)


def error_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    return lines[0]


def test_timelyqa_news_on_the_archive_gives_the_pipelines_questions(world: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "cli"
    logged = Logged()
    hosts = sorted(p for p in (WORLD / "outlets").iterdir() if p.is_dir())
    servers = [logged(folder, folder.name, 47312) for folder in hosts]
    for server in servers:
        server.__enter__()
    try:
        proc = timelyqa("news", "--dump", PORTAL, "--outlets", OUTLETS, "--start", "2026-03-09", "--end",
                        "2026-10-02", "--out", out)
    finally:
        for server in servers:
            server.__exit__(None, None, None)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "6 questions in" in proc.stdout
    mine, pipeline_run = frame(out, "questions"), frame(world["out"], "questions")
    assert sorted(mine["id"]) == sorted(pipeline_run["id"])
    assert logged.asked()["127.0.0.24"] == []


@pytest.mark.parametrize(("args", "says"), [
    (["--dump", "nowhere/portal.xml"], "nowhere/portal.xml"),
    (["--outlets", "BAD"], "not a readable outlets file"),
    (["--start", "2026-10-02", "--end", "2026-03-09"], "--start 2026-10-02 is after --end 2026-03-09"),
    (["--start", "9 March 2026"], "--start '9 March 2026': not a date (YYYY-MM-DD)"),
])
def test_timelyqa_news_refuses_a_bad_input_in_one_line(args: list[str], says: str, tmp_path: Path) -> None:
    bad = tmp_path / "outlets.yaml"
    bad.write_text("outlets:\n  - name: Kestrel Courier\n    domains: [127.0.0.21\n", encoding="utf-8")
    given = {"--dump": str(PORTAL), "--outlets": str(OUTLETS), "--start": "2026-03-09", "--end": "2026-10-02"}
    pairs = dict(zip(args[::2], args[1::2], strict=True))
    given |= {k: (str(bad) if v == "BAD" else v) for k, v in pairs.items()}
    out = tmp_path / "out"
    proc = timelyqa("news", *[x for kv in given.items() for x in kv], "--out", out)
    assert proc.returncode == 2, proc.stderr
    assert says in error_line(proc)
    assert not (out / "events.parquet").exists(), "stopped before any work"
