"""The release flow: source output folders in, one Hugging Face dataset folder out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_link_artifact, create_markdown_artifact, create_table_artifact
from prefect.client.orchestration import get_client
from prefect.runtime import flow_run

from flows.common import reported, run_name
from publish.card import DEFAULT_CONFIG
from publish.gate import Floors
from publish.release import build_release
from timelyqa import checks
from timelyqa.errors import ConfigError
from timelyqa.manifest import MANIFEST
from timelyqa.release_manifest import ReleaseManifest
from timelyqa.sources import outputs
from timelyqa.split import EXTRA_SPLITS, RELEASE_SPLITS


@task
def assemble_release(sources: list[Path], out: Path, version: str | None, previous: Path | None,
                     floors: Floors | None = None) -> ReleaseManifest:
    return build_release(sources, out, version=version, previous=previous, floors=floors)


def source_folders(sources: list[str]) -> tuple[list[Path], list[str]]:
    """The folders that hold a source's output, and the ones that do not (yet)."""
    present = [Path(s) for s in sources if (Path(s) / MANIFEST).is_file()]
    return present, [s for s in sources if not (Path(s) / MANIFEST).is_file()]


def split_rows(manifest: ReleaseManifest) -> list[dict[str, Any]]:
    """One row per config and split: its row count and the count per level (the manifest's `counts`)."""
    counts = manifest.counts
    configs = [DEFAULT_CONFIG, *sorted(c for c in counts if c != DEFAULT_CONFIG)]
    rows = []
    for config in configs:
        for split in RELEASE_SPLITS:
            if split in EXTRA_SPLITS and split not in counts[config]:
                continue  # a named extra split is listed only where the config has it
            levels = counts[config].get(split, {})
            rows.append({"config": config, "split": split, "rows": sum(levels.values()),
                         "levels": ", ".join(f"{level}={n}" for level, n in sorted(levels.items()))})
    return rows


def name_run(name: str) -> None:
    """Rename this flow run once its name is known (a release's version comes out of the build)."""
    if flow_run.id:
        with get_client(sync_client=True) as client:
            client.update_flow_run(flow_run.id, name=name)


@flow(name="release", flow_run_name=run_name(lambda p: f"release {p.get('version') or 'of ' + p['out']}", "release"))
@reported
def release_flow(out: str, sources: list[str] | None = None, version: str | None = None,
                 previous: str | None = None, floors: str | None = None) -> ReleaseManifest:
    """Assemble the sources' outputs into a release folder at `out` and return its manifest.

    `sources` are the source output folders; default, every registered source's `out/<source>` (timelyqa.sources,
    built-ins first), so a source installed from another package is in the release without editing anything.
    `version` names the release (default: v{YYYY.MM.DD} of the newest run's as_of, suffixed when that day is
    taken); `previous` is the folder of the release before it, when `out` does not already hold it; `floors` a
    YAML file of pinned floors (publish/gate.py): a release below them fails the run and is not written.
    """
    # the same checks as `timelyqa release`, before the task: a wrong parameter is no task failure to retry
    checks.out_folder(Path(out), "out")
    if version is not None:
        checks.release_version(version, "version")
    pinned = Floors.load(Path(floors)) if floors else None
    if sources is None:
        sources = outputs()
    present, missing = source_folders(sources)
    if missing:
        # A week where a source has not run yet (or has no deployment here) still gets a release of the others.
        get_run_logger().warning("release without %s: no source output there yet (no manifest.json)",
                                 ", ".join(missing))
    if not present:
        raise ConfigError(f"sources: none of {', '.join(sources)} holds a source output (manifest.json); run a "
                          "source flow first")
    manifest = assemble_release(present, Path(out), version, Path(previous) if previous else None, pinned)
    name_run(f"release {manifest.version}")
    rows = split_rows(manifest)
    create_table_artifact(rows, key="release-splits",
                          description=f"timelyqa {manifest.version}: rows per config and split")
    total = manifest.rows(DEFAULT_CONFIG)
    create_markdown_artifact(
        f"# timelyqa {manifest.version}\n\nFolder: `{out}`\n\n{total} rows in `{DEFAULT_CONFIG}`; "
        f"configs: {', '.join(sorted(c for c in manifest.counts if c != DEFAULT_CONFIG))}.\n",
        key="release-summary", description=f"timelyqa {manifest.version}")
    folder = Path(out).resolve()
    create_link_artifact(folder.as_uri(), link_text=f"timelyqa {manifest.version} ({folder})", key="release-link",
                         description="the release folder (a Hub dataset repository; publish-release uploads it)")
    return manifest
