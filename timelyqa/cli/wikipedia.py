"""`timelyqa wikipedia` and `timelyqa wikipedia answer`: questions from infobox changes, and their answers on any
date."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from timelyqa import checks
from timelyqa.cli.common import Generator, check_urls, one_line_errors, print_questions, progress
from timelyqa.errors import ConfigError

wikipedia_app = typer.Typer(help="Questions from Wikipedia infobox changes (DailyQA), and their answers on any date.")


@wikipedia_app.callback(invoke_without_command=True)
def wikipedia(
    ctx: typer.Context,
    dump: Annotated[Path | None, typer.Option(help="MediaWiki XML export or dump with revision history (plain, "
                                              ".bz2, .gz)")] = None,
    api: Annotated[str | None, typer.Option(help="a wiki's Action API, e.g. https://en.wikipedia.org/w/api.php "
                                            "(User-Agent from TIMELYQA_WIKIPEDIA_API_USER_AGENT)")] = None,
    start: Annotated[str | None, typer.Option(help="window start, a date or ISO time (UTC when no zone)")] = None,
    end: Annotated[str | None, typer.Option(help="window end: answers are as of this moment")] = None,
    out: Annotated[Path | None, typer.Option(help="folder for questions.parquet, rejected.parquet, "
                                             "manifest.json")] = None,
    generator: Annotated[Generator, typer.Option(help="template (offline) or llm (TIMELYQA_LLM_* writes, "
                                                  "TIMELYQA_CHECK_LLM_* checks)")] = Generator.template,
    seed: Annotated[int, typer.Option(help="seed for the one key picked per revision and the domain cap")] = 0,
    cap_per_domain: Annotated[int, typer.Option(help="most questions per domain")] = 750,
    horizon_days: Annotated[int, typer.Option(help="days after the end watched for the update frequency")] = 7,
    user_agent: Annotated[str | None, typer.Option(help="User-Agent with contact details, for --api")] = None,
    llm_domains: Annotated[bool, typer.Option(help="label domains with the model of TIMELYQA_LLM_* (DailyQA's "
                                              "zero-shot way) instead of by rule")] = False,
    previous: Annotated[Path | None, typer.Option(help="the last release: its Wikipedia rows are answered again at "
                                                  "--end from the same dump or API, and those no longer true are "
                                                  "retired")] = None,
) -> None:
    """Questions whose answers are infobox values changed in a window: `--dump FILE` or `--api URL`, `--start`,
    `--end`, `--out`. `timelyqa wikipedia answer` gives released questions their answers on another date."""
    if ctx.invoked_subcommand is not None:
        return
    from timelyqa.wikipedia.request import WikipediaRequest, run

    with one_line_errors():
        if start is None or end is None or out is None:
            raise ConfigError("timelyqa wikipedia needs --start, --end and --out")
        request = WikipediaRequest.of(out=out, dump=dump, api=api, start=start, end=end, seed=seed,
                                      cap_per_domain=cap_per_domain, horizon_days=horizon_days,
                                      generator=generator.value, llm_domains=llm_domains, user_agent=user_agent,
                                      previous=previous)
        with progress(counted=True) as report:
            manifest = run(request, progress=report)
    print_questions(manifest, out)


@wikipedia_app.command("answer")
def wikipedia_answer(
    date: Annotated[str, typer.Option(help="the date (or ISO time, UTC when no zone) to answer on")],
    questions: Annotated[Path, typer.Option(help="a source output folder, a release folder or a parquet file")],
    out: Annotated[Path, typer.Option(help="parquet file for the answers")],
    dump: Annotated[Path | None, typer.Option(help="MediaWiki XML dump with revision history")] = None,
    api: Annotated[str | None, typer.Option(help="a wiki's Action API URL")] = None,
    user_agent: Annotated[str | None, typer.Option(help="User-Agent with contact details, for --api")] = None,
) -> None:
    """Each question's answer on DATE: its infobox value at the page's last revision at or before it."""
    from timelyqa.wikipedia.options import parse_moment, source_of
    from timelyqa.wikipedia.resolve import answer_questions, read_questions, write_answers

    with one_line_errors():
        checks.out_file(out, "--out")
        check_urls(api=api)
        source = source_of(dump, api, user_agent)
        when = parse_moment(date, "--date", end_of_day=True)
        frame = read_questions(questions)
        answers = answer_questions(frame, when, dump=source if isinstance(source, Path) else None,
                                   api=None if isinstance(source, Path) else source)
        write_answers(answers, out)
    typer.echo(answers.summary())
    typer.echo(f"answers on {when.isoformat()} in {out}")
