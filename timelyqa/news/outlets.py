"""The allow-list of news outlets (data: outlets.yaml beside this module, or a file of the operator's), which links
it lets the crawl fetch, and the crawl's arguments, checked before any work."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from importlib.resources import files
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import polars as pl
import yaml

from timelyqa import urls
from timelyqa.errors import ConfigError
from timelyqa.news.articles import ArticleReject
from timelyqa.news.frames import DROP_SCHEMA, LINK_SCHEMA

RENDERS = ("never", "always", "auto")
ARCHIVES = {"none": "", "wayback": "https://web.archive.org", "archive_today": "https://archive.ph"}
"""Where a page may be fetched from, and each archive's public base URL (a test points it at a local fake)."""
_HOST = re.compile(r"^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*(?::[1-9][0-9]{0,4})?$")
_KEYS = frozenset({"name", "domains", "paths", "render"})


DEFAULT_PORTS = (80, 443)
"""The ports a domain written without one is served on: http's and https's."""


def host_port(url: str) -> tuple[str, int] | None:
    """The lower-case host (no trailing dot) and port (the scheme's default when none is written) of an http(s)
    URL, or None for any other."""
    return urls.host_port(url)  # the one check: a URL with no canonical form is on no outlet


@dataclass(frozen=True, slots=True)
class Outlet:
    """One outlet: its name, the hosts it publishes on (each with its subdomains; `host:port` for a port of its
    own, else http's and https's default ports only), the path prefixes its articles sit under (none: any path) and
    how its pages are fetched."""

    name: str
    domains: tuple[str, ...]
    render: str = "never"
    paths: tuple[str, ...] = ()

    def domain_of(self, host: str, port: int) -> str | None:
        """The longest of the outlet's domains that `host` is, or is a subdomain of, on a port the domain allows."""
        hits = []
        for domain in self.domains:
            name, _, written = domain.partition(":")
            ports = (int(written),) if written else DEFAULT_PORTS
            if (host == name or host.endswith("." + name)) and port in ports:
                hits.append(domain)
        return max(hits, key=len) if hits else None

    def covers(self, path: str) -> bool:
        return not self.paths or any(path.startswith(p) for p in self.paths)


@dataclass(frozen=True, slots=True)
class Outlets:
    """The allow-list, as loaded from `source`."""

    outlets: tuple[Outlet, ...]
    source: str

    @classmethod
    def load(cls, path: str | Path) -> Outlets:
        """The outlets in a YAML file `outlets: [{name, domains, paths?, render}]`; ConfigError, naming the file and
        the entry, for anything else."""
        path = Path(path)
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            detail = " ".join(str(exc).split())
            raise ConfigError(f"{path}: not a readable outlets file ({type(exc).__name__}: {detail})") from None
        entries = data.get("outlets") if isinstance(data, dict) else None
        if not isinstance(entries, list) or not entries:
            raise ConfigError(f"{path}: give a non-empty list `outlets: [{{name, domains, render}}]`")
        outlets = tuple(_outlet(entry, f"{path}: outlet {i + 1}") for i, entry in enumerate(entries))
        seen: dict[tuple[str, tuple[str, ...]], str] = {}
        for outlet in outlets:
            for domain in outlet.domains:
                if (twice := seen.setdefault((domain, outlet.paths), outlet.name)) != outlet.name:
                    raise ConfigError(f"{path}: outlet {outlet.name!r}: domain {domain} is {twice!r}'s already")
        return cls(outlets, str(path))

    @classmethod
    def default(cls) -> Outlets:
        """The shipped allow-list: LiveNewsBench's Figure 4 outlets."""
        return cls.load(Path(str(files("timelyqa.news").joinpath("outlets.yaml"))))

    def match(self, url: str) -> Outlet | None:
        """The outlet `url` is on (its host and port; the most specific domain wins, then a path prefix if the outlet
        has any), or None when it is on none, or is no http(s) URL."""
        if (where := host_port(url)) is None:
            return None
        parts = urlsplit(url.strip())
        best: tuple[int, Outlet] | None = None
        for outlet in self.outlets:
            domain = outlet.domain_of(*where)
            if domain is not None and outlet.covers(parts.path or "/") and (best is None or len(domain) > best[0]):
                best = (len(domain), outlet)
        return best[1] if best else None

    def knows(self, host: str, port: int) -> bool:
        """True when `host`:`port` is on some outlet's domains, whatever the path (its robots.txt may be asked)."""
        return any(o.domain_of(host.lower().rstrip("."), port) is not None for o in self.outlets)


