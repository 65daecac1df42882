"""The extraction stage of a site-tree crawl. The crawl stores each page's text and links (fetched.parquet) and reads
no content, as a plain Scrapy crawl would not; this stage reads each page's title, markdown, text and facts
(timelyqa/site_tree/content.py) and writes pages.parquet, the bytes the crawl wrote when it read content itself.

The pages go in partitions: runs of `PART_PAGES` consecutive rows of fetched.parquet (sorted by depth and URL), each
named by a digest of what its pages are (URL, final URL, error, the body's sha256, rendered or not), its content
written to extract/<digest>.parquet. A partition done is never redone: not after a kill, not when a crawl fetched
the same pages again. A page whose reading raises, or takes over `timeout` seconds, is a row with its reason in
`error` (`extract_failed`, `extract_timeout`), counted in the crawl's stats, and no other page is lost.

`run` shares the partitions among EXTRACT_WORKERS processes (`timelyqa crawl site-tree`); the site-tree flow maps a
Prefect task over them (`extract_in_process`: a partition in a process of its own, on whatever machine the task
runs), then calls `assemble`. Either way the processes are plain `python -m timelyqa.site_tree.extract`, never
multiprocessing's, which re-imports the caller's main module in each worker."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import polars as pl

from timelyqa.crawling import STATS, counted
from timelyqa.files import write_parquet, write_text
from timelyqa.site_tree.facts import FACT_DTYPE

FETCHED = "fetched.parquet"
"""What the crawl writes: a row a page, its text (`html`) in place of its content."""
PAGES = "pages.parquet"
PARTS = "extract"
PART_PAGES = 64
"""Pages a partition: about 4 s of one core on the Python documentation (96 KB pages), so that the start of a
process for one (the flow's way) costs little beside it, and 526 pages still make 9 partitions to share."""
TIMEOUT = 60.0
"""Seconds one page's reading may take (trafilatura on a page of several MB takes a few)."""
CONTENT = ("title", "markdown", "text", "facts")
PAGE_SCHEMA = pl.Schema({
    "url": pl.String(), "final_url": pl.String(), "status": pl.Int64(), "depth": pl.Int64(), "parent": pl.String(),
    "root_url": pl.String(), "title": pl.String(), "fetched_at": pl.String(), "sha256": pl.String(),
    "rendered": pl.Boolean(), "render_reason": pl.String(), "markdown": pl.String(), "text": pl.String(),
    "clickables": pl.List(pl.Struct({"href": pl.String(), "text": pl.String(), "kind": pl.String()})),
    "facts": FACT_DTYPE,
    "error": pl.String(),
})
"""`facts` are the page's labelled values as `timelyqa.site_tree.facts` reads them from the page's HTML (rendered
when it was): what questions are asked about, and what a later crawl re-checks."""
FETCHED_SCHEMA = pl.Schema({**{k: v for k, v in PAGE_SCHEMA.items() if k not in CONTENT}, "html": pl.String()})
PART_SCHEMA = pl.Schema({"url": pl.String(), **{k: PAGE_SCHEMA[k] for k in CONTENT}, "failed": pl.String()})
_IDENTITY = ["url", "final_url", "error", "sha256", "rendered"]


class Reason(StrEnum):
    FAILED = "extract_failed"
    TIMEOUT = "extract_timeout"


@dataclass(frozen=True, slots=True)
class Part:
    """Rows `start` to `stop` of fetched.parquet; `key` names what they are."""

    start: int
    stop: int
    key: str


class _TimedOut(BaseException):  # noqa: N818 - not an Exception, so that no `except Exception` in a reader takes it
    pass


def plan(crawl_dir: Path, size: int = PART_PAGES) -> list[Part]:
    """The crawl's partitions, in order."""
    ids = pl.read_parquet(Path(crawl_dir) / FETCHED, columns=_IDENTITY)
    parts = []
    for start in range(0, ids.height, size):
        rows = ids.slice(start, size).rows()
        digest = hashlib.blake2b(json.dumps(rows).encode(), digest_size=12).hexdigest()
        parts.append(Part(start, start + len(rows), digest))
    return parts


def part_path(crawl_dir: Path, part: Part) -> Path:
    return Path(crawl_dir) / PARTS / f"{part.key}.parquet"


def page_counts(pages: pl.DataFrame) -> dict[str, Any]:
    """The stats read off the page rows: pages served without error, errors by reason, such pages per depth."""
    fetched = pages.filter(pl.col("error").is_null())
    return {
        "pages": fetched.height,
        "errors": counted(pages["error"].drop_nulls().to_list()),
        "pages_per_depth": {str(d): int(n) for d, n in fetched.group_by("depth").len().sort("depth").iter_rows()},
    }


@contextmanager
def _limit(seconds: float | None) -> Iterator[None]:
    """Raise _TimedOut in this block after `seconds` (in a process's main thread; elsewhere no signal can)."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return

    def ring(signum: int, frame: object) -> None:
        raise _TimedOut

    before = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)


def read_page(html: str | None, url: str, *, with_facts: bool, timeout: float | None = TIMEOUT
              ) -> tuple[dict[str, Any], Reason | None]:
    """A page's content, or the empty one and why none was read."""
    from timelyqa.site_tree.content import EMPTY, read  # noqa: PLC0415 - trafilatura: not for the crawl that imports this

    if not html:
        return dict(EMPTY), None
    try:
        with _limit(timeout):
            return read(html, url, with_facts=with_facts), None
    except _TimedOut:
        return dict(EMPTY), Reason.TIMEOUT
    except Exception:  # noqa: BLE001 - any reader's failure on one page is that page's row, never the stage's end
        return dict(EMPTY), Reason.FAILED


def extract_part(crawl_dir: Path, part: Part, *, timeout: float | None = TIMEOUT) -> Path:
    """Read the partition's pages and write their content, unless it was written before."""
    path = part_path(crawl_dir, part)
    if path.is_file():
        return path
    rows = (pl.scan_parquet(Path(crawl_dir) / FETCHED).select("url", "final_url", "error", "html")
            .slice(part.start, part.stop - part.start).collect())
    out = []
    for url, final_url, error, html in rows.iter_rows():
        content, failed = read_page(html, final_url, with_facts=error is None, timeout=timeout)
        out.append({"url": url, **content, "failed": failed.value if failed else None})
    write_parquet(pl.DataFrame(out, schema=PART_SCHEMA, orient="row"), path)
    return path


def assemble(crawl_dir: Path, parts: list[Part] | None = None) -> dict[str, Any]:
    """pages.parquet from fetched.parquet and its partitions' content, and the crawl's stats counted again over it
    (a page read with an error is an error row); the stats. Every partition must have been read."""
    crawl_dir = Path(crawl_dir)
    if (done := assembled(crawl_dir)) is not None:
        return done
    parts = plan(crawl_dir) if parts is None else parts
    if missing := [p.key for p in parts if not part_path(crawl_dir, p).is_file()]:
        raise ValueError(f"{crawl_dir}: {len(missing)} partitions not extracted yet ({missing[0]}, ...)")
    # the pages' text is the crawl's bulk: not held here, only whether each page had any
    fetched = pl.read_parquet(crawl_dir / FETCHED, columns=[c for c in FETCHED_SCHEMA if c != "html"])
    had_text = (pl.scan_parquet(crawl_dir / FETCHED).select(pl.col("html").fill_null("") != "")
                .collect(engine="streaming").to_series())
    content = (pl.concat([pl.read_parquet(part_path(crawl_dir, p)) for p in parts], how="vertical")
               if parts else pl.DataFrame(schema=PART_SCHEMA))
    if not fetched["url"].equals(content["url"]):
        raise ValueError(f"{crawl_dir}: the extracted partitions are not those of {FETCHED}")
    frame = (fetched.with_columns(content.select(*CONTENT), error=pl.coalesce(fetched["error"], content["failed"]))
             .select(PAGE_SCHEMA.names()).cast(dict(PAGE_SCHEMA)))  # type: ignore[arg-type]
    write_parquet(frame, crawl_dir / PAGES)
    stats: dict[str, Any] = json.loads((crawl_dir / STATS).read_text(encoding="utf-8"))
    stats |= page_counts(frame) | {"extracted": int((had_text & content["failed"].is_null()).sum())}
    write_text(crawl_dir / STATS, json.dumps(stats, indent=2, sort_keys=True, default=str))
    _sweep(crawl_dir, parts)
    return stats


def assembled(crawl_dir: Path) -> dict[str, Any] | None:
    """The crawl's stats when its pages.parquet was assembled after its last crawl (which removes pages.parquet and
    writes stats without `extracted`), else None."""
    stats_file = Path(crawl_dir) / STATS
    if not (Path(crawl_dir) / PAGES).is_file() or not stats_file.is_file():
        return None
    stats: dict[str, Any] = json.loads(stats_file.read_text(encoding="utf-8"))
    return stats if "extracted" in stats else None


def _sweep(crawl_dir: Path, parts: list[Part]) -> None:
    """Partitions of pages the crawl no longer holds go (an earlier crawl's)."""
    keep = {part_path(crawl_dir, p).name for p in parts}
    for old in (crawl_dir / PARTS).glob("*.parquet"):
        if old.name not in keep:
            old.unlink(missing_ok=True)


def run(crawl_dir: Path, *, workers: int = 2, timeout: float | None = TIMEOUT, size: int = PART_PAGES
        ) -> dict[str, Any]:
    """The stage over a crawl: its partitions (of `size` pages) not yet read, shared among `workers` processes
    (0: read in this one), then pages.parquet; the crawl's stats."""
    crawl_dir = Path(crawl_dir)
    if (done := assembled(crawl_dir)) is not None:
        return done
    parts = plan(crawl_dir, size)
    todo = [p for p in parts if not part_path(crawl_dir, p).is_file()]
    if workers <= 0:
        for part in todo:
            extract_part(crawl_dir, part, timeout=timeout)
    elif todo:
        shares = [todo[k::workers] for k in range(min(workers, len(todo)))]  # neighbours weigh alike: dealt in turn
        with ThreadPoolExecutor(len(shares)) as pool:  # each thread waits on its process
            list(pool.map(lambda share: extract_in_process(crawl_dir, share, timeout=timeout), shares))
    return assemble(crawl_dir, parts)


def extract_in_process(crawl_dir: Path, parts: list[Part], *, timeout: float | None = TIMEOUT) -> list[Path]:
    """The partitions read in one Python process of its own (`python -m timelyqa.site_tree.extract`), which pays
    its imports once: where the caller is one thread of several (a Prefect task, `run`'s pool), no page's reading
    waits on another's for the GIL, and a page's time limit can be kept (a signal, in that process's main thread).
    A partition read before is not read again."""
    todo = [p for p in parts if not part_path(crawl_dir, p).is_file()]
    if todo:
        root = str(Path(__file__).resolve().parents[2])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}
        argv = [sys.executable, "-m", "timelyqa.site_tree.extract", str(crawl_dir), str(timeout or 0),
                *(f"{p.start}:{p.stop}:{p.key}" for p in todo)]
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
        if proc.returncode or not all(part_path(crawl_dir, p).is_file() for p in todo):
            tail = " ".join(proc.stderr.split()[-40:])
            raise RuntimeError(f"extraction of {crawl_dir} rows {todo[0].start}-{todo[-1].stop} ended "
                               f"{proc.returncode}: {tail}")
    return [part_path(crawl_dir, p) for p in parts]


if __name__ == "__main__":  # crawl_dir timeout start:stop:key ...
    folder, limit = Path(sys.argv[1]), float(sys.argv[2]) or None
    for spec in sys.argv[3:]:
        first, last, name = spec.split(":")
        extract_part(folder, Part(int(first), int(last), name), timeout=limit)
