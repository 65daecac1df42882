"""The publish flow: a release folder onto the Hub as one commit and one tag, the token kept out of Prefect."""

from __future__ import annotations

import os
from dataclasses import asdict
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_link_artifact, create_markdown_artifact
from prefect.cache_policies import NONE

from flows.common import RETRY_TRANSIENT, reported, run_name, secret
from publish.hub import PublishResult, publish_release
from timelyqa.errors import ConfigError

DEFAULT_SECRET_BLOCK = "hf-token"


def hub_token(secret_block: str | None) -> str | None:
    """HF_TOKEN from the environment, else the value of the Prefect Secret block of that name (ConfigError when
    there is no such block), else None."""
    return os.environ.get("HF_TOKEN") or secret(secret_block) or None


# The token is read inside the task and never passed as an argument or returned: task inputs feed cache
# keys and results may be persisted, and flow parameters are stored by the API. No caching either: a
# publish must always ask the Hub, never replay an earlier answer.
@task(**RETRY_TRANSIENT, cache_policy=NONE)
def publish_to_hub(release: Path, repo: str, secret_block: str | None, dry_run: bool,
                   endpoint: str | None) -> PublishResult:
    token = hub_token(secret_block)
    if token is None and not dry_run:
        raise ConfigError(f"no Hub token: the Prefect Secret block {secret_block!r} is empty; put a write token in it "
                          "or set HF_TOKEN" if secret_block else
                          "no Hub token: set HF_TOKEN or name a Prefect Secret block that holds one")
    return publish_release(release, repo, token=token, endpoint=endpoint, dry_run=dry_run)


@flow(name="publish", flow_run_name=run_name(lambda p: f"publish {p['repo']}", "publish"))
@reported
def publish_flow(release: str, repo: str, dry_run: bool = False, secret_block: str | None = DEFAULT_SECRET_BLOCK,
                 endpoint: str | None = None) -> dict[str, Any]:
    """Publish the release folder `release` to the Hub dataset repo `repo` (ORG/NAME) under its version tag.

    The token is HF_TOKEN from the worker's environment, else the Prefect Secret block `secret_block` (a block
    named must exist).
    `dry_run` lists the files that would be uploaded and deleted and changes nothing. `endpoint` is the
    Hub's URL (default: HF_ENDPOINT, else huggingface.co).
    """
    result = publish_to_hub(Path(release), repo, secret_block, dry_run, endpoint)
    get_run_logger().info("%s", result.summary())
    state = "dry run" if result.dry_run else f"commit `{result.commit}`"
    lines = [f"# {result.repo_id} {result.tag}", "", f"{state}; {len(result.uploaded)} file(s) uploaded, "
             f"{len(result.deleted)} deleted.", ""]
    lines += [f"- added `{path}`" for path in result.uploaded] + [f"- deleted `{path}`" for path in result.deleted]
    create_markdown_artifact("\n".join(lines) + "\n", key="publish-summary",
                             description=f"publish {result.repo_id} {result.tag}")
    if not result.dry_run:
        hub = (endpoint or os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")
        create_link_artifact(f"{hub}/datasets/{result.repo_id}/tree/{result.tag}", key="release-hub",
                             link_text=f"{result.repo_id} {result.tag}", description="the release on the Hub")
    return asdict(result)
