"""Official-style sites for tests, and only for tests (held out: no recipe in the repository was written against
them), whose values are pure functions of the date. Each site is served on a loopback address of its own
(127.0.0.41...; on Linux every 127.x.y.z reaches this machine) at an ephemeral port, and logs every path it is asked.

    with OfficialWorld() as world:
        world.vars                      # {"gauges": "http://127.0.0.41:PORT", "stats": ..., "harbour": ...}
        url = f"{world.gauges.url}/gauges/caton/readings?date=2026-11-16"
        truth("gauges", "caton", date(2026, 11, 16))   # [1.23, 2.05, 0.87, 3.1]: the day's readings in time order
        world.layout = "b"              # switches: every named site at once, or one site (world.stats.layout = "b")
        world.stats.asked()             # ["/robots.txt", "/releases/2026-11-16.html", ...]

The sites (layout "a"; layout "b" moves the same values to other elements and class names):

- `gauges`, a river-gauge agency. `/gauges/<gauge>/readings?date=YYYY-MM-DD`: four readings a day (READING_TIMES)
  for a gauge in GAUGES. a: `table.readings td.level` ("1.23"), times in `td.time`; b: `div.obs span.obs-value`
  ("1.23 m"). The day is in `p.date time[datetime]`. An unknown gauge: 404; a date that is not ISO: 400.
- `stats`, a statistics office. `/releases/YYYY-MM-DD.html` on working days (a Saturday's or Sunday's: 404), also
  at `/bulletin?day=DD/MM/YYYY`. a: `dd.cpi` ("123.4"), `dd.unemployment` ("4.2%"), `dd.next-release` and
  `p.published` ("Published 16 November 2026"); b: `td[data-series=cpi]`, `td[data-series=unemployment]`,
  `td[data-series=next-release]`, `span.release-date`. `/latest` shows the same page for the REAL current date
  (datetime.now(UTC)), whatever the weekday: a page that shows only the present. `/embargoed/<anything>` is a page
  robots.txt forbids; `/archive/YYYY-MM-DD.html` answers 301 to the same release on the `mirror` host.
- `harbour`, a port authority. `/tides/<port>?date=YYYY-MM-DD` for a port in PORTS: a page whose script fetches
  `/api/tides/<port>/<date>.json` and builds the values into `#app` (only Chromium sees them): a: `span.height`
  ("5.12") and `span.time` ("11:42"); b: `b.hw-height`, `b.hw-time`. The JSON itself is not a page (not_html).
- `mirror`, a copy of `stats` on another host, which no recipe names: a redirect there must never be followed.

Switches (properties of OfficialWorld set every named site; the same attributes on a Site set one):
`layout` ("a" | "b"); `down` (False; True or "503": 503 for every path but /robots.txt; "refused": nothing listens
on the port until `down` is set back); `garbage` (True: a number says "n/a": the 12:00 gauge reading, the CPI, the
harbour's height); `robots_disallow` (paths robots.txt forbids, default ("/embargoed/",); ("/",) closes a site);
`moved` (True: every path but /robots.txt answers 301 to the same path on the mirror host).

The truth, computed without any page: `truth(site, name, day)`, or `readings`, `level`, `indicator`,
`next_release`, `is_release_day`, `high_water`, `high_water_time`; `real_today()` is the date /latest shows.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

GAUGES = ("caton", "halton", "kirkby")
READING_TIMES = ("00:00", "06:00", "12:00", "18:00")
INDICATORS = ("cpi", "unemployment")
PORTS = ("morecambe", "heysham")
ADDRESSES = {"gauges": "127.0.0.41", "stats": "127.0.0.42", "harbour": "127.0.0.43", "mirror": "127.0.0.44"}
DEAD_ADDRESS = "127.0.0.45"
HTML = "text/html; charset=utf-8"
Answer = tuple[int, dict[str, str], bytes]


# ---- the truth: pure functions of the date -------------------------------------------------------------------

def _unit(*parts: object) -> float:
    """A stable number in [0, 1) for `parts` (blake2b, never Python's hash: the same on every run)."""
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def level(gauge: str, day: date, time: str) -> float:
    """The river level (m) at `gauge` at `time` on `day`: 0.40 to 3.60."""
    return round(0.4 + 3.2 * _unit("level", gauge, day.isoformat(), time), 2)


def readings(gauge: str, day: date) -> list[float]:
    """The day's four readings, in READING_TIMES order."""
    return [level(gauge, day, t) for t in READING_TIMES]


def is_release_day(day: date) -> bool:
    """The statistics office publishes on working days (Monday to Friday) only."""
    return day.weekday() < 5


def indicator(name: str, day: date) -> float:
    """`cpi` (one decimal, slowly rising) or `unemployment` (a percentage, one decimal) as released on `day`."""
    if name == "cpi":
        return round(100 + 0.01 * (day - date(2020, 1, 1)).days + 2 * _unit("cpi", day.isoformat()), 1)
    if name == "unemployment":
        return round(3 + 3 * _unit("unemployment", day.isoformat()), 1)
    raise ValueError(f"no indicator {name!r}: one of {', '.join(INDICATORS)}")


def next_release(day: date) -> date:
    """The working day after `day`: the release the bulletin of `day` announces."""
    later = day + timedelta(days=1)
    while not is_release_day(later):
        later += timedelta(days=1)
    return later


def high_water(port: str, day: date) -> float:
    """The height (m) of the day's high water at `port`: 4.00 to 9.00."""
    return round(4 + 5 * _unit("high_water", port, day.isoformat()), 2)


def high_water_time(port: str, day: date) -> str:
    minutes = int(24 * 60 * _unit("high_water_time", port, day.isoformat()))
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def truth(site: str, name: str, day: date) -> float | date | list[float] | None:
    """What the site's page for `day` says, computed without it: ("gauges", gauge) -> the day's readings;
    ("stats", "cpi" | "unemployment") -> the number, ("stats", "next_release" | "published") -> the date, None on a
    day without a release; ("harbour", port) -> the high water's height."""
    if site == "gauges" and name in GAUGES:
        return readings(name, day)
    if site == "stats" and name in (*INDICATORS, "next_release", "published"):
        if not is_release_day(day):
            return None
        return indicator(name, day) if name in INDICATORS else next_release(day) if name == "next_release" else day
    if site == "harbour" and name in PORTS:
        return high_water(name, day)
    raise ValueError(f"no truth for site {site!r}, name {name!r}")


def real_today() -> date:
    """The date `/latest` shows: today in UTC on this machine's clock (as a live site would)."""
    return datetime.now(UTC).date()


def written(day: date) -> str:
    """A date as the statistics office writes it: "16 November 2026"."""
    return f"{day.day} {day:%B %Y}"


# ---- the pages ---------------------------------------------------------------------------------------------------

def _page(title: str, main: str, script: str = "") -> bytes:
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title></head>\n'
            f'<body><header><nav><a href="/">Home</a> | <a href="/about">About us</a></nav></header>\n'
            f"<main>{main}</main>\n<footer><p>Open data under the Open Government Licence.</p></footer>"
            f"{script}</body></html>\n").encode()


