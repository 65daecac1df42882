"""The Wikipedia source end to end: a dump or the Action API and a window in; questions, rejects, manifest out.

DailyQA's pipeline on one streamed pass: each main-namespace page's infobox before and after every
revision in the window, its one chosen change, its answer re-derived from the page, then the labels
(update frequency, domain); then one batch of questions (template or LLM) checked for correctness and
descriptiveness, and the per-domain cap.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import polars as pl

from timelyqa.errors import ConfigError
from timelyqa.llm.client import total_usage
from timelyqa.record import REJECTED_SCHEMA, Evidence, Rejected, WikipediaRecord, record_id, to_frame
from timelyqa.wikipedia import labels
from timelyqa.wikipedia.answer import Rule
from timelyqa.wikipedia.api import ApiReader
from timelyqa.wikipedia.apiclient import ApiSettings
from timelyqa.wikipedia.changes import Change, page_changes
from timelyqa.wikipedia.dump import DumpReader, check_dump
from timelyqa.wikipedia.history import PageHistory, read_history
from timelyqa.wikipedia.infobox import PARSER, categories, first_paragraph
from timelyqa.wikipedia.questions import answer_aliases, correct
from timelyqa.wikipedia.writers import LLMDomains, TemplateWriter, Unit, Writer

Progress = Callable[[str, int, int], None]


Source = Path | ApiSettings
"""A MediaWiki XML export or dump with revision history, or the Action API of a live wiki."""


def check_window(start: datetime, end: datetime) -> None:
    if start.tzinfo is None or end.tzinfo is None:
        raise ConfigError(f"window {start} .. {end}: give both ends with a time zone (revisions are in UTC)")
    if not start < end:
        raise ConfigError(f"window {start.isoformat()} .. {end.isoformat()}: the start must come before the end")


def open_source(source: Source, *, start: datetime, end: datetime, horizon: timedelta) -> DumpReader | ApiReader:
    """The pages of the source, checked before any work: a file that is not an export, an API that is not one or
    no longer holds the window, a window that is not one, all stop here."""
    check_window(start, end)
    if isinstance(source, ApiSettings):
        reader = ApiReader(source, start=start, end=end, horizon=horizon)
        reader.check()
        return reader
    check_dump(Path(source))
    return DumpReader(Path(source))


def run(source: Source, out: Path, *, start: datetime, end: datetime, seed: int,
        cap_per_domain: int = labels.DOMAIN_CAP, horizon: timedelta = labels.HORIZON, writer: Writer | None = None,
        domains: LLMDomains | None = None, progress: Progress | None = None) -> dict[str, Any]:
    """Write out/questions.parquet, rejected.parquet and manifest.json for the changes in (start, end].

    `writer` writes and checks the questions: the template writer by default (no model needed), or an
    `LLMWriter`. Domains are labelled by rule, or by `domains` (an LLM) where it gives one of the seven.
    `progress(stage, done, total)` is called as pages are read (total 0: not known ahead).
    """
    out = Path(out)
    if cap_per_domain < 1:
        raise ConfigError(f"cap_per_domain={cap_per_domain}: must be at least 1")
    reader = open_source(source, start=start, end=end, horizon=horizon)
    writer = writer or TemplateWriter()
    where = source.endpoint if isinstance(source, ApiSettings) else f"dump:{Path(source).name}"
    started = time.perf_counter()
    counts: Counter[str] = Counter()
    rejects: list[Rejected] = []
    pending: list[_Pending] = []
    for n, page in enumerate(reader, start=1):
        history = read_history(page, start=start, end=end, horizon=horizon)
        if not page.complete:
            counts["pages_incomplete"] += 1
        else:
            item = _page_unit(history, reader.wiki_url, where, start=start, end=end, seed=seed, horizon=horizon,
                              counts=counts, rejects=rejects)
            if item is not None:
                pending.append(item)
        if progress:
            progress("pages", n, 0)
    read_seconds = time.perf_counter() - started
    records = _write_questions(writer, pending, end, counts, rejects)
    if domains is not None:
        records = _llm_domains(domains, records, pending, counts)
    kept, capped = labels.cap_per_domain(records, domain_of=lambda r: r.domain, key=lambda r: r.id,
                                         cap=cap_per_domain, seed=seed)
    rejects += [_reject("label", "domain_cap", f"{r.page_title!r} {r.infobox_key}: over the cap of {cap_per_domain}"
                        f" questions for {r.domain}", {"id": r.id, "page": r.page_title, "page_id": r.page_id,
                                                         "key": r.infobox_key, "question": r.question}) for r in capped]
    counts.update({k: v for k, v in reader.counts.items() if not k.startswith("bad_")})
    counts["questions"] = len(kept)
    usage = {"sparql_calls": 0, **total_usage([*writer.llms, *([domains.llm] if domains else [])]),
             **getattr(reader, "usage", {})}
    return _write(out, source, kept, [*reader.rejected, *rejects], counts,
                  window={"start": start.isoformat(), "end": end.isoformat(), "horizon_days": horizon.days},
                  settings={"seed": seed, "cap_per_domain": cap_per_domain, "horizon_seconds": horizon.total_seconds(),
                            "generator": writer.generator, "domains": domains.name if domains else labels.RULE},
                  timings={"read": round(read_seconds, 3), "run": round(time.perf_counter() - started, 3)},
                  usage=usage)


@dataclass(frozen=True, slots=True)
class _Pending:
    """A page's chosen change with everything its record needs but the question; no revision text, so that
    what waits for the writer grows with the questions, not with the pages' sizes."""

    unit: Unit
    page_id: int
    change: Change
    evidence: list[Evidence]
    domain: str
    frequency: str


