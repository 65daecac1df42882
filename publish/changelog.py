"""What changed since the previous release: rows added, moved between splits, retired, regenerated."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import polars as pl

from timelyqa.names import current_name
from timelyqa.record import Split
from timelyqa.release_manifest import ReleaseChanges, ReleaseManifest
from timelyqa.released import release_file

INDEX_COLUMNS = ["id", "source", "split", "generator"]
DEFAULT = "default"  # the config of every source's rows with the common columns (publish.card.DEFAULT_CONFIG)
NOT_RELEASED = "not_released"
"""Why a row left that no run retired: its source's release rule no longer keeps it (an official-site live
question out of the test window)."""
_FROM = (Split.VALIDATION.value, Split.TEST.value)
_SUFFIX = re.compile(r"^(v\d{4}\.\d{2}\.\d{2})(?:\.(\d+))?$")


def read_config(folder: Path, manifest: ReleaseManifest, config: str, *, splits: Collection[str] | None = None,
                columns: list[str] | None = None) -> pl.DataFrame | None:
    """The rows of one config of the release in `folder` (only `splits`, when given), from its own data files;
    None when the release has no such config. Each file must be the one the manifest records (sha256): ConfigError
    names a file that is missing or differs, so no changelog or rebuild is made from a killed or edited release."""
    info = manifest.configs.get(config)
    listed = info.splits if info is not None else {}
    paths = [release_file(folder, manifest, name) for split, names in sorted(listed.items())
             if splits is None or split in splits for name in names]
    if not paths:
        return None
    return pl.concat([pl.read_parquet(path, columns=columns) for path in paths], how="vertical")


def previous_release(folder: Path) -> tuple[ReleaseManifest, pl.DataFrame] | None:
    """The manifest and row index (id, source, split, generator) of the release in `folder`, if any: every source
    config's rows (live questions too, which `default` leaves out). The index has a human_verified row beside the
    test row it copies. A release manifest that is malformed is a ConfigError naming it, never "no release"."""
    manifest = ReleaseManifest.find(folder)
    if manifest is None:
        return None
    frames = [index for config in sorted(manifest.configs) if config != DEFAULT
              if (index := read_config(folder, manifest, config, columns=INDEX_COLUMNS)) is not None]
    empty = pl.DataFrame(schema={c: pl.String() for c in INDEX_COLUMNS})
    return manifest, pl.concat([empty, *frames], how="vertical_relaxed")


def release_index(frames: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """The row index (id, source, split, generator) of a release's source configs (every config but `default`)."""
    empty = pl.DataFrame(schema={c: pl.String() for c in INDEX_COLUMNS})
    return pl.concat([empty, *(df.select(INDEX_COLUMNS) for config, df in sorted(frames.items()) if config != DEFAULT)],
                     how="vertical_relaxed")


def next_version(base: str, previous: str | None) -> str:
    """`base` (vYYYY.MM.DD), or `base.N` when the previous release already took that day."""
    if previous is None:
        return base
    m = _SUFFIX.match(previous)
    if not m or m.group(1) != base:
        return base
    return f"{base}.{int(m.group(2) or 1) + 1}"


def changes(before: pl.DataFrame, after: pl.DataFrame, why: Mapping[str, Any] | None = None,
            refreshed: Collection[str] = (), unchecked: Mapping[str, int] | None = None) -> dict[str, Any]:
    """Counts of rows added, retired, moved (per from->to split, overall and per source) and regenerated (generator
    changed), per source; and the generators renamed (one spelling for versioned names): rows whose generator is
    only spelled anew. `why` gives, by id, why a run retired a row (a publish.released Retirement, or a reason);
    each retired row is listed with its source and reason (`not_released` when no run retired it). `refreshed`
    names the sources whose previous validation and test rows this release moved to train (the refresh rule):
    what moved, per source and from-split. `unchecked` counts per source the carried rows no run re-checked.
    Human-verified rows, copies of test rows, are counted apart (added, removed)."""
    copies = pl.col("split") == Split.HUMAN_VERIFIED.value
    verified_before, verified_after = before.filter(copies), after.filter(copies)
    before, after = before.filter(~copies), after.filter(~copies)
    joined = after.join(before, on="id", how="full", suffix="_before", coalesce=True)
    added = joined.filter(pl.col("source_before").is_null() & pl.col("source").is_not_null())
    retired = joined.filter(pl.col("source").is_null())
    kept = joined.filter(pl.col("source").is_not_null() & pl.col("source_before").is_not_null())
    moved = kept.filter(pl.col("split") != pl.col("split_before"))
    current = pl.col("generator_before").map_elements(current_name, return_dtype=pl.String())
    changed = kept.filter(pl.col("generator") != pl.col("generator_before"))
    renamed = changed.filter(current == pl.col("generator"))
    regenerated = changed.filter(current != pl.col("generator"))
    to_train = moved.filter(pl.col("source").is_in(list(refreshed)) & (pl.col("split") == Split.TRAIN.value)
                            & pl.col("split_before").is_in([Split.VALIDATION.value, Split.TEST.value]))
    refresh: dict[str, dict[str, int]] = {}
    for source, split, n in sorted(to_train.group_by("source", "split_before").len().iter_rows()):
        refresh.setdefault(str(source), {})[f"{split} -> train"] = int(n)
    moved_by_source: dict[str, dict[str, int]] = {}
    for source, a, b, n in sorted(moved.group_by("source", "split_before", "split").len().iter_rows()):
        moved_by_source.setdefault(str(source), {})[f"{a} -> {b}"] = int(n)
    rows = [_retired_row(row_id, source, (why or {}).get(row_id))
            for row_id, source in sorted(retired.select("id", "source_before").iter_rows(), key=lambda r: (r[1], r[0]))]
    return {
        "added": _per_source(added, "source"),
        "retired": _per_source(retired, "source_before"),
        "moved": {f"{a} -> {b}": int(n)
                  for a, b, n in sorted(moved.group_by("split_before", "split").len().iter_rows())},
        "moved_by_source": moved_by_source,
        "regenerated": _per_source(regenerated, "source"),
        "retired_why": dict(sorted(Counter(row["reason"] for row in rows).items())),
        "retired_rows": rows,
        "carried_not_rechecked": {s: int(n) for s, n in sorted((unchecked or {}).items()) if n},
        "renamed": {f"{a} -> {b}": int(n)
                    for a, b, n in sorted(renamed.group_by("generator_before", "generator").len().iter_rows())},
        "refreshed": refresh,
        "human_verified": {
            "added": _per_source(verified_after.join(verified_before, on="id", how="anti"), "source"),
            "removed": _per_source(verified_before.join(verified_after, on="id", how="anti"), "source"),
        },
    }


