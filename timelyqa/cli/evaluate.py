"""`timelyqa eval` and `timelyqa export`: scoring a model on a release, and a release's rows for trainers (verl,
TRL) and for lm-evaluation-harness."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from timelyqa.cli.common import check_paths, day, one_line_errors, release_folder, variables
from timelyqa.errors import ConfigError

export_app = typer.Typer(help="Rows for RLVR trainers from a release's train split.", no_args_is_help=True)


def _export(kind: str, release_dir: Path, out: Path, config: str, split: str) -> None:
    from timelyqa import export

    with one_line_errors():
        check_paths(out=out)
        exported = (export.export_verl if kind == "verl" else export.export_trl)(release_dir, out, config=config,
                                                                               split=split)
    typer.echo(f"{kind}: {exported.summary()}")


@export_app.command("verl")
def export_verl(
    release_dir: Annotated[Path, typer.Argument(metavar="RELEASE", help="a release folder")],
    out: Annotated[Path, typer.Option(help="folder for {split}.parquet")],
    config: Annotated[str, typer.Option(help="which config")] = "default",
    split: Annotated[str, typer.Option(help="which split")] = "train",
) -> None:
    """verl rows: data_source, prompt, ability, reward_model, extra_info; score with timelyqa.rewards.compute_score."""
    _export("verl", release_dir, out, config, split)


@export_app.command("trl")
def export_trl(
    release_dir: Annotated[Path, typer.Argument(metavar="RELEASE", help="a release folder")],
    out: Annotated[Path, typer.Option(help="folder for {split}.parquet")],
    config: Annotated[str, typer.Option(help="which config")] = "default",
    split: Annotated[str, typer.Option(help="which split")] = "train",
) -> None:
    """TRL GRPO rows: a chat prompt plus answer columns; score with timelyqa.rewards.answer_reward."""
    _export("trl", release_dir, out, config, split)


def evaluate(
    release: Annotated[str, typer.Argument(metavar="RELEASE", help="a release folder, or ORG/NAME[@TAG] on the Hub")],
    out: Annotated[Path, typer.Option(help="folder for results.parquet and report.md")],
    predictions: Annotated[Path | None, typer.Option(help="JSON lines {\"id\": ..., \"answer\": ...} that any "
                                                     "agent wrote (or \"completion\": a whole reply)")] = None,
    model: Annotated[str | None, typer.Option(help="the model to ask (else TIMELYQA_LLM_MODEL)")] = None,
    base_url: Annotated[str | None, typer.Option(help="its OpenAI-compatible endpoint (else "
                                                  "TIMELYQA_LLM_BASE_URL)")] = None,
    config: Annotated[list[str] | None, typer.Option(help="a config to score; repeat for several (default: all)")
                      ] = None,
    split: Annotated[str, typer.Option(help="which split")] = "test",
    after: Annotated[str | None, typer.Option(help="a model's training cutoff, YYYY-MM-DD: accuracy on events "
                                               "after it against those before")] = None,
    at: Annotated[str | None, typer.Option(help="the evaluation clock, ISO with its offset (default now)")] = None,
    judge_model: Annotated[str | None, typer.Option(help="a judge for names and text the grader does not accept "
                                                     "(LiveNewsBench's prompt; else TIMELYQA_JUDGE_LLM_MODEL)")] = None,
    judge_base_url: Annotated[str | None, typer.Option(help="the judge's endpoint (else "
                                                        "TIMELYQA_JUDGE_LLM_BASE_URL)")] = None,
    var: Annotated[list[str] | None, typer.Option(help="NAME=VALUE for the live questions' recipes (e.g. "
                                                  "site=https://...); repeat for several")] = None,
    allow_host: Annotated[list[str] | None, typer.Option(help="HOST[:PORT] the live questions' recipes may reach "
                                                         "though private (a release's recipes reach public "
                                                         "addresses only); repeat for several")] = None,
) -> None:
    """Score a model on a release: each question asked (or read from --predictions), graded by the release's grader,
    reported by config, source, level and event month."""
    from spiders.run import crawl
    from timelyqa import evaluate as scoring

    with one_line_errors():
        check_paths(out=out)
        cutoff = day(after, "--after") if after else None
        names = variables(var)
        folder, name, revision = release_folder(release)
        llm = None
        if predictions is None:
            from timelyqa.llm.client import LLM
            from timelyqa.llm.settings import LLMSettings

            llm = LLM(LLMSettings.from_env(model=model, base_url=base_url, cache_dir=out / "llm-cache"))
            llm.preflight()
        elif model or base_url:
            raise ConfigError("--predictions and --model/--base-url: give one way of answering")
        judge = None
        if judge_model or judge_base_url:
            from timelyqa.llm.client import LLM
            from timelyqa.llm.settings import LLMSettings

            judge = LLM(LLMSettings.from_env("TIMELYQA_JUDGE_LLM_", model=judge_model, base_url=judge_base_url,
                                             cache_dir=out / "llm-cache"))
            judge.preflight()
        try:
            done = scoring.evaluate(folder, out, crawl=crawl, predictions=predictions, llm=llm, configs=config,
                                    split=split, after=cutoff, at=at, release_name=name, revision=revision,
                                    judge_llm=judge, variables=names, allow_hosts=allow_host or ())
        finally:
            for client in (llm, judge):
                if client is not None:
                    client.close()
    typer.echo(done.summary())


@export_app.command("lm-eval")
def export_lm_eval(
    release: Annotated[str, typer.Argument(metavar="RELEASE", help="a release folder, or ORG/NAME[@TAG] on the Hub")],
    out: Annotated[Path, typer.Option(help="folder for the task YAMLs and utils.py (lm_eval --include_path)")],
    split: Annotated[str, typer.Option(help="the split the tasks score")] = "test",
) -> None:
    """lm-evaluation-harness tasks, one per config (timelyqa_<config>): this release's prompt and grader."""
    from timelyqa.evaluate import release_configs
    from timelyqa.harness import write_tasks

    with one_line_errors():
        check_paths(out=out)
        folder, name, revision = release_folder(release)
        configs = release_configs(folder)
        where = str(folder.resolve()) if revision is None else name.partition("@")[0]
        tasks = write_tasks(configs, where, out, split=split, revision=revision)
    typer.echo(f"{len(tasks)} lm-eval tasks in {out}: {', '.join(tasks)}; run them with")
    typer.echo(f"lm_eval --include_path {out} --tasks {tasks[0]} --model local-chat-completions "
               "--model_args model=NAME,base_url=http://HOST/v1/chat/completions --apply_chat_template")
