"""Who the crawls say they are: one User-Agent for every request timelyqa sends to a website (the crawls, and
`timelyqa extract`), read here so that commands which import no Scrapy read it the same way."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from timelyqa.errors import ConfigError

USER_AGENT_ENV = "TIMELYQA_CRAWL_USER_AGENT"
DEFAULT_USER_AGENT = "timelyqa-crawler/0.1 (+https://github.com/timelyqa/timelyqa; crawl@timelyqa.invalid)"
"""Names the project and where to reach it; set TIMELYQA_CRAWL_USER_AGENT to your own name and contact."""
_CONTACT = re.compile(r"@|https?://")
_WIKIMEDIA_CONTACT = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|https?://[\w-]+(?:\.[\w-]+)+")


def user_agent(environ: Mapping[str, str] | None = None) -> str:
    """TIMELYQA_CRAWL_USER_AGENT, or the default naming the project; ConfigError for one without a contact."""
    value = (environ if environ is not None else os.environ).get(USER_AGENT_ENV) or DEFAULT_USER_AGENT
    if not _CONTACT.search(value):
        raise ConfigError(f"{USER_AGENT_ENV}={value!r}: name a contact (an email address or a URL) in the User-Agent")
    return value


def wikimedia_user_agent(agent: str) -> str:
    """`agent` on one line when it names a contact as Wikimedia's User-Agent policy asks (an e-mail address or a
    URL), for every client of a Wikimedia service (the Action APIs, the dump mirror); else ValueError saying so."""
    agent = " ".join(agent.split())
    if not _WIKIMEDIA_CONTACT.search(agent):
        raise ValueError(f"{agent!r} has no contact details; Wikimedia's User-Agent policy asks for an e-mail "
                         "address or a URL, e.g. 'timelyqa/0.1 (https://example.org/timelyqa; you@example.org)'")
    return agent
