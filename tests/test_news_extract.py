"""The news source's extraction: the benchmark's metric on texts scored by hand, the quality gate on the benchmark's
181 real pages, the fields and rejects of news pages in their real shape, and `timelyqa extract` as a user runs it."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from timelyqa.localsite import LocalSite
from timelyqa.news.articles import ArticleReject
from timelyqa.news.extract import Extracted, extract
from timelyqa.news.quality import Scores, match, score, tokens

PAGES = Path(__file__).resolve().parent / "fixtures" / "news_pages"
BENCHMARK = Path(__file__).resolve().parents[1].parent / "shared" / "extraction-benchmark"
"""The benchmark's data stays out of the repository: CI clones the project beside `shared/`."""

FLOOR = 0.973
"""The F1 the pipeline reached when this gate was set (rounded down); raise it when extraction improves, never lower
it to let a change through."""
PLAIN_TRAFILATURA = 0.964
"""trafilatura 2.3.1 alone with include_comments=False, favor_precision=True: the pipeline must not lose to it."""
PUBLISHED = {"rs_trafilatura 9261e08": (0.970, 0.951, 0.990), "go_trafilatura ae7ea06": (0.960, 0.940, 0.980),
             "trafilatura 2.0.0": (0.958, 0.938, 0.978), "newspaper4k 0.9.3.1": (0.949, 0.964, 0.934),
             "readability_js 0.6.0": (0.947, 0.914, 0.982)}
"""F1, precision, recall from the benchmark's README, printed beside ours when the gate fails."""


# --- the metric, on texts scored by hand ------------------------------------------------------------------------


def test_identical_texts_score_one_and_count_as_exact() -> None:
    assert score([("a b c d e", "a b c d e")]) == Scores(1.0, 1.0, 1.0, 1.0, pages=1)


def test_a_cut_prediction_loses_recall_only() -> None:
    # true shingles {abcd, bcde}, predicted {abcd}: tp 1, fp 0, fn 1
    s = score([("a b c d e", "a b c d")])
    assert (s.precision, s.recall, s.accuracy) == (1.0, 0.5, 0.0)
    assert s.f1 == pytest.approx(2 / 3)


def test_shingles_count_with_multiplicity() -> None:
    # "a a a a a" is the shingle "a a a a" twice; six a's are it three times: tp 2, fp 1
    s = score([("a a a a a", "a a a a a a")])
    assert (s.precision, s.recall) == (pytest.approx(2 / 3), 1.0)
    m = match("a a a a a", "a a a a")
    assert (m.tp, m.fp, m.fn) == (0.5, 0.0, 0.5)


def test_a_text_under_four_tokens_is_one_shingle_and_case_is_kept() -> None:
    assert score([("Hello, world!", "Hello world")]) == Scores(1.0, 1.0, 1.0, 1.0, pages=1)
    m = match("Hello world", "hello world")
    assert (m.tp, m.fp, m.fn) == (0.0, 0.5, 0.5)
    assert score([("Hello world", "hello world")]).f1 == 0.0


def test_two_empty_texts_agree_and_an_empty_prediction_counts_in_recall_only() -> None:
    assert score([("", None)]) == Scores(1.0, 1.0, 1.0, 1.0, pages=1)
    # the second page has tp = fp = 0: no precision of its own, recall 0
    s = score([("one two three four", "one two three four"), ("one two three four", "")])
    assert (s.precision, s.recall, s.accuracy) == (1.0, 0.5, 0.5)
    assert s.f1 == pytest.approx(2 / 3)


def test_each_page_weighs_the_same_whatever_its_length() -> None:
    long = " ".join(f"w{i}" for i in range(400))
    # the short page: tp 1, fp 1 (precision 0.5); the long one is perfect; pooled counts would give 0.9975
    s = score([("w1 w2 w3 w4", "w1 w2 w3 w4 w5"), (long, long)])
    assert s.precision == pytest.approx(0.75)
    assert s.recall == 1.0


def test_tokens_are_unicode_words() -> None:
    assert tokens("Müller's café, 東京 — 2026!") == ["Müller", "s", "café", "東京", "2026"]


# --- the gate on the benchmark's real pages ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def benchmark() -> dict[str, tuple[str, Extracted]]:
    """Each benchmark page's true body and the pipeline's extraction of it."""
    truth_file = BENCHMARK / "ground-truth.json"
    if not truth_file.is_file():
        pytest.fail(f"the extraction benchmark is missing: no {truth_file} (clone the project beside shared/, "
                    f"which holds extraction-benchmark/)")
    truth = json.loads(truth_file.read_text(encoding="utf-8"))
    out = {}
    for page_id, entry in truth.items():
        html = gzip.decompress((BENCHMARK / "html" / f"{page_id}.html.gz").read_bytes()).decode("utf-8")
        out[page_id] = (entry["articleBody"], extract(html, entry["url"]))
    return out