def _missing(what: str, status: int = 404) -> Answer:
    return status, {"Content-Type": HTML}, _page("Not found", f"<h1>Not found</h1><p>{what}</p>")


def _day(text: str | None) -> date | None:
    try:
        return date.fromisoformat(text or "") if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text or "") else None
    except ValueError:
        return None


def gauge_page(site: Site, gauge: str, day: date) -> bytes:
    values = [("n/a" if site.garbage and t == "12:00" else f"{v:.2f}") for t, v in zip(READING_TIMES,
                                                                                      readings(gauge, day))]
    if site.layout == "a":
        rows = "".join(f'<tr><td class="time">{t}</td><td class="level">{v}</td></tr>'
                       for t, v in zip(READING_TIMES, values))
        body = (f'<table class="readings"><thead><tr><th>Time</th><th>Level (m)</th></tr></thead>'
                f"<tbody>{rows}</tbody></table>")
    else:
        body = '<div class="obs-grid">' + "".join(
            f'<div class="obs"><span class="obs-time">{t}</span><span class="obs-value">{v} m</span></div>'
            for t, v in zip(READING_TIMES, values)) + "</div>"
    name = gauge.capitalize()
    return _page(f"{name} gauge: readings for {written(day)}",
                 f'<h1>{name} river gauge</h1><p class="date">Readings for <time datetime="{day.isoformat()}">'
                 f"{written(day)}</time></p>{body}")


def release_page(site: Site, day: date, heading: str = "Daily statistics bulletin") -> bytes:
    cpi = "n/a" if site.garbage else f"{indicator('cpi', day):.1f}"
    jobless, after = f"{indicator('unemployment', day):.1f}%", written(next_release(day))
    if site.layout == "a":
        body = (f'<article class="release"><h1>{heading}</h1><p class="published">Published {written(day)}</p>'
                f'<dl class="figures"><dt>Consumer price index</dt><dd class="cpi">{cpi}</dd>'
                f'<dt>Unemployment rate</dt><dd class="unemployment">{jobless}</dd>'
                f'<dt>Next release</dt><dd class="next-release">{after}</dd></dl></article>')
    else:
        body = (f'<section class="bulletin"><h2 class="bulletin-title">{heading}</h2>'
                f'<div class="meta">Released on <span class="release-date">{written(day)}</span></div>'
                f'<table class="indicators"><tr><th>CPI</th><td data-series="cpi">{cpi}</td></tr>'
                f'<tr><th>Unemployment</th><td data-series="unemployment">{jobless}</td></tr>'
                f'<tr><th>Next bulletin</th><td data-series="next-release">{after}</td></tr></table></section>')
    return _page(f"{heading}: {written(day)}", body)


