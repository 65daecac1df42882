"""One client for any OpenAI-compatible chat endpoint: JSON answers validated by shape, retries, cache, usage.

A call renders a versioned prompt, asks for JSON of the prompt's shape, and returns a `Reply`: the
validated value, or the snake_case reason it has none. What a call can return:

- transient failures (timeouts, refused connections, 429 with its Retry-After, 5xx) are retried with
  backoff, then raised as TransientSourceError so the flow's task retry takes over (the cache keeps
  what was already answered, so a retry pays only for the rest);
- an answer that is not JSON, or not of the shape, is re-asked `repairs` times with the problem stated,
  then becomes a `malformed_json`, `wrong_shape` or `truncated` reply;
- a refusal becomes a `refused` reply and is not re-asked; a request the server rejects (HTTP 400/422)
  a `request_rejected` reply;
- a wrong key, a missing model or an endpoint that is not there stops the run: ConfigError.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

import openai
import orjson
from pydantic import BaseModel, ValidationError

from timelyqa.errors import ConfigError, TransientSourceError
from timelyqa.http import RetryPolicy, asked_wait, transient_status
from timelyqa.llm.cache import ReplyCache, cache_key
from timelyqa.llm.settings import JsonMode, LLMSettings
from timelyqa.reasons import Reason

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

REPAIR_VERSION = "timelyqa_repair_v1"
REPAIR = ("Your reply could not be used: {problem}. Reply again with only one JSON object that matches this "
          "JSON schema, and nothing else:\n{schema}")
"""The re-ask after a malformed answer (versioned like the prompts: a new wording is a new version)."""

_REFUSAL = re.compile(r"^\W*(i'?m sorry|i am sorry|sorry, |i can(?:no|')t|i cannot|i won'?t|i will not|"
                      r"i'?m (?:not able|unable)|i am (?:not able|unable)|as an ai)", re.IGNORECASE)
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


class ReplyFailure(Reason):
    """Why a model's reply gave no value."""

    MALFORMED_JSON = "malformed_json", "the reply is not JSON, even when asked again"
    WRONG_SHAPE = "wrong_shape", "the reply is JSON but not of the shape asked for, even when asked again"
    TRUNCATED = "truncated", "the reply was cut at the token limit before its JSON ended"
    REFUSED = "refused", "the model refused to answer"
    REQUEST_REJECTED = "request_rejected", "the server rejected the request (HTTP 400 or 422)"


class Prompt(Protocol):
    """What the client needs of a prompt (timelyqa.llm.prompts.Prompt is one)."""

    @property
    def id(self) -> str: ...

    @property
    def shape(self) -> type[BaseModel]: ...

    def render(self, **values: str) -> list[dict[str, str]]: ...


@dataclass(frozen=True)
class Reply(Generic[T]):
    """One answer: `value` when the model gave JSON of the shape asked for, else `reason` and `detail`."""

    value: T | None
    reason: ReplyFailure | None
    detail: str
    prompt_id: str
    model: str

    @property
    def ok(self) -> bool:
        return self.value is not None


@dataclass
class Usage:
    """What a run spent on models, summed across threads: the `llm_*` entries of a manifest's `usage`."""

    calls: int = 0
    cached: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, **amounts: float) -> None:
        with self._lock:
            for name, amount in amounts.items():
                setattr(self, name, getattr(self, name) + amount)

    def as_manifest(self) -> dict[str, float]:
        with self._lock:
            return {"llm_calls": self.calls, "llm_cached": self.cached, "llm_retries": self.retries,
                    "llm_prompt_tokens": self.prompt_tokens, "llm_completion_tokens": self.completion_tokens,
                    "llm_seconds": round(self.seconds, 3)}


def total_usage(llms: Sequence[LLM]) -> dict[str, float]:
    """The usage of several clients summed, each once however often it is listed; {"llm_calls": 0} for none."""
    total: dict[str, float] = {"llm_calls": 0}
    for llm in {id(llm): llm for llm in llms}.values():
        for key, amount in llm.usage.as_manifest().items():
            total[key] = round(total.get(key, 0) + amount, 3)
    return total