def _outlet(entry: Any, where: str) -> Outlet:
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: not a mapping with name, domains and render")
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"{where}: give the outlet a `name`")
    where = f"{where} ({name})"
    if unknown := sorted(set(entry) - _KEYS):
        raise ConfigError(f"{where}: unknown key {', '.join(map(str, unknown))} (the keys are name, domains, paths, "
                          "render)")
    render = entry.get("render", "never")
    if render not in RENDERS:
        raise ConfigError(f"{where}: render {render!r} is not one of {', '.join(RENDERS)}")
    domains, paths = entry.get("domains"), entry.get("paths") or []
    if not isinstance(domains, list) or not domains:
        raise ConfigError(f"{where}: give a non-empty list of `domains`")
    for domain in domains:
        if not isinstance(domain, str) or "://" in domain:
            raise ConfigError(f"{where}: domain {domain!r}: write the host name only, without a scheme")
        if not _HOST.match(domain):
            raise ConfigError(f"{where}: domain {domain!r} is no host name (lower case, a port after a colon if "
                              "not 80 or 443, no path: put a path in `paths`)")
    if not isinstance(paths, list) or not all(isinstance(p, str) and p.startswith("/") for p in paths):
        raise ConfigError(f"{where}: `paths` must be a list of path prefixes starting with /")
    return Outlet(name.strip(), tuple(domains), render, tuple(paths))


def plan_links(events: pl.DataFrame, outlets: Outlets) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Every event's cited URLs as links to fetch (LINK_SCHEMA) on allowed outlets, and the rest dropped
    (DROP_SCHEMA: `not_http`, `outlet_not_allowed`, the outlet as the portal names it).

    A URL cited by two events is one link row per event: the crawl fetches each URL once and writes what it found
    for every event that cites it (the date window is each event's own). A URL an event cites twice is one row."""
    links: list[dict[str, Any]] = []
    dropped: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for event in events.iter_rows(named=True):
        cited = event["outlets"] or []
        for i, raw in enumerate(event["urls"] or []):
            url = raw.strip()
            if (url, event["event_id"]) in seen:
                continue
            seen.add((url, event["event_id"]))
            name = cited[i] if i < len(cited) else None
            why = urls.why_not(url)  # the one check: what cannot be canonicalised is never requested
            is_http = why is None
            outlet = outlets.match(url) if is_http else None
            if outlet is not None:
                links.append({"url": url, "event_id": event["event_id"], "event_date": event["date"],
                              "outlet": outlet.name, "render": outlet.render})
                continue
            reason = ArticleReject.OUTLET_NOT_ALLOWED if is_http else ArticleReject.NOT_HTTP
            listed = Path(outlets.source).name
            parts = urlsplit(url)
            detail = (f"{parts.netloc}{parts.path or '/'} is on no outlet of the allow-list ({listed})" if is_http
                      else str(why))
            dropped.append({"url": url, "event_id": event["event_id"], "outlet": name, "reason": str(reason),
                            "detail": detail})
    return (pl.DataFrame(links, schema=LINK_SCHEMA, orient="row"),
            pl.DataFrame(dropped, schema=DROP_SCHEMA, orient="row"))


def crawl_args(links: Path, outlets: Path, *, archive: str = "none", archive_base: str | None = None,
               page_timeout: float = 30.0) -> dict[str, str]:
    """The news crawl's arguments for `spiders.run.crawl("news", ...)`, each checked here, before any work:
    ConfigError for an unreadable links file or outlets file, an unknown archive or a base that is no http(s) URL.
    `render` asks for Chromium when some link's outlet renders (`always` or `auto`)."""
    if archive not in ARCHIVES:
        raise ConfigError(f"--archive {archive!r}: one of {', '.join(ARCHIVES)}")
    base = (archive_base or ARCHIVES[archive]).rstrip("/")
    if archive != "none" and not base.startswith(("http://", "https://")):
        raise ConfigError(f"--archive-base {base!r}: not an http(s) URL")
    Outlets.load(outlets)
    try:
        frame = pl.read_parquet(links)
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise ConfigError(f"{links}: not a links file ({type(exc).__name__})") from None
    if missing := sorted(set(LINK_SCHEMA) - set(frame.columns)):
        raise ConfigError(f"{links}: not a links file (no column {', '.join(missing)})")
    needs_browser = frame.height and frame["render"].is_in(["always", "auto"]).any()
    return {"links": str(links), "outlets": str(outlets), "archive": archive, "archive_base": base,
            "render": "auto" if needs_browser else "never", "page_timeout": str(page_timeout)}


def archived(url: str, day: date, archive: str, base: str) -> str:
    """Where the archive keeps its copy of `url`: Wayback's nearest capture to the event's day in the bytes first
    served (`id_`), archive.today's newest."""
    if archive == "wayback":
        return f"{base}/web/{day:%Y%m%d}id_/{url}"
    if archive == "archive_today":
        return f"{base}/newest/{url}"
    return url
