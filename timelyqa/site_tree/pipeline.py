"""The site-tree source after its crawl: a crawl folder's pages in, questions, rejects and a manifest out.

The template generator (the default) runs in one step. The LLM writer (`llm`) runs in three, each reading and
writing files in the run's work folder, so that the CLI and the flow run the same steps and a flow retries one
without redoing the others: `write_questions` (the writer model, the rules and the gate), `verify_questions`
(the checker model), `finish` (the records and the outputs). Both pass every question, as it will be released,
through the source's gate (`site_tree.gate`: `timelyqa.quality.COMMON` and the source's own rules) before it is
verified; the gate's drops are rejects of stage `quality`, and `questions_gated` counts what it let through.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import polars as pl
from pydantic import Field

from timelyqa import clock
from timelyqa.errors import ConfigError
from timelyqa.settings import Settings as BaseSettings
from timelyqa.files import sha256_file, write_parquet
from timelyqa.llm.client import usage_during
from timelyqa.crawling import Crawl
from timelyqa.localsite import LocalSite
from timelyqa.manifest import RECHECKED, Input, Manifest
from timelyqa.record import Verification
from timelyqa.site_tree.refresh import refresh_released, released_rows
from timelyqa.quality import GATE_PASSED, GATE_STAGE
from timelyqa.site_tree.candidates import CANDIDATE_SCHEMA, Candidate, choose_candidates, page_record, released
from timelyqa.site_tree.gate import gate as site_gate
from timelyqa.site_tree.facts import FACTS_PARSER
from timelyqa.site_tree.llm import Draft, SiteLLMWriter, llm_site_writer
from timelyqa.site_tree.questions import write_questions as template_questions
from timelyqa.site_tree.record import DOMAINS
from timelyqa.site_tree.source import DEMO_PORT, SOURCE
from timelyqa.sources import Progress
from timelyqa.site_tree.tree import chain
from timelyqa.stages import StageWriter

PAGES, WRITTEN, VERIFIED = "pages.parquet", "written.parquet", "verified.parquet"
DRAFT_SCHEMA = pl.Schema({**CANDIDATE_SCHEMA, "question": pl.String(), "answer": pl.String(),
                          "generator": pl.String(), "verification": pl.String()})


class Settings(BaseSettings):
    """What shapes the questions besides the crawl; recorded in the manifest.
    A wrong value is a one-line ConfigError."""

    domain: str = Field(default="other", description=f"one of {', '.join(DOMAINS)} (WebWalkerQA's four, or other)")
    language: str = "en"
    seed: int = 0
    facts_per_page: int = Field(default=3, ge=1, description="template: most facts asked of a page")
    pairs_per_root: int = Field(default=20, ge=0, description="most multi-source questions of a site")
    generator: Literal["template", "llm"] = "template"
    pages_per_root: int = Field(default=20, ge=0, description="llm: most single-source pages of a site")
    page_chars: int = Field(default=4000, ge=200, description="llm: most characters of a page in a prompt")


def check_crawl(crawl: Path) -> Path:
    """The crawl's pages file; a folder that holds no finished crawl is a ConfigError naming it."""
    path = Path(crawl) / PAGES
    if not path.is_file():
        raise ConfigError(f"{crawl}: no {PAGES} (not a finished crawl: run `timelyqa crawl site-tree` first)")
    return path


def read_crawl(crawl: Path) -> pl.DataFrame:
    return pl.read_parquet(check_crawl(crawl))


