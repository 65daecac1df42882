"""`timelyqa wikidata`: questions from Wikidata's changes, from two dumps or a window of the API."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from timelyqa.cli.common import check_paths, check_urls, one_line_errors, print_questions, progress
from timelyqa.errors import ConfigError


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
    seed: Annotated[int, typer.Option(help="seed for every choice among equals")] = 0,
    max_anchors: Annotated[int | None, typer.Option(help="sample this many delta triples (seeded)")] = None,
    previous: Annotated[Path | None, typer.Option(help="the last release: its Wikidata rows are asked again of T1, "
                                                  "and those no longer true are retired")] = None,
) -> None:
    """Questions from the changes between two Wikidata dumps, or in a window of the API (--api --since --until),
    each verified by SPARQL against T1 and T0."""
    from timelyqa.wikidata import incremental
    from timelyqa.wikidata.pipeline import Settings, run

    with one_line_errors():
        check_paths(out=out, cache=cache, previous=previous)
        check_urls(endpoint=endpoint, endpoint_before=endpoint_before, api=api, mirror=mirror)
        settings = Settings(seed=seed, max_anchors=max_anchors)
        way = incremental.mode(before, after, api, since, until, dumps)
        if way == "api":
            if endpoint_before is not None:
                raise ConfigError("--endpoint-before is for dumps: with --api, T0 is checked on a local Oxigraph")
            sparql = endpoint or incremental.DEFAULT_SPARQL
            wd, start, stop = incremental.prepare(api, since, until, user_agent=user_agent,  # type: ignore[arg-type]
                                                  endpoint=sparql)
            with progress(counted=True) as report:
                manifest = incremental.run(wd, start, stop, out, endpoint=sparql, local_store=local_store,
                                           settings=settings, previous=previous, progress=report)
        else:
            if local_store or user_agent:
                raise ConfigError("--local-store and --user-agent go with --api, not with dumps")
            with progress() as report:
                before, after = _dump_pair(before, after, dumps, mirror, cache, report)
                manifest = run(before, after, out, endpoint=endpoint, before_endpoint=endpoint_before,
                               settings=settings, progress=report, previous=previous)
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
