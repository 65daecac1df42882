"""A polite client for the MediaWiki Action API: identified, at most three requests at a time, lag-aware, continued.

Wikimedia's rules for API clients, kept here so that no caller can forget one:

- every request carries a descriptive User-Agent with contact details (an e-mail address or a URL);
  settings without one are refused before any request;
- at most `concurrency` (never more than 3) requests are in flight at once, across all threads;
- every request sends `maxlag`; a `maxlag` error, HTTP 429 and 5xx are waited out as their `Retry-After`
  says (capped at `max_wait`), and the wait holds every thread, not only the one that was told;
- `continue` is followed until the answer is complete;
- only the configured endpoint is requested: redirects are not followed.

What a request can end in: the JSON answer; TransientSourceError once the retries are spent (the flow's
task retry takes over); ApiError for an `{"error": ...}` answer (the caller decides whether that loses
one page or the run); SourceContractError for an answer that is not JSON; ConfigError for a refusal
(HTTP 403, 404, a redirect) that no retry will change.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar
from urllib.parse import urlsplit

import httpx
import orjson
from pydantic import Field, field_validator

from timelyqa.errors import ConfigError, SourceContractError, TransientSourceError
from timelyqa.http import RetryPolicy, retry_after, transient_status
from timelyqa.settings import Settings
from timelyqa.useragent import wikimedia_user_agent

log = logging.getLogger(__name__)

ENV_PREFIX = "TIMELYQA_WIKIPEDIA_API_"
MAX_CONCURRENCY = 3
"""Wikimedia's limit on parallel requests from one client."""
_RETRY_CODES = frozenset({"maxlag"})
_UNREACHABLE = (httpx.ConnectError, httpx.ConnectTimeout)
_MAXLAG_WAIT = 5.0
"""MediaWiki's own advice: after a maxlag error wait at least five seconds."""


class ApiSettings(Settings):
    """One wiki's Action API and how politely to use it; any wrong value is a one-line ConfigError."""

    NAME: ClassVar[str] = "Wikipedia API"
    """How messages name the API: a subclass for another wiki (Wikidata) says its own name."""
    ENV_PREFIX: ClassVar[str] = ENV_PREFIX
    REQUIRED_FROM_ENV: ClassVar[tuple[str, ...]] = ("user_agent",)

    endpoint: str = Field(default="https://en.wikipedia.org/w/api.php", description="the wiki's api.php URL")
    user_agent: str = Field(description="who is asking and how to reach them, e.g. "
                            "'timelyqa/0.1 (https://example.org/timelyqa; data@example.org) httpx/0.28'")
    concurrency: int = Field(default=MAX_CONCURRENCY, description="requests in flight at once, 1 to 3")
    maxlag: int = Field(default=5, ge=1, le=60, description="seconds of replica lag above which the wiki says wait")
    timeout: float = Field(default=30.0, gt=0, description="seconds for one HTTP request")
    retries: int = Field(default=5, ge=0, le=20, description="extra tries after a transient failure")
    backoff: float = Field(default=1.0, ge=0, description="seconds before the first retry without Retry-After; doubles")
    max_wait: float = Field(default=120.0, ge=0, description="the longest wait honoured, Retry-After included")

    @field_validator("endpoint")
    @classmethod
    def _endpoint(cls, url: str) -> str:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname or not parts.path.endswith("api.php"):
            raise ValueError(f"{url!r} is not an Action API URL (like https://en.wikipedia.org/w/api.php)")
        return url

    @field_validator("user_agent")
    @classmethod
    def _user_agent(cls, agent: str) -> str:
        return wikimedia_user_agent(agent)

    @field_validator("concurrency")
    @classmethod
    def _concurrency(cls, n: int) -> int:
        if not 1 <= n <= MAX_CONCURRENCY:
            raise ValueError(f"{n}: Wikimedia allows 1 to {MAX_CONCURRENCY} requests at a time")
        return n

    @property
    def host(self) -> str:
        return urlsplit(self.endpoint).netloc

    @classmethod
    def missing(cls, names: list[str], prefix: str) -> ConfigError:
        return ConfigError(f"the {cls.NAME} needs {prefix}USER_AGENT (or the matching option): a client name "
                           "with contact details, per Wikimedia's User-Agent policy")


