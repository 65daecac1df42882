"""The generated sites the crawler's tests stand on, checked: what the server answers and what `reachable()` says."""

from __future__ import annotations

import http.client
import json
import re
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sites import Page, Site, SiteServer, conference_site, in_site, reachable, tree_site

MENU = ["/calls", "/program", "/venue", "/committee"]


def get(url: str, path: str, *, method: str = "GET", body: bytes | None = None) -> tuple[int, dict[str, str], bytes]:
    """One request, redirects not followed (http.client never follows them)."""
    conn = http.client.HTTPConnection(url.removeprefix("http://"), timeout=10)
    try:
        conn.request(method, path, body=body)
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read()
    finally:
        conn.close()


def hrefs(html: str) -> list[str]:
    return re.findall(r'href="([^"]*)"', html)


@pytest.fixture(scope="module")
def conference() -> Iterator[SiteServer]:
    with SiteServer(conference_site()) as web:
        yield web


def test_static_html_holds_its_anchors_and_not_its_script_links(conference: SiteServer) -> None:
    status, headers, body = get(conference.url, "/")
    html = body.decode()
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    assert hrefs(html) == ["/news", "/sponsors", "/dates.html", "/calendar/2026/01", "/members/"]
    for path in MENU:
        assert path not in html  # not even as a quoted string a regex could pick out of the script


def test_the_script_inserts_the_menu_after_load(conference: SiteServer) -> None:
    """Run the page's script under the Node that Playwright ships, with a stub DOM standing in for a browser's."""
    playwright = pytest.importorskip("playwright")
    node = Path(playwright.__file__).parent / "driver" / "node"
    if not node.exists():
        pytest.skip("Playwright's bundled Node is not installed")
    script = re.search(r"<script>(.*?)</script>", get(conference.url, "/")[2].decode(), re.S)[1]
    stub = """
const on = {}, menu = {added: [], appendChild(el) { this.added.push(el); }};
globalThis.document = {addEventListener: (ev, f) => { on[ev] = f; }, getElementById: id => id === 'menu' ? menu : null,
  createElement: tag => ({tag, attrs: {}, textContent: '', setAttribute(k, v) { this.attrs[k] = v; }})};
%s
if (menu.added.length) throw new Error('links inserted before DOMContentLoaded');
on.DOMContentLoaded();
console.log(JSON.stringify(menu.added.map(a => [a.tag, a.attrs.href, a.textContent])));
""" % script
    out = subprocess.run([str(node), "-e", stub], capture_output=True, text=True, timeout=60, check=True).stdout
    assert json.loads(out) == [["a", "/calls", "Calls"], ["a", "/program", "Program"], ["a", "/venue", "Venue"],
                               ["a", "/committee", "Committee"]]


def test_a_button_navigates_by_onclick_and_is_no_anchor(conference: SiteServer) -> None:
    html = get(conference.url, "/calls")[2].decode()
    assert "<button onclick=\"location.href='/registration'\">Register now</button>" in html
    assert "/registration" not in hrefs(html)


def test_robots_txt_is_served_and_allows_all_when_the_site_sets_none(conference: SiteServer) -> None:
    status, headers, body = get(conference.url, "/robots.txt")
    assert status == 200 and headers["Content-Type"].startswith("text/plain")
    assert body.decode() == "User-agent: *\nDisallow: /members/\n"
    with SiteServer(tree_site(3)) as web:
        assert get(web.url, "/robots.txt")[2].decode() == "User-agent: *\nDisallow:\n"


def test_a_redirect_answers_301_with_its_location(conference: SiteServer) -> None:
    status, headers, _ = get(conference.url, "/dates.html")
    assert (status, headers["Location"]) == (301, "/important-dates")
    assert b"Submission deadline: 15 March 2026" in get(conference.url, "/important-dates")[2]


def test_missing_broken_and_non_html_pages(conference: SiteServer) -> None:
    assert get(conference.url, "/program/day-3")[0] == 404
    assert get(conference.url, "/program/posters")[0] == 500
    status, headers, body = get(conference.url, "/calls/cfp.pdf")
    assert (status, headers["Content-Type"]) == (200, "application/pdf") and body.startswith(b"%PDF-")


def test_a_delayed_page_takes_at_least_its_delay(conference: SiteServer) -> None:
    start = time.monotonic()
    assert get(conference.url, "/sponsors")[0] == 200
    assert time.monotonic() - start >= 0.5


