"""Generated web sites on 127.0.0.1 with their ground truth: a test double standing in for real websites.

A test double because the tests must never reach the internet: a `Site` is data (pages by path, robots.txt, an
optional hook that answers an endless family of paths), `SiteServer` serves it from a thread and records every
request, and `reachable()` says which paths a polite, same-site crawler should fetch and at what click depth.
Links come in three kinds a crawler must tell apart: plain anchors in the static HTML, anchors that only the
page's JavaScript inserts after load (their hrefs are not in the raw HTML at all), and buttons whose onclick
navigates. Builders: `conference_site()` (small, every hard case once) and `tree_site()` (large and plain).
"""

from __future__ import annotations

import json
import random
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from html import escape
from http.server import BaseHTTPRequestHandler
from urllib.parse import urljoin, urlsplit

from tests.localserver import LocalServer

HTML = "text/html; charset=utf-8"
ALLOW_ALL = "User-agent: *\nDisallow:\n"
_HOST = "site.invalid"  # stands for the site's own host when resolving hrefs; the builders never write it


@dataclass
class Page:
    """One path of a site: what it shows, where it links, and how the server answers it."""

    path: str  # starts with "/"
    title: str
    body: str = ""  # HTML of the main content; for a non-HTML page, the bytes served (as text)
    links: list[tuple[str, str]] = field(default_factory=list)  # (href, text): anchors in the static HTML
    script_links: list[tuple[str, str]] = field(default_factory=list)  # (href, text): inserted by JavaScript
    buttons: list[tuple[str, str]] = field(default_factory=list)  # (target, text): onclick navigates
    status: int = 200
    content_type: str = HTML
    redirect: str | None = None  # answer 301 with this Location (absolute or relative) instead
    delay: float = 0.0  # seconds before answering
    size: int | None = None  # pad the payload to this many bytes (an oversized page)

    @property
    def is_html(self) -> bool:
        return self.content_type.startswith("text/html")


@dataclass
class Site:
    name: str
    pages: dict[str, Page]
    robots: str = ""  # robots.txt; empty means allow-all is served
    dynamic: Callable[[str], Page | None] | None = None  # answers paths not in `pages` (an endless calendar)

    def page(self, path: str) -> Page | None:
        """The page at `path` (its query ignored), from `pages` or else from `dynamic`; None is a 404."""
        route = urlsplit(path).path
        found = self.pages.get(route)
        return found if found is not None or self.dynamic is None else self.dynamic(route)

    def robots_txt(self) -> str:
        return self.robots or ALLOW_ALL

    def disallowed(self) -> list[str]:
        """The `Disallow:` prefixes of the groups for `User-agent: *` (Allow lines and other agents ignored)."""
        prefixes: list[str] = []
        agents: set[str] = set()
        in_rules = False
        for raw in self.robots_txt().splitlines():
            key, _, value = raw.split("#", 1)[0].partition(":")
            key, value = key.strip().casefold(), value.strip()
            if key == "user-agent":
                agents, in_rules = (agents if not in_rules else set()) | {value}, False
            elif key in ("allow", "disallow"):
                in_rules = True
                if key == "disallow" and value and "*" in agents:
                    prefixes.append(value)
        return prefixes

    def html(self, page: Page) -> str:
        """The full document: title, a nav of the anchors, the body, the buttons, and the script that adds links."""
        anchors = "".join(f'<li><a href="{escape(h)}">{escape(t)}</a></li>' for h, t in page.links)
        buttons = "".join(f"<button onclick=\"location.href='{escape(h)}'\">{escape(t)}</button>"
                          for h, t in page.buttons)
        return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
                f"<title>{escape(page.title)} | {escape(self.name)}</title></head>\n<body>\n"
                f'<header>{escape(self.name)}</header>\n<nav><div id="menu"></div><ul>{anchors}</ul></nav>\n'
                f"<main><h1>{escape(page.title)}</h1>\n{page.body}\n</main>\n<footer>{buttons}</footer>\n"
                f"{_menu_script(page.script_links)}</body></html>\n")

    def payload(self, page: Page) -> bytes:
        """The bytes served for `page`: the document (or the body of a non-HTML page), padded to `size`."""
        data = (self.html(page) if page.is_html else page.body).encode()
        if page.size is None or len(data) >= page.size:
            return data
        if not page.is_html:
            return data + b"\n" * (page.size - len(data))
        filler = b"<!--" + b"x" * max(page.size - len(data) - 7, 0) + b"-->"
        return data.replace(b"</body>", filler + b"</body>", 1)


