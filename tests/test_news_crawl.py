"""The news crawl against outlets on hosts of their own: what the pages say is kept, each drop has its reason, nothing
off the allow-list is ever asked, Chromium writes what scripts build, archived copies stand in for live pages, and a
killed crawl resumes without asking twice. Each crawl runs as the product runs it, in its own Scrapy process."""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import time
from collections import Counter
from datetime import date
from pathlib import Path

import polars as pl
import pytest

from spiders.render import browser_path
from spiders.run import command, crawl
from tests.newsworld import FIXTURES, WAYBACK_CAPTURE, FakeArchive, NewsHost, free_port, outlets_yaml
from timelyqa.files import write_parquet
from timelyqa.news.frames import EVENT_SCHEMA, event_id
from timelyqa.news.outlets import Outlets, crawl_args, plan_links

pytestmark = pytest.mark.slow  # Scrapy in its own process, and Chromium

if browser_path() is None:  # `make test` installs Debian's chromium when no browser is found
    raise RuntimeError("no Chromium: run `make test`, or set TIMELYQA_CHROMIUM")

QUAKE, STORM = "/2026/05/04/quake-strikes-coast.html", "/2026/05/05/storm-floods-valley.html"
DAY, LATER = date(2026, 5, 4), date(2026, 5, 6)


def events(cited: dict[tuple[date, str], list[str]]) -> pl.DataFrame:
    """Portal events citing `cited` URLs, by (day, summary)."""
    rows = [{"event_id": event_id(day.isoformat(), summary), "date": day, "category": "Disasters and accidents",
             "topic": None, "summary": summary, "urls": urls, "outlets": [f"cited {i}" for i in range(len(urls))],
             "page": f"Portal:Current events/2026 May {day.day}", "revision": "1"}
            for (day, summary), urls in cited.items()]
    return pl.DataFrame(rows, schema=EVENT_SCHEMA, orient="row")


def run(tmp: Path, outlets: Path, cited: dict[tuple[date, str], list[str]], *, planned_on: Path | None = None,
        **archive: str) -> tuple[dict, pl.DataFrame, pl.DataFrame]:
    """Plan the events' links on the allow-list (or on `planned_on`, an older one), crawl them, and return the stats,
    articles and every drop (the plan's and the crawl's)."""
    links, planned_drops = plan_links(events(cited), Outlets.load(planned_on or outlets))
    write_parquet(links, tmp / "links.parquet")
    stats = crawl("news", crawl_args(tmp / "links.parquet", outlets, page_timeout=5, **archive), tmp / "crawl",
                  fresh=True)
    dropped = pl.concat([planned_drops, pl.read_parquet(tmp / "crawl" / "dropped.parquet")])
    return stats, pl.read_parquet(tmp / "crawl" / "articles.parquet"), dropped


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("news")
    port = free_port()
    dead_port = free_port("127.0.0.2")  # closed again: nothing answers there
    other_port = free_port("127.0.0.2")  # the Planet's host on a port the list does not name
    with NewsHost("127.0.0.5", FIXTURES / "elsewhere", port) as elsewhere, \
            NewsHost("127.0.0.2", FIXTURES / "planet", other_port) as other, \
            NewsHost("127.0.0.2", FIXTURES / "planet", port,
                     redirects={"/moved.html": f"{elsewhere.url}/2026/05/04/quake-rumours.html",
                                "/ported.html": other.url + QUAKE}) as planet, \
            NewsHost("127.0.0.3", FIXTURES / "script", port) as script, \
            NewsHost("127.0.0.4", FIXTURES / "herald", port) as herald:
        listed = {"The Daily Planet": (f"127.0.0.2:{port}", "never"), "Script News": (f"127.0.0.3:{port}", "always"),
                  "The Auto Herald": (f"127.0.0.4:{port}", "auto"),
                  "The Closed Gazette": (f"127.0.0.2:{dead_port}", "never")}
        outlets = outlets_yaml(tmp / "outlets.yaml", listed)
        # the links were planned when the blog was on the list; the crawl's list no longer has it
        older = outlets_yaml(tmp / "older.yaml", listed | {"Elsewhere Blog": (f"127.0.0.5:{port}", "never")})
        p = planet.url
        cited = {
            (DAY, "An earthquake strikes the northern coast."): [
                p + QUAKE, script.url + STORM, herald.url + STORM, elsewhere.url + "/2026/05/04/quake-rumours.html",
                p + "/moved.html", p + "/gone.html", f"http://127.0.0.2:{dead_port}/2026/05/04/quake.html",
                other.url + QUAKE, p + "/ported.html",
                p + "/2025/01/10/harbour-reopens.html", p + "/sections/", p + "/private/draft-story.html",
                "mailto:desk@planet.invalid"],
            (LATER, "Aftershocks continue along the northern coast."): [p + QUAKE + "?utm_source=portal"],
        }
        stats, articles, dropped = run(tmp, outlets, cited, planned_on=older)
        asked = {"planet": planet.asked(), "script": script.asked(), "herald": herald.asked(),
                 "elsewhere": elsewhere.asked(), "other_port": other.asked()}
    return {"stats": stats, "articles": articles, "dropped": dropped, "asked": asked, "planet": p,
            "script": script.url, "herald": herald.url, "dead": dead_port, "other_port": other.url}