def test_the_slow_short_path_loses_the_race_to_the_fast_long_one(conference: SiteServer) -> None:
    """What the exact-depth test needs: /awards is seen along the 4-click chain before the slow page answers."""
    slow = threading.Thread(target=get, args=(conference.url, "/sponsors"))
    slow.start()
    path = "/news"
    for _ in range(3):
        path = hrefs(get(conference.url, path)[2].decode())[0]
    assert path == "/awards" and slow.is_alive()
    slow.join()


def test_an_oversized_page_is_padded_to_its_size() -> None:
    site = Site("Big", {"/": Page("/", "Big", "<p>x</p>", size=3_000_000),
                        "/a.bin": Page("/a.bin", "", "ab", content_type="text/plain", size=10)})
    with SiteServer(site) as web:
        status, _, body = get(web.url, "/")
        assert status == 200 and len(body) == 3_000_000 and body.endswith(b"</body></html>\n")
        assert get(web.url, "/a.bin")[2] == b"ab" + b"\n" * 8


def test_the_calendar_keeps_answering(conference: SiteServer) -> None:
    path = "/calendar/2026/01"
    for _ in range(30):
        status, _, body = get(conference.url, path)
        assert status == 200
        path = hrefs(body.decode())[0]
    assert path == "/calendar/2028/07"
    assert get(conference.url, "/calendar/2031/12")[0] == 200
    assert "/calendar/2032/01" in hrefs(get(conference.url, "/calendar/2031/12")[2].decode())
    assert get(conference.url, "/calendar/2026/13")[0] == 404


@pytest.mark.slow  # many threads against a real server
def test_every_request_is_recorded_from_many_threads_at_once() -> None:
    with SiteServer(tree_site(50)) as web:
        paths = [f"/item/{i}" for i in range(1, 50)] + ["/robots.txt", "/nowhere?q=1"]
        threads = [threading.Thread(target=get, args=(web.url, p)) for p in paths]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert Counter(web.requests) == Counter(paths)


def test_a_request_body_is_drained_so_the_connection_stays_usable() -> None:
    with SiteServer(tree_site(3)) as web:
        conn = http.client.HTTPConnection(web.url.removeprefix("http://"), timeout=10)
        conn.request("POST", "/item/1", body=b"q=" + b"z" * 50_000)
        assert conn.getresponse().read().startswith(b"<!DOCTYPE html>")
        conn.request("HEAD", "/item/2")
        resp = conn.getresponse()
        assert resp.status == 200 and resp.read() == b"" and int(resp.getheader("Content-Length")) > 0
        conn.request("GET", "/item/2")
        assert b"Item 2" in conn.getresponse().read()
        conn.close()
        assert web.requests == ["/item/1", "/item/2", "/item/2"]


def test_an_off_site_host_is_a_second_server_and_gets_nothing_from_reachable() -> None:
    with SiteServer(Site("Hotels", {"/hotels": Page("/hotels", "Hotels")})) as other, \
            SiteServer(conference_site(offsite=other.url)) as web:
        assert other.url != web.url
        assert f"{other.url}/hotels" in hrefs(get(web.url, "/venue")[2].decode())
        assert get(other.url, "/hotels")[0] == 200
        assert all(not p.endswith("/hotels") for p in reachable(web.site, max_depth=10))


# --- the ground truth -----------------------------------------------------------------------------------------

FIVE = Site("Five", {
    "/": Page("/", "Home", links=[("/a", "A"), ("/secret/", "Staff"), ("http://127.0.0.1:9/b", "B elsewhere")],
              buttons=[("c", "Go to C")]),
    "/a": Page("/a", "A", links=[("/b", "B")]),
    "/b": Page("/b", "B", links=[("/c", "C"), ("/", "Home")]),
    "/c": Page("/c", "C", links=[("d.html?x=1#top", "D"), ("mailto:c@example.org", "Mail")]),
    "/secret/": Page("/secret/", "Secret", links=[("/a", "A")]),
}, robots="User-agent: googlebot\nDisallow:\n\nUser-agent: *\nDisallow: /secret/\n")


def test_reachable_gives_the_depths_worked_out_by_hand() -> None:
    # The button makes /c one click away, beating /a -> /b -> /c; the off-site href is no /b at depth 1;
    # /secret/ is disallowed for *; /c's relative link resolves to /d.html?x=1, a 404 that is still requested.
    assert reachable(FIVE, max_depth=9) == {"/": 0, "/a": 1, "/c": 1, "/b": 2, "/d.html?x=1": 2}
    assert reachable(FIVE, max_depth=9, follow_buttons=False) == {"/": 0, "/a": 1, "/b": 2, "/c": 3,
                                                                  "/d.html?x=1": 4}
    assert reachable(FIVE, max_depth=1) == {"/": 0, "/a": 1, "/c": 1}
    assert reachable(FIVE, max_depth=0) == {"/": 0}
    assert reachable(FIVE, max_depth=1, obey_robots=False) == {"/": 0, "/a": 1, "/c": 1, "/secret/": 1}
    assert reachable(FIVE, max_depth=9, disallowed=["/b"]) == {"/": 0, "/a": 1, "/c": 1, "/d.html?x=1": 2}
    assert reachable(FIVE, "/b", max_depth=9) == {"/b": 0, "/c": 1, "/": 1, "/d.html?x=1": 2, "/a": 2}