def _menu_script(links: list[tuple[str, str]]) -> str:
    """A script adding `links` to #menu on DOMContentLoaded; the hrefs are JSON with "/" written as \\u002f,
    so no href (nor even its slashes) appears in the static HTML."""
    if not links:
        return ""
    encoded = json.dumps([list(pair) for pair in links])
    for char in "/<>&":
        encoded = encoded.replace(char, f"\\u{ord(char):04x}")
    return ("<script>\ndocument.addEventListener('DOMContentLoaded', function () {\n"
            f"  var links = {encoded};\n  var menu = document.getElementById('menu');\n"
            "  links.forEach(function (l) {\n    var a = document.createElement('a');\n"
            "    a.setAttribute('href', l[0]);\n    a.textContent = l[1];\n    menu.appendChild(a);\n  });\n"
            "});\n</script>\n")


# --- ground truth --------------------------------------------------------------------------------------------

def in_site(base: str, href: str) -> str | None:
    """`href` on the page at path `base`, resolved to a path (with query, without fragment), or None when it
    leaves the site: another host (any absolute URL), or a scheme other than http(s) (mailto:, javascript:)."""
    parts = urlsplit(urljoin(f"http://{_HOST}{base}", href.strip()))
    if parts.scheme not in ("http", "https") or parts.netloc != _HOST:
        return None
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def reachable(site: Site, root: str = "/", *, max_depth: int, disallowed: Iterable[str] = (),
              follow_scripts: bool = True, follow_buttons: bool = True, obey_robots: bool = True) -> dict[str, int]:
    """Every path a polite crawler starting at `root` and staying on the site requests, with its shortest
    click distance from `root` (root 0), keeping only depths <= `max_depth`.

    It follows `links`, plus `script_links` and `buttons` when asked. It includes paths that answer 404 (not in
    the site) or any status >= 400, which are requested but whose links are not followed, and non-HTML pages,
    which have no links. A redirecting path is included, and so is its in-site target, at the same depth (a
    redirect is not a click). Off-site hrefs are never included; nor is any path starting with one of the
    `disallowed` prefixes or, when `obey_robots`, one of the robots.txt `Disallow:` prefixes for `User-agent: *`.
    /robots.txt itself is not included. Paths keep their query string and drop their fragment.
    """
    blocked = [p for p in (*disallowed, *(site.disallowed() if obey_robots else ())) if p]
    depths: dict[str, int] = {}
    queue = deque([(root, 0)])  # a 0-1 BFS: redirects go on the front at the same depth, clicks on the back
    while queue:
        path, depth = queue.popleft()
        if path in depths or depth > max_depth or any(path.startswith(p) for p in blocked):
            continue
        depths[path] = depth
        page = site.page(path)
        if page is None:
            continue
        if page.redirect is not None:
            if (target := in_site(path, page.redirect)) is not None:
                queue.appendleft((target, depth))
            continue
        if page.status >= 400 or not page.is_html:
            continue
        hrefs = [*page.links, *(page.script_links if follow_scripts else ()), *(page.buttons if follow_buttons else ())]
        queue.extend((target, depth + 1) for href, _ in hrefs if (target := in_site(path, href)) is not None)
    return depths


# --- the server ----------------------------------------------------------------------------------------------

class SiteServer(LocalServer):
    """Serves one Site; `with SiteServer(site) as web:` answers at `web.url` until the block ends.

    `requests` lists every request path as it arrived (query included, /robots.txt and 404s too), in order.
    """

    def __init__(self, site: Site) -> None:
        self.site = site
        self.requests: list[str] = []
        self._lock = threading.Lock()
        super().__init__(_handler(self))

    def answer(self, path: str) -> tuple[int, dict[str, str], bytes]:
        with self._lock:
            self.requests.append(path)
        if urlsplit(path).path == "/robots.txt":
            return 200, {"Content-Type": "text/plain; charset=utf-8"}, self.site.robots_txt().encode()
        page = self.site.page(path)
        if page is None:
            return 404, {"Content-Type": HTML}, b"<!DOCTYPE html><html><body><h1>Not Found</h1></body></html>"
        time.sleep(page.delay)
        if page.redirect is not None:
            return 301, {"Location": page.redirect, "Content-Type": HTML}, b"<html><body>Moved</body></html>"
        return page.status, {"Content-Type": page.content_type}, self.site.payload(page)


def _handler(web: SiteServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as real sites; every answer carries Content-Length

        def do_GET(self) -> None:
            self._reply(with_body=True)

        def do_POST(self) -> None:
            self._reply(with_body=True)

        def do_HEAD(self) -> None:
            self._reply(with_body=False)

        def _reply(self, *, with_body: bool) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))  # drain, so keep-alive stays in step
            status, headers, data = web.answer(self.path)
            try:
                self.send_response(status)
                for name, value in {**headers, "Content-Length": str(len(data))}.items():
                    self.send_header(name, value)
                self.end_headers()
                if with_body:
                    self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting: a timeout case
                self.close_connection = True

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
            pass

    return Handler


