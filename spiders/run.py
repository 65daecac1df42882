"""Run a crawl in its own process, as every caller does (the CLI, a Prefect task): Twisted's reactor cannot
restart in one process and Playwright needs the asyncio one. Imports no Scrapy, so callers need not. `crawl` is
the crawler behind the core's port (timelyqa.crawling.Crawl), which holds the stats reading it shares."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from spiders.settings import EXTRACT_WORKERS, crawl_settings
from timelyqa import clock
from timelyqa.crawling import STATS, check_roots, summary
from timelyqa.useragent import USER_AGENT_ENV
from timelyqa.errors import ConfigError, SourceContractError
from timelyqa.site_tree import extract as extraction


def command(spider: str, args: dict[str, Any], out: Path, *, fresh: bool = False,
            settings: dict[str, Any] | None = None) -> tuple[list[str], dict[str, str]]:
    """The command line and environment of one crawl; a wrong setting is a ConfigError before any work. Starting
    it where a crawl was killed resumes that crawl; where one finished, starts afresh (the HTTP cache stays).
    `settings` change the crawl's pace (spiders.settings.TUNABLE), e.g. for a site of your own."""
    out = Path(out)
    clock.now()  # a wrong TIMELYQA_CLOCK stops here, named, not in every page's stamp inside the crawl
    try:
        every = crawl_settings(out, fresh=fresh, render=str(args.get("render", "never")), tuned=settings)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    out.mkdir(parents=True, exist_ok=True)
    if (out / STATS).is_file():
        for done in ("pages.jsonl", "links.jsonl", STATS):
            (out / done).unlink(missing_ok=True)
        shutil.rmtree(out / "job", ignore_errors=True)
    argv = [sys.executable, "-m", "scrapy", "crawl", spider, "--loglevel", "WARNING",
            *(a for k, v in {**args, "out": str(out)}.items() for a in ("-a", f"{k}={v}")),
            *(a for k, v in every.items()
              for a in ("-s", f"{k}={json.dumps(v) if isinstance(v, dict | list) else v}"))]
    root = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "spiders.settings",
           "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}
    return argv, env


def crawl(spider: str, args: dict[str, Any], out: Path, *, fresh: bool = False,
          settings: dict[str, Any] | None = None, extract: bool = True) -> dict[str, Any]:
    """Run one crawl to its end; its stats, or SourceContractError when it fetched nothing (Scrapy exits 0 even
    then). A site-tree crawl is followed by its extraction stage (timelyqa/site_tree/extract.py) in EXTRACT_WORKERS
    processes, unless `extract` is False (the flow maps it over partitions as tasks of its own)."""
    argv, env = command(spider, args, out, fresh=fresh, settings=settings)
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    out = Path(out)
    if not (out / STATS).is_file():
        tail = " ".join((proc.stderr or proc.stdout).split()[-40:])
        raise SourceContractError(f"crawl {spider} wrote no stats (exit {proc.returncode}): {tail}")
    stats: dict[str, Any] = json.loads((out / STATS).read_text(encoding="utf-8"))
    if proc.returncode or not stats.get("pages"):
        raise SourceContractError(f"crawl {spider} fetched nothing (exit {proc.returncode}): {summary(stats)}")
    if spider == "site_tree" and extract:
        workers = int((settings or {}).get("EXTRACT_WORKERS", EXTRACT_WORKERS))
        stats = extraction.run(out, workers=workers)
    return stats


__all__ = ["STATS", "USER_AGENT_ENV", "check_roots", "command", "crawl", "summary"]
