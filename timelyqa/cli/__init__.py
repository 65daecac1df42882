"""The `timelyqa` command: each subcommand runs the same code as its Prefect flow.

The edge of the project, its composition root: this package assembles one command module per source family
(wikidata, wikipedia, news, site_tree, official), the release and evaluation commands, and their shared helpers
(common). Each command module imports `common` only, never another command module nor this one; `release` is the
one module of `timelyqa` that imports `publish` (an import-linter contract keeps it so).

A source of another package brings its command in its registry entry (`SourceSpec.command`, "module:attr"): every
discovered source that is not built in has it registered here, after the built-in commands, so installing the
package is all it takes to see it in `timelyqa --help`.
"""

from __future__ import annotations

from typing import Annotated

import typer

from timelyqa.cli import evaluate, news, official, release, site_tree, wikidata, wikipedia
from timelyqa.errors import ConfigError

app = typer.Typer(help="Question-answer datasets whose answers change with the world.", no_args_is_help=True,
                  pretty_exceptions_enable=False, add_completion=False)


def _show_version(shown: bool) -> None:
    if shown:
        from timelyqa.manifest import code_version

        typer.echo(f"timelyqa {code_version()}")
        raise typer.Exit()


@app.callback()
def main(version: Annotated[bool, typer.Option("--version", callback=_show_version, is_eager=True,
                                               help="print the version and exit")] = False) -> None:
    """Question-answer datasets whose answers change with the world."""


# In the order `timelyqa --help` lists them.
app.command()(wikidata.wikidata)
app.add_typer(wikipedia.wikipedia_app, name="wikipedia")
app.command()(release.release)
app.command()(release.publish)
app.command()(release.demo)
app.add_typer(release.review_app, name="review")
app.add_typer(site_tree.crawl_app, name="crawl")
app.command()(news.news)
app.command("site-tree")(site_tree.site_tree)
app.command("extract")(site_tree.extract_page)
app.add_typer(evaluate.export_app, name="export")
app.command("eval")(evaluate.evaluate)
app.add_typer(official.live_app, name="live")
app.command("official")(official.official)


def command_name(spec_name: str, found: object) -> str:
    """The name a source's command is listed under: a Typer app's own name, else the source's; a function's name
    as Typer writes it (underscores as hyphens)."""
    if isinstance(found, typer.Typer):
        return found.info.name if isinstance(found.info.name, str) else spec_name.replace("_", "-")
    return getattr(found, "__name__", spec_name).replace("_", "-")


def register_sources(into: typer.Typer) -> list[str]:
    """Register the command of every discovered source that is not built in; one line on stderr for each that
    cannot be (a broken entry, a name taken), which costs only that command. The names registered."""
    from timelyqa.sources import BUILTIN, sources

    try:
        found = {name: spec for name, spec in sources().items() if name not in BUILTIN and spec.command}
    except ConfigError as exc:
        typer.echo(f"timelyqa: no command of another package: {exc}", err=True)
        return []
    taken = {c.name or getattr(c.callback, "__name__", "").replace("_", "-") for c in into.registered_commands}
    taken |= {g.name for g in into.registered_groups}
    added = []
    for name, spec in found.items():
        try:
            command = spec.command_object
        except ConfigError as exc:
            typer.echo(f"timelyqa: {exc}", err=True)
            continue
        listed = command_name(name, command)
        if listed in taken:
            typer.echo(f"timelyqa: source {name!r}: command = {spec.command!r}: the name {listed!r} is taken",
                       err=True)
            continue
        if isinstance(command, typer.Typer):
            into.add_typer(command, name=listed)
        else:
            into.command(listed)(command)  # type: ignore[arg-type]
        taken.add(listed)
        added.append(listed)
    return added


register_sources(app)

__all__ = ["app", "register_sources"]
