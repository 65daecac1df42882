"""The Wikipedia source end to end: a dump or the Action API and a window in; questions, rejects, manifest out.

DailyQA's pipeline in five stages, each reading and writing files in the run's work folder so that the
CLI and the Prefect flow run the same stages and a flow retries one without redoing the others:
`fetch_pages` is the network (the API's answers written as an export; a dump is used as it is);
`read_changes` streams each page's history once to its one chosen change with its answer re-derived and
its labels; `write_questions` puts a question to each (template or LLM) and checks its text; `gate_questions`
runs the question-quality gate (timelyqa.quality and wikipedia/gate.py) on the question as it will be released;
`check_questions` has the checker answer each from the page; `finish` labels domains (by rule or LLM),
applies the per-domain cap and writes the outputs through the stage writer.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import polars as pl

from timelyqa.files import sha256_file, write_parquet
from timelyqa.llm.client import usage_during
from timelyqa.crawling import Crawl
from timelyqa.manifest import Input, Manifest
from timelyqa.record import Evidence, Verification, WikipediaRecord, record_id
from timelyqa.stages import StageWriter
from timelyqa.quality import GATE_PASSED, GATE_STAGE, Gate
from timelyqa.wikipedia import gate as infobox_gate
from timelyqa.wikipedia import labels, typed
from timelyqa.answers import unit_phrase
from timelyqa.wikipedia.answer import Rule, read_in
from timelyqa.mediawiki.revisions import ApiReader
from timelyqa.mediawiki.client import ApiSettings
from timelyqa.wikipedia.changes import page_changes
from timelyqa.mediawiki.dump import DumpReader, check_dump
from timelyqa.mediawiki.export import write_export
from timelyqa.wikipedia.history import PageHistory, read_history
from timelyqa.wikipedia.infobox import PARSER, categories, first_paragraph
from timelyqa.wikipedia.options import Settings, Source
from timelyqa.refresh import finish_refresh, forget_refresh
from timelyqa.released import released_rows
from timelyqa.wikipedia import refresh
from timelyqa.wikipedia.questions import correct
from timelyqa.sources import Progress
from timelyqa.wikipedia.source import DEMO_WINDOW, SOURCE
from timelyqa.wikipedia.writers import LLMDomains, TemplateWriter, Unit, Writer, Written

Progress = Callable[[str, int, int], None]

PAGES, UNITS, WRITTEN, GATED, CHECKED = (
    "pages.xml.gz", "units.parquet", "written.parquet", "gated.parquet", "checked.parquet")
UNIT_SCHEMA = pl.Schema({
    "title": pl.String(), "url": pl.String(), "key": pl.String(), "value": pl.String(), "infobox": pl.String(),
    "first_paragraph": pl.String(), "rule": pl.String(), "where": pl.String(), "page_id": pl.Int64(),
    "value_before": pl.String(), "revision_id": pl.Int64(), "changed_at": pl.Datetime("us", "UTC"),
    "evidence": pl.String(), "domain": pl.String(), "frequency": pl.String(), "typed": pl.String(),
})
"""A page's chosen change with everything its record needs but the question; no revision text, so that what
waits for the writer grows with the questions, not with the pages' sizes. `typed` is the answer as the renderer
read it (typed.to_json: type, value, aliases)."""
WRITTEN_SCHEMA = pl.Schema({**UNIT_SCHEMA, "question": pl.String(), "generator": pl.String(),
                            "verification": pl.String()})


def open_source(source: Source, settings: Settings) -> DumpReader | ApiReader:
    """The pages of the source, checked before any work: a file that is not an export, an API that is not one or
    no longer holds the window, all stop here."""
    if isinstance(source, ApiSettings):
        reader = ApiReader(source, start=settings.start, end=settings.end, horizon=settings.horizon)
        reader.check()
        return reader
    check_dump(Path(source))
    return DumpReader(Path(source))


def origin(source: Source) -> str:
    """Where the pages were read, as records name it: the API's URL, or `dump:{file name}`."""
    return source.endpoint if isinstance(source, ApiSettings) else f"dump:{Path(source).name}"


def fetch_pages(source: Source, workdir: Path, settings: Settings) -> Path:
    """The pages' histories on disk: a dump as it is, the API's answers for the window written as an export.

    The network stage alone, so that a failure while parsing never asks the wiki again."""
    reader = open_source(source, settings)
    if not isinstance(reader, ApiReader):
        return Path(source)  # type: ignore[arg-type]
    ledger = _ledger(workdir)
    with ledger.timed("fetch"):
        path = workdir / PAGES
        write_export(reader, path, wiki_url=reader.wiki_url)
    # Pages read and their revisions are counted once, when the export is parsed.
    for line in ("pages_listed", "pages_other_namespace"):
        ledger.count(line, reader.counts[line])
    ledger.reject_all(reader.rejected)
    ledger.use(reader.usage)
    ledger.save("fetch")
    return path


