"""Wikipedia's Current Events Portal read into events: one day page a day, from the Action API or an XML export.

A day page ("Portal:Current events/2026 January 5") holds the day's news in one of two wikitext forms:
until mid-2026 inside the `content=` parameter of `{{Current events|year=|month=|day=|content=...}}`,
after it between `{{Current events|...|top=yes}}` and `{{Current events|...|bottom=yes}}`. Inside,
`'''Bold'''` lines (older pages: `;Heading`) name categories; a list line made of links with items
nested under it names their topic; every other list line is an event: its summary sentence, the links
it cites and the outlet names they are cited with (`[https://... (AP)]`). What a page cannot give is
kept with a `PortalReject` reason and costs nothing else of the run.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import mwparserfromhell
import polars as pl
from mwparserfromhell.nodes import ExternalLink, Tag, Template, Text, Wikilink
from mwparserfromhell.wikicode import Wikicode

from timelyqa import urls
from timelyqa.errors import ConfigError, SourceContractError
from timelyqa.news.frames import EVENT_SCHEMA, event_id
from timelyqa.reasons import Reason
from timelyqa.stages import Dropped
from timelyqa.mediawiki.client import ApiSettings, MediaWikiAPI
from timelyqa.mediawiki.dump import DumpReader, ReadReject, check_dump
from timelyqa.mediawiki.wikitext import FILE_NAMESPACES, normal_name, render

PREFIX = "Portal:Current events/"
PORTAL_NAMESPACE = 100
"""The Portal namespace's number on Wikipedia; an export's day pages are looked for there."""
BATCH = 50
"""Titles per `prop=revisions` request: MediaWiki's limit on `titles` for clients without the bot right."""
MAX_DAYS = 366
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
TEMPLATE = "current events"

_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)
_BOLD = re.compile(r"^'''(?!')(.+?)(?<!')'''$")
_ITEM = re.compile(r"^(\*+)\s*(.*)$")
_SPACES = re.compile(r"\s+")
_BEFORE_MARK = re.compile(r"\s+([.,;:!?])")
_SEPARATORS = re.compile(r"^[\s,;/&:()–—-]*(?:and[\s,;/&:()–—-]*)*$")
_LEFTOVER = ("[[", "]]", "{{", "}}", "[http", "<ref")
_OUTLET_KEYS = ("work", "website", "publisher", "agency", "newspaper")


class PortalReject(Reason):
    DAY_PAGE_MISSING = ("day_page_missing",
                        "the day has no Current events page (normal for a day still to come); nothing to read")
    DAY_PAGE_UNPARSABLE = ("day_page_unparsable",
                           ("the day page has no {{Current events}} template or no news section in it; the page "
                            "is skipped"))
    EVENT_UNPARSABLE = ("event_unparsable",
                        ("a news line gives no event: its summary is empty once rendered, its markup is malformed, "
                         "it comes before any category, or it is a topic with no items under it"))
    EVENT_DUPLICATE = "event_duplicate", "the day page states the same summary twice; the first one is kept"
    CITATION_URL_INVALID = ("citation_url_invalid",
                            ("a cited web link has no canonical form (a port out of range, a malformed host, a "
                             "backslash): that citation is dropped, its event keeps the others"))


@dataclass(frozen=True, slots=True)
class DayPage:
    """One day page's latest revision as read from the API or an export."""

    day: date
    title: str
    revision: str
    text: str


@dataclass
class Events:
    """The events of a date range (EVENT_SCHEMA, by date then page order), what was dropped and what was counted."""

    frame: pl.DataFrame
    rejected: list[Dropped] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    usage: dict[str, float] = field(default_factory=dict)


def day_title(day: date) -> str:
    """'Portal:Current events/2026 January 5': the month in English, the day without a leading zero."""
    return f"{PREFIX}{day.year} {MONTHS[day.month - 1]} {day.day}"


def days_of(start: date, end: date) -> list[date]:
    """Every day from start to end, both included; a reversed or over-long range is a ConfigError."""
    if start > end:
        raise ConfigError(f"date range {start.isoformat()} .. {end.isoformat()}: the start comes after the end")
    n = (end - start).days + 1
    if n > MAX_DAYS:
        raise ConfigError(f"date range {start.isoformat()} .. {end.isoformat()}: {n} days, more than {MAX_DAYS}; "
                          "read a long period as several runs")
    return [start + timedelta(days=i) for i in range(n)]


