"""Which wiki a run reads: a MediaWiki XML export or dump on disk, or a live wiki's Action API."""

from __future__ import annotations

from pathlib import Path

from timelyqa.errors import ConfigError
from timelyqa.mediawiki.client import ApiSettings

Wiki = Path | ApiSettings
"""A MediaWiki XML export or dump with revision history, or the Action API of a live wiki."""


def source_of(dump: str | Path | None, api: str | None, user_agent: str | None = None) -> Wiki:
    """The pages' source from the two ways to name one: a dump file or an API URL, exactly one of them."""
    if (dump is None) == (api is None):
        raise ConfigError("give one of --dump FILE or --api URL (a MediaWiki XML export, or a wiki's api.php)")
    if dump is not None:
        return Path(dump)
    return ApiSettings.from_env(endpoint=api, user_agent=user_agent)