@contextmanager
def usage_during(llms: Sequence[LLM], record: Callable[[Mapping[str, float]], None]) -> Iterator[None]:
    """Hands `record` what the models were used for inside the block (not what they had done before it)."""
    before = Counter(total_usage(llms))
    try:
        yield
    finally:
        after = Counter(total_usage(llms))
        record({k: round(after[k] - before[k], 3) for k in after})


class LLM:
    """A model behind an OpenAI-compatible endpoint, as `settings` describe it."""

    def __init__(self, settings: LLMSettings, *, sleep: Callable[[float], None] = time.sleep) -> None:
        self.settings = settings
        self.usage = Usage()
        self._sleep = sleep
        self._cache = ReplyCache(settings.cache_dir) if settings.cache_dir else None
        self._gate = threading.BoundedSemaphore(settings.concurrency)
        # The SDK's own retries are off: ours honour Retry-After, count, and end in the error vocabulary.
        self._client = openai.OpenAI(base_url=settings.base_url, api_key=settings.api_key.get_secret_value()
                                     or "none", timeout=settings.timeout, max_retries=0)

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> LLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def generator(self) -> str:
        """How a record names this model as its maker (the prompt version is added by the caller)."""
        return f"llm:{self.settings.model}"

    def preflight(self) -> None:
        """Stop before any work when the endpoint is not there, refuses the key, or does not serve the model."""
        where = self.settings.base_url
        try:
            served = [m.id for m in self._json(self._client.models.with_raw_response.list(), "/models")]
        except openai.AuthenticationError:
            raise ConfigError(f"{where} refused the API key (HTTP 401)") from None
        except openai.PermissionDeniedError:
            raise ConfigError(f"{where} denied access with this API key (HTTP 403)") from None
        except openai.NotFoundError:
            return  # some servers have no /models; the first call will tell
        except (openai.APIConnectionError, openai.APITimeoutError) as exc:
            raise ConfigError(f"{where}: no OpenAI-compatible API answers ({type(exc).__name__})") from None
        except openai.APIStatusError as exc:
            raise ConfigError(f"{where}/models answered HTTP {exc.status_code}") from None
        if served and self.settings.model not in served:
            shown = ", ".join(served[:10]) + (" ..." if len(served) > 10 else "")
            raise ConfigError(f"{where} does not serve model {self.settings.model!r}; it serves: {shown}")

    def ask(self, prompt: Prompt, values: Mapping[str, str], shape: type[T] | None = None) -> Reply[T]:
        """Render `prompt` with `values`, ask, and validate the answer as `shape` (the prompt's own by default)."""
        model_cls: type[Any] = shape or prompt.shape
        messages = prompt.render(**values)
        schema = orjson.dumps(model_cls.model_json_schema()).decode()
        problem = ""
        for repair in range(self.settings.repairs + 1):
            raw = self._complete(prompt.id if repair == 0 else f"{prompt.id}+{REPAIR_VERSION}", messages, model_cls)
            content, refusal, finish = raw.get("content") or "", raw.get("refusal"), raw.get("finish_reason")
            if refusal or finish == "content_filter":
                return self._reply(prompt, None, ReplyFailure.REFUSED, _one_line(refusal or f"finish_reason={finish}"))
            if finish == "request_rejected":  # asking again the same way gets the same 400
                return self._reply(prompt, None, ReplyFailure.REQUEST_REJECTED, raw.get("error") or "HTTP 400")
            value, reason, problem = _parse(content, model_cls, finish)
            if value is not None:
                return self._reply(prompt, value, None, "")
            if reason is ReplyFailure.REFUSED:
                return self._reply(prompt, None, reason, problem)
            if repair < self.settings.repairs:
                messages = [*messages, {"role": "assistant", "content": content},
                            {"role": "user", "content": REPAIR.format(problem=problem, schema=schema)}]
        return self._reply(prompt, None, reason, problem)

    def ask_all(self, prompt: Prompt, rows: Sequence[Mapping[str, str]], shape: type[T] | None = None
                ) -> list[Reply[T]]:
        """`ask` for every row, `concurrency` at a time, in the order of `rows`."""
        if len(rows) <= 1 or self.settings.concurrency == 1:
            return [self.ask(prompt, row, shape) for row in rows]
        with ThreadPoolExecutor(max_workers=self.settings.concurrency, thread_name_prefix="llm") as pool:
            return list(pool.map(lambda row: self.ask(prompt, row, shape), rows))

    def complete_all(self, prompt_id: str, conversations: Sequence[list[dict[str, str]]]) -> list[str]:
        """A free-text reply (no JSON asked for) to each conversation, `concurrency` at a time, in order, cached and
        retried like every call; '' for a reply refused, filtered or rejected by the server."""
        def one(messages: list[dict[str, str]]) -> str:
            raw = self._complete(prompt_id, messages, None)
            refused = raw.get("refusal") or raw.get("finish_reason") in ("content_filter", "request_rejected")
            return "" if refused else raw.get("content") or ""
        if len(conversations) <= 1 or self.settings.concurrency == 1:
            return [one(m) for m in conversations]
        with ThreadPoolExecutor(max_workers=self.settings.concurrency, thread_name_prefix="llm") as pool:
            return list(pool.map(one, conversations))

    def _reply(self, prompt: Prompt, value: Any, reason: ReplyFailure | None, detail: str) -> Reply[Any]:
        return Reply(value=value, reason=reason, detail=detail, prompt_id=prompt.id, model=self.settings.model)

    def _response_format(self, shape: type[BaseModel] | None) -> dict[str, Any] | None:
        mode = self.settings.json_mode
        if shape is None:  # free text
            return None
        if mode is JsonMode.OBJECT_WITH_SCHEMA:
            return {"type": "json_object", "schema": shape.model_json_schema()}
        if mode is JsonMode.SCHEMA:
            return {"type": "json_schema",
                    "json_schema": {"name": shape.__name__, "schema": shape.model_json_schema(), "strict": True}}
        if mode is JsonMode.OBJECT:
            return {"type": "json_object"}
        return None

    def _complete(self, prompt_id: str, messages: list[dict[str, str]], shape: type[BaseModel] | None
                  ) -> dict[str, Any]:
        """One completion as a plain dict, from the cache when it holds the same call."""
        s = self.settings
        params: dict[str, Any] = {"temperature": s.temperature, "max_tokens": s.max_tokens}
        if s.seed is not None:
            params["seed"] = s.seed
        response_format = self._response_format(shape)
        if response_format is not None:
            params["response_format"] = response_format
        key = cache_key(endpoint=s.base_url, model=s.model, prompt_id=prompt_id, messages=messages, params=params)
        if self._cache is not None and (hit := self._cache.get(key)) is not None:
            self.usage.add(cached=1)
            return hit
        with self._gate:
            raw = self._call(messages, params)
        if self._cache is not None:
            self._cache.put(key, raw)
        return raw

    def _call(self, messages: list[dict[str, str]], params: dict[str, Any]) -> dict[str, Any]:
        s = self.settings
        policy = RetryPolicy(s.retries, s.backoff, s.max_wait)

        def retried(attempt: int, exc: TransientSourceError, wait: float) -> None:
            self.usage.add(retries=1)
            log.warning("%s: %s; retry %d of %d in %.1f s", s.base_url, exc, attempt + 1, s.retries, wait)

        try:
            return policy.run(lambda _: self._call_once(messages, params), sleep=self._sleep, on_retry=retried)
        except TransientSourceError as exc:
            raise TransientSourceError(f"{s.base_url}: model {s.model!r} failed {policy.tries} times, last: {exc}"
                                       ) from None

    def _call_once(self, messages: list[dict[str, str]], params: dict[str, Any]) -> dict[str, Any]:
        """One request: the reply, a `request_rejected` stand-in, TransientSourceError (its text the short cause,
        its wait what the server asked) or ConfigError."""
        s = self.settings
        started = time.perf_counter()
        try:
            raw = self._client.chat.completions.with_raw_response.create(model=s.model, messages=messages, **params)
            response = self._json(raw, "/chat/completions")
        except (openai.APITimeoutError, openai.APIConnectionError) as exc:
            self.usage.add(calls=1)
            raise TransientSourceError(type(exc).__name__) from None
        except openai.AuthenticationError:
            raise ConfigError(f"{s.base_url} refused the API key (HTTP 401)") from None
        except openai.PermissionDeniedError:
            raise ConfigError(f"{s.base_url} denied access with this API key (HTTP 403)") from None
        except openai.NotFoundError as exc:
            raise ConfigError(f"{s.base_url}: no model {s.model!r} or no chat endpoint (HTTP 404): "
                              f"{_one_line(str(exc.message))}") from None
        except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
            self.usage.add(calls=1)
            return {"content": "", "error": f"HTTP {exc.status_code}: {_one_line(str(exc.message))}",
                    "finish_reason": "request_rejected"}
        except openai.APIStatusError as exc:
            if not transient_status(exc.status_code):
                raise ConfigError(f"{s.base_url} answered HTTP {exc.status_code}: "
                                  f"{_one_line(str(exc.message))}") from None
            self.usage.add(calls=1)
            raise TransientSourceError(f"HTTP {exc.status_code}", retry_after=asked_wait(exc.response.headers)
                                       ) from None
        finally:
            self.usage.add(seconds=time.perf_counter() - started)
        return self._record(response, time.perf_counter() - started)

    def _json(self, raw: Any, path: str) -> Any:
        """The parsed body of a 200. One that is not JSON (a web server's page, a login portal) means no
        OpenAI-compatible API lives at the base URL: a wrong setting, not a reply to re-ask or retry."""
        mime = raw.headers.get("content-type", "").split(";")[0].strip().lower()
        try:
            if not mime.endswith("json"):
                orjson.loads(raw.content)  # the SDK would hand back the page's text in place of its model
            return raw.parse()
        except ValueError:
            raise ConfigError(f"{self.settings.base_url}{path} answered {mime or 'no content type'} that is not JSON: "
                              "no OpenAI-compatible API there; check the base URL") from None

    def _record(self, response: Any, elapsed: float) -> dict[str, Any]:
        usage = getattr(response, "usage", None)
        prompt_tokens = getattr(usage, "prompt_tokens", 0) or 0
        completion_tokens = getattr(usage, "completion_tokens", 0) or 0
        self.usage.add(calls=1, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
        if not response.choices:
            return {"content": "", "finish_reason": "no_choices"}
        choice = response.choices[0]
        return {"content": choice.message.content or "", "refusal": getattr(choice.message, "refusal", None),
                "finish_reason": choice.finish_reason, "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens, "seconds": round(elapsed, 3)}


def _parse(content: str, shape: type[BaseModel], finish: str | None) -> tuple[Any, ReplyFailure | None, str]:
    """(value, reason, problem): the validated value, or why there is none in words the model can act on."""
    text = content.strip()
    if fenced := _FENCE.match(text):
        text = fenced.group(1)
    if not text:
        return None, ReplyFailure.MALFORMED_JSON, "the reply was empty"
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        if _REFUSAL.match(text):
            return None, ReplyFailure.REFUSED, _one_line(text)
        if finish == "length":
            return None, ReplyFailure.TRUNCATED, "the reply was cut at the token limit before the JSON ended"
        return None, ReplyFailure.MALFORMED_JSON, f"it is not JSON ({_one_line(str(exc))})"
    if not isinstance(data, dict):
        return None, ReplyFailure.WRONG_SHAPE, f"it is a JSON {type(data).__name__}, not an object"
    try:
        return shape.model_validate(data), None, ""
    except ValidationError as exc:
        errors = exc.errors()
        where = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'object'}: {e['msg']}" for e in errors[:3])
        return None, ReplyFailure.WRONG_SHAPE, f"it does not match the schema ({where})"


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."