Source = Path | ApiSettings | MediaWikiAPI
"""What `timelyqa.mediawiki.wiki.source_of` returns (an export file or API settings), or a client shared across
calls."""


def read_events(source: Source, start: date, end: date) -> Events:
    """The events of every day from start to end from the day pages the source holds."""
    days = days_of(start, end)
    rejected: list[Dropped] = []
    usage: dict[str, float] = {}
    if isinstance(source, Path):
        check_dump(source)
        pages = list(_from_export(source, days, rejected))
    else:
        pages = list(_from_api(source, days, rejected, usage))
    rows: list[dict[str, Any]] = []
    for page in sorted(pages, key=lambda p: p.day):
        found, dropped = parse_day(page.text, page.day, page=page.title, revision=page.revision)
        rows += found
        rejected += dropped
    frame = pl.DataFrame(rows, schema=EVENT_SCHEMA, orient="row")
    return Events(frame, rejected, {"day_pages": len(pages), "events": frame.height}, usage)


def _from_api(source: ApiSettings | MediaWikiAPI, days: list[date], rejected: list[Dropped],
              usage: dict[str, float]) -> Iterator[DayPage]:
    """Day pages asked for `BATCH` titles a request through the polite client; a day without a page is dropped."""
    api = source if isinstance(source, MediaWikiAPI) else MediaWikiAPI(source)
    try:
        api.check()
        for at in range(0, len(days), BATCH):
            batch = {day_title(d): d for d in days[at:at + BATCH]}
            yield from _batch(api, batch, rejected)
    finally:
        usage.update(api.usage)
        if api is not source:
            api.close()


def _batch(api: MediaWikiAPI, wanted: dict[str, date], rejected: list[Dropped]) -> Iterator[DayPage]:
    where = api.settings.endpoint
    params = {"prop": "revisions", "titles": "|".join(wanted), "rvprop": "ids|timestamp|content", "rvslots": "main"}
    seen: dict[str, dict[str, Any]] = {}
    for data in api.query(params):
        query = data.get("query") or {}
        renamed = {str(n.get("to")): str(n.get("from")) for n in query.get("normalized") or [] if isinstance(n, dict)}
        listed = query.get("pages", [])
        if not isinstance(listed, list):
            raise SourceContractError(f"{where}: query.pages is not a list (formatversion=2 expected)")
        for info in listed:
            title = str(info.get("title", "")) if isinstance(info, dict) else ""
            title = renamed.get(title, title)
            if title not in wanted:
                raise SourceContractError(f"{where}: answered a page that was not asked for: {info!r:.160}")
            if info.get("revisions") or title not in seen:  # continued answers add revisions to pages
                seen[title] = info
    for title, day in wanted.items():
        info = seen.get(title)
        item = {"page": title, "date": day.isoformat(), "endpoint": where}
        if info is None or info.get("missing"):
            rejected.append(Dropped(item, PortalReject.DAY_PAGE_MISSING, f"{where}: {title!r}: no such page"))
            continue
        revs = info.get("revisions") or []
        slot = ((revs[0].get("slots") or {}).get("main") or {}) if revs and isinstance(revs[0], dict) else {}
        if info.get("invalid") or "content" not in slot:
            why = "the API calls the title invalid" if info.get("invalid") else "no readable revision text"
            rejected.append(Dropped(item, PortalReject.DAY_PAGE_UNPARSABLE, f"{where}: {title!r}: {why}"))
            continue
        yield DayPage(day, title, str(revs[0].get("revid", "")), str(slot["content"]))