class ApiError(SourceContractError):
    """The API answered `{"error": {"code": ..., "info": ...}}`: the request is wrong for this wiki or this page."""

    def __init__(self, code: str, info: str, url: str) -> None:
        super().__init__(f"{url}: API error {code}: {info}")
        self.code, self.info, self.url = code, info, url


class MediaWikiAPI:
    """One wiki's Action API, shared by every thread of a run so that the limits hold for the run as a whole."""

    def __init__(self, settings: ApiSettings, *, sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic, transport: httpx.BaseTransport | None = None) -> None:
        self.settings = settings
        self.usage: Counter[str] = Counter()
        self.siteinfo: dict[str, Any] | None = None
        self._sleep, self._clock = sleep, clock
        self._gate = threading.BoundedSemaphore(settings.concurrency)
        self._lock = threading.Lock()
        self._resume_at = 0.0
        self._policy = RetryPolicy(settings.retries, settings.backoff, settings.max_wait)
        n = settings.concurrency
        self._http = httpx.Client(headers={"User-Agent": settings.user_agent, "Accept": "application/json"},
                                  timeout=settings.timeout, follow_redirects=False, transport=transport,
                                  limits=httpx.Limits(max_connections=n, max_keepalive_connections=n))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> MediaWikiAPI:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def wiki_url(self) -> str:
        """The wiki's root for evidence links (https://en.wikipedia.org), from siteinfo once `check` has run."""
        base = str((self.siteinfo or {}).get("base") or "")
        if "/wiki/" in base:
            return base.split("/wiki/", 1)[0]
        parts = urlsplit(self.settings.endpoint)
        return f"{parts.scheme}://{parts.netloc}"

    def check(self) -> dict[str, Any]:
        """One cheap `meta=siteinfo` request: stop before any work when no MediaWiki API answers at the endpoint."""
        if self.siteinfo is not None:
            return self.siteinfo
        where = self.settings.endpoint
        try:
            data = self.get({"action": "query", "meta": "siteinfo", "siprop": "general"}, at_start=True)
        except SourceContractError as exc:
            raise ConfigError(f"{where} is not a MediaWiki Action API: {exc}") from None
        general = (data.get("query") or {}).get("general")
        if not isinstance(general, dict) or not str(general.get("generator", "")).startswith("MediaWiki"):
            raise ConfigError(f"{where} answered JSON without MediaWiki's siteinfo: not an Action API endpoint")
        self.siteinfo = general
        return general

    def query(self, params: Mapping[str, str]) -> Iterator[dict[str, Any]]:
        """`action=query` answers one batch at a time, following `continue` until the result is complete."""
        base = {"action": "query", **params}
        cont: dict[str, str] = {}
        while True:
            data = self.get({**base, **cont})
            yield data
            nxt = data.get("continue")
            if not nxt:
                return
            if not isinstance(nxt, dict):
                raise SourceContractError(f"{self.settings.endpoint}: 'continue' is not an object: {nxt!r}")
            nxt = {str(k): str(v) for k, v in nxt.items()}
            if nxt == cont:  # an answer that never advances would loop forever
                raise SourceContractError(f"{self.settings.endpoint}: continuation does not advance: {nxt}")
            cont = nxt

    def get(self, params: Mapping[str, str], *, at_start: bool = False, path: str | None = None) -> dict[str, Any]:
        """One GET with the polite parameters added, retried while the failure may pass.

        `at_start`: a refused connection is a ConfigError (a wrong endpoint), not a failure to retry.
        `path`: another page of the same host that answers JSON (Wikibase's `/wiki/Special:EntityData/Q1.json`),
        under the same limits; it is sent `maxlag` but not the API's `format` parameters."""
        s = self.settings
        api = {} if path else {"format": "json", "formatversion": "2"}
        query = {**params, **api, "maxlag": str(s.maxlag)}
        url = s.endpoint if path is None else f"{urlsplit(s.endpoint).scheme}://{s.host}{path}"
        what = _summary(params)

        def once(_: int) -> dict[str, Any]:
            with self._gate:
                self._wait_turn()  # after the slot is ours: a wait ordered meanwhile still holds this request
                try:
                    response = self._http.get(url, params=query)
                except httpx.TransportError as exc:
                    last = f"{type(exc).__name__}: {exc}".strip(": ")
                    if at_start and isinstance(exc, _UNREACHABLE):
                        raise ConfigError(f"{s.endpoint}: no MediaWiki API answers ({last})") from None
                    raise TransientSourceError(last) from None
                finally:
                    self._count(requests=1)
            return self._answer(response)

        def retried(attempt: int, exc: TransientSourceError, wait: float) -> None:
            self._count(retries=1)
            log.warning("%s %s: %s; retry %d of %d in %.1f s", s.host, what, exc, attempt + 1, s.retries, wait)

        try:  # the wait holds every thread of the run, not only the one that was told
            return self._policy.run(once, sleep=self._hold, on_retry=retried)
        except TransientSourceError as exc:
            raise TransientSourceError(f"{s.endpoint} {what}: failed {s.retries + 1} times, last: {exc}",
                                       retry_after=exc.retry_after) from None

    def _answer(self, response: httpx.Response) -> dict[str, Any]:
        """The answer's JSON; TransientSourceError (why, and the wait asked) for a failure worth retrying; raises
        the vocabulary's other errors for the rest."""
        url, status = str(response.request.url), response.status_code
        if transient_status(status):
            raise TransientSourceError(f"HTTP {status}", retry_after=retry_after(response.headers.get("retry-after")))
        if 300 <= status < 400:
            raise ConfigError(f"{url} redirects (HTTP {status}) to {response.headers.get('location')!r}; only "
                              f"{self.settings.endpoint} is requested: configure the endpoint it moved to")
        if status in (401, 403, 404):
            raise ConfigError(f"{url} refused the request (HTTP {status}): {_snippet(response.text)}")
        if status != 200:
            raise SourceContractError(f"{url} answered HTTP {status}: {_snippet(response.text)}")
        try:
            data = orjson.loads(response.content)
        except orjson.JSONDecodeError:
            kind = response.headers.get("content-type", "no content type")
            raise SourceContractError(f"{url} answered {kind}, not JSON: {_snippet(response.text)}") from None
        if not isinstance(data, dict):
            raise SourceContractError(f"{url} answered a JSON {type(data).__name__}, not an object")
        error = data.get("error")
        if error is not None:
            code = str(error.get("code", "unknown")) if isinstance(error, dict) else "unknown"
            info = _one_line(str(error.get("info", "")) if isinstance(error, dict) else str(error))
            if code in _RETRY_CODES:
                wait = retry_after(response.headers.get("retry-after"))
                raise TransientSourceError(f"{code} ({info})",
                                           retry_after=max(_MAXLAG_WAIT, wait if wait is not None else 0.0))
            raise ApiError(code, info, url)
        return data

    def _wait_turn(self) -> None:
        """Before any request: sit out what remains of a wait the wiki asked of this client."""
        with self._lock:
            remaining = self._resume_at - self._clock()
        if remaining > 0:
            self._count(wait_seconds=remaining)
            self._sleep(remaining)

    def _hold(self, seconds: float) -> None:
        with self._lock:
            self._resume_at = max(self._resume_at, self._clock() + seconds)

    def _count(self, **amounts: float) -> None:
        with self._lock:
            for name, amount in amounts.items():
                self.usage[f"api_{name}"] += amount  # type: ignore[assignment]


def _summary(params: Mapping[str, str]) -> str:
    """What a request is for, in a log line: its module and page, never headers."""
    keys = ("meta", "list", "prop", "pageids", "titles", "ids", "revision")
    return " ".join(f"{k}={params[k]}" for k in keys if k in params) or "request"


def _one_line(text: str, limit: int = 160) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _snippet(text: str) -> str:
    return repr(_one_line(text))