def run(crawl: Path, out: Path, settings: Settings | None = None, *, writer: SiteLLMWriter | None = None,
        previous: Path | None = None) -> Manifest:
    """Questions WebWalker's way from a crawl folder (`timelyqa crawl site-tree`): every candidate kept or rejected
    with its reason, through the stage writer. `writer` (or `settings.generator == "llm"`, its models then named by
    `TIMELYQA_LLM_*` and `TIMELYQA_CHECK_LLM_*`) writes with WebWalker's prompts; the template generator otherwise.
    With `previous` (a release or an earlier output), its rows of the crawled sites are re-checked against this
    crawl: the ids of the true ones go to rechecked.parquet, the others are dropped at stage `refresh` with why."""
    settings = settings or Settings()
    check_crawl(crawl)
    earlier = released_rows(previous) if previous is not None else None
    if writer is None and settings.generator == "template":
        pages = read_crawl(crawl)
        ledger = StageWriter(SOURCE, out)
        with ledger.timed("questions"):
            written = template_questions(pages, domain=settings.domain, language=settings.language,
                                         seed=settings.seed, facts_per_page=settings.facts_per_page,
                                         pairs_per_root=settings.pairs_per_root)
        ledger.take(written)
        gate = site_gate({row["url"]: row for row in pages.to_dicts()})
        with ledger.timed(GATE_STAGE):
            for record in written.records:
                if (sent_back := gate.check(record.model_dump())) is None:
                    ledger.keep(record)
                else:
                    ledger.reject({**sent_back.item, "root_url": record.root_url, "urls": record.source_urls},
                                  sent_back.reason, sent_back.detail)
        ledger.count(GATE_PASSED, gate.passed)
        return _finish(ledger, crawl, pages, settings, earlier)
    settings = settings.model_copy(update={"generator": "llm"})  # the manifest states the writer that ran
    writer = writer or llm_site_writer(cache_dir=Path(out) / "llm-cache")
    workdir = Path(out) / "work"
    verified = verify_questions(write_questions(crawl, workdir, settings, writer), workdir, writer)
    return finish(crawl, verified, workdir, out, settings, earlier)


def write_questions(crawl: Path, workdir: Path, settings: Settings, writer: SiteLLMWriter) -> Path:
    """The pages and pairs chosen, a query and answer for each from the writer model, checked by rule."""
    if settings.domain not in DOMAINS:
        raise ConfigError(f"domain must be one of {', '.join(DOMAINS)}, not {settings.domain!r}")
    pages = read_crawl(crawl)
    ledger = _ledger(workdir)
    with ledger.timed("write"), usage_during(writer.llms, ledger.use):
        chosen = choose_candidates(pages, seed=settings.seed, pages_per_root=settings.pages_per_root,
                                   pairs_per_root=settings.pairs_per_root, page_chars=settings.page_chars)
        drafts = writer.write(chosen.candidates)
    ledger.take(chosen)
    ledger.count("questions_written", sum(d.kept for d in drafts))
    with ledger.timed(GATE_STAGE):
        drafts = gate_drafts(chosen.candidates, drafts, {row["url"]: row for row in pages.to_dicts()})
    return _through(ledger, chosen.candidates, drafts, workdir / WRITTEN, part="write", line=GATE_PASSED)


def gate_drafts(candidates: Sequence[Candidate], drafts: Sequence[Draft], pages: Mapping[str, Mapping[str, Any]]
                ) -> list[Draft]:
    """Each kept draft's question as it is released (`candidates.released`: its pages named, its unit said), judged
    by the source's gate; a draft the gate drops carries the gate's reason on."""
    gate = site_gate(pages)
    out = []
    for c, d in zip(candidates, drafts, strict=True):
        if not d.kept:
            out.append(d)
            continue
        question, typed, _ = released(c, d.question or "", d.answer or "", pages)
        row = {"question": question, **typed.row(), "source_urls": list(c.urls),
               "evidence": [{"url": url, "title": pages[url].get("title")} for url in c.urls]}
        if (sent_back := gate.check(row)) is None:
            out.append(replace(d, question=question))
        else:
            out.append(replace(d, question=question, reason=sent_back.reason, detail=sent_back.detail))
    return out


