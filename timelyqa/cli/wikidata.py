"""`timelyqa wikidata`: questions from Wikidata's changes, from two dumps or a window of the API."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from timelyqa.cli.common import check_paths, one_line_errors, print_questions, progress
from timelyqa.errors import ConfigError
from timelyqa.wikidata.request import WikidataRequest


def _default(help: str, field: str) -> str:
    """An option's help with the request's default, which is the flow's: the command states none of its own."""
    return f"{help} (default {WikidataRequest.model_fields[field].default})"


def wikidata(
    out: Annotated[Path, typer.Option(help="folder for questions.parquet, rejected.parquet, manifest.json")],
    before: Annotated[Path | None, typer.Option(help="Wikidata JSON dump at T0 (plain, .gz or .bz2)")] = None,
    after: Annotated[Path | None, typer.Option(help="Wikidata JSON dump at T1")] = None,
    dumps: Annotated[str | None, typer.Option(help="'latest' (the newest two weekly dumps) or T1's date YYYYMMDD, "
                                              "fetched from --mirror (User-Agent from "
                                              "TIMELYQA_WIKIDATA_MIRROR_USER_AGENT)")] = None,
    mirror: Annotated[str | None, typer.Option(help="dump mirror's wikidatawiki/entities/ URL, for --dumps; "
                                               "default https://dumps.wikimedia.org/wikidatawiki/entities/")] = None,
    cache: Annotated[Path | None, typer.Option(help="where --dumps keeps the dumps; default out/dumps")] = None,
    api: Annotated[str | None, typer.Option(help="instead of dumps: Wikidata's Action API, e.g. "
                                            "https://www.wikidata.org/w/api.php (User-Agent from "
                                            "TIMELYQA_WIKIDATA_API_USER_AGENT), with --since and --until")] = None,
    since: Annotated[str | None, typer.Option(help="with --api: T0, a date or ISO time (UTC when no zone), within "
                                              "the last 30 days")] = None,
    until: Annotated[str | None, typer.Option(help="with --api: T1; answers are as of this moment")] = None,
    endpoint: Annotated[str | None, typer.Option(help="SPARQL endpoint holding T1; default: a local Oxigraph (dumps) "
                                                 "or https://query.wikidata.org/sparql (--api)")] = None,
    endpoint_before: Annotated[str | None, typer.Option(help="SPARQL endpoint holding T0; default: a local "
                                                        "Oxigraph")] = None,
    local_store: Annotated[bool, typer.Option(help="with --api: check T1 on a local Oxigraph of the edited entities "
                                              "and their neighbourhood instead of the endpoint")] = False,
    user_agent: Annotated[str | None, typer.Option(help="User-Agent with contact details, for --api")] = None,
    seed: Annotated[int | None, typer.Option(help=_default("seed for every choice among equals", "seed"))] = None,
    max_anchors: Annotated[int | None, typer.Option(help="sample this many delta triples (seeded)")] = None,
    previous: Annotated[Path | None, typer.Option(help="the last release: its Wikidata rows are asked again of T1, "
                                                  "and those no longer true are retired")] = None,
    read_parts: Annotated[int | None, typer.Option(help="parts each dump is read in, on a process a core; default "
                                                   "one per GB of dump")] = None,
    buckets: Annotated[int | None, typer.Option(help="buckets of subjects a snapshot is cut into, a power of two; "
                                                "default one per 256 MB of dump")] = None,
    batch_size: Annotated[int | None, typer.Option(help=_default("questions per SPARQL verification query",
                                                                 "batch_size"))] = None,
    concurrency: Annotated[int | None, typer.Option(help=_default("verification queries in flight at once",
                                                                  "concurrency"))] = None,
    synthesis_batch: Annotated[int | None, typer.Option(help=_default("delta rows a synthesis batch reads",
                                                                      "synthesis_batch"))] = None,
    verify_batch: Annotated[int | None, typer.Option(help=_default("candidates a verification batch checks",
                                                                   "verify_batch"))] = None,
    subgraphs: Annotated[bool | None, typer.Option(help=_default("a local store holds the subgraph the questions "
                                                                 "can touch, not the whole snapshot",
                                                                 "subgraphs"))] = None,
) -> None:
    """Questions from the changes between two Wikidata dumps, or in a window of the API (--api --since --until),
    each verified by SPARQL against T1 and T0. Each dump is read in parts, a process a core, into the files the
    `wikidata` flow writes."""
    with one_line_errors():
        run_request(request(**locals()))


def request(**options: Any) -> WikidataRequest:
    """The request the options make (the flow takes the same): the command's `--endpoint-before` is its
    `before_endpoint`. A wrong value: the ConfigError the flow gives for it."""
    options["before_endpoint"] = options.pop("endpoint_before", None)
    return WikidataRequest.of(**{name: value for name, value in options.items() if value is not None})


def run_request(ask: WikidataRequest) -> None:
    from timelyqa.wikidata import incremental
    from timelyqa.wikidata.pipeline import run

    out = ask.out
    check_paths(out=out, cache=ask.cache, previous=ask.previous)
    settings = ask.settings()
    way = incremental.mode(ask.before, ask.after, ask.api, ask.since, ask.until, ask.dumps)
    if way == "api":
        if ask.before_endpoint is not None:
            raise ConfigError("--endpoint-before is for dumps: with --api, T0 is checked on a local Oxigraph")
        sparql = ask.endpoint or incremental.DEFAULT_SPARQL
        wd, start, stop = incremental.prepare(ask.api, ask.since, ask.until,  # type: ignore[arg-type]
                                              user_agent=ask.user_agent, endpoint=sparql)
        with progress(counted=True) as report:
            manifest = incremental.run(wd, start, stop, out, endpoint=sparql, local_store=ask.local_store,
                                       settings=settings, previous=ask.previous, progress=report)
    else:
        if ask.local_store or ask.user_agent:
            raise ConfigError("--local-store and --user-agent go with --api, not with dumps")
        with progress() as report:
            before, after = _dump_pair(ask.before, ask.after, ask.dumps, ask.mirror, ask.cache, report)
            manifest = run(before, after, out, endpoint=ask.endpoint, before_endpoint=ask.before_endpoint,
                           settings=settings, progress=report, previous=ask.previous, buckets=ask.buckets,
                           read_parts=ask.read_parts)
    print_questions(manifest, out)


def _dump_pair(before: Path | None, after: Path | None, dumps: str | None, mirror: str | None, cache: Path | None,
              report: Any) -> tuple[Path, Path]:
    """Two dumps given by path, or fetched from a mirror by `--dumps` (incremental.mode has made sure it is one)."""
    if dumps is None:
        return before, after  # type: ignore[return-value]
    from timelyqa.wikidata.mirror import Mirror, MirrorSettings, parse_which

    parse_which(dumps)
    with Mirror(MirrorSettings.from_env(url=mirror, cache=cache), progress=report) as source:
        pair = source.fetch_pair(dumps)
    return pair.t0, pair.t1
