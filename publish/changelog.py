"""What changed since the previous release: rows added, moved between splits, retired, regenerated."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl

from timelyqa.names import current_name

INDEX_COLUMNS = ["id", "source", "split", "generator"]
_SUFFIX = re.compile(r"^(v\d{4}\.\d{2}\.\d{2})(?:\.(\d+))?$")


def previous_release(folder: Path) -> tuple[dict[str, Any], pl.DataFrame] | None:
    """The manifest and row index (id, source, split, generator) of the release in `folder`, if any."""
    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or "version" not in manifest:
        return None
    paths = [folder / name for name, info in sorted(manifest.get("files", {}).items())
             if info.get("config") == "default" and (folder / name).is_file()]
    index = (pl.concat([pl.read_parquet(p, columns=INDEX_COLUMNS) for p in paths]) if paths
             else pl.DataFrame(schema={c: pl.String() for c in INDEX_COLUMNS}))
    return manifest, index


def next_version(base: str, previous: str | None) -> str:
    """`base` (vYYYY.MM.DD), or `base.N` when the previous release already took that day."""
    if previous is None:
        return base
    m = _SUFFIX.match(previous)
    if not m or m.group(1) != base:
        return base
    return f"{base}.{int(m.group(2) or 1) + 1}"


def changes(before: pl.DataFrame, after: pl.DataFrame, why: dict[str, str] | None = None) -> dict[str, Any]:
    """Counts of rows added, retired, moved (per from->to split) and regenerated (generator changed), per source;
    and the generators renamed (one spelling for versioned names): rows whose generator is only spelled anew.
    `why` names the reason a source gave for retiring a row (by id), where it gave one."""
    joined = after.join(before, on="id", how="full", suffix="_before", coalesce=True)
    added = joined.filter(pl.col("source_before").is_null() & pl.col("source").is_not_null())
    retired = joined.filter(pl.col("source").is_null())
    kept = joined.filter(pl.col("source").is_not_null() & pl.col("source_before").is_not_null())
    moved = kept.filter(pl.col("split") != pl.col("split_before"))
    current = pl.col("generator_before").map_elements(current_name, return_dtype=pl.String())
    changed = kept.filter(pl.col("generator") != pl.col("generator_before"))
    renamed = changed.filter(current == pl.col("generator"))
    regenerated = changed.filter(current != pl.col("generator"))
    return {
        "added": _per_source(added, "source"),
        "retired": _per_source(retired, "source_before"),
        "moved": {f"{a} -> {b}": int(n) for a, b, n in sorted(moved.group_by("split_before", "split").len().iter_rows())},
        "regenerated": _per_source(regenerated, "source"),
        "retired_why": dict(sorted(Counter((why or {}).get(i, "not re-checked") for i in retired["id"]).items()))
        if why else {},
        "renamed": {f"{a} -> {b}": int(n)
                    for a, b, n in sorted(renamed.group_by("generator_before", "generator").len().iter_rows())},
    }


def _per_source(df: pl.DataFrame, column: str) -> dict[str, int]:
    return {str(k): int(n) for k, n in sorted(df.group_by(column).len().iter_rows())}


def changelog_entry(version: str, created: str, previous: str | None, diff: dict[str, Any] | None) -> str:
    lines = [f"## {version} ({created[:10]})", ""]
    if previous is None or diff is None:
        return "\n".join(lines + ["First release.", "", ""])
    def total(part: str) -> int:
        return sum(diff[part].values())
    lines.append(f"Since {previous}:")
    lines.append("")
    lines.append(f"- {total('added')} rows added" + _detail(diff["added"]))
    lines.append(f"- {total('retired')} rows retired" + _detail(diff["retired"])
                 + (f"; why: {', '.join(f'{k} {n}' for k, n in diff['retired_why'].items())}"
                    if diff.get("retired_why") else ""))
    lines.append(f"- {total('moved')} rows moved between splits" + _detail(diff["moved"]))
    lines.append(f"- {total('regenerated')} rows rewritten by a new generator version" + _detail(diff["regenerated"]))
    for rename, n in diff.get("renamed", {}).items():
        old, new = rename.split(" -> ")
        lines.append(f"- generator `{old}` is now spelled `{new}` ({n} rows): a new name only; the questions, "
                     "answers and splits did not change")
    return "\n".join(lines + ["", ""])


def _detail(counts: dict[str, int]) -> str:
    return f" ({', '.join(f'{k}: {n}' for k, n in counts.items())})" if counts else ""


def write_changelog(out: Path, entry: str, version: str) -> None:
    """Put this release's entry on top, replacing an earlier entry of the same version (a rebuild)."""
    path = out / "CHANGELOG.md"
    header = "# Changelog\n\n"
    old = path.read_text(encoding="utf-8") if path.is_file() else header
    body = old.removeprefix(header)
    sections = [s for s in re.split(r"(?m)^(?=## )", body) if s.strip()]
    kept = [s for s in sections if not s.startswith(f"## {version} ")]
    path.write_text(header + entry + "".join(kept), encoding="utf-8")