def _from_export(path: Path, days: list[date], rejected: list[Dropped]) -> Iterator[DayPage]:
    """Day pages in a MediaWiki XML export (plain, .bz2, .gz); the newest revision of each, if it has several."""
    wanted = {day_title(d): d for d in days}
    reader = DumpReader(path, namespaces=frozenset({PORTAL_NAMESPACE}))
    found: dict[str, DayPage] = {}
    unreadable: set[str] = set()
    for page in reader:
        if page.title not in wanted:
            continue
        revisions = list(page.revisions)
        if not page.complete or not revisions:
            unreadable.add(page.title)  # the reader kept why
            continue
        last = max(revisions, key=lambda r: (r.timestamp, r.id))
        found[page.title] = DayPage(wanted[page.title], page.title, str(last.id), last.text)
    rejected += reader.rejected
    cut = any(d.reason is ReadReject.MALFORMED_XML for d in reader.rejected)
    where = "in the part of the export that could be read" if cut else "in the export"
    for title, day in wanted.items():
        if title not in found and title not in unreadable:
            rejected.append(Dropped({"page": title, "date": day.isoformat(), "file": str(path)},
                                    PortalReject.DAY_PAGE_MISSING, f"{path}: {title!r}: no such page {where}"))
    return iter(found.values())


def parse_day(wikitext: str, day: date, *, page: str, revision: str) -> tuple[list[dict[str, Any]], list[Dropped]]:
    """The events of one day page as EVENT_SCHEMA rows, in page order, and the lines (or the page) dropped."""
    where = f"{page} (revision {revision})"
    item = {"page": page, "revision": revision, "date": day.isoformat()}
    section, why = news_section(wikitext)
    if section is None:
        return [], [Dropped(item, PortalReject.DAY_PAGE_UNPARSABLE, f"{where}: {why}")]
    first = wikitext[:max(wikitext.find(section), 0)].count("\n") + 1  # line numbers as the page's editor shows
    # a comment gives way to as many line breaks as it held, so that the lines keep their numbers
    lines = [line.strip() for line in _COMMENT.sub(lambda m: "\n" * m.group().count("\n"), section).split("\n")]
    rows: list[dict[str, Any]] = []
    dropped: list[Dropped] = []
    category: str | None = None
    topics: list[tuple[int, str]] = []  # (depth, topic) of the topic lines above, shallowest first
    seen: set[str] = set()
    structure = False
    for n, line in enumerate(lines):
        if not line:
            continue

        def drop(reason: PortalReject, why: str, line: str = line, number: int = first + n) -> None:
            dropped.append(Dropped({**item, "line": number, "text": line}, reason, f"{where} line {number}: {why}"))

        heading = _heading(line)
        if heading is not None:
            category, topics, structure = heading, [], True
            continue
        match = _ITEM.match(line)
        if match is None:
            drop(PortalReject.EVENT_UNPARSABLE, f"neither a category heading nor a list item: {line!r:.120}")
            continue
        structure = True
        depth, code = len(match.group(1)), mwparserfromhell.parse(match.group(2))
        while topics and topics[-1][0] >= depth:
            topics.pop()
        links = _citations(code)
        if not links and _heads_items(lines, n, depth):
            topics.append((depth, _plain(code)))
            continue
        summary = _plain(code)
        if category is None:
            drop(PortalReject.EVENT_UNPARSABLE, f"an item before any category heading: {line!r:.120}")
        elif not summary:
            drop(PortalReject.EVENT_UNPARSABLE, f"the summary is empty once rendered: {line!r:.120}")
        elif any(mark in summary for mark in _LEFTOVER):
            drop(PortalReject.EVENT_UNPARSABLE, f"malformed markup left in the summary: {summary!r:.120}")
        elif not links and _only_links(code):
            drop(PortalReject.EVENT_UNPARSABLE, f"a topic with no items under it: {line!r:.120}")
        elif (eid := event_id(day.isoformat(), summary)) in seen:
            drop(PortalReject.EVENT_DUPLICATE, f"the same summary again: {summary!r:.120}")
        else:
            seen.add(eid)
            for url, outlet in links:
                if url.lower().startswith(("http://", "https://")) and (why := urls.why_not(url)) is not None:
                    dropped.append(Dropped({**item, "line": first + n, "url": url, "outlet": outlet},
                                           PortalReject.CITATION_URL_INVALID, f"{where} line {first + n}: {why}"))
            links = [(u, o) for u, o in links if not u.lower().startswith(("http://", "https://")) or
                     urls.is_crawlable(u)]
            rows.append({"event_id": eid, "date": day, "category": category,
                         "topic": topics[-1][1] if topics else None, "summary": summary,
                         "urls": [u for u, _ in links], "outlets": [o for _, o in links], "page": page,
                         "revision": revision})
    if not structure:
        return [], [Dropped(item, PortalReject.DAY_PAGE_UNPARSABLE,
                            f"{where}: the news section has no category heading and no item")]
    return rows, dropped


