"""A crawl split into shards, one a site (host:port), each crawled in a process and job folder of its own under
`shards/<host>/`, and merged into the one crawl folder the pipeline reads: pages.parquet, links.parquet and
crawl_stats.json as one process crawling every root would have written them.

Imports no Scrapy: a flow task fans the shards out and merges them. A shard holds only its own site's pages
(each crawl's guard keeps it there), so the shards' pages never overlap and each page's depth, parent and root
are those its own shard found.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import polars as pl

from timelyqa.urls import netloc
from timelyqa.errors import ConfigError
from timelyqa.files import write_parquet, write_text

STATS = "crawl_stats.json"
SHARDS = "shards"


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