def reasons(dropped: pl.DataFrame) -> dict[str, str]:
    return dict(zip(dropped["url"], dropped["reason"], strict=True))


def test_an_allowed_article_is_kept_with_what_its_page_says_for_every_event_citing_it(world: dict) -> None:
    quake = world["articles"].filter(pl.col("final_url") == world["planet"] + QUAKE).sort("url")
    assert quake.height == 2, "one row for each event citing the page"
    assert quake["url"].to_list() == [world["planet"] + QUAKE, world["planet"] + QUAKE + "?utm_source=portal"]
    row = quake.row(0, named=True)
    assert (row["outlet"], row["title"], row["published"], row["author"]) == (
        "The Daily Planet", "Magnitude 6.8 earthquake strikes the northern coast", DAY, "Lois Lane")
    assert "cutting power to about 40,000 homes" in row["text"] and "About us" not in row["text"]
    assert row["rendered"] is False and row["archive_url"] is None
    served = (FIXTURES / "planet" / QUAKE.lstrip("/")).read_bytes()
    assert row["sha256"] == hashlib.sha256(served).hexdigest()
    assert Counter(world["asked"]["planet"])[QUAKE] == 1, "a page cited twice (two spellings) is fetched once"


def test_nothing_off_the_allow_list_is_requested_not_even_after_a_redirect(world: dict) -> None:
    assert world["asked"]["elsewhere"] == []
    got = reasons(world["dropped"])
    assert got[world["planet"].replace("127.0.0.2", "127.0.0.5") + "/2026/05/04/quake-rumours.html"] \
        == "outlet_not_allowed"
    assert got[world["planet"] + "/moved.html"] == "redirect_not_allowed"
    assert got["mailto:desk@planet.invalid"] == "not_http"
    blog = world["dropped"].filter(pl.col("outlet") == "Elsewhere Blog").row(0, named=True)
    assert (blog["reason"], blog["detail"]) == ("outlet_not_allowed", "off_site: never requested"), \
        "the crawl holds to its own allow-list, whatever the plan said"
    moved = world["dropped"].filter(pl.col("url") == world["planet"] + "/moved.html").row(0, named=True)
    assert "127.0.0.5" in moved["detail"] and moved["outlet"] == "The Daily Planet"


def test_an_outlets_host_on_another_port_is_off_the_list_also_after_a_redirect(world: dict) -> None:
    assert world["asked"]["other_port"] == [], "not a page, not its robots.txt"
    got = reasons(world["dropped"])
    assert got[world["other_port"] + QUAKE] == "outlet_not_allowed"
    assert got[world["planet"] + "/ported.html"] == "redirect_not_allowed"
    ported = world["dropped"].filter(pl.col("url") == world["planet"] + "/ported.html").row(0, named=True)
    assert ported["detail"] == f"redirected to {world['other_port']}{QUAKE} (off_site)"


def test_dead_links_old_pages_non_articles_and_robots_are_dropped_with_their_reasons(world: dict) -> None:
    p, got = world["planet"], reasons(world["dropped"])
    assert got[p + "/gone.html"] == "dead_link"
    assert got[f"http://127.0.0.2:{world['dead']}/2026/05/04/quake.html"] == "dead_link"
    assert got[p + "/2025/01/10/harbour-reopens.html"] == "outside_window"
    assert got[p + "/sections/"] == "not_article"
    assert got[p + "/private/draft-story.html"] == "robots_disallowed"
    assert "/private/draft-story.html" not in world["asked"]["planet"], "robots.txt is obeyed"
    details = dict(zip(world["dropped"]["url"], world["dropped"]["detail"], strict=True))
    refused = f"http://127.0.0.2:{world['dead']}/2026/05/04/quake.html"
    assert (details[p + "/gone.html"], details[refused]) == ("http_404", "connection_refused")
    assert "2025-01-10" in details[p + "/2025/01/10/harbour-reopens.html"]
    assert Counter(world["dropped"]["reason"]) == {"dead_link": 2, "outlet_not_allowed": 2, "not_http": 1,
                                                    "redirect_not_allowed": 2, "outside_window": 1,
                                                    "not_article": 1, "robots_disallowed": 1}
    kept = world["articles"]["url"].to_list()
    assert not set(kept) & set(world["dropped"]["url"]), "a link is kept or dropped, never both"