def _retired_row(row_id: str, source: str, why: Any) -> dict[str, str]:
    reason = getattr(why, "reason", why) or NOT_RELEASED
    detail = getattr(why, "detail", "") or ("no run retired it: its source's release rule no longer keeps it"
                                            if why is None else "")
    return {"id": row_id, "source": source, "reason": str(reason), "detail": detail}


def _per_source(df: pl.DataFrame, column: str) -> dict[str, int]:
    return {str(k): int(n) for k, n in sorted(df.group_by(column).len().iter_rows())}


def changelog_entry(version: str, created: str, previous: str | None,
                    diff: ReleaseChanges | Mapping[str, Any] | None, notes: Collection[str] = ()) -> str:
    """The release's entry; `notes` are lines its sources asked for (a recipe broken, say), listed last."""
    lines = [f"## {version} ({created[:10]})", ""]
    if previous is None or diff is None:
        return "\n".join(lines + ["First release.", *(f"- {note}" for note in notes), "", ""])
    diff = diff if isinstance(diff, ReleaseChanges) else ReleaseChanges.model_validate(diff)
    lines.append(f"Since {previous}:")
    lines.append("")
    lines.append(f"- {sum(diff.added.values())} rows added" + _detail(diff.added))
    lines.append(f"- {sum(diff.retired.values())} rows retired" + _detail(diff.retired)
                 + (f"; why: {', '.join(f'{k} {n}' for k, n in diff.retired_why.items())}"
                    if diff.retired_why else ""))
    for row in diff.retired_rows:
        detail = " ".join(row.detail.split())
        lines.append(f"  - `{row.id}` ({row.source}): {row.reason}" + (f": {detail}" if detail else ""))
    lines.append(f"- {sum(diff.moved.values())} rows moved between splits" + _detail(diff.moved))
    for source, moves in diff.moved_by_source.items():
        lines.append(f"  - {source}: " + ", ".join(f"{n} {move}" for move, n in moves.items()))
    unchecked = diff.carried_not_rechecked
    if unchecked:
        lines.append(f"- {sum(unchecked.values())} rows carried, not re-checked this week" + _detail(unchecked)
                     + ": no run checked them again, so they stay as they were")
    lines.append(f"- {sum(diff.regenerated.values())} rows rewritten by a new generator version"
                 + _detail(diff.regenerated))
    for source, moves in diff.refreshed.items():
        ordered = sorted(moves.items(), key=lambda item: _FROM.index(item[0].split(" -> ")[0]))
        lines.append(f"- refresh: {source}: " + ", ".join(f"{n} rows moved {move}" for move, n in ordered)
                     + f" (configs `{source}` and `default`; the previous validation and test go to train, "
                     "LiveNewsBench's rule)")
    added, removed = diff.human_verified.added, diff.human_verified.removed
    if added or removed:
        lines.append(f"- {sum(added.values())} rows added to human_verified" + _detail(added)
                     + f", {sum(removed.values())} removed" + _detail(removed))
    for rename, n in diff.renamed.items():
        old, new = rename.split(" -> ")
        lines.append(f"- generator `{old}` is now spelled `{new}` ({n} rows): a new name only; the questions, "
                     "answers and splits did not change")
    lines.extend(f"- {note}" for note in notes)
    return "\n".join(lines + ["", ""])


def _detail(counts: dict[str, int]) -> str:
    return f" ({', '.join(f'{k}: {n}' for k, n in counts.items())})" if counts else ""


def write_changelog(out: Path, entry: str, version: str, *, history: Path | None = None) -> None:
    """Put this release's entry on top, replacing an earlier entry of the same version (a rebuild). The entries
    below are those of `history` (the previous release's folder) when given, else those already in `out`, so a
    build into a fresh folder writes the same file as one in place."""
    path = out / "CHANGELOG.md"
    header = "# Changelog\n\n"
    source = Path(history) / "CHANGELOG.md" if history is not None else path
    old = source.read_text(encoding="utf-8") if source.is_file() else header
    body = old.removeprefix(header)
    sections = [s for s in re.split(r"(?m)^(?=## )", body) if s.strip()]
    kept = [s for s in sections if not s.startswith(f"## {version} ")]
    path.write_text(header + entry + "".join(kept), encoding="utf-8")
