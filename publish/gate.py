"""The release gate: a release worse than its pinned floors is not written.

Floors are pinned in a YAML file (the demo's: data/demo-floors.yaml, beside the generated data/demo/), and checked
on the release as built, before anything replaces the release in the folder: the rows of each config (all splits),
the share of a source's candidates the question-quality gate sent back, and ratios of a source's own funnel counts
(the news source's extraction floor: `articles_kept / articles_fetched`). One that is missed raises GateFailed
naming every floor missed, with the value found; the previous release stays as it was.

    rows: {default: 150, news: 8}
    quality_dropped: {site_tree: 0.25}          # at most this share sent back by the question-quality gate
    ratios: {news: {articles_kept/articles_fetched: 0.75}}
"""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from timelyqa.errors import ConfigError, GateFailed
from timelyqa.quality import GATE_PASSED, GATE_STAGE
from timelyqa.release_manifest import SourceSummary
from timelyqa.settings import problem
from timelyqa.sources import sources as registered


class Floors(BaseModel):
    """What a release must at least be: rows per config, the most the quality gate may send back, funnel ratios."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rows: dict[str, int] = Field(default_factory=dict)
    quality_dropped: dict[str, float] = Field(default_factory=dict)
    ratios: dict[str, dict[str, float]] = Field(default_factory=dict)

    @field_validator("quality_dropped")
    @classmethod
    def _shares(cls, value: dict[str, float]) -> dict[str, float]:
        for source, share in value.items():
            if not 0 <= share <= 1:
                raise ValueError(f"{source}: a share from 0 to 1, not {share}")
        return value

    @field_validator("ratios")
    @classmethod
    def _ratios(cls, value: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
        for source, pinned in value.items():
            for ratio in pinned:
                top, slash, bottom = ratio.partition("/")
                if not (slash and top and bottom):
                    raise ValueError(f"{source}: {ratio!r} is no ratio of two funnel counts (kept/fetched)")
        return value

    @classmethod
    def load(cls, path: Path) -> Floors:
        """The floors pinned in `path`; ConfigError in one line naming the file and the field, in the settings
        base's words (timelyqa.settings.problem)."""
        try:
            data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise ConfigError(f"--floors {path}: cannot read it ({type(exc).__name__})") from None
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            where, what = problem(exc)
            raise ConfigError(f"--floors {path}: {where or 'the file'}: {what}") from None


def quality_share(source: str, summary: SourceSummary) -> float | None:
    """The share of the source's candidates its question-quality gate sent back; None when it gated none."""
    spec = registered().get(source)
    if spec is None:
        return None
    dropped = sum(n for reason, n in summary.rejects.items() if spec.reason_stage.get(reason) == GATE_STAGE)
    passed = summary.funnel_counts().get(GATE_PASSED, 0)
    return dropped / (dropped + passed) if dropped + passed else None


def missed(floors: Floors, rows: dict[str, int], summaries: dict[str, SourceSummary]) -> list[str]:
    """Each floor the release misses, in words with the value found; empty when it holds them all."""
    problems = [f"{config} has {rows.get(config, 0)} rows, floor {floor}"
                for config, floor in sorted(floors.rows.items()) if rows.get(config, 0) < floor]
    for source, ceiling in sorted(floors.quality_dropped.items()):
        share = quality_share(source, summaries[source]) if source in summaries else None
        if share is not None and share > ceiling:
            problems.append(f"{source}'s question-quality gate sent back {share:.0%} of its candidates, "
                            f"at most {ceiling:.0%}")
    for source, pinned in sorted(floors.ratios.items()):
        funnel = summaries[source].funnel_counts() if source in summaries else {}
        for ratio, floor in sorted(pinned.items()):
            top, _, bottom = ratio.partition("/")
            if not funnel.get(bottom):
                problems.append(f"{source} counted no {bottom}, floor {ratio} {floor:.0%}")
            elif funnel.get(top, 0) / funnel[bottom] < floor:
                problems.append(f"{source} {ratio} is {funnel.get(top, 0) / funnel[bottom]:.0%}, floor {floor:.0%}")
    return problems


def check(floors: Floors | None, rows: dict[str, int], summaries: dict[str, SourceSummary]) -> None:
    """GateFailed naming every floor missed; nothing when there are no floors or all hold."""
    if floors is None:
        return
    problems = missed(floors, rows, summaries)
    if problems:
        raise GateFailed("release below its floors: " + "; ".join(problems))
