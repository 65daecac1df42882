"""The evaluation flow: a model (or a file of its predictions) scored on a release's split, the report published."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NONE

from flows.common import reported, run_name
from spiders.run import crawl
from timelyqa import checks
from timelyqa.errors import ConfigError
from timelyqa.evaluate import Evaluation, accuracies, evaluate


@task(cache_policy=NONE)  # a model's answers and a live page change: never replay an earlier run
def score(release: Path, out: Path, predictions: Path | None, model: str | None, base_url: str | None,
          configs: list[str] | None, split: str, after: Any, at: str | None) -> Evaluation:
    llm = None
    if predictions is None:
        from timelyqa.llm.client import LLM  # noqa: PLC0415
        from timelyqa.llm.settings import LLMSettings  # noqa: PLC0415

        llm = LLM(LLMSettings.from_env(model=model, base_url=base_url, cache_dir=out / "llm-cache"))
        llm.preflight()
    try:
        return evaluate(release, out, crawl=crawl, predictions=predictions, llm=llm, configs=configs, split=split,
                        after=after, at=at)
    finally:
        if llm is not None:
            llm.close()


@flow(name="evaluate", flow_run_name=run_name(lambda p: f"evaluate {p.get('model') or 'predictions'}", "evaluate"))
@reported
def evaluate_flow(release: str, out: str, predictions: str | None = None, model: str | None = None,
                  base_url: str | None = None, configs: list[str] | None = None, split: str = "test",
                  after: str | None = None, at: str | None = None) -> dict[str, Any]:
    """Score `split` of the release folder `release` with the file `predictions` or the model `model` at `base_url`
    (else TIMELYQA_LLM_*), into `out`; the report and the accuracies are published as artifacts.

    `after` (YYYY-MM-DD) splits the accuracy around a model's training cutoff; `at` is the evaluation clock (ISO with
    its offset, default now) at which live questions are resolved."""
    checks.out_folder(Path(out), "out")
    if predictions is not None and (model or base_url):
        raise ConfigError("predictions and model/base_url: give one way of answering")
    cutoff = None
    if after is not None:
        from datetime import date  # noqa: PLC0415

        try:
            cutoff = date.fromisoformat(after)
        except ValueError:
            raise ConfigError(f"after {after!r}: not a date (YYYY-MM-DD)") from None
    done = score(Path(release), Path(out), Path(predictions) if predictions else None, model, base_url, configs,
                 split, cutoff, at)
    get_run_logger().info("%s", done.summary())
    create_markdown_artifact(done.report_path.read_text(encoding="utf-8"), key="evaluation-report",
                             description=done.summary())
    rows = [{"group": f"{by}: {a.group}" if by else "all", "accuracy": round(a.value, 4), "correct": a.correct,
             "rows": a.n} for by in (None, "config", "source", "level") for a in accuracies(done.results, by)]
    create_table_artifact(rows, key="evaluation-accuracy", description="accuracy overall and by config, source, level")
    overall = accuracies(done.results)[0]
    return {"accuracy": overall.value, "rows": overall.n, "results": str(done.results_path),
            "report": str(done.report_path)}
