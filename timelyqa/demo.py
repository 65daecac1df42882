"""What `timelyqa demo` adds around the sources: the moment its bundled inputs stand at, its step headers, and the
summary of the release it wrote.

The demo is dated by its inputs, not by the day it runs: every crawl it starts is stamped with `inputs_clock()`
(timelyqa.clock), so the same checkout gives the same release (version tag, splits, bytes) on any day.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, time
from pathlib import Path

from timelyqa.release_manifest import ReleaseManifest
from timelyqa.sources import ROOT, SourceSpec

def inputs_clock() -> datetime:
    """The newest moment the bundled inputs carry: the last check of the official sites' bundle, the last day of the
    news archive, the end of the Wikipedia history's window (the Wikidata dumps are older). The demo's crawls are
    stamped with it, as if they ran at that moment."""
    from timelyqa.news.pipeline import archive_days  # noqa: PLC0415 - the pipelines are heavy; the CLI loads lazily
    from timelyqa.news.source import DEMO as NEWS
    from timelyqa.official.bundle import Bundle
    from timelyqa.official.source import DEMO as OFFICIAL
    from timelyqa.wikipedia.source import DEMO_WINDOW

    checks = Bundle.load(ROOT / OFFICIAL[0]).at()
    _, last_day = archive_days(ROOT / NEWS[0])
    return max([*checks, datetime.combine(last_day, time(), UTC), DEMO_WINDOW[1]]).astimezone(UTC)


def step_header(number: int, total: int, spec: SourceSpec) -> str:
    """The line printed before a source's run: which step, which source, what it reads, and what it is."""
    inputs = ", ".join(spec.demo_inputs)
    return f"step {number}/{total}: {spec.name} from {inputs} ({spec.card.summary})"


def release_header(number: int, total: int, folders: Sequence[Path], out: Path) -> str:
    return f"step {number}/{total}: release of {len(folders)} sources into {out}"


def summary(manifest: ReleaseManifest, out: Path) -> list[str]:
    """What the demo wrote, for the end of its output: version, configs with rows per split, how to load it."""
    counts = manifest.counts
    splits = [s for s in ("train", "validation", "test", "human_verified", "longitudinal")
              if any(s in by_split for by_split in counts.values())]
    width = max(len(c) for c in counts)
    lines = [f"release {manifest.version} in {out}: synthetic demo data, dated {manifest.created} by its "
             "inputs (the same on any day)",
             f"  {'config':<{width}}  " + "  ".join(f"{s:>{max(len(s), 5)}}" for s in splits)]
    for config in counts:
        rows = [sum(counts[config].get(s, {}).values()) for s in splits]
        lines.append(f"  {config:<{width}}  " + "  ".join(f"{n:>{max(len(s), 5)}}" for n, s in zip(rows, splits)))
    lines += ["load a config's split with `datasets` (configs: " + ", ".join(counts) + "):",
              f"  python -c \"import datasets; print(datasets.load_dataset('{out}', 'default', split='train'))\"",
              f"the card: {out / 'README.md'}"]
    return lines
