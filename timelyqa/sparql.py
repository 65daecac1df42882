"""A SPARQL endpoint behind SPARQLWrapper: preflight, SELECT with bounded retries, errors mapped to the vocabulary."""

from __future__ import annotations

import ast
import http.client
import threading
import time
import urllib.error
from collections.abc import Callable
from typing import Any

import orjson
from SPARQLWrapper import ASK, JSON, POST, SELECT, URLENCODED, SPARQLWrapper
from SPARQLWrapper.SPARQLExceptions import SPARQLWrapperException

from timelyqa.checks import http_url
from timelyqa.errors import ConfigError, SourceContractError, TransientSourceError
from timelyqa.http import USER_AGENT, RetryPolicy, retry_after, transient_status

SPARQL_JSON = ("application/sparql-results+json", "application/json")


class SparqlEndpoint:
    """One SPARQL query URL. `calls` counts HTTP requests (retries included), for benchmarks and stats."""

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 60.0,
        retries: int = 4,
        backoff: float = 1.0,
        max_wait: float = 120.0,
        agent: str = USER_AGENT,
        wrapper_factory: Callable[..., Any] = SPARQLWrapper,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        # urllib would open file:// and ftp:// too, and a bare word fails deep in SPARQLWrapper with a ValueError
        self.url = http_url(url, "endpoint")
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.max_wait = max_wait
        self.agent = agent
        self.calls = 0
        self._factory = wrapper_factory
        self._sleep = sleep
        self._lock = threading.Lock()

    def ping(self) -> None:
        """A cheap `ASK {}` before any work: ConfigError (one line, naming the URL) unless SPARQL JSON comes back.

        A server that answers 429 or 5xx exists and is busy: that stays a TransientSourceError, not a setting to fix.
        """
        try:
            answer = self._attempt("ASK {}", ASK)
        except _Unreachable as exc:
            raise ConfigError(f"endpoint {self.url} is unreachable: {exc.reason}") from exc
        except SourceContractError as exc:
            tail = self._tail(exc).removeprefix("is not a SPARQL endpoint: ")
            raise ConfigError(f"endpoint {self.url} is not a SPARQL endpoint: {tail}") from exc
        if not isinstance(answer.get("boolean"), bool):
            raise ConfigError(f"endpoint {self.url} is not a SPARQL endpoint: ASK {{}} gave no boolean")

    def select(self, query: str) -> list[dict[str, str]]:
        """The solutions as {variable: lexical value}; transient failures are retried with exponential backoff."""
        policy = RetryPolicy(self.retries, self.backoff, self.max_wait)
        try:
            answer = policy.run(lambda _: self._attempt(query, SELECT), sleep=self._sleep)
        except TransientSourceError as exc:
            tries = f"{policy.tries} attempt" + ("s" if self.retries else "")
            raise TransientSourceError(f"{exc} (gave up after {tries})", retry_after=exc.retry_after) from exc
        results = answer.get("results")
        bindings = results.get("bindings") if isinstance(results, dict) else None
        if not isinstance(bindings, list):
            raise SourceContractError(f"endpoint {self.url} answered SPARQL JSON without results.bindings")
        try:
            return [{var: term["value"] for var, term in row.items()} for row in bindings]
        except (AttributeError, KeyError, TypeError) as exc:
            raise SourceContractError(f"endpoint {self.url} answered malformed bindings: {exc!r}") from exc

    def _attempt(self, query: str, form: str) -> dict[str, Any]:
        """One HTTP request; every failure leaves as TransientSourceError or SourceContractError."""
        wrapper = self._factory(self.url, agent=self.agent)
        # The documented attributes setQuery() fills, without its guess of the query form: that guess runs
        # a regex over the whole text, 26 ms for a 40 KB batch of questions (0.5 us a character).
        wrapper.queryString, wrapper.queryType = query, form
        wrapper.setMethod(POST)
        wrapper.setRequestMethod(URLENCODED)
        wrapper.setReturnFormat(JSON)
        wrapper.setOnlyConneg(True)  # no format=/output= parameters: some servers reject unknown ones
        wrapper.setTimeout(max(1, round(self.timeout)))
        with self._lock:
            self.calls += 1
        try:
            result = wrapper.query()
            try:
                ctype = result.response.headers.get("Content-Type", "")
                body = result.response.read()
            finally:
                result.response.close()
        except urllib.error.HTTPError as exc:
            raise self._status_error(exc.code, exc.headers, _first_line(exc)) from exc
        except SPARQLWrapperException as exc:
            # SPARQLWrapper turns 400/401/404/414/500 into its own classes; the HTTPError is the context.
            cause = exc.__context__ if isinstance(exc.__context__, urllib.error.HTTPError) else None
            code = cause.code if cause is not None else 0
            raise self._status_error(code, cause.headers if cause else None, _first_line(exc)) from exc
        except http.client.IncompleteRead as exc:
            raise SourceContractError(f"endpoint {self.url} cut its answer short: {exc!r}") from exc
        except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
            reason = getattr(exc, "reason", exc)
            raise _Unreachable(self.url, str(reason)) from exc
        mime = ctype.split(";")[0].strip().lower()
        if mime not in SPARQL_JSON:
            raise SourceContractError(
                f"endpoint {self.url} is not a SPARQL endpoint: it answered {mime or 'no content type'}"
            )
        try:
            answer = orjson.loads(body)
        except ValueError as exc:
            raise SourceContractError(
                f"endpoint {self.url} answered {mime} that is not JSON ({len(body)} bytes, cut or malformed)"
            ) from exc
        if not isinstance(answer, dict):
            raise SourceContractError(f"endpoint {self.url} answered {mime} that is not a SPARQL result object")
        return answer

    def _tail(self, exc: BaseException) -> str:
        """An endpoint error without its leading "endpoint URL", so a wrapping message names the URL once."""
        return str(exc).removeprefix(f"endpoint {self.url} ")

    def _status_error(self, code: int, headers: Any, first_line: str) -> Exception:
        message = f"endpoint {self.url} answered HTTP {code or '?'}: {first_line}"
        if transient_status(code):
            wait = retry_after(headers.get("Retry-After")) if headers is not None else None
            return TransientSourceError(message, retry_after=wait)
        return SourceContractError(message)


class _Unreachable(TransientSourceError):
    """No HTTP answer at all (refused, reset, timed out): transient for a query, a wrong setting for a preflight."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"endpoint {url} did not answer: {reason}")
        self.reason = reason


def _first_line(exc: BaseException) -> str:
    """The first non-empty line of the server's answer, recovered from the exception that carries it."""
    text = ""
    if isinstance(exc, urllib.error.HTTPError):
        try:
            text = exc.read().decode("utf-8", "replace")
        except (OSError, http.client.HTTPException, AttributeError):
            text = str(exc.reason)
    else:
        # SPARQLWrapper formats the body as "...Response:\n<repr of bytes>".
        _, sep, raw = str(exc).partition("Response:\n")
        try:
            text = ast.literal_eval(raw.strip()).decode("utf-8", "replace") if sep else str(exc)
        except (ValueError, SyntaxError, AttributeError):
            text = raw or str(exc)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0][:300] if lines else "(empty answer)"

