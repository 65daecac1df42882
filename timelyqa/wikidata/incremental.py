"""The Wikidata source over the Action API: the entities edited in a window, at T0 and at T1, through the dump mode's
delta, synthesis and verification, so that a window gives the questions a dump pair of the same world gives.

The touched entities' two states are written as two small JSON dumps and read by the dump mode's reader:
entities not edited in the window contribute nothing to a delta. Synthesis needs more of T1 than what was
touched: other entities' triples and labels come from the API as of T1 (`ApiBackend`), and the subjects of a
(property, object) key from a SPARQL endpoint holding T1. Everything synthesis learnt of untouched entities
(the neighbourhood) is kept as N-Triples: with the touched entities at T0 it is the store that checks "not
the same single answer at T0" (untouched entities are the same at T0 as at T1), and with them at T1 the
optional local store for checking T1 (`local_store`) instead of the full graph at the endpoint.
"""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from timelyqa.errors import ConfigError
from timelyqa.manifest import Input, Manifest
from timelyqa.sources import Progress
from timelyqa.refresh import finish_refresh, forget_refresh
from timelyqa.released import released_rows
from timelyqa.sparql import SparqlEndpoint
from timelyqa.stages import StageWriter
from timelyqa.wikidata import pipeline, refresh
from timelyqa.wikidata.api import WikidataAPI, WikidataApiSettings, check_window
from timelyqa.wikidata.dump import modified_time
from timelyqa.wikidata.graph import EntityRow, Graph, Key, ParquetBackend, Triple
from timelyqa.wikidata.query import PREFIXES, Var, from_json
from timelyqa.wikidata.rdf import WDT, entity_ntriples
from timelyqa.wikidata.source import SOURCE
from timelyqa.wikidata.statements import english, english_aliases, read_statements, read_truthy
from timelyqa.wikidata.values import ENTITY_IRI, Kind, kind_of, rdf_term
from timelyqa.mediawiki.client import MediaWikiAPI

DEFAULT_SPARQL = "https://query.wikidata.org/sparql"
SUBJECT_KEYS_PER_QUERY = 20
"""(property, object) keys asked in one SPARQL request, each its own subquery with its own LIMIT."""
COARSE_IN_RDF = frozenset({Kind.QUANTITY, Kind.TIME})
"""Kinds whose wdt: term drops part of the value (a quantity's unit, a time's precision): a SPARQL match is a
candidate, confirmed on the entity's own statements."""
NEIGHBOURHOOD = "neighbourhood.nt"
Entity = dict[str, Any]


def parse_time(text: str | datetime, option: str) -> datetime:
    """A date (midnight UTC) or an ISO time, UTC when no zone; a ConfigError naming the option otherwise."""
    if isinstance(text, datetime):
        return text if text.tzinfo else text.replace(tzinfo=UTC)
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ConfigError(f"{option} {text!r} is not a date (YYYY-MM-DD) or an ISO time") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def mode(before: object, after: object, api: object, since: object, until: object, dumps: object = None) -> str:
    """`dumps` (two dump files), `mirror` (`--dumps latest|YYYYMMDD`) or `api` (an API window): exactly one of the
    ways to name a week of Wikidata, given whole."""
    ways = {"dumps": (before, after), "mirror": (dumps,), "api": (api, since, until)}
    given = [way for way, values in ways.items() if any(v is not None for v in values)]
    if len(given) == 1 and all(v is not None for v in ways[given[0]]):
        return given[0]
    raise ConfigError("give either two dumps (--before FILE --after FILE), --dumps latest|YYYYMMDD, or an API window "
                      "(--api URL --since T0 --until T1): one of them, whole, not both nor part of one")


def prepare(api: str, since: str | datetime, until: str | datetime, *, user_agent: str | None = None,
            endpoint: str = DEFAULT_SPARQL, now: datetime | None = None
            ) -> tuple[WikidataApiSettings, datetime, datetime]:
    """The incremental mode's settings from loose values (CLI options, flow parameters), before any request: the
    API's (`TIMELYQA_WIKIDATA_API_*` under the given ones) and the window; a ConfigError names the wrong one."""
    start, stop = parse_time(since, "--since"), parse_time(until, "--until")
    check_window(start, stop, now or datetime.now(UTC))
    if not endpoint.startswith(("http://", "https://")):
        raise ConfigError(f"--endpoint {endpoint!r} is not an http(s) SPARQL URL")
    return WikidataApiSettings.from_env(endpoint=api, user_agent=user_agent), start, stop