def read_changes(pages: Path, workdir: Path, settings: Settings, *, where: str,
                 progress: Progress | None = None) -> Path:
    """One streamed pass over an export: each changed page's one chosen change, its answer re-derived from the
    revision it stands on, and its labels; every drop on the way kept with its reason. `where` names the
    source in each record's verification."""
    check_dump(pages)
    reader = DumpReader(pages)
    ledger = _ledger(workdir)
    rows = []
    with ledger.timed("read"):
        for n, page in enumerate(reader, start=1):
            history = read_history(page, start=settings.start, end=settings.end, horizon=settings.horizon)
            if not page.complete:
                ledger.count("pages_incomplete")
            elif (row := _unit(history, reader.wiki_url, where, settings, ledger)) is not None:
                rows.append(row)
            if progress:
                progress("pages", n, 0)
    ledger.take(reader)
    path = workdir / UNITS
    write_parquet(pl.DataFrame(rows, schema=UNIT_SCHEMA, orient="row"), path)
    ledger.save("read")
    return path


def write_questions(units: Path, workdir: Path, writer: Writer) -> Path:
    """A question for each change, its text checked by rule; the refused are kept with their reasons."""
    return _through(writer, units, workdir / WRITTEN, stage="write", line="questions_written",
                    step=lambda units_, _rows: writer.write(units_))


def gate_questions(written: Path, workdir: Path) -> Path:
    """The question-quality gate on every written question, template or model, before any is checked: the rows it
    lets through go on; each it drops is kept with its reason (stage `quality`)."""
    ledger = _ledger(workdir)
    frame = pl.read_parquet(written)
    gate = Gate(rules=infobox_gate.RULES)
    kept: list[bool] = []
    with ledger.timed(GATE_STAGE):
        for row in frame.iter_rows(named=True):
            sent_back = gate.check(_gate_row(row))
            kept.append(sent_back is None)
            if sent_back is not None:
                ledger.reject({**sent_back.item, "page": row["title"], "page_id": row["page_id"], "key": row["key"]},
                              sent_back.reason, f"page {row['title']!r} key {row['key']!r} revision "
                              f"{row['revision_id']}: {sent_back.detail}")
    ledger.count(GATE_PASSED, gate.passed)
    path = workdir / GATED
    write_parquet(frame.filter(pl.Series(kept, dtype=pl.Boolean())), path)
    ledger.save(GATE_STAGE)
    return path