@pytest.mark.slow  # all 181 benchmark pages extracted: make test runs the gate, make check does not
def test_extraction_scores_at_least_its_pinned_floor(benchmark: dict[str, tuple[str, Extracted]]) -> None:
    assert len(benchmark) == 181
    ours = score((true, found.text) for true, found in benchmark.values())
    table = "\n".join(f"  {name}: F1 {f1:.3f} (precision {p:.3f}, recall {r:.3f})"
                      for name, (f1, p, r) in PUBLISHED.items())
    message = f"pipeline: {ours.line()}\npublished:\n{table}"
    assert ours.f1 >= PLAIN_TRAFILATURA, f"worse than plain trafilatura ({PLAIN_TRAFILATURA})\n{message}"
    assert ours.f1 >= FLOOR, f"below the pinned floor {FLOOR}\n{message}"


@pytest.mark.slow  # all 181 benchmark pages extracted: make test runs the gate, make check does not
def test_every_benchmark_article_is_kept_with_its_title_and_host(benchmark: dict[str, tuple[str, Extracted]]
                                                                  ) -> None:
    rejected = {found.url: str(found.reject) for _, found in benchmark.values() if found.reject}
    assert rejected == {}
    assert all(found.title and found.host and found.host in found.url for _, found in benchmark.values())
    assert sum(found.published is not None for _, found in benchmark.values()) >= 170


# --- fields and rejects on news pages ---------------------------------------------------------------------------


def page(name: str, url: str = "https://www.coastal-ledger.test/news/2026/03/14/harbour-bridge-reopens") -> Extracted:
    return extract((PAGES / name).read_text(encoding="utf-8"), url)


def test_an_article_gives_its_body_title_date_author_and_host() -> None:
    found = page("article.html")
    assert found.reject is None
    assert (found.title, found.published, found.author, found.host) == (
        "Harbour bridge reopens after three-year rebuild", date(2026, 3, 14), "Maria Okafor", "www.coastal-ledger.test")
    assert found.text is not None
    assert found.text.startswith("The Kessing Harbour bridge carried its first traffic in three years on Saturday")
    assert found.text.endswith("cutting the trip from Eastgate to the centre by twenty minutes.")
    for boilerplate in ("Subscribe for $1 a week", "Weather", "Privacy policy", "morning newsletter",
                        "Ferry timetable cut", "Photo: Tom Reyes", "Harbour bridge reopens after three-year rebuild"):
        assert boilerplate not in found.text


def test_as_json_is_what_a_parquet_row_and_the_command_show() -> None:
    row = page("article.html").as_json()
    assert json.loads(json.dumps(row)) == row
    assert (row["published"], row["reject"]) == ("2026-03-14", None)
    assert page("section.html", "https://www.coastal-ledger.test/news/").as_json()["reject"] == "not_article"


@pytest.mark.parametrize("name", ["section.html", "teasers.html"])
def test_a_section_front_is_no_article(name: str) -> None:
    found = page(name, "https://www.coastal-ledger.test/news/")
    assert found.reject is ArticleReject.NOT_ARTICLE
    assert found.text  # the text stays, for the maintainer's `timelyqa extract`


def test_an_empty_page_is_empty() -> None:
    found = page("empty.html")
    assert (found.reject, found.text, found.title) == (ArticleReject.EMPTY_PAGE, None, None)
    assert extract("", "https://www.coastal-ledger.test/").reject is ArticleReject.EMPTY_PAGE


def test_a_story_built_by_a_script_is_not_in_the_served_html() -> None:
    found = page("scripted.html")
    assert found.reject in (ArticleReject.EMPTY_PAGE, ArticleReject.NOT_ARTICLE)
    assert "Kessing Harbour" not in (found.text or "")


# --- `timelyqa extract` -----------------------------------------------------------------------------------------


def timelyqa(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("timelyqa")
    # the crawl's User-Agent is the default unless a test sets it
    merged = {name: value for name, value in os.environ.items() if name != "TIMELYQA_CRAWL_USER_AGENT"}
    merged.update({"TIMELYQA_QUIET": "1", "COLUMNS": "200", **(env or {})})
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, timeout=120, env=merged)


def error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    return lines[0]


ARTICLE_URL = "https://www.coastal-ledger.test/news/2026/03/14/harbour-bridge-reopens"