def tides_page(site: Site, port: str, day: date) -> bytes:
    tag, h_class, t_class = ("span", "height", "time") if site.layout == "a" else ("b", "hw-height", "hw-time")
    script = (f'<script>\nfetch("/api/tides/{port}/{day.isoformat()}.json").then(r => r.json()).then(d => {{\n'
              f'  const p = document.createElement("p"); p.className = "high-water";\n'
              f'  p.innerHTML = "High water: <{tag} class=\\"{h_class}\\">" + d.high_water + "</{tag}> m at '
              f'<{tag} class=\\"{t_class}\\">" + d.time + "</{tag}>";\n'
              f'  document.getElementById("app").appendChild(p);\n}});\n</script>')
    return _page(f"Tides at {port.capitalize()}", f"<h1>Tide times: {port.capitalize()}, {written(day)}</h1>"
                 f'<div id="app"></div>', script)


def tides_json(site: Site, port: str, day: date) -> bytes:
    height: float | str = "n/a" if site.garbage else high_water(port, day)
    return json.dumps({"port": port, "date": day.isoformat(), "high_water": height,
                       "time": high_water_time(port, day)}).encode()


def gauges_routes(site: Site, path: str) -> Answer:
    parts = urlsplit(path)
    if m := re.fullmatch(r"/gauges/([a-z]+)/readings", parts.path):
        if m[1] not in GAUGES:
            return _missing(f"No gauge called {m[1]}.")
        if (day := _day(parse_qs(parts.query).get("date", [None])[0])) is None:
            return _missing("Give the date as ?date=YYYY-MM-DD.", 400)
        return 200, {"Content-Type": HTML}, gauge_page(site, m[1], day)
    return _missing(parts.path)


def stats_routes(site: Site, path: str) -> Answer:
    parts = urlsplit(path)
    day: date | None = None
    if parts.path == "/latest":
        return 200, {"Content-Type": HTML}, release_page(site, real_today(), "Latest figures")
    if m := re.fullmatch(r"/(releases|embargoed|archive)/(\d{4}-\d{2}-\d{2})\.html", parts.path):
        day = _day(m[2])
        if m[1] == "archive" and site.mirror is not None and day is not None:
            return 301, {"Location": f"{site.mirror.url}/releases/{m[2]}.html", "Content-Type": HTML}, b"Moved"
    elif parts.path == "/bulletin":
        try:
            day = datetime.strptime(parse_qs(parts.query).get("day", [""])[0], "%d/%m/%Y").date()
        except ValueError:
            return _missing("Give the day as ?day=DD/MM/YYYY.", 400)
    if day is None:
        return _missing(parts.path)
    if not is_release_day(day):
        return _missing(f"No bulletin is published on {written(day)}, a {day:%A}.")
    return 200, {"Content-Type": HTML}, release_page(site, day)


def harbour_routes(site: Site, path: str) -> Answer:
    parts = urlsplit(path)
    if (m := re.fullmatch(r"/tides/([a-z]+)", parts.path)) and m[1] in PORTS:
        if (day := _day(parse_qs(parts.query).get("date", [None])[0])) is None:
            return _missing("Give the date as ?date=YYYY-MM-DD.", 400)
        return 200, {"Content-Type": HTML}, tides_page(site, m[1], day)
    if (m := re.fullmatch(r"/api/tides/([a-z]+)/(\d{4}-\d{2}-\d{2})\.json", parts.path)) and m[1] in PORTS:
        if (day := _day(m[2])) is not None:
            return 200, {"Content-Type": "application/json"}, tides_json(site, m[1], day)
    return _missing(parts.path)


# ---- the servers -------------------------------------------------------------------------------------------------

def free_port(address: str) -> int:
    """A port free on `address` now (and, closed again, a port where nothing answers: a refused connection)."""
    with socket.socket() as probe:
        probe.bind((address, 0))
        return int(probe.getsockname()[1])


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True  # `down = "refused"` then back: the same port again at once

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that goes away mid-request (Chromium cancelling, a crawl killed) is no error of the server's."""