def _gate_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A written question as the gate reads it: the question as released, the typed answer, the page and key."""
    answer = typed.from_json(str(row["typed"])).row()
    return {**answer, "question": row["question"], "infobox_key": row["key"], "page_title": row["title"],
            "page_id": row["page_id"]}


def check_questions(written: Path, workdir: Path, writer: Writer) -> Path:
    """Each written question checked (by an LLM writer's checker model: DailyQA's correctness check)."""
    def check(units: list[Unit], rows: list[dict[str, Any]]) -> list[Written]:
        return writer.check(units, [Written(r["question"], None, "", r["generator"], None) for r in rows])
    return _through(writer, written, workdir / CHECKED, stage="check", line="questions_checked", step=check)


def _through(writer: Writer, source: Path, target: Path, *, stage: str, line: str,
             step: Callable[[list[Unit], list[dict[str, Any]]], list[Written]]) -> Path:
    """One writer step over the rows of `source`: the rows it keeps go to `target`, the rest are rejected."""
    ledger = _ledger(target.parent)
    frame = pl.read_parquet(source)
    rows = list(frame.iter_rows(named=True))
    with ledger.timed(stage), usage_during(writer.llms, ledger.use):
        done = step([_as_unit(r) for r in rows], rows)
    kept = _kept(frame, done, ledger)
    ledger.count(line, kept.height)
    write_parquet(kept, target)
    ledger.save(stage)
    return target


def finish(source: Source, checked: Path, workdir: Path, out: Path, settings: Settings, *,
           domains: LLMDomains | None = None) -> Manifest:
    """Label domains (the rule's, or the model's where it gives one of the seven), cap them, write the outputs."""
    ledger = StageWriter.resume(SOURCE, out, work=workdir)
    frame = pl.read_parquet(checked)
    records = [_record(row, settings) for row in frame.iter_rows(named=True)]
    if domains is not None:
        with ledger.timed("label"), usage_during((domains.llm,), ledger.use):
            records = _llm_domains(domains, records, frame, ledger)
    kept, capped = labels.cap_per_domain(records, domain_of=lambda r: r.domain, key=lambda r: r.id,
                                         cap=settings.cap_per_domain, seed=settings.seed)
    for r in capped:
        ledger.reject({"id": r.id, "page": r.page_title, "page_id": r.page_id, "key": r.infobox_key,
                       "question": r.question}, labels.LabelReject.DOMAIN_CAP,
                      f"{r.page_title!r} {r.infobox_key}: over the cap of {settings.cap_per_domain} questions for "
                      f"{r.domain}")
    for record in kept:
        ledger.keep(record)
    ledger.use({"sparql_calls": 0, "llm_calls": 0})
    inputs = ({"api": Input(url=source.endpoint)} if isinstance(source, ApiSettings)
              else {"dump": Input(path=str(source), sha256=sha256_file(Path(source)))})
    window = {"start": settings.start.isoformat(), "end": settings.end.isoformat(),
              "horizon_days": settings.horizon_days}
    labelled_by = domains.name if domains else labels.RULE
    finish_refresh(workdir, out)
    return ledger.finish(as_of=settings.end, inputs=inputs,
                         settings={**settings.model_dump(mode="json"), "domains": labelled_by},
                         details={"window": window, "parser": PARSER})


def run(source: Source, out: Path, settings: Settings, *, writer: Writer | None = None,
        domains: LLMDomains | None = None, progress: Progress | None = None, previous: Path | None = None) -> Manifest:
    """The whole source, as `timelyqa wikipedia` and the `wikipedia` flow run it.

    `writer` writes and checks the questions: the template writer by default (no model needed), or an
    `LLMWriter`. Domains are labelled by rule, or by `domains` (an LLM) where it gives one of the seven.
    `progress(stage, done, total)` is called as pages are read (total 0: not known ahead). With `previous` (a
    release folder), its Wikipedia rows are asked again at the window's end of the same input (stage `refresh`,
    wikipedia/refresh.py).
    """
    out = Path(out)
    released = released_rows(previous, SOURCE.name) if previous is not None else None  # a bad folder: before work
    workdir = out / "work"
    writer = writer or TemplateWriter()
    # The manifest states the writer that ran, whichever way it was chosen.
    settings = settings.model_copy(update={"generator": "llm" if writer.llms else "template"})
    pages = fetch_pages(source, workdir, settings)
    units = read_changes(pages, workdir, settings, where=origin(source), progress=progress)
    if released is not None:  # before the writer: a failure here costs no model call
        refresh.refresh_released(released, source, workdir, settings.end)
    else:
        forget_refresh(workdir)
    written = write_questions(units, workdir, writer)
    gated = gate_questions(written, workdir)
    checked = check_questions(gated, workdir, writer)
    return finish(source, checked, workdir, out, settings, domains=domains)


def _ledger(workdir: Path) -> StageWriter:
    return StageWriter.part(SOURCE, workdir)


def _unit(history: PageHistory, wiki_url: str, read_from: str, settings: Settings,
          ledger: StageWriter) -> dict[str, object] | None:
    """The page's one change, ready for a question, or None; every drop on the way is kept or counted."""
    where = {"page": history.title, "page_id": history.page_id}
    if not history.revisions_in_window:
        ledger.count("pages_unchanged_in_window")
        return None
    ledger.count("pages_changed_in_window")
    ledger.count("revisions_in_window", history.revisions_in_window)
    changes = page_changes(history.states, start=settings.start, end=settings.end, seed=settings.seed,
                           page=str(history.page_id))
    for line, n in changes.counts.items():
        ledger.count(line, n)
    for d in changes.dropped:
        ledger.reject({**where, "key": d.key}, d.reason, f"page {history.title!r} (id {history.page_id}) {d.detail}")
    change, golden = changes.chosen, history.end
    if change is None or golden is None:
        return None
    ledger.count("changes_chosen")
    # Correctness of the answer itself: the checker re-reads the key from the revision the answer stands on.
    failed = correct(change.key, change.after, golden.text)
    if failed:
        ledger.reject({**where, "key": change.key, "answer": change.after}, failed,
                      f"page {history.title!r} key {change.key!r} revision {golden.id}: {change.after!r} is not what "
                      f"the revision's infobox reads ({failed})")
        return None
    infobox = next(s.fields for s in reversed(history.states) if s.rev_id == golden.id)
    # The type comes from the markup the answer was rendered from, in the revision the answer stands on.
    answer = typed.answer(read_in(golden.text, change.key) or typed.Value(change.after))
    evidence = [_evidence(history, wiki_url, rev_id).model_dump(mode="json")
                for rev_id in dict.fromkeys((change.rev_id, golden.id))]
    return {
        "title": history.title, "url": f"{wiki_url}/wiki/{quote(history.title.replace(' ', '_'))}", "key": change.key,
        "value": change.after, "infobox": json.dumps(dict(infobox), ensure_ascii=False),
        "first_paragraph": first_paragraph(golden.text),
        "rule": Rule(page=history.title, key=change.key, page_id=history.page_id).to_json(), "where": read_from,
        "page_id": history.page_id, "value_before": change.before, "revision_id": change.rev_id,
        "changed_at": change.timestamp, "evidence": json.dumps(evidence),
        "domain": labels.domain(history.templates.get(golden.id, ""), categories(golden.text)).value,
        "frequency": labels.update_frequency(history.states, change.key, end=settings.end,
                                             horizon=settings.horizon).value,
        "typed": typed.to_json(answer),
    }


