"""What every flow shares: the retry rule for transient source failures, Secret blocks, the run's clock and name,
a failure's one-line reason, and the artifacts (funnel, crawl stats, progress)."""

from __future__ import annotations

import functools
import logging
import time
from pathlib import Path
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, ParamSpec, TypeVar

from prefect import Task, get_run_logger
from prefect.artifacts import (create_markdown_artifact, create_progress_artifact, create_table_artifact,
                               update_progress_artifact)
from prefect.blocks.system import Secret
from prefect.client.schemas.objects import State, TaskRun
from prefect.context import FlowRunContext
from prefect.events import emit_event
from prefect.events.worker import EventsWorker
from prefect.states import exception_to_failed_state, format_exception
from prefect.utilities.asyncutils import run_coro_as_sync

from timelyqa.crawling import CrawlStats
from timelyqa.errors import ConfigError, TimelyQAError, is_transient
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


P = ParamSpec("P")
R = TypeVar("R")
FAILED_EVENT = "timelyqa.flow-run.failed"
"""The event a run with a one-line reason sends before it fails: `prefect deployment run --watch` prints it."""


def reported(fn: Callable[P, R]) -> Callable[P, R]:
    """A flow's function whose TimelyQAError (a wrong setting, a changed source, a failed gate: each one line fit to
    show a user) ends the run Failed with that line as the state's message (`ConfigError: ...`, what the UI and
    `prefect flow-run inspect` show), logged as one line instead of a traceback, and sent as an event that
    `prefect deployment run --watch` prints: it prints events, the state's name, and no state message. Any other
    exception is a bug and keeps Prefect's traceback. Under `@flow`: `@flow(...)` then `@reported`."""
    @functools.wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except TimelyQAError as exc:
            if FlowRunContext.get() is None:  # called as a plain function (`flow.fn(...)`): no run to fail
                raise
            return failed_with_reason(exc)  # type: ignore[return-value] - a returned state is the run's final state
    return run


def failed_with_reason(exc: TimelyQAError) -> State:
    """The Failed state Prefect's engine builds from `exc` (the exception kept as the run's result, so calling the
    flow raises it), with the error's one line as its message instead of "Flow run encountered an exception: ..."."""
    reason = format_exception(exc)
    get_run_logger().error(reason)
    context = FlowRunContext.get()
    if context is not None and context.flow_run is not None:
        run_id = context.flow_run.id
        emit_event(FAILED_EVENT, resource={"prefect.resource.id": f"timelyqa.reason.{run_id}",
                                           "prefect.resource.name": reason},
                   related=[{"prefect.resource.id": f"prefect.flow-run.{run_id}", "prefect.resource.role": "flow-run"}])
        # Sent before the Failed state is set: `--watch` stops reading events at the terminal state.
        EventsWorker.instance().wait_until_empty()
    logger = logging.getLogger("prefect.flow_runs")
    if not any(isinstance(f, ReasonNotTraceback) for f in logger.filters):
        logger.addFilter(ReasonNotTraceback())
    store = getattr(context, "result_store", None)
    return run_coro_as_sync(exception_to_failed_state(exc, result_store=store, write_result=store is not None))


class ReasonNotTraceback(logging.Filter):
    """A deployment's run that failed is logged once more by Prefect's engine ("Engine execution exited with
    unexpected exception"), traceback and all: for a TimelyQAError, already said in one line, the line is kept and
    the traceback (Prefect's frames, then ours) dropped."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, TimelyQAError):
            record.msg, record.args = f"{record.getMessage()}: {format_exception(exc)}", ()
            record.exc_info, record.exc_text = None, None
        return True


def secret(block: str | None) -> str | None:
    """The value of the Prefect Secret block `block`, or None when no block is named; a block named but not
    there is a setting that is wrong, never taken for "no secret"."""
    if not block:
        return None
    try:
        return str(Secret.load(block).get())
    except ValueError as exc:  # what Block.load raises when no block has that name
        raise ConfigError(f"no Prefect Secret block named {block!r}: create it, or name another") from exc


def last_release(previous: str | None) -> Path | None:
    """The release whose rows a scheduled run re-checks (the deployments name the weekly release's folder): None when
    none is named, or the folder does not exist yet (the first week: nothing to re-check, said in the run's log).
    A folder that exists but holds no release is a wrong setting, refused by the reader before any work."""
    if not previous:
        return None
    if not Path(previous).exists():
        get_run_logger().info("no release in %s yet: nothing to re-check this time", previous)
        return None
    return Path(previous)


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


def run_clock() -> datetime:
    """The moment this flow run is for: its scheduled start (so a run a worker picks up late still reads the window
    it was scheduled for), or now outside a run."""
    from prefect.runtime import flow_run  # noqa: PLC0415 - resolved per call, inside the run

    return datetime.fromtimestamp(flow_run.scheduled_start_time.timestamp(), UTC)


def run_parameters() -> dict[str, Any]:
    """The parameters given to this flow run (not the function's defaults), {} outside a run."""
    from prefect.runtime import flow_run  # noqa: PLC0415

    return dict(flow_run.parameters or {})


def run_name(name: Callable[[dict[str, Any]], str], fallback: str) -> Callable[[], str]:
    """A `flow_run_name=` callable from the run's parameters; `fallback` when they cannot give one (a bad parameter
    is then reported by the flow's own input check, with its one-line reason, not by the naming)."""
    def named() -> str:
        try:
            return name(run_parameters())
        except Exception:  # noqa: BLE001 - a name must never be what fails a run
            return fallback
    return named


def crawl_rows(stats: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A crawl's stats (crawl_stats.json) as table rows: what it fetched, and why not the rest."""
    return CrawlStats.of(stats).rows()


class ProgressArtifact:
    """A Prefect progress artifact fed by the callback the CLI's progress bars take: `(stage, done, total)`, total 0
    when not known ahead (the bar then stays at 0 % and its description counts). Updates at most every `every`
    seconds: each is an API call."""

    def __init__(self, key: str, description: str, *, every: float = 2.0) -> None:
        self.description, self.every = description, every
        self.id = create_progress_artifact(0.0, key=key, description=description)
        self._last = time.monotonic()

    def __call__(self, stage: str, done: int, total: int) -> None:
        finished = bool(total) and done >= total
        if not finished and time.monotonic() - self._last < self.every:
            return
        self._last = time.monotonic()
        percent = min(100.0, 100.0 * done / total) if total else 0.0
        counted = f"{done:,} of {total:,}" if total else f"{done:,}"
        update_progress_artifact(self.id, percent, description=f"{self.description}: {stage} {counted}")

    def finish(self) -> None:
        update_progress_artifact(self.id, 100.0, description=f"{self.description}: done")


@contextmanager
def progress_artifact(key: str, description: str) -> Iterator[ProgressArtifact]:
    """A progress artifact for one long stage, at 100 % once the stage has returned (not when it failed)."""
    report = ProgressArtifact(key, description)
    yield report
    report.finish()