def _page_unit(history: PageHistory, wiki_url: str, read_from: str, *, start: datetime, end: datetime, seed: int,
               horizon: timedelta, counts: Counter[str], rejects: list[Rejected]) -> _Pending | None:
    """The page's one change, ready for a question, or None; every drop on the way is kept in `rejects` or counted."""
    where = {"page": history.title, "page_id": history.page_id}
    if not history.revisions_in_window:
        counts["pages_unchanged_in_window"] += 1
        return None
    counts["pages_changed_in_window"] += 1
    counts["revisions_in_window"] += history.revisions_in_window
    changes = page_changes(history.states, start=start, end=end, seed=seed, page=str(history.page_id))
    counts.update(changes.counts)
    for d in changes.dropped:
        rejects.append(_reject("changes", d.reason, f"page {history.title!r} (id {history.page_id}) {d.detail}",
                               {**where, "key": d.key}))
    change, golden = changes.chosen, history.end
    if change is None or golden is None:
        return None
    counts["changes_chosen"] += 1
    # Correctness of the answer itself: the checker re-reads the key from the revision the answer stands on.
    failed = correct(change.key, change.after, golden.text)
    if failed:
        rejects.append(_reject("check", failed, f"page {history.title!r} key {change.key!r} revision {golden.id}: "
                               f"{change.after!r} is not what the revision's infobox reads ({failed})",
                               {**where, "key": change.key, "answer": change.after}))
        return None
    infobox = next(s.fields for s in reversed(history.states) if s.rev_id == golden.id)
    rule = Rule(page=history.title, key=change.key, page_id=history.page_id)
    unit = Unit(title=history.title, url=f"{wiki_url}/wiki/{quote(history.title.replace(' ', '_'))}", key=change.key,
                value=change.after, infobox=infobox, first_paragraph=first_paragraph(golden.text), rule=rule.to_json(),
                where=read_from)
    domain = labels.domain(history.templates.get(golden.id, ""), categories(golden.text))
    frequency = labels.update_frequency(history.states, change.key, end=end, horizon=horizon)
    evidence = [_evidence(history, wiki_url, rev_id) for rev_id in dict.fromkeys((change.rev_id, golden.id))]
    return _Pending(unit, history.page_id, change, evidence, domain.value, frequency.value)