def _as_unit(row: Mapping[str, object]) -> Unit:
    answer = typed.from_json(str(row["typed"]))
    return Unit(title=str(row["title"]), url=str(row["url"]), key=str(row["key"]), value=str(row["value"]),
                infobox=json.loads(str(row["infobox"])), first_paragraph=str(row["first_paragraph"]),
                rule=str(row["rule"]), where=str(row["where"]),
                unit_phrase=unit_phrase(answer.value), answer_type=str(answer.type))


def _kept(frame: pl.DataFrame, written: list[Written], ledger: StageWriter) -> pl.DataFrame:
    """The rows whose question stands, with it; the others rejected with the writer's or checker's reason."""
    kept = []
    for row, w in zip(frame.iter_rows(named=True), written, strict=True):
        if not w.kept or w.reason is not None:
            ledger.reject({"page": row["title"], "page_id": row["page_id"], "key": row["key"], "question": w.question,
                           "answer": row["value"]}, w.reason,
                          f"page {row['title']!r} key {row['key']!r} revision {row['revision_id']}: {w.detail}")
            continue
        verification = w.verification.model_dump_json() if w.verification else None
        kept.append({**{k: row[k] for k in UNIT_SCHEMA}, "question": w.question, "generator": w.generator,
                     "verification": verification})
    return pl.DataFrame(kept, schema=WRITTEN_SCHEMA, orient="row")


def _record(row: Mapping[str, object], settings: Settings) -> WikipediaRecord:
    value = str(row["value"])
    answer = typed.from_json(str(row["typed"]))
    return WikipediaRecord(
        id=record_id("wikipedia", str(row["page_id"]), str(row["key"]), str(row["revision_id"]), value),
        question=str(row["question"]), **answer.fields(), source="wikipedia",
        level=str(row["frequency"]), event_date=row["changed_at"].date(),  # type: ignore[attr-defined]
        as_of=settings.end, evidence=[Evidence.model_validate(e) for e in json.loads(str(row["evidence"]))],
        verification=Verification.model_validate_json(str(row["verification"])), generator=str(row["generator"]),
        page_title=str(row["title"]), page_id=int(row["page_id"]),  # type: ignore[call-overload]
        infobox_key=str(row["key"]), revision_id=int(row["revision_id"]),  # type: ignore[call-overload]
        value_before=row["value_before"],  # type: ignore[arg-type]
        recompute=str(row["rule"]), update_frequency=str(row["frequency"]), domain=str(row["domain"]),
        infobox=str(row["infobox"]), first_paragraph=str(row["first_paragraph"]))


def _llm_domains(domains: LLMDomains, records: list[WikipediaRecord], frame: pl.DataFrame,
                 ledger: StageWriter) -> list[WikipediaRecord]:
    """Each record's domain as the model gives it; a reply that is none of the seven keeps the rule's label, and is
    counted by why (`domains_by_rule_wrong_shape`)."""
    units = [_as_unit(row) for row in frame.iter_rows(named=True)]
    given = domains.classify([(r.question, u) for r, u in zip(records, units, strict=True)])
    ledger.count("domains_by_llm", sum(d is not None for d, _ in given))
    ledger.count("domains_by_rule", sum(d is None for d, _ in given))
    for _, reason in given:
        if reason is not None:
            ledger.count(f"domains_by_rule_{reason}")
    return [r if d is None else r.model_copy(update={"domain": d}) for r, (d, _) in zip(records, given, strict=True)]


def _evidence(history: PageHistory, wiki_url: str, rev_id: int) -> Evidence:
    return Evidence(url=f"{wiki_url}/w/index.php?oldid={rev_id}", title=history.title,
                    revision=str(rev_id), sha256=history.sha256.get(rev_id))


def run_on(inputs: Sequence[Path], out: Path, progress: Progress | None, crawl: Crawl) -> Manifest:
    """The registry's run (SOURCE.run): one export with history, asked about the demo's window; nothing is
    crawled."""
    (export,) = inputs
    return run(export, out, Settings(start=DEMO_WINDOW[0], end=DEMO_WINDOW[1]), progress=progress)