def test_a_story_written_by_a_script_is_read_from_chromium_always_and_auto(world: dict) -> None:
    arts = world["articles"]
    for outlet, base in (("Script News", world["script"]), ("The Auto Herald", world["herald"])):
        row = arts.filter(pl.col("url") == base + STORM).row(0, named=True)
        assert row["outlet"] == outlet and row["rendered"] is True
        assert "forcing the evacuation of about 1,200 people" in row["text"]
        assert row["published"] == date(2026, 5, 5)
    assert Counter(world["asked"]["script"])[STORM] == 1, "`always` goes to Chromium without a plain fetch first"
    assert Counter(world["asked"]["herald"])[STORM] == 1, "`auto` renders the page as served, not fetched again"
    stats = world["stats"]
    assert stats["rendered"] == 2 and stats["articles"] == 4
    assert stats["pages"] == 5, "the quake, two storms, the old story and the section front: pages that answered"


def test_the_archived_copy_is_fetched_instead_and_named(tmp_path: Path) -> None:
    port = free_port()
    with NewsHost("127.0.0.2", FIXTURES / "planet", port) as planet, \
            FakeArchive("127.0.0.6", FIXTURES / "archive", port) as archive:
        outlets = outlets_yaml(tmp_path / "outlets.yaml", {"The Daily Planet": (f"127.0.0.2:{port}", "never")})
        cited = {(DAY, "An earthquake strikes the northern coast."): [planet.url + QUAKE]}
        _, articles, dropped = run(tmp_path, outlets, cited, archive="wayback", archive_base=archive.url)
        assert planet.asked() == [], "the live outlet is not asked"
        captured = f"{archive.url}/web/{DAY:%Y%m%d}{WAYBACK_CAPTURE}id_/{planet.url}{QUAKE}"
        assert f"/web/{DAY:%Y%m%d}id_/{planet.url}{QUAKE}" in archive.asked()
    assert dropped.height == 0
    row = articles.row(0, named=True)
    assert row["archive_url"] == captured and row["url"] == planet.url + QUAKE
    assert "as the archive captured it" in row["text"] and row["published"] == DAY


def test_archive_today_names_its_newest_copy(tmp_path: Path) -> None:
    port = free_port()
    with FakeArchive("127.0.0.6", FIXTURES / "archive", port) as archive:
        outlets = outlets_yaml(tmp_path / "outlets.yaml", {"The Daily Planet": (f"127.0.0.2:{port}", "never")})
        live = f"http://127.0.0.2:{port}{QUAKE}"  # nothing serves it: only the archive is asked
        _, articles, _ = run(tmp_path, outlets, {(DAY, "A quake."): [live]}, archive="archive_today",
                             archive_base=archive.url)
    assert articles["archive_url"].to_list() == [f"{archive.url}/newest/{live}"]


def test_a_killed_crawl_resumes_and_asks_for_nothing_twice(tmp_path: Path) -> None:
    site = tmp_path / "site"
    article = (FIXTURES / "planet" / QUAKE.lstrip("/")).read_text(encoding="utf-8")
    for i in range(120):
        page = site / "2026" / "05" / "04" / f"story-{i}.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(article.replace("Magnitude 6.8", f"Story {i}: magnitude 6.8"), encoding="utf-8")
    with NewsHost("127.0.0.2", site, free_port(), delay=0.01) as planet:
        outlets = outlets_yaml(tmp_path / "outlets.yaml", {"The Daily Planet": (planet.url.removeprefix("http://"),
                                                                               "never")})
        links, _ = plan_links(events({(DAY, "Many stories."): [f"{planet.url}/2026/05/04/story-{i}.html"
                                                                for i in range(120)]}), Outlets.load(outlets))
        write_parquet(links, tmp_path / "links.parquet")
        args = crawl_args(tmp_path / "links.parquet", outlets)
        out = tmp_path / "crawl"
        argv, env = command("news", args, out)
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        journal = out / "pages.jsonl"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if journal.is_file() and journal.read_text().count("\n") >= 30:
                proc.send_signal(signal.SIGKILL)  # no clean stop: nothing gets to save its state
                break
            time.sleep(0.02)
        proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL, "the crawl was killed mid-way"
        before = len(planet.asked())
        kept = {json.loads(line)["key"] for line in journal.read_text().splitlines() if line.endswith("}")}
        stats = crawl("news", args, out)
        again = [p for p in planet.asked()[before:] if p != "/robots.txt"]
    done = {k.split(str(planet.port), 1)[1] for k in kept}
    assert len(done) >= 30 and not done & set(again), "no link the killed crawl had done is asked for again"
    assert again and max(Counter(again).values()) == 1, "the resumed crawl asks for each of the rest once"
    articles = pl.read_parquet(out / "articles.parquet")
    assert articles.height == 120 and articles["url"].n_unique() == 120, "none lost, none twice"
    assert stats["pages"] == 120 and stats["resumed"] == len(kept)