def _write_questions(writer: Writer, pending: list[_Pending], as_of: datetime, counts: Counter[str],
                     rejects: list[Rejected]) -> list[WikipediaRecord]:
    """One batch through the writer (an LLM writer keeps its calls in flight); the refused kept with reasons."""
    records = []
    for item, written in zip(pending, writer.write([p.unit for p in pending]), strict=True):
        unit, change = item.unit, item.change
        if not written.kept:
            rejects.append(_reject("check", written.reason or "no_question",
                                   f"page {unit.title!r} key {unit.key!r} revision {change.rev_id}: {written.detail}",
                                   {"page": unit.title, "page_id": item.page_id, "key": unit.key,
                                    "question": written.question, "answer": unit.value}))
            continue
        counts["questions_written"] += 1
        records.append(WikipediaRecord(
            id=_id(item.page_id, unit.key, change.rev_id, unit.value), question=written.question or "",
            answer=unit.value, answer_aliases=answer_aliases(unit.value), source="wikipedia", level=item.frequency,
            event_date=change.timestamp.date(), as_of=as_of, evidence=item.evidence,
            verification=written.verification, generator=written.generator, page_title=unit.title,
            page_id=item.page_id, infobox_key=unit.key, revision_id=change.rev_id, value_before=change.before,
            recompute=unit.rule, update_frequency=item.frequency, domain=item.domain,
            infobox=json.dumps(dict(unit.infobox), ensure_ascii=False), first_paragraph=unit.first_paragraph))
    return records


def _llm_domains(domains: LLMDomains, records: list[WikipediaRecord], pending: list[_Pending],
                 counts: Counter[str]) -> list[WikipediaRecord]:
    """Each record's domain as the model gives it; a reply that is none of the seven keeps the rule's label, and
    is counted by its reason (`domains_by_rule.wrong_shape`)."""
    units = {(p.page_id, p.unit.key): p.unit for p in pending}
    given = domains.classify([(r.question, units[(r.page_id, r.infobox_key)]) for r in records])
    counts["domains_by_llm"] = sum(d is not None for d, _ in given)
    counts["domains_by_rule"] = sum(d is None for d, _ in given)
    counts.update(f"domains_by_rule.{reason}" for d, reason in given if d is None)
    return [r if d is None else r.model_copy(update={"domain": d}) for r, (d, _) in zip(records, given, strict=True)]


def _evidence(history: PageHistory, wiki_url: str, rev_id: int) -> Evidence:
    return Evidence(url=f"{wiki_url}/w/index.php?oldid={rev_id}", title=history.title,
                    revision=str(rev_id), sha256=history.sha256.get(rev_id))


def _id(page_id: int, key: str, rev_id: int, answer: str) -> str:
    return record_id("wikipedia", str(page_id), key, str(rev_id), answer)


def _reject(stage: str, reason: str, detail: str, item: dict[str, Any]) -> Rejected:
    return Rejected(source="wikipedia", stage=stage, reason=str(reason), detail=detail,
                    item=json.dumps(item, ensure_ascii=False, sort_keys=True))


def _write(out: Path, source: Source, records: list[WikipediaRecord], rejects: list[Rejected], counts: Counter[str],
           *, window: dict[str, Any], settings: dict[str, Any], timings: dict[str, float],
           usage: dict[str, float]) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    to_frame(records, WikipediaRecord).write_parquet(out / "questions.parquet")
    rejected = to_frame(rejects, Rejected) if rejects else pl.DataFrame(schema=REJECTED_SCHEMA)
    rejected.write_parquet(out / "rejected.parquet")
    inputs = ({"api": {"endpoint": source.endpoint}} if isinstance(source, ApiSettings)
              else {"dump": {"path": str(source), "sha256": _sha256(Path(source))}})
    manifest = {
        "source": "wikipedia",
        "inputs": inputs,
        "window": window,
        "as_of": window["end"],
        "counts": {key: counts[key] for key in sorted(counts, key=_funnel_rank)},
        "rejects": dict(sorted(Counter(r.reason for r in rejects).items())),
        "timings": timings,
        "generators": sorted({r.generator for r in records}),
        "parser": PARSER,
        "usage": usage,
        "settings": settings,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))
    return manifest


FUNNEL = ("pages_read", "pages_other_namespace", "pages_redirect", "pages_listed", "pages_incomplete",
          "pages_unchanged_in_window", "pages_changed_in_window", "revisions_read", "revisions_in_window", "keys_changed",
          "keys_superseded", "keys_not_chosen", "changes_chosen", "questions_written", "domains_by_llm",
          "domains_by_rule", "questions")
"""The manifest's counts in the order the stages run, so that the funnel reads top to bottom."""


def _funnel_rank(key: str) -> tuple[int, str]:
    stage = key.split(".", 1)[0]  # `domains_by_rule.wrong_shape` sits right under `domains_by_rule`
    return (FUNNEL.index(stage) if stage in FUNNEL else len(FUNNEL), key)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
