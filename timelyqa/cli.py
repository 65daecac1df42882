"""The `timelyqa` command: each subcommand runs the same code as its Prefect flow."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from timelyqa.errors import TimelyQAError

app = typer.Typer(help="Question-answer datasets whose answers change with the world.", no_args_is_help=True,
                  pretty_exceptions_enable=False, add_completion=False)
console = Console(stderr=True)
DEMO = Path(__file__).resolve().parent.parent / "data" / "demo"


@contextmanager
def _one_line_errors() -> Iterator[None]:
    """Bad input and wrong settings end the command with one line naming the cause, not a traceback."""
    try:
        yield
    except TimelyQAError as exc:
        console.print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    except ValidationError as exc:
        first = exc.errors()[0]
        console.print(f"[red]error:[/red] setting {'.'.join(map(str, first['loc']))}: {first['msg']}",
                      highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None


@app.command()
def wikidata(
    before: Annotated[Path, typer.Option(help="Wikidata JSON dump at T0 (plain, .gz or .bz2)")],
    after: Annotated[Path, typer.Option(help="Wikidata JSON dump at T1")],
    out: Annotated[Path, typer.Option(help="folder for questions.parquet, rejected.parquet, manifest.json")],
    endpoint: Annotated[str | None, typer.Option(help="SPARQL endpoint holding T1; default: a local Oxigraph")] = None,
    seed: Annotated[int, typer.Option(help="seed for every choice among equals")] = 0,
    max_anchors: Annotated[int | None, typer.Option(help="sample this many delta triples (seeded)")] = None,
) -> None:
    """Questions from the changes between two Wikidata dumps, each verified by SPARQL against T1."""
    from timelyqa.wikidata.pipeline import Settings, run

    with _one_line_errors():
        settings = Settings(seed=seed, max_anchors=max_anchors)
        with _progress() as report:
            manifest = run(before, after, out, endpoint=endpoint, settings=settings, progress=report)
    _print_funnel(manifest)
    typer.echo(f"{manifest['counts']['questions']} questions in {out / 'questions.parquet'}")


@app.command()
def release(
    sources: Annotated[list[Path], typer.Option("--from", help="a source output folder; repeat for several")],
    out: Annotated[Path, typer.Option(help="the release folder (a Hub dataset repository)")],
    version: Annotated[str | None, typer.Option(help="tag; default vYYYY.MM.DD of today")] = None,
    previous: Annotated[Path | None, typer.Option(help="the previous release, if not already in --out")] = None,
) -> None:
    """Split, merge and write source outputs as one release in the Hub layout."""
    from publish.release import build_release

    with _one_line_errors():
        manifest = build_release(sources, out, version=version, previous=previous)
    typer.echo(f"release {manifest['version']} in {out}")
    typer.echo(load_line(out))


@app.command()
def publish(
    release_dir: Annotated[Path, typer.Argument(metavar="RELEASE", help="a release folder")],
    repo: Annotated[str, typer.Option(help="the Hub dataset repository, ORG/NAME")],
    dry_run: Annotated[bool, typer.Option(help="show what would be uploaded, deleted and tagged; change nothing")] = False,
) -> None:
    """Upload a release as one commit and tag it with its version; the token comes from HF_TOKEN."""
    from publish.hub import publish_release

    with _one_line_errors():
        result = publish_release(release_dir, repo, dry_run=dry_run)
    typer.echo(result.summary())


@app.command()
def demo(out: Annotated[Path, typer.Option(help="where the demo writes")] = Path("out/demo")) -> None:
    """The main job on the embedded defaults: every source on its bundled inputs, into one release."""
    wikidata(before=DEMO / "wikidata-t0.json.gz", after=DEMO / "wikidata-t1.json.bz2", out=out / "wikidata")
    release(sources=[out / "wikidata"], out=out / "release", version=None, previous=None)


export_app = typer.Typer(help="Rows for RLVR trainers from a release's train split.", no_args_is_help=True)
app.add_typer(export_app, name="export")


def _export(kind: str, release_dir: Path, out: Path, config: str, split: str) -> None:
    from timelyqa import export

    with _one_line_errors():
        path = (export.export_verl if kind == "verl" else export.export_trl)(release_dir, out, config=config,
                                                                           split=split)
    typer.echo(f"{kind} rows in {path}")


@export_app.command("verl")
def export_verl(
    release_dir: Annotated[Path, typer.Argument(metavar="RELEASE", help="a release folder")],
    out: Annotated[Path, typer.Option(help="folder for {split}.parquet")],
    config: Annotated[str, typer.Option(help="which config")] = "default",
    split: Annotated[str, typer.Option(help="which split")] = "train",
) -> None:
    """verl rows: data_source, prompt, ability, reward_model, extra_info; score with timelyqa.rewards.compute_score."""
    _export("verl", release_dir, out, config, split)


@export_app.command("trl")
def export_trl(
    release_dir: Annotated[Path, typer.Argument(metavar="RELEASE", help="a release folder")],
    out: Annotated[Path, typer.Option(help="folder for {split}.parquet")],
    config: Annotated[str, typer.Option(help="which config")] = "default",
    split: Annotated[str, typer.Option(help="which split")] = "train",
) -> None:
    """TRL GRPO rows: a chat prompt plus answer columns; score with timelyqa.rewards.answer_reward."""
    _export("trl", release_dir, out, config, split)


def load_line(release_dir: Path) -> str:
    return f'python -c "import datasets; print(datasets.load_dataset(\'{release_dir}\', \'wikidata\', split=\'test\'))"'


@contextmanager
def _progress() -> Iterator[Any]:
    columns = [TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TimeRemainingColumn()]
    with Progress(*columns, console=console, transient=False, disable=os.environ.get("TIMELYQA_QUIET") == "1") as bar:
        tasks: dict[str, Any] = {}

        def report(name: str, done: int, total: int) -> None:
            if name not in tasks:
                tasks[name] = bar.add_task(name, total=total)
            bar.update(tasks[name], completed=done, total=total)

        yield report


def _print_funnel(manifest: dict[str, Any]) -> None:
    table = Table(title="funnel", show_header=True)
    table.add_column("stage")
    table.add_column("count", justify="right")
    for name, value in manifest["counts"].items():
        table.add_row(name, str(value))
    console.print(table)
    if manifest["rejects"]:
        rejects = Table(title="rejects", show_header=True)
        rejects.add_column("reason")
        rejects.add_column("count", justify="right")
        for reason, n in manifest["rejects"].items():
            rejects.add_row(reason, str(n))
        console.print(rejects)


if __name__ == "__main__":
    app()
