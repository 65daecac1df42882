"""The demo website and its server: made by its script byte for byte, shaped as the crawl needs, served by LocalSite."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import urllib.error
import urllib.request
import urllib.robotparser
from collections import deque
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest

from timelyqa.errors import ConfigError
from timelyqa.localsite import LocalSite

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "data" / "demo" / "site"
SCRIPT = ROOT / "scripts" / "make_demo_site.py"
DEEPEST = "/study/msc-data-science/modules/statistical-learning/"
SECTIONS = ["/about/", "/study/", "/research/", "/events/", "/news/"]


def files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_script_writes_the_committed_site_byte_for_byte(tmp_path: Path) -> None:
    """data/demo/site is made by its script; a hand edit, or a script changed without running it, shows here."""
    (tmp_path / "site" / "gone").mkdir(parents=True)
    (tmp_path / "site" / "gone" / "index.html").write_text("a page the site no longer has")
    proc = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    made, committed = files(tmp_path / "site"), files(SITE)
    assert sorted(made) == sorted(committed)
    for name, data in made.items():
        assert data == committed[name], name
    assert not (tmp_path / "site" / "gone").exists()


# --- the site's shape, read from its files as a crawler would see them as served -----------------------------

@dataclass
class Served:
    """What a page's static HTML holds: anchors, onclick targets, script sources, and the menu mount's content."""

    anchors: list[str] = field(default_factory=list)
    buttons: list[str] = field(default_factory=list)
    scripts: list[str] = field(default_factory=list)
    menu_mount: str | None = None  # the inner text of <nav id="menu">, None when there is none


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.served = Served()
        self._in_menu = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "a" and "href" in a:
            self.served.anchors.append(a["href"])
        if m := re.search(r"location\.href='([^']+)'", a.get("onclick", "")):
            self.served.buttons.append(m[1])
        if tag == "script" and "src" in a:
            self.served.scripts.append(a["src"])
        if tag == "nav" and a.get("id") == "menu":
            self.served.menu_mount, self._in_menu = "", True
        elif self._in_menu:
            self.served.menu_mount = f"<{tag}>"

    def handle_endtag(self, tag: str) -> None:
        self._in_menu = self._in_menu and tag != "nav"

    def handle_data(self, data: str) -> None:
        if self._in_menu:
            self.served.menu_mount = (self.served.menu_mount or "") + data


def pages() -> dict[str, Served]:
    """Every HTML page by its URL path (a folder's index.html answers for the folder)."""
    found = {}
    for rel in sorted(SITE.rglob("index.html")):
        reader = _Reader()
        reader.feed(rel.read_text())
        folder = rel.parent.relative_to(SITE).as_posix()
        found["/" if folder == "." else f"/{folder}/"] = reader.served
    return found


def menu_links() -> list[str]:
    return re.findall(r"\['(/[^']*)', '[^']*'\]", (SITE / "menu.js").read_text())


def depths(*, run_scripts: bool = True, press_buttons: bool = True) -> dict[str, int]:
    """Click depth from "/" of every same-site path, as a polite crawler finds it (robots.txt obeyed)."""
    site, menu, found = pages(), menu_links(), {}
    queue = deque([("/", 0)])
    while queue:
        path, depth = queue.popleft()
        if path in found or path.startswith("/private/"):
            continue
        found[path] = depth
        page = site.get(path)
        if page is None:
            continue
        targets = [*page.anchors, *(page.buttons if press_buttons else ())]
        if run_scripts and "/menu.js" in page.scripts:
            targets += menu
        queue.extend((t, depth + 1) for t in targets if t.startswith("/"))
    return found


def test_the_sections_are_reached_only_through_the_script_built_menu() -> None:
    site = pages()
    assert menu_links() == SECTIONS
    script = (SITE / "menu.js").read_text()
    assert "addEventListener('DOMContentLoaded'" in script and "document.createElement('a')" in script
    home = site["/"]
    assert home.scripts == ["/menu.js"] and home.menu_mount == ""  # an empty mount: the crawler's cue to render
    assert not set(SECTIONS) & set(home.anchors)
    for path, page in site.items():
        assert not set(SECTIONS) & set(page.anchors), f"{path} links a section statically"
    assert set(depths(run_scripts=False)) == {"/"}  # without the script, the home page is all there is


def test_a_page_four_clicks_deep_is_reached_by_the_menu_then_static_links() -> None:
    found = depths()
    assert found[DEEPEST] == 4 and max(found.values()) == 4
    chain = ["/", "/study/", "/study/msc-data-science/", "/study/msc-data-science/modules/", DEEPEST]
    site = pages()
    assert chain[1] in menu_links() and "/menu.js" in site["/"].scripts
    for parent, child in zip(chain[1:], chain[2:]):
        assert child in site[parent].anchors, (parent, child)
    html = {p for p in site if not p.startswith("/private/")}
    assert html <= set(found), f"pages no crawler reaches: {sorted(html - set(found))}"
    assert 25 <= len(site) <= 40
    assert sum(len(data) for data in files(SITE).values()) < 200_000


def test_the_hard_cases_are_there_once_each() -> None:
    site = pages()
    # /apply/ only by a button
    assert "/apply/" in site and depths()["/apply/"] == 2
    assert "/apply/" not in depths(press_buttons=False)
    assert all("/apply/" not in page.anchors for page in site.values())
    # one off-site link, on /about/
    offsite = {(path, href) for path, page in site.items() for href in page.anchors if not href.startswith("/")}
    assert offsite == {("/about/", "https://example.org/")}
    # /private/ linked from home, and a non-HTML file linked from /study/
    assert "/private/" in site["/"].anchors and "/private/payroll/" in site
    assert "/files/brochure.pdf" in site["/study/"].anchors and depths()["/files/brochure.pdf"] == 2
    # deep pages link home and their siblings: a cycle
    assert "/" in site[DEEPEST].anchors
    sibling = "/study/msc-data-science/modules/causal-inference/"
    assert sibling in site[DEEPEST].anchors and DEEPEST in site[sibling].anchors


# --- LocalSite ------------------------------------------------------------------------------------------------

def get(url: str) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return answer.status, answer.headers["Content-Type"], answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["Content-Type"], error.read()


def test_local_site_serves_the_site_as_a_web_server_would() -> None:
    with LocalSite(SITE) as web:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", web.url)
        assert get(web.url) == (200, "text/html; charset=utf-8", (SITE / "index.html").read_bytes())
        status, kind, body = get(web.url + "study/msc-data-science/modules/statistical-learning/")
        assert status == 200 and b"Dr Priya Raman" in body
        assert get(web.url + "study")[2] == (SITE / "study" / "index.html").read_bytes()  # redirected to /study/
        assert get(web.url + "menu.js")[:2] == (200, "text/javascript; charset=utf-8")
        status, kind, body = get(web.url + "files/brochure.pdf")
        assert (status, kind, body[:5]) == (200, "application/pdf", b"%PDF-")
        status, _, body = get(web.url + "files/")
        assert status == 404 and b"brochure" not in body  # a folder without index.html: no listing
        assert get(web.url + "no/such/page/")[0] == 404
        robots = urllib.robotparser.RobotFileParser(web.url + "robots.txt")
        robots.read()
        assert not robots.can_fetch("timelyqa", web.url + "private/")
        assert not robots.can_fetch("timelyqa", web.url + "private/payroll/")
        assert robots.can_fetch("timelyqa", web.url + "study/")
        port = web.port
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port), timeout=2):
        pass
    with pytest.raises(RuntimeError):
        web.url


def test_local_site_takes_a_given_port_and_says_when_it_cannot(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ConfigError, match=f"port {port} "), LocalSite(SITE, port=port):
            pass
    with LocalSite(SITE, port=port) as web:
        assert web.url == f"http://127.0.0.1:{port}/" and get(web.url)[0] == 200
    with pytest.raises(ConfigError, match="no index.html"), LocalSite(tmp_path):
        pass
