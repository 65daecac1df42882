"""The Current Events Portal reader: day pages in both wikitext forms, read from a MediaWiki API double over real
HTTP and from MediaWiki XML exports, into exactly the events the pages state.

The fixtures (tests/fixtures/news/portal/) are day pages written by hand in the shape of real ones. What
each test expects is read off those pages by a person, never computed by the code under test.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from tests.mwapi import MULTI_LIMIT, MediaWikiDouble
from tests.wikiworld import Rev, WikiPage, write_export
from timelyqa.errors import ConfigError
from timelyqa.news.frames import EVENT_SCHEMA, event_id
from timelyqa.news.portal import PortalReject, day_title, news_section, parse_day, read_events
from timelyqa.reasons import Reason
from timelyqa.mediawiki.wiki import source_of

FIXTURES = Path(__file__).parent / "fixtures" / "news" / "portal"
UA = "timelyqa-tests/0.1 (https://example.org/timelyqa; tests@example.org)"
OLD = (FIXTURES / "2025-01-05.wikitext").read_text(encoding="utf-8")
NEW = (FIXTURES / "2026-07-15.wikitext").read_text(encoding="utf-8")
BROKEN = (FIXTURES / "2025-01-06-broken.wikitext").read_text(encoding="utf-8")


@dataclass(frozen=True)
class Ev:
    category: str
    topic: str | None
    summary: str
    cited: tuple[tuple[str, str], ...]  # (url, outlet)


OLD_EVENTS = [
    Ev("Armed conflicts and attacks", "Kursk offensive",
       "Ukrainian forces launch a new counteroffensive in Kursk Oblast (Курская область), Russia, near the town of "
       "Sudzha.",
       (("https://www.reuters.com/world/europe/ukraine-launches-new-attack-kursk-2025-01-05/", "Reuters"),
        ("https://apnews.com/article/russia-ukraine-war-kursk-offensive-0a1b2c3d4e", "AP"))),
    Ev("Armed conflicts and attacks", "Kursk offensive",
       "The Russian Defence Ministry says it repelled the attack and destroyed eight tanks.",
       (("https://tass.com/defense/1893456", "TASS"),
        ("https://www.bbc.com/news/articles/c4g7kx9zq2mo", "BBC News"))),
    Ev("Armed conflicts and attacks", "Israel–Hamas war",
       "At least 20 people are killed in Israeli airstrikes on the Gaza Strip, according to the Gaza Health Ministry.",
       (("https://www.aljazeera.com/news/2025/1/5/israeli-strikes-kill-20-across-gaza", "Al Jazeera"),)),
    # an item nested under an item, not under a topic line: it belongs to the topic above both
    Ev("Armed conflicts and attacks", "Israel–Hamas war",
       "Among the dead are four children from one family in Khan Yunis, the ministry says.",
       (("https://www.timesofisrael.com/liveblog_entry/gaza-ministry-says-20-killed-in-strikes/",
         "The Times of Israel"),)),
    Ev("Armed conflicts and attacks", None,
       "Gunmen attack a police checkpoint in Zamfara State, Nigeria, killing six officers.",
       (("https://www.premiumtimesng.com/news/headlines/760123-gunmen-kill-six-police-officers-in-zamfara.html",
         "Premium Times"),)),
    Ev("Disasters and accidents", "2025 Tibet earthquake",
       "A magnitude 7.1 earthquake strikes Tingri County in Tibet, China, killing at least 126 people.",
       (("https://www.xinhuanet.com/english/20250107/quake.html", "Xinhua"),
        ("https://www.nytimes.com/2025/01/07/world/asia/tibet-earthquake.html", "The New York Times"))),
    Ev("Disasters and accidents", None,
       "A passenger bus falls into a ravine in Kullu district, Himachal Pradesh, India, killing 11.",
       (("https://www.thehindu.com/news/national/himachal-pradesh/bus-accident-kullu/article69064125.ece",
         "The Hindu"),)),
    Ev("International relations", "China–Philippines relations",
       'The Philippine Coast Guard accuses a China Coast Guard vessel of "intimidating" fishermen near Scarborough '
       "Shoal.",
       (("https://www.philstar.com/headlines/2025/01/05/2411223/pcg-china-monster-ship", "The Philippine Star"),)),
    Ev("Politics and elections", "2025 Croatian presidential election",
       "Incumbent Zoran Milanović falls short of a majority in the first round and faces Dragan Primorac in a runoff "
       "on 12 January.",
       (("https://www.reuters.com/world/europe/croatia-president-milanovic-runoff-2025-01-05/", "Reuters"),)),
    Ev("Politics and elections", None,
       "Austrian Chancellor Karl Nehammer announces his resignation after coalition talks collapse.",
       (("https://www.dw.com/en/austria-chancellor-nehammer-to-resign/a-71234567", "DW"),
        ("https://www.politico.eu/article/austria-karl-nehammer-resign/", "Politico Europe"))),
    Ev("Sports", "2024–25 Four Hills Tournament",
       "Daniel Tschofenig wins the fourth stage at Bischofshofen and the tournament overall with a total of 1,176.4 "
       "points.",
       (("https://www.orf.at/stories/3381234/", "ORF"),)),
]
OLD_DROPS = [(16, PortalReject.EVENT_UNPARSABLE, "a topic with no items under it"),
             (27, PortalReject.EVENT_DUPLICATE, "the same summary again"),
             (28, PortalReject.EVENT_UNPARSABLE, "the summary is empty once rendered")]

NEW_EVENTS = [
    Ev("Armed conflicts and attacks", "Sudanese civil war",
       "Rapid Support Forces drones strike a power station in Port Sudan, cutting electricity to much of the city.",
       (("https://apnews.com/article/sudan-port-sudan-drone-power-station-7f3e", "AP"),
        ("https://www.aljazeera.com/news/2026/7/15/rsf-drones-hit-port-sudan-power-station", "Al Jazeera"))),
    Ev("Business and economy", None,
       "The Bank of Japan raises its policy rate to 0.75 percent, its highest level since 1995.",
       (("https://www.nikkei.com/article/DGXZQOUB150000V10C26A7000000/", "Nikkei"),
        ("https://www.bloomberg.com/news/articles/2026-07-15/boj-raises-rates", "Bloomberg News"))),
    Ev("Law and crime", None,
       "Brazil's Supreme Federal Court orders the arrest of former minister Anderson Torres over his role in the "
       "8 January attacks.",
       (("https://g1.globo.com/politica/noticia/2026/07/15/stf-torres.ghtml", "g1"),
        # cited without a name: MediaWiki shows it as "[1]", so the host is what a reader can tell
        ("https://www.reuters.com/world/americas/brazil-court-torres-2026-07-15/", "www.reuters.com"))),
    Ev("Science and technology", "Artemis",
       "NASA rolls the Space Launch System for Artemis III out to Launch Complex 39B.",
       (("https://www.nasa.gov/news-release/artemis-iii-rollout/", "NASA"),)),
    Ev("Science and technology", "Artemis",
       "The ESA confirms its European Service Module passed final tests.",
       (("https://www.esa.int/Science_Exploration/Human_and_Robotic_Exploration/Orion/ESM_final_tests", "ESA"),)),
]
NEW_DROPS = [(12, PortalReject.EVENT_UNPARSABLE, "malformed markup left in the summary"),
             (17, PortalReject.EVENT_UNPARSABLE, "the summary is empty once rendered")]


def as_events(rows: list[dict]) -> list[Ev]:
    return [Ev(r["category"], r["topic"], r["summary"], tuple(zip(r["urls"], r["outlets"], strict=True)))
            for r in rows]


def drops(dropped: list) -> list[tuple[int, Reason, str]]:
    return [(d.item["line"], d.reason, d.detail.split(": ", 1)[1].split(": ")[0]) for d in dropped]


def test_day_titles_name_the_month_in_english_and_the_day_without_a_leading_zero() -> None:
    assert day_title(date(2026, 1, 5)) == "Portal:Current events/2026 January 5"
    assert day_title(date(2025, 12, 25)) == "Portal:Current events/2025 December 25"


@pytest.mark.parametrize(("text", "day", "events", "dropped"), [
    (OLD, date(2025, 1, 5), OLD_EVENTS, OLD_DROPS),
    (NEW, date(2026, 7, 15), NEW_EVENTS, NEW_DROPS),
], ids=["content-parameter", "top-and-bottom"])
def test_each_form_gives_exactly_the_events_the_page_states(text: str, day: date, events: list[Ev],
                                                           dropped: list) -> None:
    page = day_title(day)
    rows, rejected = parse_day(text, day, page=page, revision="1268012345")
    assert as_events(rows) == events
    assert [r["event_id"] for r in rows] == [event_id(day.isoformat(), e.summary) for e in events]
    assert {(r["date"], r["page"], r["revision"]) for r in rows} == {(day, page, "1268012345")}
    assert drops(rejected) == dropped
    assert all(d.detail.startswith(f"{page} (revision 1268012345) line ") for d in rejected)
    pl.DataFrame(rows, schema=EVENT_SCHEMA, orient="row")  # the rows fit the events file as they are


def test_a_page_whose_braces_do_not_close_is_dropped_whole_with_its_reason() -> None:
    page = day_title(date(2025, 1, 6))
    rows, rejected = parse_day(BROKEN, date(2025, 1, 6), page=page, revision="7")
    assert rows == []
    assert [(d.reason, d.item["page"]) for d in rejected] == [(PortalReject.DAY_PAGE_UNPARSABLE, page)]
    assert rejected[0].detail == f"{page} (revision 7): no {{{{Current events}}}} template (or its braces do not close)"


@pytest.mark.parametrize(("text", "why"), [
    ("Nothing happened, apparently.", "no {{Current events}} template"),
    ("{{Current events|year=2026|month=8|day=1}}\n'''Sports'''\n*A thing. [https://a.example/x (A)]",
     "neither content= nor top=yes"),
    ("{{Current events|year=2026|month=8|day=1|top=yes}}\n'''Sports'''\n*A thing. [https://a.example/x (A)]",
     "without its {{Current events|bottom=yes}}"),
    (("{{Current events|year=2025|month=1|day=7|content=\n<!-- All news items below this line -->\n"
      "<!-- All news items above this line -->|}}"), "no category heading and no item"),
], ids=["no-template", "no-news", "no-bottom", "empty-section"])
def test_a_page_without_a_news_section_says_what_is_missing(text: str, why: str) -> None:
    rows, rejected = parse_day(text, date(2026, 8, 1), page="P", revision="3")
    assert rows == []
    assert [d.reason for d in rejected] == [PortalReject.DAY_PAGE_UNPARSABLE]
    assert why in rejected[0].detail


def test_nested_templates_and_links_in_the_content_parameter_do_not_end_it_early() -> None:
    section, _ = news_section(OLD)
    assert section is not None
    assert section.rstrip().endswith("<!-- All news items above this line -->")
    assert "{{lang|ru|Курская область}}" in section and "|work=[[TASS]]" in section


def test_every_reason_explains_itself() -> None:
    assert all(r.explanation.endswith(tuple("abcdefghijklmnopqrstuvwxyz")) and len(r.explanation) > 30
               for r in PortalReject)
    assert {str(r) for r in PortalReject} >= {"day_page_missing", "day_page_unparsable", "event_unparsable"}


# --- a range of days, from the API and from an export ---------------------------------------------------------

START, END = date(2025, 1, 1), date(2025, 2, 28)  # 59 days: two requests of at most 50 titles
LATE = date(2025, 2, 25)
LATE_TEXT = NEW.replace("year=2026|month=7|day=15", "year=2025|month=2|day=25")
FIRST_DRAFT = OLD.split("'''Disasters and accidents'''")[0] + "<!-- All news items above this line -->|}}"


def moment(day: date, hour: int) -> datetime:
    return datetime(day.year, day.month, day.day, hour, tzinfo=UTC)


def portal_pages() -> list[WikiPage]:
    """Three day pages in the range (one edited twice, one broken), one outside it, and an article."""
    jan5, jan6 = date(2025, 1, 5), date(2025, 1, 6)
    return [
        WikiPage(5001, day_title(jan5), 100, [
            Rev(1268000001, None, moment(jan5, 0), FIRST_DRAFT, None, "edit"),
            Rev(1268012345, 1268000001, moment(jan5, 23), OLD, None, "edit")]),
        WikiPage(5002, day_title(jan6), 100, [Rev(1268100000, None, moment(jan6, 1), BROKEN, None, "edit")]),
        WikiPage(5003, day_title(LATE), 100, [Rev(1273000000, None, moment(LATE, 2), LATE_TEXT, None, "edit")]),
        WikiPage(5004, day_title(END + timedelta(days=1)), 100,
                 [Rev(1273500000, None, moment(END, 9), LATE_TEXT, None, "edit")]),
        WikiPage(7, "Kursk Oblast", 0, [Rev(1200000000, None, moment(jan5, 3), "'''Kursk Oblast'''", None, "edit")]),
    ]


def expected_frame() -> pl.DataFrame:
    rows = []
    for day, events, page, rev in ((date(2025, 1, 5), OLD_EVENTS, day_title(date(2025, 1, 5)), "1268012345"),
                                   (LATE, NEW_EVENTS, day_title(LATE), "1273000000")):
        rows += [{"event_id": event_id(day.isoformat(), e.summary), "date": day, "category": e.category,
                  "topic": e.topic, "summary": e.summary, "urls": [u for u, _ in e.cited],
                  "outlets": [o for _, o in e.cited], "page": page, "revision": rev} for e in events]
    return pl.DataFrame(rows, schema=EVENT_SCHEMA, orient="row")


def check_range(events) -> None:
    assert events.frame.schema == EVENT_SCHEMA
    assert events.frame.equals(expected_frame())
    assert events.counts == {"day_pages": 3, "events": len(OLD_EVENTS) + len(NEW_EVENTS)}
    by_reason: dict[str, list[str]] = {}
    for d in events.rejected:
        by_reason.setdefault(str(d.reason), []).append(d.item.get("page") or "")
    assert sorted(by_reason["day_page_missing"]) == sorted(
        day_title(START + timedelta(days=i)) for i in range(59)
        if START + timedelta(days=i) not in (date(2025, 1, 5), date(2025, 1, 6), LATE))
    assert by_reason["day_page_unparsable"] == [day_title(date(2025, 1, 6))]
    assert len(by_reason["event_unparsable"]) == 4 and len(by_reason["event_duplicate"]) == 1
    assert sum(map(len, by_reason.values())) == len(events.rejected)


def test_a_range_is_read_from_the_api_in_batches_of_fifty_titles_with_the_user_agent() -> None:
    with MediaWikiDouble(portal_pages()) as wiki:
        events = read_events(source_of(None, wiki.endpoint, UA), START, END)
    check_range(events)
    asked = [r for r in wiki.requests if r.params.get("prop") == "revisions"]
    batches = [r.params["titles"].split("|") for r in asked]
    assert [len(b) for b in batches] == [MULTI_LIMIT, 59 - MULTI_LIMIT]
    assert [t for b in batches for t in b] == [day_title(START + timedelta(days=i)) for i in range(59)]
    assert {r.params["rvslots"] for r in asked} == {"main"} and all("content" in r.params["rvprop"] for r in asked)
    assert {r.headers["User-Agent"] for r in wiki.requests} == {UA}
    assert len(wiki.requests) == 1 + len(asked)  # siteinfo first, then only the batches
    assert events.usage["api_requests"] == len(wiki.requests)


@pytest.mark.parametrize("name", ["portal.xml", "portal.xml.bz2"])
def test_the_same_range_is_read_from_a_mediawiki_export(tmp_path: Path, name: str) -> None:
    export = write_export(portal_pages(), tmp_path / name, shuffle=11)  # pages and revisions out of order
    check_range(read_events(export, START, END))


def test_an_export_cut_short_keeps_the_pages_before_the_cut_and_says_where_it_broke(tmp_path: Path) -> None:
    whole = write_export(portal_pages(), tmp_path / "whole.xml").read_text(encoding="utf-8")
    cut = tmp_path / "cut.xml"
    cut.write_text(whole[:whole.index(day_title(LATE))], encoding="utf-8")  # inside the third day page
    events = read_events(cut, START, END)
    assert events.frame.equals(expected_frame().filter(pl.col("date") == date(2025, 1, 5)))
    assert events.counts == {"day_pages": 2, "events": len(OLD_EVENTS)}
    reasons = [str(d.reason) for d in events.rejected]
    assert reasons.count("malformed_xml") == 1 and reasons.count("day_page_unparsable") == 1
    late = [d for d in events.rejected if d.item.get("page") == day_title(LATE)]
    assert [(str(d.reason), d.detail) for d in late] == [
        ("day_page_missing", f"{cut}: {day_title(LATE)!r}: no such page in the part of the export that could be read")]


def test_the_api_and_an_export_of_the_same_pages_give_the_same_events(tmp_path: Path) -> None:
    export = write_export(portal_pages(), tmp_path / "portal.xml")
    with MediaWikiDouble(portal_pages()) as wiki:
        from_api = read_events(source_of(None, wiki.endpoint, UA), START, END)
    assert read_events(source_of(export, None), START, END).frame.equals(from_api.frame)


@pytest.mark.parametrize(("start", "end", "why"), [
    (date(2025, 2, 1), date(2025, 1, 31), "the start comes after the end"),
    (date(2025, 1, 1), date(2026, 1, 2), "367 days, more than 366"),
], ids=["reversed", "too-long"])
def test_a_wrong_range_stops_before_any_request(start: date, end: date, why: str) -> None:
    with MediaWikiDouble(portal_pages()) as wiki, pytest.raises(ConfigError, match=why):
        read_events(source_of(None, wiki.endpoint, UA), start, end)
    assert wiki.requests == []


def test_a_full_year_is_allowed_and_a_day_with_no_page_costs_nothing_else() -> None:
    with MediaWikiDouble(portal_pages()) as wiki:
        events = read_events(source_of(None, wiki.endpoint, UA), date(2024, 1, 1), date(2024, 12, 31))
    assert events.frame.is_empty() and events.counts == {"day_pages": 0, "events": 0}
    assert [str(d.reason) for d in events.rejected] == ["day_page_missing"] * 366
    assert len([r for r in wiki.requests if r.params.get("prop") == "revisions"]) == 8


def test_an_export_that_is_not_one_stops_the_run_naming_the_file(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not an export", encoding="utf-8")
    with pytest.raises(ConfigError, match="notes.txt: not a MediaWiki XML export"):
        read_events(notes, START, END)
    with pytest.raises(ConfigError, match="no such file"):
        read_events(tmp_path / "absent.xml", START, END)


def test_a_day_page_whose_text_is_hidden_is_dropped_and_the_others_are_read() -> None:
    pages = portal_pages()
    jan5 = pages[0]
    pages[0] = WikiPage(jan5.id, jan5.title, 100, [Rev(1268012399, None, moment(date(2025, 1, 5), 23), OLD, None,
                                                       "edit", missing_text=True)])
    with MediaWikiDouble(pages) as wiki:
        events = read_events(source_of(None, wiki.endpoint, UA), START, END)
    assert events.frame.equals(expected_frame().filter(pl.col("date") == LATE))
    hidden = [d for d in events.rejected if d.item.get("page") == jan5.title]
    assert [(d.reason, d.detail) for d in hidden] == [
        (PortalReject.DAY_PAGE_UNPARSABLE, f"{wiki.endpoint}: {jan5.title!r}: no readable revision text")]


# --- citations whose URL has no canonical form (issue 26) -----------------------------------------------------

BAD_PORT = "https://www.reuters.com:99999/world/europe/ukraine-launches-new-attack-kursk-2025-01-05/"
BAD_HOST = "http://[::1/x"
GOOD = "https://www.reuters.com/world/europe/ukraine-launches-new-attack-kursk-2025-01-05/"


def test_a_citation_whose_url_cannot_be_canonicalised_is_dropped_and_costs_nothing_else() -> None:
    text = OLD.replace(GOOD, BAD_PORT).replace("url=https://tass.com/defense/1893456", f"url={BAD_HOST}")
    rows, dropped = parse_day(text, date(2025, 1, 5), page="P", revision="9")
    expected, _ = parse_day(OLD, date(2025, 1, 5), page="P", revision="9")
    assert [r["summary"] for r in rows] == [r["summary"] for r in expected], "every event is still read"
    assert rows[0]["urls"] == [OLD_EVENTS[0].cited[1][0]] and rows[0]["outlets"] == ["AP"]
    assert rows[1]["urls"] == [OLD_EVENTS[1].cited[1][0]] and rows[1]["outlets"] == ["BBC News"]
    bad = [d for d in dropped if d.reason is PortalReject.CITATION_URL_INVALID]
    assert [(d.item["url"], d.item["outlet"], d.item["line"]) for d in bad] == [
        (BAD_PORT, "Reuters", 6), (BAD_HOST, "TASS", 7)]
    assert bad[0].detail == f"P (revision 9) line 6: {BAD_PORT!r}: its port is out of range (1-65535), cannot " \
                            "canonicalise"
    assert "invalid IPv6 URL" in bad[1].detail
    assert len(dropped) == len(bad) + len(parse_day(OLD, date(2025, 1, 5), page="P", revision="9")[1])
