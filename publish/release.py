"""The release folder: source outputs in, a Hugging Face dataset repository (parquet, manifest, card) out."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow.parquet as pq

from publish.card import DEFAULT_CONFIG, render_card
from publish.changelog import (changelog_entry, changes, next_version, previous_release, read_config, release_index,
                               write_changelog)
from publish.gate import Floors, check as check_floors
from publish.review import (Decisions, ImportResult, human_verified, merge_decisions, read_decisions,
                            record_decisions, write_decisions)
from publish.runs import SourceRun, load_run, merge_runs
from timelyqa.checks import release_version
from timelyqa.errors import ConfigError
from timelyqa.files import link_tree, replaced_folder, sha256_file, write_parquet
from timelyqa.answers import drop_conflicting_aliases
from timelyqa.manifest import code_version
from timelyqa.release_manifest import MANIFEST, ReleaseChanges, ReleaseManifest, SourceSummary, SplitDates
from timelyqa.released import Retirement, rechecked_ids, released_rows, retirements
from timelyqa.record import CANARY, RECORD_SCHEMA, Split
from timelyqa.rewards import GRADER_VERSION
from timelyqa.sources import sources as registered
from timelyqa.split import (RELEASE_SPLITS, SPLIT_RULE, SPLITS, assign_splits, group_key_for, group_key_text,
                            keep_in_train, newest_event_date, split_dates)

ROWS_PER_SHARD = 250_000


def _utc(moment: datetime) -> datetime:
    # A naive datetime is taken as UTC: release dates are always stated in UTC.
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _replaced_files(out: Path) -> set[str]:
    """The data files the release in `out` lists: what a new release replaces. Anything else there (.git, a
    note, a manifest too broken to list anything) is carried into the new one as it is."""
    try:
        previous = ReleaseManifest.find(out)
    except ConfigError:
        return set()
    return {name for name in previous.files if name.endswith(".parquet")} if previous is not None else set()


def _write_split(df: pl.DataFrame, out: Path, config: str, split: str, files: dict[str, Any]) -> list[str]:
    shards = max(1, -(-df.height // ROWS_PER_SHARD))
    paths = []
    for index in range(shards):
        name = f"{config}/{split}-{index:05d}-of-{shards:05d}.parquet"
        part = df.slice(index * ROWS_PER_SHARD, ROWS_PER_SHARD)
        write_parquet(part, out / name)
        files[name] = {"sha256": sha256_file(out / name), "bytes": (out / name).stat().st_size,
                       "rows": part.height, "config": config, "split": split}
        paths.append(name)
    return paths


def _level_counts(df: pl.DataFrame) -> dict[str, int]:
    counted = df.group_by("level").len().sort("level")
    return {str(level): int(n) for level, n in counted.iter_rows()}


def _source_summary(source: str, runs: list[SourceRun], rows: pl.DataFrame, dropped: int, *, carried: int = 0,
                    unchecked: int = 0) -> SourceSummary:
    funnel: dict[str, int] = {}
    rejects: dict[str, int] = {}
    usage: dict[str, float] = {}  # model calls, tokens and seconds, for sources that use an LLM
    for run in runs:
        for key, amount in run.manifest.usage.items():
            usage[key] = usage.get(key, 0) + amount
        for stage, count in run.manifest.counts.items():  # stage order as the source wrote it
            funnel[stage] = funnel.get(stage, 0) + count
        for reason, count in run.manifest.rejects.items():
            rejects[reason] = rejects.get(reason, 0) + count
    return SourceSummary.model_validate({
        "rows": rows.height, "duplicates_dropped": dropped, "group_key": group_key_text(source, rows.columns),
        "carried": carried, "carried_not_rechecked": unchecked,
        "refresh_to_train": _refreshes(source),
        "funnel": [{"stage": stage, "count": count} for stage, count in funnel.items()],
        "rejects": rejects,
        "usage": usage,
        "generators": sorted(rows.get_column("generator").drop_nulls().unique().to_list()),
        "runs": [{"questions_sha256": run.questions_sha256, "rejected_sha256": run.rejected_sha256,
                  # A run's timings say how long it took on its machine, not what the release holds: they stay in
                  # the source folder's manifest, so the same inputs give the same release bytes.
                  "manifest": run.manifest.model_dump(mode="json", exclude={"timings"})} for run in runs],
    })


def build_release(sources: list[Path], out: Path, *, version: str | None = None, created: datetime | None = None,
                  repo_id: str | None = None, previous: Path | None = None, floors: Floors | None = None,
                  synthetic: bool = False) -> ReleaseManifest:
    """Build the release folder `out` from source output folders and the previous release; return its manifest.
    A release below `floors` (publish/gate.py) is not written: GateFailed, and the folder stays as it was.

    The previous release is the one already in `out`, or `previous` (a folder holding it, such as a checkout of
    its tag). A release lives from week to week: every row of the previous release carries forward as it was
    stored, the runs' new rows join them (a run row whose id is already released is that row: the released one is
    kept, since no released row is edited in place), and the rows a run retired (its rejects of stage `refresh`)
    leave. The split rule is then applied again over all rows, so rows age from test to validation to train.
    Several folders of one source are merged by id (see merge_runs). Month M of the split rule is taken over all
    sources together, so every config shares one test window. Rows a source marked `longitudinal` keep that split.
    Splits with no rows are left out of a config: `datasets` 5.2 cannot load a declared split that has no rows.

    CHANGELOG.md gets an entry saying what changed since the previous release. A source whose registry entry sets
    `refresh_to_train` has the previous release's validation and test rows moved to train when this release's
    newest month is later (timelyqa.split.keep_in_train). The previous release's review decisions are carried over
    and give each config its `human_verified` split (publish/review.py). The date and version come from the inputs
    (the newest run's `as_of`) unless `created` or `version` is given, so the same inputs give the same bytes; a
    rebuild whose data files equal the previous release's keeps its version and date. `synthetic` (the demo's
    bundled, invented inputs) is recorded in the manifest, and stays for the releases built on this one.
    """
    if not sources:
        raise ConfigError("release: no source folders given")
    if version is not None:
        release_version(version)  # a version names a folder's release and a Hub tag: never a path
    out = Path(out)
    runs = sorted((load_run(Path(folder)) for folder in sources), key=lambda r: (r.source, r.as_of, r.questions_sha256))
    by_source: dict[str, list[SourceRun]] = {}
    for run in runs:
        by_source.setdefault(run.source, []).append(run)
    prior_folder = Path(previous) if previous else out
    prior = previous_release(prior_folder)
    if previous is not None and prior is None:
        raise ConfigError(f"--previous {previous}: not a release folder (no manifest.json of a release)")

    merged = {source: merge_runs(group) for source, group in by_source.items()}
    retired = {row_id: why for run in runs for row_id, why in retirements(run.folder).items()}
    carried = {source: released_rows(prior_folder, source) for source in _source_configs(prior[0])} if prior else {}
    living = {source: living_rows(carried.get(source), merged[source][0] if source in merged else None, set(retired))
              for source in sorted(set(merged) | set(carried))}
    living = {source: df for source, df in living.items() if df.height}
    dates = [d for df in living.values() if (d := newest_event_date(df)) is not None]
    if not dates:  # nothing to declare: a card without configs does not load
        raise ConfigError(f"release: no dated questions in {', '.join(str(folder) for folder in sources)}")
    newest: date = max(dates)
    refresh = prior is not None and _month(newest) > _month(prior[0].split_dates.newest_event_date)
    refreshed = sorted(s for s in living if _refreshes(s)) if refresh else []
    frames: dict[str, pl.DataFrame] = {}
    for source, df in living.items():
        key = group_key_for(source, df.columns)
        df = assign_splits(df, group_key=key, newest=newest)
        if prior is not None and _refreshes(source):
            df = keep_in_train(df, prior[1].filter(pl.col("source") == source), group_key=key, refresh=refresh)
        spec = registered().get(source)
        if spec is not None and spec.released is not None:
            df = spec.released(df)
        frames[source] = drop_conflicting_aliases(df).sort("id")
    # A live question (no fixed answer) needs its source's columns to be answered: it stays out of `default`.
    frames[DEFAULT_CONFIG] = pl.concat([df.select(RECORD_SCHEMA.names()).filter(pl.col("answer") != "")
                                        for df in frames.values()], how="vertical").sort(["id", "source"])
    decisions = read_decisions(prior_folder) if prior is not None else {}
    if out.resolve() != prior_folder.resolve():
        decisions = merge_decisions(decisions, read_decisions(out))
    # Re-checked this week: a run found the row still true (rechecked.parquet), made it again, or retired it.
    checked = {i for run in runs for i in (*rechecked_ids(run.folder), *run.questions.get_column("id").to_list())}
    checked |= set(retired)
    unchecked = {source: frames[source].join(df.select("id"), on="id", how="semi")
                 .filter(~pl.col("id").is_in(list(checked))).height
                 for source, df in carried.items() if source in frames and df.height}
    summaries = {source: _source_summary(source, by_source.get(source, []), frames[source],
                                         merged[source][1] if source in merged else 0,
                                         carried=_carried_count(carried.get(source), frames[source]),
                                         unchecked=unchecked.get(source, 0))
                 for source in living}
    check_floors(floors, {config: df.height for config, df in frames.items()}, summaries)
    return write_release(out, frames, decisions, prior=prior, version=version,
                         created=created or max(run.as_of for run in runs), repo_id=repo_id, sources=summaries,
                         dates=split_dates(frames[DEFAULT_CONFIG], newest=newest), why=retired, refreshed=refreshed,
                         unchecked=unchecked, history=prior_folder,
                         synthetic=synthetic or bool(prior and prior[0].synthetic))


def living_rows(carried: pl.DataFrame | None, new: pl.DataFrame | None, retired: set[str]) -> pl.DataFrame:
    """One source's rows this week: the carried rows as stored, then the new rows whose id is not already
    released, without the retired ids; `canary` set on the new rows (the carried ones have it as stored)."""
    parts = []
    if carried is not None and carried.height:
        parts.append(carried.filter(~pl.col("id").is_in(list(retired))))
    if new is not None:
        new = new.filter(~pl.col("id").is_in(list(retired)))
        if parts:
            new = new.join(carried.select("id"), on="id", how="anti")
        parts.append(new.with_columns(pl.lit(CANARY, dtype=pl.String()).alias("canary")))
    if not parts:
        return pl.DataFrame(schema=RECORD_SCHEMA)
    # Relaxed: a source whose code gained a column since gives the carried rows that column empty, nothing else.
    return pl.concat(parts, how="diagonal_relaxed") if len(parts) > 1 else parts[0]


def _source_configs(manifest: ReleaseManifest) -> list[str]:
    return sorted(config for config in manifest.configs if config != DEFAULT_CONFIG)


def _carried_count(carried: pl.DataFrame | None, rows: pl.DataFrame) -> int:
    if carried is None or not carried.height:
        return 0
    return rows.join(carried.select("id"), on="id", how="semi").height


def _month(day: date | str | None) -> int:
    if day is None:
        return -1
    day = date.fromisoformat(day) if isinstance(day, str) else day
    return day.year * 12 + day.month - 1


def _refreshes(source: str) -> bool:
    spec = registered().get(source)
    return spec is not None and spec.refresh_to_train


def write_release(out: Path, frames: dict[str, pl.DataFrame], decisions: Decisions, *,
                  prior: tuple[ReleaseManifest, pl.DataFrame] | None, version: str | None, created: datetime | None,
                  repo_id: str | None, sources: dict[str, SourceSummary], dates: SplitDates | dict[str, str | None],
                  why: dict[str, Retirement], refreshed: list[str], unchecked: dict[str, int] | None = None,
                  history: Path | None = None, synthetic: bool = False) -> ReleaseManifest:
    """Write the split rows of every config (`default` first), the decisions, manifest, card and changelog.

    Each config gets its `human_verified` split here, from the accepted decisions that apply to its test rows.
    The changelog continues the one in `history` (the previous release's folder), or the one in `out`.
    The release is written in a folder beside `out` and swapped in whole (timelyqa.files.replaced_folder), so a
    killed build leaves the old release byte for byte; the files of `out` that are no data file of its release
    (.git, a note) are carried into the new one.
    """
    out = Path(out)
    with replaced_folder(out) as stage:
        manifest = _write_release(stage, frames, decisions, prior=prior, version=version, created=created,
                                  repo_id=repo_id, sources=sources, dates=dates, why=why, refreshed=refreshed,
                                  unchecked=unchecked, history=history if history is not None else out,
                                  synthetic=synthetic)
        if out.is_dir():
            link_tree(out, stage, skip=_replaced_files(out))
    return manifest


def _write_release(out: Path, frames: dict[str, pl.DataFrame], decisions: Decisions, *,
                   prior: tuple[ReleaseManifest, pl.DataFrame] | None, version: str | None, created: datetime | None,
                   repo_id: str | None, sources: dict[str, SourceSummary], dates: SplitDates | dict[str, str | None],
                   why: dict[str, Retirement], refreshed: list[str], unchecked: dict[str, int] | None,
                   history: Path, synthetic: bool = False) -> ReleaseManifest:
    created = _utc(created or datetime.now(UTC)).replace(microsecond=0)
    frames = {config: pl.concat([df, human_verified(df, decisions)], how="vertical")
              for config, df in frames.items()}
    reviews = write_decisions(out, decisions)
    files: dict[str, Any] = {}
    configs: dict[str, Any] = {}
    counts: dict[str, Any] = {}
    for config in [DEFAULT_CONFIG, *sorted(c for c in frames if c != DEFAULT_CONFIG)]:
        configs[config] = {"splits": {}}
        counts[config] = {}
        for split in RELEASE_SPLITS:
            part = frames[config].filter(pl.col("split") == split)
            if split in SPLITS or part.height:  # an extra split is counted where a config has it
                counts[config][split] = _level_counts(part)
            if part.height:
                configs[config]["splits"][split] = _write_split(part, out, config, split, files)

    for config, info in configs.items():
        info["features"] = _features(out, info["splits"])
    prior_manifest = prior[0] if prior else None
    diff: ReleaseChanges | dict[str, Any] | None
    if (prior_manifest and version in (None, prior_manifest.version) and _same_data(files, prior_manifest)
            and _digests(reviews) == {name: info.sha256 for name, info in prior_manifest.reviews.items()}):
        # The same release again: its rows, and so what it said of where they came from, stay as they were.
        version, stamp = prior_manifest.version, prior_manifest.created
        before, diff = prior_manifest.previous_version, prior_manifest.changes
        if "sources" in prior_manifest.model_fields_set:
            sources = prior_manifest.sources
    else:
        version = version or next_version(created.strftime("v%Y.%m.%d"), prior_manifest and prior_manifest.version)
        stamp = created.isoformat()
        before = prior_manifest.version if prior_manifest else None
        diff = changes(prior[1], release_index(frames), why, refreshed, unchecked) if prior else None
    fields: dict[str, Any] = {
        "name": "timelyqa", "version": version, "created": stamp, "code_version": code_version(),
        "grader_version": GRADER_VERSION,
        "previous_version": before, "changes": diff,
        "canary": CANARY, "repo_id": repo_id, "configs": configs, "counts": counts, "files": files,
        "reviews": reviews, "split_rule": SPLIT_RULE, "split_dates": dates, "sources": sources,
    }
    if synthetic:  # only then: a release of real sources keeps the manifest it had
        fields["synthetic"] = True
    text = ReleaseManifest.model_validate(fields).to_json()
    (out / MANIFEST).write_text(text, encoding="utf-8")
    manifest = ReleaseManifest.parse(text, out / MANIFEST)  # the card and the caller see exactly what the file says
    (out / "README.md").write_text(render_card(manifest), encoding="utf-8")
    notes = [line for summary in manifest.sources.values() for line in summary.notes()]
    write_changelog(out, changelog_entry(version, stamp, before, manifest.changes, notes), version, history=history)
    return manifest


def apply_reviews(release: Path, *, decisions: Decisions | None = None, created: datetime | None = None
                  ) -> ReleaseManifest:
    """Rebuild the release in `release` from its own data files with `decisions` (default: what its `reviews/`
    holds now).

    Every split but `human_verified` is read back as it is (nothing is re-split), `human_verified` is made anew;
    the version moves on (a new dated version, the release before it as `previous_version`) only when a file
    changed, so applying the same decisions twice changes no byte.
    """
    release = Path(release)
    prior = previous_release(release)
    if prior is None:
        raise ConfigError(f"{release}: not a release folder (no manifest.json of a release)")
    manifest = prior[0]
    kept = [s for s in RELEASE_SPLITS if s != Split.HUMAN_VERIFIED.value]
    frames = {config: frame for config in manifest.configs
              if (frame := read_config(release, manifest, config, splits=kept)) is not None}
    if DEFAULT_CONFIG not in frames:
        raise ConfigError(f"{release}: the data files of config {DEFAULT_CONFIG!r} are missing")
    frames = {config: frame.sort(["id", "source"] if config == DEFAULT_CONFIG else "id")
              for config, frame in frames.items()}
    decisions = read_decisions(release) if decisions is None else decisions
    return write_release(release, frames, decisions, prior=prior, version=None, created=created,
                         repo_id=manifest.repo_id, sources=manifest.sources, dates=manifest.split_dates,
                         why={}, refreshed=[], synthetic=manifest.synthetic)


def import_review(file: Path, release: Path, *, now: datetime | None = None
                  ) -> tuple[ImportResult, ReleaseManifest]:
    """`timelyqa review import`: take a reviewed file's decisions into the release, then rebuild its splits."""
    result, decisions = record_decisions(file, release, now=now)
    return result, apply_reviews(release, decisions=decisions, created=now)


def _features(out: Path, splits: dict[str, list[str]]) -> list[dict[str, Any]] | None:
    """The config's columns as the card's `dataset_info` states them, read from a file written for it."""
    import datasets  # noqa: PLC0415 - only releases need it, and it is slow to import

    paths = [name for names in splits.values() for name in names]
    if not paths:
        return None
    return datasets.Features.from_arrow_schema(pq.read_schema(out / paths[0]))._to_yaml_list()


def _digests(listing: dict[str, dict[str, Any]]) -> dict[str, str]:
    """The sha256 of each file this build wrote (data files or review files), by name."""
    return {name: written["sha256"] for name, written in listing.items()}


def _same_data(files: dict[str, dict[str, Any]], prior: ReleaseManifest) -> bool:
    return _digests(files) == prior.digests()