def check_inputs(api: WikidataApiSettings, since: datetime, until: datetime, endpoint: str, *,
                 now: datetime | None = None) -> None:
    """Everything that can be wrong before any work: the window, the API settings (already validated), then one
    cheap request to each service."""
    check_window(since, until, now or datetime.now(UTC))
    if not endpoint.startswith(("http://", "https://")):
        raise ConfigError(f"--endpoint {endpoint!r} is not an http(s) SPARQL URL")
    with MediaWikiAPI(api) as client:
        client.check()
    SparqlEndpoint(endpoint, retries=1, backoff=0.5, agent=api.user_agent).ping()


def fetch_states(api: WikidataApiSettings, since: datetime, until: datetime, workdir: Path,
                 progress: Progress | None = None) -> tuple[Path, Path]:
    """The entities edited in the window, at T0 and at T1, as two JSON dumps (`api/t0.json.gz`, `api/t1.json.gz`),
    and `api/edited.json` naming each one's revisions. `progress` hears (stage, revisions read, of how many)."""
    folder = workdir / "api"
    folder.mkdir(parents=True, exist_ok=True)
    with MediaWikiAPI(api) as client:
        wd = WikidataAPI(client)
        edited = wd.edited(since, until)
        total, done, lock = sum(1 + bool(e.before) for e in edited), [0], threading.Lock()

        def read() -> None:
            with lock:
                done[0] += 1
                if progress is not None:
                    progress("revisions read", done[0], total)

        before = wd.entities_at(((e.entity, e.before) for e in edited if e.before), read)
        after = wd.entities_at(((e.entity, e.after) for e in edited), read)
        ledger = StageWriter.part(SOURCE, workdir)
        ledger.use(client.usage)
        ledger.save("fetch")
    (folder / "edited.json").write_text(json.dumps({
        "since": since.isoformat(), "until": until.isoformat(),
        "entities": {e.entity: {"title": e.title, "before": e.before, "after": e.after, "edits": e.edits}
                     for e in edited}}, indent=1, sort_keys=True))
    return write_dump(before.values(), folder / "t0.json.gz"), write_dump(after.values(), folder / "t1.json.gz")


