"""A crawl split into shards, one a site (host:port), each crawled in a process and job folder of its own under
`shards/<host>/`, and merged into the one crawl folder the pipeline reads: pages.parquet, links.parquet and
crawl_stats.json as one process crawling every root would have written them.

Imports no Scrapy: a flow task fans the shards out and merges them. A shard holds only its own site's pages
(each crawl's guard keeps it there), so the shards' pages never overlap. One process crawling every root follows
a link from one root's site into another's; shards do it in rounds: after each, a page of one shard linking into
another's site is an entry of that shard (`entries.json`: the page, its depth through the link, the linking page
and its root), and a shard given new entries is started again over its journal, which fetches only what the
entries newly bring within `max_depth` and gives the pages they reach sooner their shorter depth. Rounds end when
no shard is given a new entry; each page then has its shortest depth over all the roots, as in one process.

A site too large for one process is split the same way by path prefix (`Plan`): a shard is then (site, prefix), the
site's own shard keeps `/` and every path no prefix claims, each crawl's guard holds it to its paths, and a link or
a redirect into a path another shard owns is an entry of that shard.
"""

from __future__ import annotations

import json
import re
import shutil
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import polars as pl

from timelyqa import crawling
from timelyqa.site_tree import extract as extraction
from timelyqa.urls import canonical, is_crawlable, netloc
from timelyqa.errors import ConfigError, SourceContractError
from timelyqa.files import write_parquet, write_text
from spiders import settings as defaults
from spiders.run import crawl

STATS = crawling.STATS
SHARDS = "shards"
ENTRIES = "entries.json"
FETCHED = "fetched.parquet"  # the pages a shard's crawl fetched, before the extraction stage reads their content
Entry = tuple[str, int, str, str]
"""A page of a shard's site that another shard's page links to: url, depth through that link, that page, its root."""
CROSSING = ("redirect_path_not_allowed", "redirect_off_site")
"""A page's reason when it redirected out of its shard: its target is an entry of the shard owning it, and in the
merge the page is the redirect edge one process writes."""


def shard_roots(roots: Iterable[str]) -> dict[str, list[str]]:
    """The roots by the site they are on (host:port), in the order the sites are first named; a root on the same
    site as another goes to that site's shard, since one crawl must give both their shortest depths."""
    by_site: dict[str, list[str]] = {}
    for root in roots:
        if not (site := netloc(root)):
            raise ConfigError(f"--root {root!r}: not an http(s) URL")
        by_site.setdefault(site, []).append(root)
    return by_site


