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
"""

from __future__ import annotations

import json
import re
import shutil
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import polars as pl

from timelyqa import crawling
from timelyqa.urls import canonical, is_crawlable, netloc
from timelyqa.errors import ConfigError
from timelyqa.files import write_parquet, write_text

STATS = crawling.STATS
SHARDS = "shards"
ENTRIES = "entries.json"
FETCHED = "fetched.parquet"  # the pages a shard's crawl fetched, before the extraction stage reads their content
Entry = tuple[str, int, str, str]
"""A page of a shard's site that another shard's page links to: url, depth through that link, that page, its root."""


def shard_roots(roots: Iterable[str]) -> dict[str, list[str]]:
    """The roots by the site they are on (host:port), in the order the sites are first named; a root on the same
    site as another goes to that site's shard, since one crawl must give both their shortest depths."""
    by_site: dict[str, list[str]] = {}
    for root in roots:
        if not (site := netloc(root)):
            raise ConfigError(f"--root {root!r}: not an http(s) URL")
        by_site.setdefault(site, []).append(root)
    return by_site


def shard_dir(crawl_dir: Path, site: str) -> Path:
    """`crawl_dir`/shards/<site>, the site's host and port in a name any file system takes (127.0.0.2_8000)."""
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


def cross_entries(folders: Mapping[str, Path], max_depth: int) -> dict[str, list[Entry]]:
    """For each finished shard (by site), the entries it should be started with: every link from another shard's
    fetched page into its site within `max_depth`, at its shortest depth, unless the shard already holds that page
    as near; plus the entries it was given before (a target it refused stays given, so rounds end)."""
    best: dict[str, Entry] = {}
    depth_in: dict[str, dict[str, int]] = {}
    for site, folder in folders.items():
        pages = pl.read_parquet(folder / FETCHED, columns=["url", "depth", "root_url", "error", "clickables"])
        depth_in[site] = {u: d for u, d in zip(pages["url"], pages["depth"], strict=True) if d is not None}
        for url, depth, root, error, found in pages.iter_rows():
            if error is not None or depth is None or depth + 1 > max_depth:
                continue
            for click in found:
                if not is_crawlable(click["href"]):
                    continue
                target = canonical(click["href"])
                if (where := netloc(target)) in folders and where != site:
                    entry = (target, depth + 1, url, root)
                    if target not in best or entry[1:3] < best[target][1:3]:  # nearest, then the first linking page
                        best[target] = entry
    wanted: dict[str, list[Entry]] = {}
    for site, folder in folders.items():
        kept = {e[0]: e for e in given(folder)}
        for target, entry in best.items():
            held = depth_in[site].get(target)
            if netloc(target) == site and (held is None or held > entry[1]) and \
                    (target not in kept or kept[target][1:3] > entry[1:3]):
                kept[target] = entry
        wanted[site] = sorted(kept.values())
    return wanted


def give(shard: Path, entries: list[Entry]) -> None:
    """Start the shard again with `entries` over its journal: it is no finished crawl until it ran with them."""
    write_text(Path(shard) / ENTRIES, json.dumps([list(e) for e in entries]))
    (Path(shard) / STATS).unlink(missing_ok=True)


def merge(shards: Iterable[Path], crawl_dir: Path) -> dict[str, Any]:
    """Write the shards' pages, links and stats into `crawl_dir` as one crawl of all their roots, stats last (a
    merge killed midway leaves no stats, so it is not taken for a finished one); the merged stats, with each
    shard's pages under `shards`."""
    shards = list(shards)
    if missing := [str(s) for s in shards if not finished(s)]:
        raise ConfigError(f"merge: shards not finished: {', '.join(missing)}")
    crawl_dir = Path(crawl_dir)
    pages = pl.concat([pl.read_parquet(s / "pages.parquet") for s in shards], how="vertical")
    if (twice := pages["url"].is_duplicated()).any():  # a shard left its site: the crawl is not one of sites
        raise ConfigError(f"merge: {pages.filter(twice)['url'][0]} is in two shards")
    links = pl.concat([pl.read_parquet(s / "links.parquet") for s in shards], how="vertical")
    stats = [json.loads((s / STATS).read_text(encoding="utf-8")) for s in shards]
    merged = merge_stats(stats)
    merged["shards"] = {s.name: int(st.get("pages", 0)) for s, st in zip(shards, stats, strict=True)}
    write_parquet(pages.sort("depth", "url"), crawl_dir / "pages.parquet")
    write_parquet(links.unique(maintain_order=True), crawl_dir / "links.parquet")
    write_text(crawl_dir / STATS, json.dumps(merged, indent=2, sort_keys=True, default=str))
    return merged


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
