"""The `timelyqa` command: each subcommand runs the same code as its Prefect flow.

The edge of the project, its composition root: this package assembles one command module per source family
(wikidata, wikipedia, news, site_tree, official), the release and evaluation commands, and their shared helpers
(common). Each command module imports `common` only, never another command module nor this one; `release` is the
one module of `timelyqa` that imports `publish` (an import-linter contract keeps it so).
"""

from __future__ import annotations

from typing import Annotated

import typer

from timelyqa.cli import evaluate, news, official, release, site_tree, wikidata, wikipedia

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

__all__ = ["app"]
