"""When a page goes through Chromium, and how: the browser found, the `auto` rule written down, Chromium's network
confined to the policy proxy (spiders/proxy.py, started by spiders.browser.BrowserPolicy).

The `auto` rule. A page is rendered when its HTML as served has a script and one of these holds, checked in
this order; the first that holds is the page's `render_reason`:

1. `script_builds_dom`: an inline script creates or writes elements (createElement, appendChild, innerHTML,
   insertAdjacentHTML, document.write) or loads data for the page (fetch, XMLHttpRequest);
2. `empty_mount_point`: an element a script names (getElementById, querySelector('#...')), or one whose id
   is a usual mount point (app, root, menu, nav, content, main), is empty as served;
3. `app_shell`: the page shows less than 200 characters of text as served.

Otherwise the page is not rendered, and says why: `no_script`, or `scripts_change_nothing_seen`. With
`--render always` every page is rendered (`render_always`); with `never` none is (`render_never`).
"""

from __future__ import annotations

import glob
import os
import re
from pathlib import Path
from typing import Any

from timelyqa.page import selector


CHROMIUM_ENV = "TIMELYQA_CHROMIUM"
SYSTEM_CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
                 "--force-webrtc-ip-handling-policy=disable_non_proxied_udp"]
"""Flags that let Chromium run as root in a container and keep it from calling home (the network is closed); no
QUIC and no WebRTC over UDP, which would not go through the proxy."""
NO_PROXY_YET = "http://127.0.0.1:1"
"""Where Chromium's proxy is until the crawl's own policy proxy starts: nothing listens there, so a browser launched
without the proxy reaches nothing (it fails closed)."""
SETTLE_MS = 5_000
"""How long a page's scripts may keep the network busy before the page is taken as it stands."""

_BUILDS = re.compile(r"createElement|appendChild|innerHTML|insertAdjacentHTML|document\.write|fetch\(|"
                     r"XMLHttpRequest")
_NAMED = re.compile(r"""getElementById\(\s*['"]([\w-]+)['"]|querySelector(?:All)?\(\s*['"]#([\w-]+)""")
_MOUNTS = frozenset({"app", "root", "menu", "nav", "content", "main"})
_SHELL_CHARS = 200


def browser_path(configured: str | None = None, environ: dict[str, str] | None = None) -> str | None:
    """Chromium in this order: a configured path (or TIMELYQA_CHROMIUM), Playwright's own, the system's."""
    env = os.environ if environ is None else environ
    wanted = configured or env.get(CHROMIUM_ENV)
    if wanted:
        return wanted if Path(wanted).is_file() else None
    cache = env.get("PLAYWRIGHT_BROWSERS_PATH") or str(Path.home() / ".cache" / "ms-playwright")
    own = sorted(glob.glob(f"{cache}/chromium-*/chrome-linux*/chrome"))
    if own:
        return own[-1]
    return SYSTEM_CHROMIUM if Path(SYSTEM_CHROMIUM).is_file() else None


def render_reason(html: str) -> str | None:
    """Why the page as served needs rendering (the rule above), or None when it does not."""
    page = selector(html)  # timelyqa.page: an XHTML page's scripts are seen too
    scripts = page.xpath("//script")
    if not scripts:
        return None
    inline = " ".join(s.xpath("string(.)").get() or "" for s in scripts)
    if _BUILDS.search(inline):
        return "script_builds_dom"
    named = {a or b for a, b in _NAMED.findall(inline)} | _MOUNTS
    for node in page.xpath("//*[@id]"):
        if node.attrib["id"] in named and not node.xpath("./*") and not (node.xpath("string(.)").get() or "").strip():
            return "empty_mount_point"
    text = " ".join(page.xpath("//body//text()[not(ancestor::script) and not(ancestor::style)]").getall())
    return "app_shell" if len(" ".join(text.split())) < _SHELL_CHARS else None


def quiet_reason(html: str) -> str:
    """Why a page that `render_reason` passes over is taken as served."""
    return "no_script" if not selector(html).xpath("//script") else "scripts_change_nothing_seen"


def playwright_settings(path: str) -> dict[str, Any]:
    """scrapy-playwright for the requests that ask for it (`meta["playwright"]`); the rest keep Scrapy's handler."""
    handler = "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler"
    return {
        "DOWNLOAD_HANDLERS": {"http": handler, "https": handler},
        "PLAYWRIGHT_BROWSER_TYPE": "chromium",
        "PLAYWRIGHT_LAUNCH_OPTIONS": {"executable_path": path, "headless": True,
                                      "args": [*CHROMIUM_ARGS, *proxy_args(NO_PROXY_YET)]},
        "PLAYWRIGHT_CONTEXTS": {"default": {"service_workers": "block"}},  # a page's worker would outlive it
        "PLAYWRIGHT_ABORT_REQUEST": "spiders.render.abort_request",
        "PLAYWRIGHT_MAX_PAGES_PER_CONTEXT": 4,
    }


def proxy_args(url: str) -> list[str]:
    """Chromium's flags that send every request, of every scheme and WebSockets too, through the proxy at `url`.
    Chromium bypasses a proxy for loopback addresses unless told `<-loopback>`; no other bypass."""
    return [f"--proxy-server={url}", "--proxy-bypass-list=<-loopback>"]


FROM_FETCHED = {"playwright_page_init_callback": "spiders.render.serve_fetched"}
"""A render request's meta that hands Chromium the page Scrapy fetched (`static_html`, `static_status`) instead of
asking the site for it again: each page is fetched once, rendered or not."""


async def serve_fetched(page: Any, request: Any) -> None:
    """Before Chromium navigates: its first navigation of the main frame is answered with the page as served, which
    the request carries; everything else (scripts, styles, data, later navigations) goes out as usual, through the
    policy proxy. Playwright runs the route added last first, so this one comes before scrapy-playwright's own."""
    body = request.meta["static_html"].encode("utf-8")
    status = int(request.meta["static_status"])
    answered = False

    async def first_navigation(route: Any) -> None:
        nonlocal answered
        asked = route.request
        if not answered and asked.is_navigation_request() and asked.frame.parent_frame is None:
            answered = True
            await route.fulfill(status=status, body=body, headers={"Content-Type": "text/html; charset=utf-8"})
        else:
            await route.fallback()

    await page.route("**", first_navigation)


ALLOWED: set[str] = set()
"""No longer read: Chromium's requests are guarded by the policy proxy, which sees redirects, WebSockets, popups
and workers that a route of the page never sees. Kept until no spider writes it."""
_HEAVY = frozenset({"image", "media", "font"})


def abort_request(request: Any) -> bool:
    """No images, media or fonts: a page's links and text do not need them. (Not the guard: that is the proxy.)"""
    return request.resource_type in _HEAVY