@dataclass(frozen=True)
class Plan:
    """The shards of a crawl: each root's site, and a site with path prefixes split into a shard a prefix plus the
    site's own (`/` and whatever no prefix claims). Keys: `host:port` for a site's own shard, `host:port/prefix`."""

    roots: dict[str, list[str]]  # shard key -> its roots (a prefix shard may have none: it starts from entries)
    prefixes: dict[str, tuple[str, ...]]  # site -> its prefixes, longest first

    @classmethod
    def of(cls, roots: Iterable[str], prefixes: Iterable[str] = ()) -> Plan:
        """The plan for `roots` and `prefixes` (`/docs/`: of the one site crawled; `http://host:port/docs/`: of that
        site); a wrong prefix is a ConfigError naming it."""
        by_site = shard_roots(roots)
        split: dict[str, set[str]] = {site: set() for site in by_site}
        for given_prefix in prefixes:
            site, path = _prefix(given_prefix, list(by_site))
            if path in split[site]:
                raise ConfigError(f"--shard-prefix {given_prefix!r}: named twice")
            split[site].add(path)
        plan = cls({}, {site: tuple(sorted(paths, key=lambda p: (-len(p), p))) for site, paths in split.items()})
        for site, paths in plan.prefixes.items():
            plan.roots[site] = []
            for path in sorted(paths):
                plan.roots[site + path] = []
        for site, site_roots in by_site.items():
            for root in site_roots:
                plan.roots[plan.owner(root) or site].append(root)
        return plan

    def owner(self, url: str) -> str | None:
        """The shard that owns `url`: its site's longest prefix the path starts with, else the site's own; None off
        every site crawled."""
        site = netloc(url)
        if site not in self.prefixes:
            return None
        path = urlsplit(url).path or "/"
        return next((site + p for p in self.prefixes[site] if path.startswith(p)), site)

    def allow_paths(self, key: str) -> list[str]:
        """The guard's path patterns of shard `key`: its prefix but the longer ones other shards own; for a site's
        own shard, none of its prefixes; no pattern for a site not split."""
        site, _, rest = key.partition("/")
        path = "/" + rest if rest else ""
        longer = [re.escape(p) for p in self.prefixes[site] if p != path and p.startswith(path)]
        if not path:
            return [f"^(?!{'|'.join(longer)})"] if longer else []
        return [f"^(?!{'|'.join(longer)}){re.escape(path)}" if longer else f"^{re.escape(path)}"]

    def pace(self, key: str) -> dict[str, Any]:
        """Crawl settings of shard `key`: k shards asking one host at once each take a k-th of its per-host
        concurrency and AutoThrottle target, so the host sees the load of one crawl."""
        k = 1 + len(self.prefixes[key.partition("/")[0]])
        if k == 1:
            return {}
        return {"CONCURRENT_REQUESTS_PER_DOMAIN": max(1, defaults.CONCURRENT_REQUESTS_PER_DOMAIN // k),
                "AUTOTHROTTLE_TARGET_CONCURRENCY": defaults.AUTOTHROTTLE_TARGET_CONCURRENCY / k}


def _prefix(given: str, sites: list[str]) -> tuple[str, str]:
    """(site, path) of a --shard-prefix: a path of the one site crawled, or a URL of one of them."""
    if "://" in given:
        site, path = netloc(given), urlsplit(given).path
        if site not in sites:
            raise ConfigError(f"--shard-prefix {given!r}: not on a site crawled ({', '.join(sites)})")
    elif len(sites) == 1:
        site, path = sites[0], given
    else:
        raise ConfigError(f"--shard-prefix {given!r}: several sites are crawled ({', '.join(sites)}); "
                          f"name the site (http://{sites[0]}{given})")
    if not path.startswith("/") or path == "/" or any(c in path for c in "?#"):
        raise ConfigError(f"--shard-prefix {given!r}: a path below / (like /docs/), without query or fragment")
    return site, path


def shard_dir(crawl_dir: Path, site: str) -> Path:
    """`crawl_dir`/shards/<shard>, the shard's key in a name any file system takes (127.0.0.2_8000,
    127.0.0.2_8000_docs_)."""
    return Path(crawl_dir) / SHARDS / re.sub(r"[^A-Za-z0-9.-]", "_", site)


def finished(shard: Path) -> bool:
    """True when the shard's crawl ran to its end: its stats are written last, after its parquet files."""
    return (Path(shard) / STATS).is_file()


def reset(shard: Path) -> None:
    """Make the shard's next crawl a new one: its journal, job folder, entries and stats go (its HTTP cache stays)."""
    for name in ("pages.jsonl", "links.jsonl", ENTRIES, STATS):
        (Path(shard) / name).unlink(missing_ok=True)
    shutil.rmtree(Path(shard) / "job", ignore_errors=True)


def given(shard: Path) -> list[Entry]:
    """The entries the shard was last started with."""
    path = Path(shard) / ENTRIES
    return [tuple(e) for e in json.loads(path.read_text(encoding="utf-8"))] if path.is_file() else []  # type: ignore[misc]


def cross_entries(folders: Mapping[str, Path], max_depth: int,
                  owner: Callable[[str], str | None] | None = None) -> dict[str, list[Entry]]:
    """For each shard (by key), the entries it should be started with: every link from another shard's fetched
    page into a page it owns (`owner`: by site when not given) within `max_depth`, and every redirect of another
    shard's page into one (at that page's depth: a redirect is no click), at its shortest depth, unless the shard
    already holds that page as near (and as near through a linking page first in URL order: the spider's tie-break);
    plus the entries it was given before (a target it refused stays given, so rounds end). A shard that has not run
    yet holds nothing."""
    owner = owner or (lambda url: site if (site := netloc(url)) in folders else None)
    best: dict[str, Entry] = {}
    held_in: dict[str, dict[str, tuple[int, str]]] = {key: {} for key in folders}  # url -> its _rank in the shard

    def offer(target: str, key: str, entry: Entry) -> None:
        if (where := owner(target)) is not None and where != key and \
                (target not in best or _rank(entry) < _rank(best[target])):  # nearest, then the first linking page
            best[target] = entry

    for key, folder in folders.items():
        if not finished(folder):
            continue
        pages = pl.read_parquet(folder / FETCHED,
                                columns=["url", "depth", "parent", "root_url", "error", "final_url", "clickables"])
        held_in[key] = {u: _rank((u, d, p, r)) for u, d, p, r in pages.select("url", "depth", "parent", "root_url")
                        .iter_rows() if d is not None}
        for url, depth, parent, root, error, final, found in pages.iter_rows():
            if depth is None:
                continue
            if error in CROSSING and final and is_crawlable(final):
                offer(canonical(final), key, (canonical(final), depth, parent, root))
            if error is not None or depth + 1 > max_depth:
                continue
            for click in found:
                if is_crawlable(click["href"]):
                    target = canonical(click["href"])
                    offer(target, key, (target, depth + 1, url, root))
    wanted: dict[str, list[Entry]] = {}
    for key, folder in folders.items():
        kept = {e[0]: e for e in given(folder)}
        for target, entry in best.items():
            held = held_in[key].get(target)
            if owner(target) == key and (held is None or held > _rank(entry)) and \
                    (target not in kept or _rank(kept[target]) > _rank(entry)):
                kept[target] = entry
        wanted[key] = sorted(kept.values())
    return wanted


def _rank(entry: Entry) -> tuple[int, str]:
    """Entries by depth, then linking page (a root's redirect has none), as the spider ranks its paths."""
    return entry[1], entry[2] or ""


def give(shard: Path, entries: list[Entry]) -> None:
    """Start the shard again with `entries` over its journal: it is no finished crawl until it ran with them."""
    write_text(Path(shard) / ENTRIES, json.dumps([list(e) for e in entries]))
    (Path(shard) / STATS).unlink(missing_ok=True)


def merge(shards: Iterable[Path], crawl_dir: Path, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Write the shards' pages, links and stats into `crawl_dir` as one crawl of all their roots, stats last (a
    merge killed midway leaves no stats, so it is not taken for a finished one); the merged stats, with each
    shard's pages under `shards` and `extra` added. A page that redirected into another shard's page is the
    redirect edge one process writes, not a row."""
    shards = list(shards)
    if missing := [str(s) for s in shards if not finished(s)]:
        raise ConfigError(f"merge: shards not finished: {', '.join(missing)}")
    crawl_dir = Path(crawl_dir)
    pages = pl.concat([pl.read_parquet(s / "pages.parquet") for s in shards], how="vertical")
    stats = [json.loads((s / STATS).read_text(encoding="utf-8")) for s in shards]
    pages, moved = _redirects_across(pages)
    if (twice := pages["url"].is_duplicated()).any():  # a shard left its site: the crawl is not one of sites
        raise ConfigError(f"merge: {pages.filter(twice)['url'][0]} is in two shards")
    links = pl.concat([*(pl.read_parquet(s / "links.parquet") for s in shards), moved.drop("reason")],
                      how="vertical")
    merged = merge_stats(stats)
    if moved.height:  # what one process counts: redirects, not pages refused
        merged["redirected"] = merged.get("redirected", 0) + moved.height
        for reason, n in moved.group_by("reason").len().iter_rows():
            merged["errors"][reason] -= n
            if not merged["errors"][reason]:
                del merged["errors"][reason]
    merged["shards"] = {s.name: int(st.get("pages", 0)) for s, st in zip(shards, stats, strict=True)}
    merged |= dict(extra or {})
    write_parquet(pages.sort("depth", "url"), crawl_dir / "pages.parquet")
    write_parquet(links.unique(maintain_order=True), crawl_dir / "links.parquet")
    write_text(crawl_dir / STATS, json.dumps(merged, indent=2, sort_keys=True, default=str))
    return merged


def _redirects_across(pages: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The pages without those that redirected into a page another shard holds; those as redirect edges (with
    their reason)."""
    across = pl.col("error").fill_null("").is_in(CROSSING)
    held = set(pages.filter(~across)["url"])
    crossing = pages.filter(across & pl.col("final_url").is_not_null())
    rows = [{"from": url, "to": to, "text": "", "kind": "redirect", "reason": why}
            for url, final, why in crossing.select("url", "final_url", "error").iter_rows()
            if is_crawlable(final) and (to := canonical(final)) in held]
    moved = pl.DataFrame(rows, schema={"from": pl.String, "to": pl.String, "text": pl.String, "kind": pl.String,
                                       "reason": pl.String})
    keep = pages.filter(~(pl.col("url").is_in(moved["from"].to_list()) & across))
    return keep, moved


def merge_stats(stats: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The stats of one crawl of all the shards: counts added, counts by reason or depth added key by key."""
    total: dict[str, Any] = {}
    for one in stats:
        for key, value in one.items():
            if isinstance(value, Mapping):
                into = total.setdefault(key, defaultdict(int))
                for k, n in value.items():
                    into[k] += n
            elif isinstance(value, int | float) and not isinstance(value, bool):
                total[key] = total.get(key, 0) + value
    return {k: dict(sorted(v.items(), key=lambda kv: _order(kv[0]))) if isinstance(v, Mapping) else v
            for k, v in sorted(total.items())}


def _order(key: str) -> tuple[int, str]:
    """Depths in numeric order (2 before 10), reasons alphabetical, as one crawl writes them."""
    return (int(key), "") if key.isdigit() else (1 << 30, key)


def crawl_shard(plan: Plan, key: str, crawl_dir: Path, max_depth: int, max_pages: int, render: str, *,
                fresh: bool = False, extract: bool = True) -> dict[str, Any]:
    """Shard `key`'s crawl in its own process and folder, held to its paths, at its pace, from its roots and the
    entries it was given; its stats. A shard that finished in a run that did not is not crawled again; one that
    was killed resumes from its own journal. A shard that fetched nothing (every entry refused by robots.txt, say)
    is finished too: its reasons are in its stats, and the merge fails only when every shard fetched nothing.
    `extract`: its pages' content read after it, in EXTRACT_WORKERS processes (also for a shard that finished in a
    run killed before reading it), or left to the caller's mapped stage (timelyqa/site_tree/extract.py)."""
    out = shard_dir(crawl_dir, key)
    if not finished(out):
        try:
            crawl("site_tree", {"roots": json.dumps(plan.roots[key]), "max_depth": max_depth,
                                "max_pages": max_pages, "allow_paths": json.dumps(plan.allow_paths(key)),
                                "render": render, "entries": json.dumps(given(out))},
                  out, fresh=fresh, settings=plan.pace(key) or None, extract=False)
        except SourceContractError:
            if not finished(out):  # the process died before its end: the next run resumes it
                raise
    if extract:
        return extraction.run(out, workers=defaults.EXTRACT_WORKERS)
    return dict(json.loads((out / STATS).read_text(encoding="utf-8")))


def in_rounds(plan: Plan, crawl_dir: Path, max_depth: int, run_round: Callable[[list[str]], object]
              ) -> tuple[list[Path], int]:
    """Crawl the plan's shards in rounds (`run_round(keys)` crawls those shards to their end, side by side): the
    shards with roots first, then those given new entries by the last round, until none is. The folders to merge
    (every shard that ran) and the number of rounds. A run over a crawl that finished starts every shard afresh; a
    run over a killed one keeps each shard's journal and the entries it was given."""
    crawl_dir = Path(crawl_dir)
    folders = {key: shard_dir(crawl_dir, key) for key in plan.roots}
    if finished(crawl_dir):  # the last run over `crawl_dir` ran to its end: this one is a new crawl of every shard
        for folder in folders.values():
            reset(folder)
    (crawl_dir / STATS).unlink(missing_ok=True)  # only then: a run killed before this point is new again
    todo = [key for key in plan.roots if plan.roots[key] or given(folders[key])]
    rounds = 0
    while todo:
        run_round(todo)
        rounds += 1
        wanted = cross_entries(folders, max_depth, plan.owner)
        todo = [key for key in plan.roots if wanted[key] != given(folders[key])]
        for key in todo:
            give(folders[key], wanted[key])
    return [folders[key] for key in plan.roots if plan.roots[key] or given(folders[key])], rounds