def test_a_redirect_target_takes_the_depth_of_the_link_and_off_site_or_disallowed_targets_are_not_entered() -> None:
    site = Site("Moves", {
        "/": Page("/", "Home", links=[("/old", "Old"), ("/gone", "Gone"), ("/hidden-move", "Hidden")]),
        "/old": Page("/old", "", redirect="/older"), "/older": Page("/older", "", redirect="new"),
        "/new": Page("/new", "New", links=[("/", "Home")]),
        "/gone": Page("/gone", "", redirect="http://127.0.0.1:9/new"),
        "/hidden-move": Page("/hidden-move", "", redirect="/private/x"),
    }, robots="User-agent: *\nDisallow: /private\n")
    assert reachable(site, max_depth=1) == {"/": 0, "/old": 1, "/older": 1, "/new": 1, "/gone": 1,
                                            "/hidden-move": 1}


def test_links_on_error_and_non_html_pages_are_not_followed() -> None:
    site = Site("Errors", {
        "/": Page("/", "Home", links=[("/broken", "Broken"), ("/file.txt", "File")]),
        "/broken": Page("/broken", "Oops", links=[("/behind-error", "x")], status=503),
        "/file.txt": Page("/file.txt", "", '<a href="/behind-text">x</a>', content_type="text/plain"),
        "/behind-error": Page("/behind-error", "x"), "/behind-text": Page("/behind-text", "x"),
    })
    assert reachable(site, max_depth=5) == {"/": 0, "/broken": 1, "/file.txt": 1}


def test_in_site_resolves_like_a_browser_and_refuses_other_hosts() -> None:
    assert in_site("/a/b", "../c#x") == "/c"
    assert in_site("/a/b", "?p=2") == "/a/b?p=2"
    assert in_site("/", "//elsewhere.example/x") is None
    assert in_site("/", "https://elsewhere.example/") is None
    assert in_site("/", "javascript:void(0)") is None


def test_the_conference_site_has_its_cases_at_their_depths() -> None:
    site = conference_site()
    got = reachable(site, max_depth=4)
    assert {p: got[p] for p in ["/awards", "/awards/best-paper", "/important-dates", "/dates.html", "/registration",
                                "/calls/cfp.pdf", "/program/day-3", "/program/posters"]} == {
        "/awards": 2, "/awards/best-paper": 3, "/important-dates": 1, "/dates.html": 1, "/registration": 2,
        "/calls/cfp.pdf": 2, "/program/day-3": 2, "/program/posters": 2}
    assert [p for p in got if p.startswith("/papers/")] == [f"/papers/p{i}" for i in range(1, 7)]
    assert {got[p] for p in got if p.startswith("/papers/")} == {4}
    assert [p for p in got if p.startswith("/calendar/")] == [f"/calendar/2026/0{m}" for m in range(1, 5)]
    assert not any(p.startswith("/members/") or "hotels" in p for p in got)
    assert len(got) == 32
    no_script = reachable(site, max_depth=10, follow_scripts=False)
    assert not set(no_script) & {"/calls", "/program", "/venue", "/committee", "/registration", "/papers/p1"}
    assert "/registration" not in reachable(site, max_depth=10, follow_buttons=False)
    # every page the ground truth names is one the server answers as it says
    with SiteServer(site) as web:
        for path in ["/awards/best-paper", "/papers/p6", "/registration"]:
            assert get(web.url, path)[0] == 200


def test_the_tree_site_is_balanced_and_deterministic() -> None:
    site = tree_site(2000)
    depths = reachable(site, max_depth=10)
    assert len(site.pages) == len(depths) == 2000
    assert sorted(Counter(depths.values()).items()) == [(0, 1), (1, 10), (2, 100), (3, 1000), (4, 889)]
    assert depths["/item/1999"] == 4 and depths["/item/10"] == 1
    assert tree_site(2000).pages["/item/7"] == site.pages["/item/7"]
    assert tree_site(2000, seed=1).pages["/item/7"] != site.pages["/item/7"]
    assert "<th>Founded</th>" in site.html(site.pages["/item/7"])
