"""`timelyqa release`, `publish`, `demo` and `review`: source outputs into a release, the release onto the Hub, the
whole job on the bundled inputs, and human review of a release's test rows.

The one module of `timelyqa` that imports `publish` (releases, the Hub), which the rest of the core never does (an
import-linter contract keeps it so).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from timelyqa import checks
from timelyqa.cli.common import check_paths, console, one_line_errors, print_questions, progress

DEMO_FLOORS = "data/demo-floors.yaml"
"""The floors the demo's release is held to (publish/gate.py)."""

review_app = typer.Typer(help="Human review of a release's test rows: accept or reject, never edit (LiveNewsBench's "
                         "human-verified set).", no_args_is_help=True)


def load_line(release_dir: Path, config: str = "default") -> str:
    return (f'python -c "import datasets; print(datasets.load_dataset(\'{release_dir}\', \'{config}\', '
            f'split=\'test\'))"')


def release(
    sources: Annotated[list[Path], typer.Option("--from", help="a source output folder; repeat for several")],
    out: Annotated[Path, typer.Option(help="the release folder (a Hub dataset repository)")],
    version: Annotated[str | None, typer.Option(help="tag; default vYYYY.MM.DD of the newest run's as_of, so the "
                                                "same inputs give the same release")] = None,
    previous: Annotated[Path | None, typer.Option(help="the previous release, if not already in --out")] = None,
    floors: Annotated[Path | None, typer.Option(help="a YAML file of pinned floors (rows per config, the most the "
                                                "question-quality gate may send back, funnel ratios): a release "
                                                "below them is not written, exit 1")] = None,
) -> None:
    """Split, merge and write source outputs as one release in the Hub layout."""
    from publish.gate import Floors
    from publish.release import build_release

    with one_line_errors():
        check_paths(out=out, previous=previous, release=True)
        if version is not None:
            checks.release_version(version)
        pinned = Floors.load(floors) if floors is not None else None
        manifest = build_release(sources, out, version=version, previous=previous, floors=pinned)
    typer.echo(f"release {manifest.version} in {out}; read it with:")
    for config in manifest.configs:
        typer.echo(load_line(out, config))


def publish(
    release_dir: Annotated[Path, typer.Argument(metavar="RELEASE", help="a release folder")],
    repo: Annotated[str, typer.Option(help="the Hub dataset repository, ORG/NAME")],
    dry_run: Annotated[bool, typer.Option(help="show what would be uploaded, deleted and tagged; change nothing")] = False,
) -> None:
    """Upload a release as one commit and tag it with its version; the token comes from HF_TOKEN."""
    from publish.hub import publish_release

    with one_line_errors():
        result = publish_release(release_dir, repo, dry_run=dry_run)
    typer.echo(result.summary())


def demo(out: Annotated[Path, typer.Option(help="where the demo writes")] = Path("out/demo")) -> None:
    """The main job on the embedded defaults: every registered source on its bundled inputs, into one release, held
    to the demo's pinned floors (data/demo-floors.yaml): a change that makes the demo's questions fewer or worse
    fails it.

    The demo is dated by its inputs, not the wall clock: its crawls are stamped with the newest moment the bundled
    inputs carry, so the same checkout gives the same release, byte for byte, on any day."""
    from publish.gate import Floors
    from publish.release import build_release
    from spiders.run import crawl
    from timelyqa import clock, demo as steps
    from timelyqa.sources import ROOT, sources

    with one_line_errors():
        check_paths(out=out)
        at = steps.inputs_clock()
    specs = sources()
    total = len(specs) + 1
    typer.echo(f"timelyqa demo: {len(specs)} sources on the bundled inputs in data/demo, dated {at.isoformat()} "
               "(the inputs' newest moment, not today)")
    folders = []
    with clock.fixed(at):
        for number, (name, spec) in enumerate(specs.items(), start=1):
            typer.echo(steps.step_header(number, total, spec))
            with one_line_errors(), progress(counted=True) as report:
                manifest = spec.demo(out / name, report, crawl=crawl)
            print_questions(manifest, out / name)
            folders.append(out / name)
        typer.echo(steps.release_header(total, total, folders, out / "release"))
        with one_line_errors():
            result = build_release(folders, out / "release", floors=Floors.load(ROOT / DEMO_FLOORS), synthetic=True)
    for config in result.configs:
        typer.echo(load_line(out / "release", config))
    for line in steps.summary(result, out / "release"):
        typer.echo(line)


@review_app.command("export")
def review_export(
    release_dir: Annotated[Path, typer.Argument(metavar="RELEASE", help="a release folder")],
    config: Annotated[str, typer.Option(help="the config whose test rows to review, e.g. news")],
    out: Annotated[Path, typer.Option(help="JSON lines file for the reviewer")],
    articles: Annotated[Path | None, typer.Option(help="a parquet with columns url and text (the news source's "
                                                  "articles.parquet): adds an excerpt around each answer")] = None,
    force: Annotated[bool, typer.Option(help="overwrite --out if it exists (it may hold a reviewer's decisions)")]
    = False,
) -> None:
    """Write the config's test rows that have no decision yet, each with an empty `decision` to fill with accept or
    reject. An existing --out is never overwritten without --force."""
    from publish.review import export_review

    with one_line_errors():
        checks.out_file(out, "--out")
        result = export_review(release_dir, config, out, articles=articles, force=force)
    typer.echo(result.summary())


@review_app.command("import")
def review_import(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="the reviewed JSON lines file")],
    release_dir: Annotated[Path, typer.Option("--release", help="the release folder the rows came from")],
) -> None:
    """Take the accept/reject decisions into the release (kept in its reviews/ folder, applied to later releases)
    and rebuild its human_verified splits, manifest, card and changelog; refuse any other line with its reason."""
    from publish.release import import_review

    with one_line_errors():
        result, manifest = import_review(file, release_dir)
    for message in result.messages():
        console.print(message, highlight=False, soft_wrap=True, markup=False)
    typer.echo(result.summary())
    verified = {config: manifest.rows(config, "human_verified") for config in manifest.counts}
    typer.echo(f"release {manifest.version} in {release_dir}: human_verified rows "
               + ", ".join(f"{config} {n}" for config, n in sorted(verified.items())))
