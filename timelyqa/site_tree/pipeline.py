"""The site-tree source after its crawl: a crawl folder's pages in, questions, rejects and a manifest out."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import polars as pl
from pydantic import BaseModel, ConfigDict, Field

from timelyqa.errors import ConfigError
from timelyqa.files import sha256_file
from timelyqa.manifest import Input, Manifest
from timelyqa.site_tree.carry import carry, released_rows
from timelyqa.site_tree.facts import FACTS_PARSER
from timelyqa.site_tree.questions import write_questions
from timelyqa.site_tree.record import DOMAINS
from timelyqa.site_tree.source import SOURCE
from timelyqa.stages import StageWriter

PAGES = "pages.parquet"


class Settings(BaseModel):
    """What shapes the questions besides the crawl; recorded in the manifest."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    domain: str = Field(default="other", description=f"one of {', '.join(DOMAINS)} (WebWalkerQA's four, or other)")
    language: str = "en"
    seed: int = 0
    facts_per_page: int = Field(default=3, ge=1)
    pairs_per_root: int = Field(default=20, ge=0)


def read_crawl(crawl: Path) -> pl.DataFrame:
    """The crawl's pages; a folder that holds no finished crawl is a ConfigError naming it."""
    path = Path(crawl) / PAGES
    if not path.is_file():
        raise ConfigError(f"{crawl}: no {PAGES} (not a finished crawl: run `timelyqa crawl site-tree` first)")
    return pl.read_parquet(path)


def run(crawl: Path, out: Path, settings: Settings | None = None, *, previous: Path | None = None) -> Manifest:
    """Questions WebWalker's way from a crawl folder (`timelyqa crawl site-tree`): every candidate kept or rejected
    with its reason, through the stage writer. With `previous` (a release or an earlier output), its rows of the
    crawled sites are re-checked against this crawl: the true ones carried forward, the others dropped with why."""
    settings = settings or Settings()
    pages = read_crawl(crawl)
    earlier = released_rows(previous) if previous is not None else None
    ledger = StageWriter(SOURCE, out)
    with ledger.timed("questions"):
        written = write_questions(pages, domain=settings.domain, language=settings.language, seed=settings.seed,
                                  facts_per_page=settings.facts_per_page, pairs_per_root=settings.pairs_per_root)
    for line, n in written.counts.items():
        ledger.count(line, n)
    ledger.reject_all(written.rejected)
    for record in written.records:
        ledger.keep(record)
    fetched = pages.get_column("fetched_at").drop_nulls()
    as_of = datetime.fromisoformat(fetched.max()) if fetched.len() else datetime.now().astimezone()
    if earlier is not None:
        with ledger.timed("refresh"):
            carried, gone = carry(earlier, pages, as_of=as_of, made={r.id for r in written.records})
        ledger.count("released_rechecked", earlier.filter(pl.col("root_url").is_in(
            list(set(pages.get_column("root_url").drop_nulls())))).height)
        ledger.count("released_carried", len(carried))
        ledger.reject_all(gone)
        for record in carried:
            ledger.keep(record)
    roots = sorted(set(pages.get_column("root_url").drop_nulls()))
    return ledger.finish(as_of=as_of, inputs={"pages": Input(path=str(Path(crawl) / PAGES),
                                                             sha256=sha256_file(Path(crawl) / PAGES))},
                         settings=settings.model_dump(), details={"roots": roots, "parser": FACTS_PARSER})