@pytest.mark.slow
def test_extract_a_file_prints_what_would_be_stored(tmp_path: Path) -> None:
    html = (PAGES / "article.html").read_bytes()
    packed = tmp_path / "article.html.gz"
    packed.write_bytes(gzip.compress(html))
    proc = timelyqa("extract", PAGES / "article.html", "--url", ARTICLE_URL)
    assert proc.returncode == 0, proc.stderr
    shown = json.loads(proc.stdout)
    assert shown == {**page("article.html", ARTICLE_URL).as_json(), "sha256": hashlib.sha256(html).hexdigest(),
                     "chars": len(shown["text"])}
    assert shown["url"] == ARTICLE_URL and shown["host"] == "www.coastal-ledger.test"
    assert json.loads(timelyqa("extract", packed, "--url", ARTICLE_URL).stdout) == shown
    unnamed = json.loads(timelyqa("extract", PAGES / "section.html").stdout)
    assert unnamed["url"] == (PAGES / "section.html").resolve().as_uri() and unnamed["reject"] == "not_article"


@pytest.mark.slow
def test_extract_of_a_bad_file_names_it_in_one_line(tmp_path: Path) -> None:
    assert "nope.html: no such file" in error_line(timelyqa("extract", tmp_path / "nope.html"))
    image = tmp_path / "logo.html"
    image.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64))
    assert "logo.html: not an HTML page" in error_line(timelyqa("extract", image))
    broken = tmp_path / "page.html.gz"
    broken.write_bytes(b"<html><body>not gzip</body></html>")
    assert "page.html.gz: not a gzip file" in error_line(timelyqa("extract", broken))


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """An outlet on 127.0.0.1: an article, a folder page reached through a redirect, a page its robots.txt keeps
    from every crawler and one it keeps from `pushybot` only."""
    root = tmp_path / "site"
    for folder in ("news", "story", "private", "members"):
        (root / folder).mkdir(parents=True)
    shutil.copy(PAGES / "section.html", root / "index.html")
    shutil.copy(PAGES / "article.html", root / "news" / "bridge.html")
    shutil.copy(PAGES / "article.html", root / "story" / "index.html")
    shutil.copy(PAGES / "article.html", root / "private" / "bridge.html")
    shutil.copy(PAGES / "article.html", root / "members" / "bridge.html")
    (root / "notes.txt").write_text("plain text, no page\n")
    (root / "robots.txt").write_text("User-agent: pushybot\nDisallow: /members/\n\n"
                                     "User-agent: *\nDisallow: /private/\n")
    return root


@pytest.mark.slow
def test_extract_a_url_fetches_it_as_the_crawl_would(site: Path) -> None:
    with LocalSite(site) as web:
        proc = timelyqa("extract", f"{web.url}news/bridge.html")
        moved = timelyqa("extract", f"{web.url}story")  # a folder: 301 to story/
        members = timelyqa("extract", f"{web.url}members/bridge.html")
    assert proc.returncode == 0, proc.stderr
    shown = json.loads(proc.stdout)
    assert (shown["host"], shown["title"], shown["published"], shown["reject"]) == (
        "127.0.0.1", "Harbour bridge reopens after three-year rebuild", "2026-03-14", None)
    assert shown["sha256"] == hashlib.sha256((site / "news" / "bridge.html").read_bytes()).hexdigest()
    assert moved.returncode == 0, moved.stderr
    assert json.loads(moved.stdout)["url"].endswith("/story/")
    assert members.returncode == 0, members.stderr  # pushybot's rule is not ours


@pytest.mark.slow
def test_extract_a_url_refused_or_failing_exits_2_in_one_line(site: Path) -> None:
    with LocalSite(site) as web:
        private = f"{web.url}private/bridge.html"
        assert "robots.txt" in error_line(timelyqa("extract", private))
        members = f"{web.url}members/bridge.html"
        pushy = {"TIMELYQA_CRAWL_USER_AGENT": "pushybot/2.0 (+https://pushy.test/bot)"}
        refused = error_line(timelyqa("extract", members, env=pushy))
        assert f"{members}: refused by {web.url.rstrip('/')}/robots.txt" in refused
        assert "TIMELYQA_CRAWL_USER_AGENT" in error_line(
            timelyqa("extract", members, env={"TIMELYQA_CRAWL_USER_AGENT": "anonymous"}))
        assert f"{web.url}gone.html: HTTP 404" in error_line(timelyqa("extract", f"{web.url}gone.html"))
        assert "not an HTML page" in error_line(timelyqa("extract", f"{web.url}notes.txt"))
        assert "--url" in error_line(timelyqa("extract", f"{web.url}news/bridge.html", "--url", ARTICLE_URL))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    down = f"http://127.0.0.1:{port}/news/bridge.html"
    assert f"{down}: unreachable" in error_line(timelyqa("extract", down))
