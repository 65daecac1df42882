"""What every flow shares: the retry rule for transient source failures, Secret blocks and the funnel artifacts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prefect import Task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.blocks.system import Secret
from prefect.client.schemas.objects import State, TaskRun

from timelyqa.errors import ConfigError, is_transient
from timelyqa.manifest import Manifest


def exception_of(state: State) -> BaseException | None:
    """The exception a failed state carries, or None when it carries none."""
    # The task engine builds the state it hands to retry_condition_fn as Failed(data=exc),
    # so the exception is right there; result() covers states rebuilt from storage.
    if isinstance(state.data, BaseException):
        return state.data
    result = state.result(raise_on_failure=False)
    return result if isinstance(result, BaseException) else None


def only_transient(task: Task[..., Any], task_run: TaskRun, state: State) -> bool:
    """Prefect's retry_condition_fn: retry a TransientSourceError only; a bad setting or a changed source fails now."""
    exc = exception_of(state)
    return exc is not None and is_transient(exc)


RETRY_TRANSIENT: dict[str, Any] = {
    "retries": 3,
    "retry_delay_seconds": [10, 60, 300],
    "retry_jitter_factor": 0.2,
    "retry_condition_fn": only_transient,
}
"""Task options for a stage that touches a source: three retries with backoff, transient failures only."""


def secret(block: str | None) -> str | None:
    """The value of the Prefect Secret block `block`, or None when no block is named; a block named but not
    there is a setting that is wrong, never taken for "no secret"."""
    if not block:
        return None
    try:
        return str(Secret.load(block).get())
    except ValueError as exc:  # what Block.load raises when no block has that name
        raise ConfigError(f"no Prefect Secret block named {block!r}: create it, or name another") from exc


def table_rows(counts: Mapping[str, int], key: str) -> list[dict[str, Any]]:
    """A {name: count} mapping as table rows, in the mapping's order (a funnel reads top to bottom)."""
    return [{key: name, "count": int(n)} for name, n in counts.items()]


def publish_funnel(manifest: Manifest, *, out: str) -> None:
    """Three artifacts for one run: the funnel (stage, count) in the order the manifest and the CLI give it, the
    reject reasons (reason, count), a summary."""
    # Artifact keys take lowercase letters, digits and dashes only: `site_tree` becomes `site-tree`.
    prefix, counts, rejects = manifest.source.replace("_", "-"), manifest.counts, manifest.rejects
    create_table_artifact(table_rows(counts, "stage"), key=f"{prefix}-funnel",
                          description=f"{prefix}: counts per stage, in the order the stages ran")
    create_table_artifact(table_rows(rejects, "reason"), key=f"{prefix}-rejects",
                          description=f"{prefix}: items dropped, per reason")
    create_markdown_artifact(summary_markdown(prefix, counts, rejects, out=out), key=f"{prefix}-summary",
                             description=f"{prefix}: run summary")


def summary_markdown(title: str, counts: Mapping[str, int], rejects: Mapping[str, int], *, out: str) -> str:
    """A short markdown report: where the outputs are, the funnel, and why rows were dropped."""
    lines = [f"# {title}", "", f"Outputs: `{out}`", "", "| stage | count |", "|---|---:|"]
    lines += [f"| {stage} | {n} |" for stage, n in counts.items()]
    lines += ["", f"Rejected: {sum(rejects.values())}", ""]
    if rejects:
        lines += ["| reason | count |", "|---|---:|"]
        lines += [f"| {reason} | {n} |" for reason, n in sorted(rejects.items(), key=lambda kv: (-kv[1], kv[0]))]
    return "\n".join(lines) + "\n"