class Site:
    """One site on `address`, at an ephemeral port, answering through `routes(site, path)`; its switches (see the
    module's docstring) and its request log: `asked()` lists every path asked (with its query), in order."""

    def __init__(self, name: str, address: str, routes: Callable[[Site, str], Answer], *,
                 mirror: Site | None = None) -> None:
        self.name, self.address, self.routes, self.mirror = name, address, routes, mirror
        self.port = free_port(address)
        self.layout = "a"
        self.garbage = False
        self.moved = False
        self.robots_disallow: tuple[str, ...] = ("/embargoed/",)
        self._down: bool | str = False
        self._requests: list[str] = []
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{self.address}:{self.port}"

    @property
    def host(self) -> str:
        """host:port, as the crawl's guard names a site."""
        return f"{self.address}:{self.port}"

    @property
    def down(self) -> bool | str:
        return self._down

    @down.setter
    def down(self, value: bool | str) -> None:
        if value not in (False, True, "503", "refused"):
            raise ValueError(f"down: False, True, '503' or 'refused', not {value!r}")
        if value == "refused" and self._server is not None:
            self.stop()
        elif value != "refused" and self._down == "refused":
            self.start()
        self._down = value

    def start(self) -> None:
        self._server = _Server((self.address, self.port), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def reset(self) -> None:
        """Every switch back to its default (serving again if refused), and the request log emptied."""
        self.down = False
        self.layout, self.garbage, self.moved, self.robots_disallow = "a", False, False, ("/embargoed/",)
        with self._lock:
            self._requests.clear()

    def asked(self) -> list[str]:
        with self._lock:
            return list(self._requests)

    def answer(self, path: str) -> Answer:
        with self._lock:
            self._requests.append(path)
        if urlsplit(path).path == "/robots.txt":
            rules = "".join(f"Disallow: {p}\n" for p in self.robots_disallow)
            return 200, {"Content-Type": "text/plain; charset=utf-8"}, f"User-agent: *\n{rules}".encode()
        if self._down:
            return 503, {"Content-Type": HTML, "Retry-After": "3600"}, _page("Down", "<h1>Service unavailable</h1>")
        if self.moved and self.mirror is not None:
            return 301, {"Location": self.mirror.url + path, "Content-Type": HTML}, b"Moved"
        return self.routes(self, path)


def _handler(site: Site) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as real sites; every answer carries Content-Length

        def do_GET(self) -> None:
            status, headers, data = site.answer(self.path)
            try:
                self.send_response(HTTPStatus(status))
                for name, value in {**headers, "Content-Length": str(len(data))}.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
            pass

    return Handler


class OfficialWorld:
    """The four sites, serving for the with-block; switches set on the world apply to the three named sites (the
    mirror keeps its own). `dead_url` is a loopback address and port where nothing listens."""

    def __init__(self) -> None:
        self.mirror = Site("mirror", ADDRESSES["mirror"], stats_routes)
        self.gauges = Site("gauges", ADDRESSES["gauges"], gauges_routes, mirror=self.mirror)
        self.stats = Site("stats", ADDRESSES["stats"], stats_routes, mirror=self.mirror)
        self.harbour = Site("harbour", ADDRESSES["harbour"], harbour_routes, mirror=self.mirror)
        self.dead_url = f"http://{DEAD_ADDRESS}:{free_port(DEAD_ADDRESS)}"

    @property
    def named(self) -> dict[str, Site]:
        """The sites recipes name, by name (not the mirror)."""
        return {"gauges": self.gauges, "stats": self.stats, "harbour": self.harbour}

    @property
    def sites(self) -> dict[str, Site]:
        return {**self.named, "mirror": self.mirror}

    @property
    def vars(self) -> dict[str, str]:
        """Each named site's base URL by name: the values for recipes' `{gauges}`-style vars (or `--var`)."""
        return {name: site.url for name, site in self.named.items()}

    def asked(self) -> dict[str, list[str]]:
        """Every site's request log, by name (the mirror's included)."""
        return {name: site.asked() for name, site in self.sites.items()}

    def reset(self) -> None:
        for site in self.sites.values():
            site.reset()

    def __enter__(self) -> OfficialWorld:
        for site in self.sites.values():
            site.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for site in self.sites.values():
            site.stop()

    def _set(self, switch: str, value: Any) -> None:
        for site in self.named.values():
            setattr(site, switch, value)

    def _get(self, switch: str) -> Any:
        values = {repr(getattr(site, switch)) for site in self.named.values()}
        return getattr(self.gauges, switch) if len(values) == 1 else None

    layout = property(lambda self: self._get("layout"), lambda self, v: self._set("layout", v))
    down = property(lambda self: self._get("down"), lambda self, v: self._set("down", v))
    garbage = property(lambda self: self._get("garbage"), lambda self, v: self._set("garbage", v))
    moved = property(lambda self: self._get("moved"), lambda self, v: self._set("moved", v))
    robots_disallow = property(lambda self: self._get("robots_disallow"),
                               lambda self, v: self._set("robots_disallow", v))