# --- builders ------------------------------------------------------------------------------------------------

def _table(rows: dict[str, str]) -> str:
    cells = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in rows.items())
    return f"<table>{cells}</table>"


def _dl(rows: dict[str, str]) -> str:
    return "<dl>" + "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in rows.items()) + "</dl>"


def _fields(rows: dict[str, str]) -> str:
    return "".join(f"<p>{escape(k)}: {escape(v)}</p>" for k, v in rows.items())


HOME = ("/", "Home")
PAPERS = {  # (day, session, session name) -> papers (id, title, authors, time)
    (1, 1, "Retrieval"): [("p1", "Dense Retrieval over Dated Snapshots", "Ana Ferreira, Tomás Lima", "09:30"),
                          ("p2", "Which Page Was True in 2019?", "Mei Chen", "10:00")],
    (1, 2, "Agents"): [("p3", "Walking the Web with Fewer Clicks", "Ravi Iyer, Sara Okafor", "14:00"),
                       ("p4", "Menus Made of Script", "Jonas Berg", "14:30")],
    (2, 1, "Evaluation"): [("p5", "Answers That Expire", "Lucía Romero", "09:30"),
                           ("p6", "A Benchmark of Moving Facts", "Kenji Sato, Ida Holm", "10:00")],
}
ROOMS = {1: "Hall B", 2: "Room 2.14"}


def _calendar(path: str) -> Page | None:
    """/calendar/YYYY/MM for any year and month, each linking to the next month: a crawler trap without end."""
    if not (m := re.fullmatch(r"/calendar/(\d{4})/(\d{2})", path)) or not 1 <= int(m[2]) <= 12:
        return None
    year, month = int(m[1]), int(m[2])
    nxt = f"/calendar/{year + month // 12}/{month % 12 + 1:02d}"
    event = "WebQA 2026, 8-9 June" if (year, month) == (2026, 6) else "none"
    return Page(path, f"Calendar {year}-{month:02d}", _fields({"Events": event}), [(nxt, "Next month"), HOME])


