"""The crawl port: what a source needs of a crawler (`Crawl`), and the crawl stats every reader shares.

The core never starts a crawler itself: a composition root (the CLI, a flow, a test) passes one in, as
`spiders.run.crawl`. Every spider writes its `crawl_stats.json` from the same counts (`scrapy_counts`), keyed by
reason, and every reader (a run's error, the CLI's line, a flow's table) reads it through `CrawlStats`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

import httpx
from pydantic import BaseModel, ConfigDict

from timelyqa.errors import ConfigError

STATS = "crawl_stats.json"
"""The file a crawl writes its stats to, in its output folder."""
ROBOTS_CLOSED = ("server_error", "unreachable", "too_large", "undecodable")
"""How a host's robots.txt ended when the crawl closed that host (timelyqa/robotsfile.py's cases)."""


class Crawl(Protocol):
    """Run one crawl of `spider` with `args` into `out` to its end, in a process of its own; its stats, or
    SourceContractError when it fetched nothing. `fresh` starts afresh where a crawl was killed; `settings` change
    its pace. `spiders.run.crawl` is the crawler's."""

    def __call__(self, spider: str, args: dict[str, Any], out: Path, *, fresh: bool = False,
                 settings: dict[str, Any] | None = None) -> dict[str, Any]: ...


class CrawlStats(BaseModel):
    """A crawl's stats as its spider wrote them: what it fetched, and by reason what it did not. Counts a spider
    does not keep read as none; the spider's own counts (articles, keys, store, ...) are kept as extras."""

    model_config = ConfigDict(extra="allow", frozen=True)

    pages: int = 0
    requests: int = 0
    bytes: int = 0
    rendered: int = 0
    errors: dict[str, int] = {}
    """Pages asked for that gave no page, by reason."""
    refused: dict[str, int] = {}
    """Requests the allowed-hosts guard refused before a connection, by reason."""
    bounded: dict[str, int] = {}
    """URLs the trap bounds kept out, by reason."""
    skipped: dict[str, int] = {}
    """Pages never requested, by reason."""
    robots: dict[str, int] = {}
    """How each host's robots.txt ended: hosts per case."""
    pages_per_depth: dict[str, int] = {}

    @classmethod
    def of(cls, stats: Mapping[str, Any] | CrawlStats) -> CrawlStats:
        return stats if isinstance(stats, CrawlStats) else cls.model_validate(dict(stats))

    @classmethod
    def read(cls, folder: Path) -> CrawlStats:
        return cls.model_validate_json((Path(folder) / STATS).read_text(encoding="utf-8"))

    def summary(self) -> str:
        """One line: what it fetched, its errors, and what it never requested and why."""
        errors = ", ".join(f"{k} {v}" for k, v in self.errors.items()) or "no errors"
        refused = [f"{k} {v}" for k, v in self.skipped.items()]
        refused += [f"robots.txt {k} on {v} host{'s' * (v > 1)}" for k, v in self.robots.items()
                    if k in ROBOTS_CLOSED]
        return f"{self.pages} pages, {self.bytes} bytes, {errors}" + \
            (f"; not requested: {', '.join(refused)}" if refused else "")

    def rows(self) -> list[dict[str, Any]]:
        """As table rows (what, count): what it fetched, pages per depth, and why not the rest."""
        rows = [{"what": what, "count": int(getattr(self, what))} for what in ("pages", "bytes", "rendered")]
        rows += [{"what": f"depth {d}", "count": n} for d, n in self.pages_per_depth.items()]
        for kind, label in (("errors", "error"), ("refused", "refused"), ("bounded", "bounded")):
            rows += [{"what": f"{label}: {r}", "count": n} for r, n in getattr(self, kind).items()]
        return rows


def summary(stats: Mapping[str, Any] | CrawlStats) -> str:
    """A crawl's stats in one line (CrawlStats.summary)."""
    return CrawlStats.of(stats).summary()


def by_prefix(stats: Mapping[str, Any], prefix: str) -> dict[str, int]:
    """Scrapy's counters under `prefix` (`guard/`, `traps/`, ...), keyed by the reason after it, sorted."""
    return {k.removeprefix(prefix): int(v) for k, v in sorted(stats.items()) if k.startswith(prefix)}


def counted(reasons: Iterable[str]) -> dict[str, int]:
    """How many times each reason occurs, sorted by reason."""
    return dict(sorted(Counter(reasons).items()))


def scrapy_counts(stats: Mapping[str, Any]) -> dict[str, Any]:
    """What every spider's stats take from Scrapy's: requests, bytes, and the guard's refusals by reason."""
    return {"requests": int(stats.get("downloader/request_count", 0)),
            "bytes": int(stats.get("downloader/response_bytes", 0)),
            "refused": by_prefix(stats, "guard/")}


def check_roots(roots: list[str], *, user_agent: str, timeout: float = 10.0) -> None:
    """Stop before any work when a root does not answer (any HTTP answer will do: robots.txt decides the rest)."""
    if not roots:
        raise ConfigError("give at least one --root URL")
    for root in roots:
        if not root.startswith(("http://", "https://")):
            raise ConfigError(f"--root {root!r}: not an http(s) URL")
        try:
            httpx.head(root, headers={"User-Agent": user_agent}, timeout=timeout, follow_redirects=False)
        except httpx.HTTPError as exc:
            raise ConfigError(f"--root {root}: does not answer ({type(exc).__name__}: {exc})") from None