def verify_questions(written: Path, workdir: Path, writer: SiteLLMWriter) -> Path:
    """Each written question judged by the checker model's strict verifier."""
    rows = pl.read_parquet(written).to_dicts()
    candidates = [Candidate.of(row) for row in rows]
    ledger = _ledger(workdir)
    with ledger.timed("verify"), usage_during(writer.llms, ledger.use):
        drafts = writer.verify(candidates, [Draft(r["question"], r["answer"], None, "", r["generator"]) for r in rows])
    return _through(ledger, candidates, drafts, workdir / VERIFIED, part="verify", line="questions_verified")


def finish(crawl: Path, verified: Path, workdir: Path, out: Path, settings: Settings,
           earlier: pl.DataFrame | None = None) -> Manifest:
    """The verified questions as records, and the run's outputs."""
    ledger = StageWriter.resume(SOURCE, out, work=workdir)
    frame = read_crawl(crawl)
    pages = {row["url"]: row for row in frame.to_dicts()}
    parent_of = {url: row["parent"] for url, row in pages.items()}
    for row in pl.read_parquet(verified).iter_rows(named=True):
        c = Candidate.of(row)
        ledger.keep(page_record(c, question=row["question"], answer=row["answer"], generator=row["generator"],
                                verification=Verification.model_validate_json(row["verification"]), pages=pages,
                                paths={url: chain(parent_of, url) for url in c.urls}, domain=settings.domain,
                                language=settings.language))
    return _finish(ledger, crawl, frame, settings, earlier)


def _through(ledger: StageWriter, candidates: Sequence[Candidate], drafts: Sequence[Draft], target: Path, *,
             part: str, line: str) -> Path:
    """The drafts kept go to `target` with their candidates, the others are rejected with their reasons."""
    kept = []
    for c, d in zip(candidates, drafts, strict=True):
        if not d.kept or d.reason is not None:
            ledger.reject({**c.item(), "question": d.question, "answer": d.answer}, d.reason,  # type: ignore[arg-type]
                          f"{c.type} {' + '.join(c.urls)}: {d.detail}")
            continue
        kept.append({**c.row(), "question": d.question, "answer": d.answer, "generator": d.generator,
                     "verification": d.verification.model_dump_json() if d.verification else None})
    ledger.count(line, len(kept))
    write_parquet(pl.DataFrame(kept, schema=DRAFT_SCHEMA, orient="row"), target)
    ledger.save(part)
    return target


def _finish(ledger: StageWriter, crawl: Path, pages: pl.DataFrame, settings: Settings,
            earlier: pl.DataFrame | None) -> Manifest:
    fetched = pages.get_column("fetched_at").drop_nulls()
    as_of = datetime.fromisoformat(fetched.max()) if fetched.len() else clock.now()
    ledger.out.mkdir(parents=True, exist_ok=True)
    if earlier is not None:
        refresh_released(earlier, pages, ledger, ledger.out)  # the release keeps the rows still true as stored
    else:
        (ledger.out / RECHECKED).unlink(missing_ok=True)  # an earlier run's, in the same folder
    roots = sorted(set(pages.get_column("root_url").drop_nulls()))
    return ledger.finish(as_of=as_of, inputs={"pages": Input(path=str(Path(crawl) / PAGES),
                                                             sha256=sha256_file(Path(crawl) / PAGES))},
                         settings=settings.model_dump(), details={"roots": roots, "parser": FACTS_PARSER})


def _ledger(workdir: Path) -> StageWriter:
    return StageWriter.part(SOURCE, workdir)


def run_on(inputs: Sequence[Path], out: Path, progress: Progress | None, crawl: Crawl) -> Manifest:
    """The registry's run (SOURCE.run): a bundled site (the folder of `index.html`) served on 127.0.0.1, crawled
    through `crawl`, and its questions written."""
    (index,) = inputs
    with LocalSite(Path(index).parent, port=DEMO_PORT) as site:
        crawl("site_tree", {"roots": json.dumps([site.url]), "max_depth": 4, "max_pages": 500, "render": "auto"},
              Path(out) / "crawl")
    return run(Path(out) / "crawl", out, Settings(domain="education"))