def conference_site(offsite: str = "http://127.0.0.1:9") -> Site:
    """A workshop's site in the spirit of WebWalkerQA; `offsite` is another host's base URL (default: nobody).

    Depths from "/" (all links followed): the script-only menu /calls, /program, /venue, /committee at 1; papers
    /papers/p1..p6 at 4 (/program -> /program/day-N -> /program/day-N/session-M -> paper). Hard cases:
    /awards is first seen at depth 4 along the fast chain /news -> /news/2026 -> /news/2026/03 but lies at
    depth 2 behind the slow /sponsors (0.5 s), so /awards/best-paper is truly at 3; /members/ is linked from
    home but disallowed by robots.txt (as is /members/directory behind it); /venue links off-site to
    {offsite}/hotels; /dates.html answers 301 to /important-dates (linked nowhere else, so at 1); the button
    on /calls goes to /registration (only so); /program links /program/day-3 (404) and /program/posters (500);
    /calls links /calls/cfp.pdf (application/pdf); home links /calendar/2026/01, each month the next, forever;
    /committee links a mailto:. Deep pages link home and to their siblings, so the link graph has cycles.
    """
    pages = [
        Page("/", "Welcome", "<p>The eighth Workshop on Web Question Answering.</p>"
             + _dl({"Dates": "8-9 June 2026", "City": "Porto, Portugal"}),
             links=[("/news", "News"), ("/sponsors", "Sponsors"), ("/dates.html", "Important dates"),
                    ("/calendar/2026/01", "Calendar"), ("/members/", "Members area")],
             script_links=[("/calls", "Calls"), ("/program", "Program"), ("/venue", "Venue"),
                           ("/committee", "Committee")]),
        Page("/news", "News", "<p>Announcements.</p>", [("/news/2026", "2026"), HOME]),
        Page("/news/2026", "News 2026", "<p>This year's announcements.</p>",
             [("/news/2026/03", "March"), ("/news", "News")]),
        Page("/news/2026/03", "News, March 2026", _fields({"Posted": "28 March 2026"}),
             [("/awards", "Best paper award announced"), ("/news/2026", "2026")]),
        Page("/sponsors", "Sponsors", _table({"Gold": "Nordlicht Data", "Silver": "Ribeira Labs"}),
             [("/awards", "Sponsored awards"), HOME], delay=0.5),
        Page("/awards", "Awards", _dl({"Award": "Best Paper", "Prize": "EUR 1,000", "Sponsor": "Nordlicht Data"}),
             [("/awards/best-paper", "Best paper 2026"), HOME]),
        Page("/awards/best-paper", "Best Paper 2026",
             _fields({"Winner": "Answers That Expire", "Author": "Lucía Romero"}),
             [("/awards", "Awards"), HOME]),
        Page("/dates.html", "Moved", redirect="/important-dates"),
        Page("/important-dates", "Important dates", _fields({
            "Submission deadline": "15 March 2026", "Notification": "20 April 2026",
            "Camera-ready": "10 May 2026", "Workshop": "8-9 June 2026"}), [HOME]),
        Page("/members/", "Members area", "<p>Sign in to see the directory.</p>",
             [("/members/directory", "Directory")]),
        Page("/members/directory", "Member directory", _table({"Members": "212"}), [HOME]),
        Page("/calls", "Call for papers", _fields({"Submission deadline": "15 March 2026", "Page limit": "8 pages",
                                                   "Review": "double-blind"}),
             [("/calls/cfp.pdf", "Call for papers (PDF)"), HOME], buttons=[("/registration", "Register now")]),
        Page("/calls/cfp.pdf", "Call for papers",
             "%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n",
             content_type="application/pdf"),
        Page("/registration", "Registration", "<table><tr><th>Rate</th><th>Student</th><th>Regular</th></tr>"
             "<tr><td>Early (until 1 May 2026)</td><td>EUR 150</td><td>EUR 300</td></tr>"
             "<tr><td>Late</td><td>EUR 200</td><td>EUR 400</td></tr></table>", [HOME]),
        Page("/program", "Program", "<p>Two days of talks.</p>",
             [("/program/day-1", "Day 1"), ("/program/day-2", "Day 2"), ("/program/day-3", "Day 3 (cancelled)"),
              ("/program/posters", "Posters"), HOME]),
        Page("/program/posters", "Internal Server Error", "<p>Something went wrong.</p>", status=500),
        Page("/venue", "Venue", _fields({"Venue": "Alfândega Congress Centre",
                                         "Address": "Rua Nova da Alfândega, Porto", "Nearest metro": "São Bento"}),
             [(f"{offsite.rstrip('/')}/hotels", "Partner hotels"), HOME]),
        Page("/committee", "Committee", "<table><tr><th>Name</th><th>Role</th><th>Affiliation</th></tr>"
             "<tr><td>Helena Duarte</td><td>General chair</td><td>University of Porto</td></tr>"
             "<tr><td>Marcus Webb</td><td>Program chair</td><td>Leeds Institute of Computing</td></tr></table>",
             [("mailto:chairs@webqa2026.example", "Write to the chairs"), HOME]),
    ]
    for day in (1, 2):
        sessions = [(s, name) for (d, s, name) in PAPERS if d == day]
        pages.append(Page(f"/program/day-{day}", f"Program, day {day}",
                          _table({f"Session {s}": name for s, name in sessions}),
                          [(f"/program/day-{day}/session-{s}", name) for s, name in sessions]
                          + [("/program", "Program")]))
    for (day, s, name), papers in PAPERS.items():
        session = f"/program/day-{day}/session-{s}"
        siblings = [(f"/program/day-{day}/session-{o}", n) for (d, o, n) in PAPERS if d == day and o != s]
        pages.append(Page(session, f"Session: {name}", _table({t: title for _, title, _, t in papers}),
                          [(f"/papers/{pid}", title) for pid, title, _, _ in papers] + siblings
                          + [(f"/program/day-{day}", f"Day {day}")]))
        for pid, title, authors, at in papers:
            others = [(f"/papers/{o}", t) for o, t, _, _ in papers if o != pid]
            facts = {"Title": title, "Authors": authors, "Session": name, "Day": f"{day + 7} June 2026",
                     "Time": at, "Room": ROOMS[day]}
            pages.append(Page(f"/papers/{pid}", title, _dl(facts),
                              others + [(session, name), HOME]))
    return Site("WebQA 2026", {p.path: p for p in pages}, robots="User-agent: *\nDisallow: /members/\n",
                dynamic=_calendar)


def tree_site(pages: int, fanout: int = 10, *, seed: int = 0) -> Site:
    """`pages` static pages in a balanced tree: page i links its children fanout*i+1 .. fanout*i+fanout and
    its parent; page 0 is "/", page i "/item/i". Each holds a small fact table drawn from Random(seed)."""
    rng = random.Random(seed)
    built = {}
    for i in range(pages):
        path = "/" if i == 0 else f"/item/{i}"
        links = [(f"/item/{c}", f"Item {c}") for c in range(fanout * i + 1, min(fanout * (i + 1), pages - 1) + 1)]
        if i:
            links.append(("/" if i <= fanout else f"/item/{(i - 1) // fanout}", "Up"))
        facts = {"Identifier": f"T{i:05d}", "Founded": str(rng.randint(1800, 2020)),
                 "Population": f"{rng.randint(1_000, 9_999_999):,}", "Elevation": f"{rng.randint(0, 4000)} m"}
        built[path] = Page(path, f"Item {i}", _table(facts), links)
    return Site(f"Tree of {pages}", built)
