"""The Wikipedia flow: a dump or the Action API and a window in, checked questions about infobox changes out."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NONE

from flows.common import RETRY_TRANSIENT, funnel_order, publish_funnel, secret
from timelyqa.errors import ConfigError
from timelyqa.wikipedia import pipeline, writers
from timelyqa.wikipedia.apiclient import ApiSettings
from timelyqa.wikipedia.labels import DOMAIN_CAP

STAGES = ("pages", "revisions", "keys", "changes", "questions")
GENERATORS = ("template", "llm")


def window_of(start: str | None, end: str | None, days: int) -> tuple[datetime, datetime]:
    """The window: ISO moments (UTC when no zone), or by default the `days` that ended at the last midnight UTC."""
    def moment(text: str, name: str) -> datetime:
        try:
            value = datetime.fromisoformat(text)
        except ValueError:
            raise ConfigError(f"{name} {text!r} is not an ISO date or time") from None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value

    stop = moment(end, "end") if end else datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return (moment(start, "start") if start else stop - timedelta(days=days)), stop


@task
def check_inputs(dump: str | None, api: str | None, user_agent: str | None, generator: str, start: datetime,
                 end: datetime) -> None:
    """Fail the run on a wrong path, endpoint, window or generator before any work; never retried."""
    if generator not in GENERATORS:
        raise ConfigError(f"generator {generator!r}: one of {', '.join(GENERATORS)}")
    pipeline.open_source(_source(dump, api, user_agent), start=start, end=end, horizon=timedelta(0))


# The model's key is read inside the task, never passed in: task inputs feed cache keys and flow parameters
# are stored by the API. The task is retried on transient failures (the API, the model); replies already
# given come from the LLM cache, so a retry pays only for the rest.
@task(**RETRY_TRANSIENT, cache_policy=NONE)
def make_questions(dump: str | None, api: str | None, user_agent: str | None, out: Path, start: datetime,
                   end: datetime, seed: int, cap_per_domain: int, horizon_days: int, generator: str,
                   llm_domains: bool, llm_secret_block: str | None) -> dict[str, Any]:
    key = secret(llm_secret_block) if generator == "llm" or llm_domains else None
    writer = writers.llm_writer(cache_dir=out / "llm-cache", api_key=key) if generator == "llm" else None
    domains = writers.llm_domains(cache_dir=out / "llm-cache", api_key=key, writer=writer) if llm_domains else None
    return pipeline.run(_source(dump, api, user_agent), out, start=start, end=end, seed=seed,
                        cap_per_domain=cap_per_domain, horizon=timedelta(days=horizon_days), writer=writer,
                        domains=domains)


def _source(dump: str | None, api: str | None, user_agent: str | None) -> pipeline.Source:
    if (dump is None) == (api is None):
        raise ConfigError("give one of dump (a MediaWiki XML export) or api (a wiki's api.php URL)")
    return Path(dump) if dump else ApiSettings.from_env(endpoint=api, user_agent=user_agent)


@flow(name="wikipedia")
def wikipedia_flow(out: str, dump: str | None = None, api: str | None = None, start: str | None = None,
                   end: str | None = None, days: int = 7, seed: int = 0, cap_per_domain: int = DOMAIN_CAP,
                   horizon_days: int = 7, generator: str = "template", llm_domains: bool = False,
                   user_agent: str | None = None, llm_secret_block: str | None = None) -> dict[str, Any]:
    """Questions whose answers are Wikipedia infobox values changed in a window, as DailyQA makes them.

    The pages come from `dump` (a MediaWiki XML export with history) or `api` (a wiki's api.php, with
    `user_agent` or TIMELYQA_WIKIPEDIA_API_USER_AGENT naming who asks). The window is `start`..`end` (ISO),
    by default the `days` before the last midnight UTC; `horizon_days` after it are read for the update
    frequency. `generator` is `template` (offline) or `llm` (TIMELYQA_LLM_* writes, TIMELYQA_CHECK_LLM_*
    checks; the writer's key may come from the Prefect Secret block `llm_secret_block`). `llm_domains` labels
    domains with the writer's model (DailyQA's zero-shot way) instead of by rule.
    Writes questions.parquet, rejected.parquet and manifest.json into `out`, and returns the manifest.
    """
    window = window_of(start, end, days)
    check_inputs(dump, api, user_agent, generator, *window)
    manifest = make_questions(dump, api, user_agent, Path(out), *window, seed, cap_per_domain, horizon_days,
                              generator, llm_domains, llm_secret_block)
    publish_funnel("wikipedia", funnel_order(manifest["counts"], STAGES), manifest["rejects"], out=out)
    return manifest
