"""What every command module of the CLI shares: one-line errors, the console, progress bars, the funnel table, checks
of paths, URLs and `--var` pairs, and reading a release folder or a Hub release."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from enum import Enum
from pathlib import Path
from typing import Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.progress import (BarColumn, DownloadColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)
from rich.table import Table

from timelyqa import checks
from timelyqa.errors import ConfigError, GateFailed, TimelyQAError
from timelyqa.manifest import Manifest

console = Console(stderr=True)


class Generator(str, Enum):
    template = "template"
    llm = "llm"


@contextmanager
def one_line_errors() -> Iterator[None]:
    """Bad input and wrong settings end the command with one line naming the cause, not a traceback."""
    try:
        yield
    except TimelyQAError as exc:
        console.print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(1 if isinstance(exc, GateFailed) else 2) from None
    except ValidationError as exc:
        first = exc.errors()[0]
        console.print(f"[red]error:[/red] setting {'.'.join(map(str, first['loc']))}: {first['msg']}",
                      highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None


def check_paths(*, out: Path | None = None, previous: Path | None = None, release: bool = False,
                **folders: Path | None) -> None:
    """The folders a command writes (`--out`, and `folders` by option name) and the release it reads, before any
    work: a file where a folder goes would fail after hours, a wrong `--previous` would re-check nothing."""
    for option, folder in {"out": out, **folders}.items():
        if folder is not None:
            checks.out_folder(folder, option_name(option))
    if previous is not None:
        checks.previous_folder(previous, "--previous", runs=not release)


def check_urls(**urls: str | None) -> None:
    """Every service URL given, by option name: http(s) with a host, never file:// or a bare word."""
    for option, url in urls.items():
        if url is not None:
            checks.http_url(url, option_name(option))


def option_name(name: str) -> str:
    return "--" + name.replace("_", "-")


def day(text: str, option: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise ConfigError(f"{option} {text!r}: not a date (YYYY-MM-DD)") from None


def variables(pairs: list[str] | None) -> dict[str, str]:
    """The `--var NAME=VALUE` pairs as a mapping; ConfigError naming a pair that is not one."""
    found: dict[str, str] = {}
    for pair in pairs or []:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ConfigError(f"--var {pair!r}: not NAME=VALUE")
        found[name.strip()] = value
    return found


def release_folder(release: str) -> tuple[Path, str, str | None]:
    """A release folder as given, or ORG/NAME[@TAG] downloaded from the Hub: the folder, its name, its commit."""
    if Path(release).is_dir():
        return Path(release), release, None
    repo, _, tag = release.partition("@")
    if repo.count("/") != 1 or not all(repo.split("/")):
        raise ConfigError(f"{release}: neither a release folder nor ORG/NAME[@TAG] on the Hub")
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError, RepositoryNotFoundError

    try:
        folder = Path(snapshot_download(repo, repo_type="dataset", revision=tag or None))
    except (RepositoryNotFoundError, LocalEntryNotFoundError, HfHubHTTPError, OSError) as exc:
        raise ConfigError(f"{release}: cannot download the release ({type(exc).__name__})") from None
    return folder, release, folder.name


@contextmanager
def progress(*, counted: bool = False) -> Iterator[Any]:
    """A bar per stage: bytes of input read, or (`counted`) items done when their total is not known ahead."""
    columns = ([TextColumn("{task.description}"), SpinnerColumn(), TextColumn("{task.completed:,.0f}"),
                TimeElapsedColumn()] if counted else
               [TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TimeRemainingColumn()])
    with Progress(*columns, console=console, transient=False, disable=os.environ.get("TIMELYQA_QUIET") == "1") as bar:
        tasks: dict[str, Any] = {}

        def report(name: str, done: int, total: int) -> None:
            if name not in tasks:
                tasks[name] = bar.add_task(name, total=total or None)
            bar.update(tasks[name], completed=done, total=total or None)

        yield report


def print_funnel(manifest: Manifest) -> None:
    table = Table(title=f"{manifest.source} funnel", show_header=True)
    table.add_column("stage")
    table.add_column("count", justify="right")
    for name, value in manifest.counts.items():
        table.add_row(name, str(value))
    console.print(table)
    if manifest.rejects:
        rejects = Table(title=f"{manifest.source} rejects", show_header=True)
        rejects.add_column("reason")
        rejects.add_column("count", justify="right")
        for reason, n in manifest.rejects.items():
            rejects.add_row(reason, str(n))
        console.print(rejects)


def print_questions(manifest: Manifest, out: Path) -> None:
    """The funnel, then the line every source command ends with: how many questions, and where."""
    print_funnel(manifest)
    typer.echo(f"{manifest.counts['questions']} questions in {out / 'questions.parquet'}")