def news_section(wikitext: str) -> tuple[str | None, str]:
    """The wikitext holding the day's news in either form, or None and why it cannot be found."""
    code = mwparserfromhell.parse(wikitext)
    marks = [t for t in code.filter_templates(recursive=False) if normal_name(str(t.name)) == TEMPLATE]
    if not marks:
        return None, "no {{Current events}} template (or its braces do not close)"
    for mark in marks:
        if mark.has("content"):
            return str(mark.get("content").value), ""
    top = next((m for m in marks if _yes(m, "top")), None)
    bottom = next((m for m in marks if _yes(m, "bottom")), None)
    if top is None:
        return None, "the {{Current events}} template has neither content= nor top=yes"
    if bottom is None:
        return None, "a {{Current events|top=yes}} without its {{Current events|bottom=yes}}"
    first, last = code.index(top), code.index(bottom)
    if last < first:
        return None, "{{Current events|bottom=yes}} comes before {{Current events|top=yes}}"
    return "".join(str(node) for node in code.nodes[first + 1:last]), ""


def _yes(template: Template, name: str) -> bool:
    return template.has(name) and str(template.get(name).value).strip().lower() == "yes"


def _heading(line: str) -> str | None:
    """A category heading's text: `'''Armed conflicts and attacks'''` or, on older pages, `;Armed conflicts...`."""
    bold = _BOLD.match(line)
    text = bold.group(1) if bold else line[1:] if line.startswith(";") else None
    return None if text is None else _plain(mwparserfromhell.parse(text)) or None


def _heads_items(lines: list[str], n: int, depth: int) -> bool:
    """True when the next non-blank line is a list item nested deeper than this one."""
    for line in lines[n + 1:]:
        if line:
            match = _ITEM.match(line)
            return match is not None and len(match.group(1)) > depth
    return False


def _citations(code: Wikicode) -> list[tuple[str, str]]:
    """(url, outlet) of each cited link in order, once each: bracketed external links (`[url (AP)]`, `[url AP]`)
    and cite templates in references. A link cited without a name is named by its host, as a reader sees it."""
    out: dict[str, str] = {}
    for node in code.ifilter(recursive=True, forcetype=(ExternalLink, Template)):
        if isinstance(node, ExternalLink):
            if not node.brackets:
                continue
            url, name = str(node.url).strip(), _plain(node.title) if node.title else ""
        elif normal_name(str(node.name)).startswith(("cite", "citation")) and node.has("url"):
            url = str(node.get("url").value).strip()
            name = next((_plain(node.get(k).value) for k in _OUTLET_KEYS if node.has(k)), "")
        else:
            continue
        out.setdefault(url, name.strip(" ()[]") or (urls.host_port(url) or (url,))[0])
    return list(out.items())


def _plain(code: Wikicode) -> str:
    """The text a reader sees: links as their shown text, citations, references, files and categories gone."""
    code = mwparserfromhell.parse(str(code))  # a copy: removing nodes must not change the caller's code
    for node in code.filter(recursive=True, forcetype=(ExternalLink, Wikilink, Tag)):
        if isinstance(node, ExternalLink) and node.brackets or isinstance(node, Tag) and _is_ref(node) or \
                isinstance(node, Wikilink) and _is_file(node):
            try:
                code.remove(node)
            except ValueError:
                pass  # inside a node removed already
    text = _SPACES.sub(" ", render(code)).strip()
    return _BEFORE_MARK.sub(r"\1", text)


def _is_ref(tag: Tag) -> bool:
    return str(tag.tag).strip().lower() == "ref"


def _is_file(link: Wikilink) -> bool:
    namespace, colon, _ = str(link.title).strip().partition(":")
    return bool(colon) and namespace.strip().lower() in (*FILE_NAMESPACES, "category")


def _only_links(code: Wikicode) -> bool:
    """True when a line is nothing but wikilinks and separators: the shape of a topic line."""
    nodes = code.nodes
    return any(isinstance(n, Wikilink) for n in nodes) and all(
        isinstance(n, Wikilink) or isinstance(n, Text) and _SEPARATORS.match(n.value) for n in nodes)