def write_dump(entities: Iterable[Entity], path: Path) -> Path:
    """Wikidata's JSON dump layout (`[`, one entity a line with a comma, `]`), gzipped, in id order, reproducibly."""
    lines = [json.dumps(e, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
             for e in sorted(entities, key=lambda e: str(e["id"]))]
    with gzip.GzipFile(path, "wb", mtime=0) as f:
        f.write(("[\n" + ",\n".join(lines) + "\n]\n").encode())
    return path


class ApiBackend:
    """T1 for synthesis: touched entities from the T1 snapshot, others from the API as of T1, and subject sets
    from a SPARQL endpoint holding T1, with touched entities' own T1 statements standing for theirs."""

    def __init__(self, t1_dir: Path, touched: set[str], wd: WikidataAPI, sparql: SparqlEndpoint,
                 until: datetime) -> None:
        self.local = ParquetBackend.open(t1_dir)
        self.touched, self.wd, self.sparql, self.until = touched, wd, sparql, until
        self.fetched: dict[str, Entity | None] = {}
        self._truthy: dict[str, list[Triple]] = {}
        self._kinds: dict[Key, str] = {}
        self.bare: set[Triple] = set()
        """Triples of untouched subjects known from subject sets only (their entity was never fetched)."""

    def datatypes(self) -> dict[str, str | None]:
        return self.local.datatypes()

    def triples(self, subjects: list[str]) -> Iterable[Triple]:
        mine = [s for s in subjects if s in self.touched]
        self._load(s for s in subjects if s not in self.touched)
        rows = list(self.local.triples(mine)) + [t for s in subjects if s not in self.touched
                                                 for t in self._truthy.get(s, ())]
        for _, p, o, kind in rows:
            self._kinds[(p, o)] = kind
        return rows

    def entities(self, ids: list[str]) -> Iterable[EntityRow]:
        rows = list(self.local.entities([i for i in ids if i in self.touched]))
        others = [i for i in ids if i not in self.touched]
        self._load(others)
        for eid in others:
            e = self.fetched.get(eid)
            if e is not None:
                rows.append((eid, english(e), english_aliases(e), modified_time(e.get("modified")),
                             e.get("datatype")))
        return rows

    def subjects(self, keys: list[Key], cap: int) -> dict[Key, frozenset[str] | None]:
        found = self.sparql_subjects(keys, cap)
        mine = self.local.subjects(keys, cap=1 << 62)  # touched entities as they are at T1
        coarse = {k for k in keys if self._kind(k) in COARSE_IN_RDF}
        self._load(s for k in coarse if found.get(k) is not None and len(found[k]) <= cap
                   for s in found[k] if s not in self.touched)
        out: dict[Key, frozenset[str] | None] = {}
        for key in keys:
            subs = found.get(key, [])
            if len(subs) > cap:
                out[key] = None
                continue
            others = {s for s in subs if s not in self.touched}
            if key in coarse:
                others = {s for s in others if (s, *key) in {t[:3] for t in self._truthy.get(s, ())}}
            else:
                self.bare.update((s, key[0], key[1], self._kind(key)) for s in others if s not in self.fetched)
            result = others | (mine.get(key) or frozenset())
            out[key] = frozenset(result) if len(result) <= cap else None
        return out

    def sparql_subjects(self, keys: list[Key], cap: int) -> dict[Key, list[str]]:
        """Up to cap + 1 subjects of each key at the endpoint, a batch of keys a request."""
        out: dict[Key, list[str]] = {}
        for i in range(0, len(keys), SUBJECT_KEYS_PER_QUERY):
            batch = keys[i:i + SUBJECT_KEYS_PER_QUERY]
            branches = [f"{{ {{ SELECT DISTINCT ?s WHERE {{ ?s <{WDT}{p}> {rdf_term(Kind(self._kind((p, o))), o)} }} "
                        f"LIMIT {cap + 1} }} BIND({n} AS ?k) }}" for n, (p, o) in enumerate(batch)]
            rows = self.sparql.select(f"{PREFIXES}SELECT ?k ?s WHERE {{\n{' UNION '.join(branches)}\n}}")
            for row in rows:
                if row.get("s", "").startswith(ENTITY_IRI):
                    out.setdefault(batch[int(row["k"])], []).append(row["s"].removeprefix(ENTITY_IRI))
        return out

    def neighbourhood(self) -> str:
        """N-Triples of what synthesis learnt of untouched entities: fetched ones whole, others' matched triples."""
        lines = [entity_ntriples(eid, english(e), english_aliases(e), read_statements(e))
                 for eid, e in sorted(self.fetched.items()) if e is not None]
        lines += [f"<{ENTITY_IRI}{s}> <{WDT}{p}> {rdf_term(Kind(kind), o)} .\n"
                  for s, p, o, kind in sorted(self.bare) if s not in self.fetched]
        return "".join(lines)

    def _kind(self, key: Key) -> str:
        return self._kinds.get(key) or kind_of(key[1]).value

    def _load(self, ids: Iterable[str]) -> None:
        todo = sorted(set(ids) - self.fetched.keys() - self.touched)
        if not todo:
            return
        for eid, entity in self.wd.entities_as_of(todo, self.until).items():
            self.fetched[eid] = entity
            s: list[str] = []
            p: list[str] = []
            o: list[str] = []
            k: list[str] = []
            if entity is not None:
                read_truthy(entity, s, p, o, k, [])  # a neighbour's unreadable statement is no question's business
            self._truthy[eid] = list(dict.fromkeys(zip(s, p, o, k, strict=True)))
            for triple in self._truthy[eid]:
                self._kinds[triple[1:3]] = triple[3]


def synthesize(t1_dir: Path, t0_dir: Path, delta: Path, workdir: Path, settings: pipeline.Settings, *,
               api: WikidataApiSettings, endpoint: str, until: datetime) -> Path:
    """The dump mode's synthesis over T1 as the API and the endpoint give it; writes the neighbourhood beside."""
    edited = json.loads((workdir / "api" / "edited.json").read_text())["entities"]
    with MediaWikiAPI(api) as client:
        backend = ApiBackend(t1_dir, set(edited), WikidataAPI(client), SparqlEndpoint(endpoint, agent=api.user_agent),
                             until)
        graph = Graph.over(backend, fanout_cap=settings.fanout_cap)
        path = pipeline.synthesize(t1_dir, delta, workdir, settings, graph=graph, as_of=until)
        _complete_hops_at_t0(path, t0_dir, backend, settings.fanout_cap)
        usage = dict(client.usage)
    frame = pl.read_parquet(path)
    _with_revisions(frame, edited, until).write_parquet(path)
    (workdir / NEIGHBOURHOOD).write_text(backend.neighbourhood(), encoding="utf-8")
    ledger = StageWriter.part(SOURCE, workdir)
    ledger.use({**usage, "sparql_calls": backend.sparql.calls})
    ledger.save("api_synthesize")
    return path


def _complete_hops_at_t0(candidates: Path, t0_dir: Path, backend: ApiBackend, cap: int) -> None:
    """An L3 hop `?x p ?y . ?y hp ho` may pass at T0 through a touched y that no longer has `hp ho` at T1, whose
    `?x p y` triples synthesis never needed: fetch those too, so that the T0 store counts every T0 answer."""
    hops: set[tuple[str, str, str]] = set()
    for text in pl.read_parquet(candidates, columns=["query_json"])["query_json"]:
        patterns = from_json(json.loads(text)).patterns
        for a in patterns:
            for b in patterns:
                if isinstance(a.o, Var) and a.o == b.s and not isinstance(b.o, Var):
                    hops.add((a.p, b.p, b.o.form))
    if not hops:
        return
    wanted = pl.DataFrame([(hp, ho) for _, hp, ho in hops], schema={"p": pl.String(), "o": pl.String()}, orient="row")
    at_t0 = pl.read_parquet(t0_dir / "triples.parquet").join(wanted, on=["p", "o"], how="semi")
    ys: dict[tuple[str, str], set[str]] = {}
    for s, p, o, _ in at_t0.iter_rows():
        ys.setdefault((p, o), set()).add(s)
    keys = sorted({(p, y) for p, hp, ho in hops for y in ys.get((hp, ho), ())})
    if keys:
        backend.subjects(keys, cap)


def _with_revisions(frame: pl.DataFrame, edited: dict[str, Any], until: datetime) -> pl.DataFrame:
    """Evidence of the incremental mode: the entity's page at the revision that holds the answer."""
    evidence = []
    for row in frame.iter_rows(named=True):
        subject = row["delta_triple"][0]
        revision = edited[subject]["after"]
        evidence.append([{"url": f"https://www.wikidata.org/wiki/{subject}?oldid={revision}",
                          "title": row["evidence"][0]["title"] if row["evidence"] else subject,
                          "revision": str(revision), "fetched_at": until, "sha256": None}])
    return frame.with_columns(pl.Series("evidence", evidence, dtype=frame.schema["evidence"]))


def stores(workdir: Path, *, local_store: bool) -> tuple[Path, Path]:
    """The T0 store's folder, and T1's (the touched entities at each end with the neighbourhood), as `rdf.nt`."""
    neighbourhood = (workdir / NEIGHBOURHOOD).read_text(encoding="utf-8")
    folders = []
    for name in ("t0", "t1") if local_store else ("t0",):
        folder = workdir / f"{name}_store"
        folder.mkdir(parents=True, exist_ok=True)
        touched = (workdir / name / "rdf.nt").read_text(encoding="utf-8")
        (folder / "rdf.nt").write_text(touched + neighbourhood, encoding="utf-8")
        folders.append(folder)
    return folders[0], folders[-1]


def finish(workdir: Path, out: Path, *, api: WikidataApiSettings, endpoint: str, since: datetime, until: datetime,
           local_store: bool, settings: pipeline.Settings) -> Manifest:
    ledger = StageWriter.resume(SOURCE, out, work=workdir)
    finish_refresh(workdir, out)
    ledger.keep_frame(pl.read_parquet(workdir / "verified.parquet"))
    ledger.use({"llm_calls": 0})
    edited = json.loads((workdir / "api" / "edited.json").read_text())
    return ledger.finish(as_of=until, inputs={"api": Input(url=api.endpoint), "sparql": Input(url=endpoint)},
                         settings={**settings.model_dump(), "since": since.isoformat(), "until": until.isoformat(),
                                   "local_store": local_store},
                         details={"edited_entities": len(edited["entities"])})


def run(api: WikidataApiSettings, since: datetime, until: datetime, out: Path, *, endpoint: str = DEFAULT_SPARQL,
        local_store: bool = False, settings: pipeline.Settings | None = None, now: datetime | None = None,
        previous: Path | None = None, progress: Progress | None = None) -> Manifest:
    """The whole incremental mode: what `timelyqa wikidata --since --until --api` and the flow both do.

    `endpoint` holds T1: it gives subject sets to synthesis and, unless `local_store`, checks every question.
    The check at T0 always runs on a local Oxigraph (the endpoint holds no past). With `previous` (a release
    folder), its Wikidata rows are asked again of the endpoint (stage `refresh`); not of a local store, which holds
    only this window's entities and would retire every row about the rest: there, they carry unchecked."""
    settings = settings or pipeline.Settings()
    out = Path(out)
    check_inputs(api, since, until, endpoint, now=now)
    released = released_rows(previous, SOURCE.name) if previous is not None else None  # a bad folder: before work
    workdir = out / "work"
    t0_dump, t1_dump = fetch_states(api, since, until, workdir, progress)
    t0 = pipeline.read_snapshot(t0_dump, workdir, "t0", rdf=True)
    t1 = pipeline.read_snapshot(t1_dump, workdir, "t1", rdf=True)
    delta = pipeline.compute_delta(t0, t1, workdir)
    candidates = synthesize(t1, t0, delta, workdir, settings, api=api, endpoint=endpoint, until=until)
    t0_store, t1_store = stores(workdir, local_store=local_store)
    pipeline.verify(candidates, t1_store, workdir, None if local_store else endpoint, settings, t0_dir=t0_store)
    if released is not None and not local_store:
        refresh.refresh_released(released, workdir, endpoint=endpoint, concurrency=settings.concurrency)
    else:
        forget_refresh(workdir)
    return finish(workdir, out, api=api, endpoint=endpoint, since=since, until=until, local_store=local_store,
                  settings=settings)
