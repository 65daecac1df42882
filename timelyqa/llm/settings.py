"""Where a model is and how to call it: settings from code or from `TIMELYQA_LLM_*` variables, checked up front."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field, SecretStr, field_validator

from timelyqa.checks import http_url
from timelyqa.errors import ConfigError
from timelyqa.settings import Settings

ENV_PREFIX = "TIMELYQA_LLM_"


class JsonMode(StrEnum):
    """How a call asks the server for JSON; servers disagree on what they accept."""

    OBJECT_WITH_SCHEMA = "json_object_schema"  # {"type": "json_object", "schema": ...}: llama.cpp's server
    SCHEMA = "json_schema"  # {"type": "json_schema", "json_schema": {...}}: OpenAI's structured outputs, vLLM
    OBJECT = "json_object"  # {"type": "json_object"}: JSON, any shape; the prompt carries the schema
    NONE = "none"  # no response_format at all: the prompt and validation do the work


class LLMSettings(Settings):
    """One model behind one OpenAI-compatible chat-completions endpoint."""

    NAME: ClassVar[str] = "LLM"
    ENV_PREFIX: ClassVar[str] = ENV_PREFIX
    REQUIRED_FROM_ENV: ClassVar[tuple[str, ...]] = ("base_url", "model")

    base_url: str = Field(description="the API root, e.g. http://127.0.0.1:8080/v1 or https://api.openai.com/v1")
    model: str = Field(min_length=1)
    api_key: SecretStr = Field(default=SecretStr(""), description="empty for local servers; never logged")
    timeout: float = Field(default=60.0, gt=0, description="seconds for one HTTP call")
    concurrency: int = Field(default=2, ge=1, le=64, description="calls in flight at once")
    temperature: float = Field(default=0.0, ge=0, le=2)
    seed: int | None = Field(default=0, description="sent with every call, for servers that honour it")
    max_tokens: int = Field(default=512, ge=1)
    retries: int = Field(default=4, ge=0, le=20, description="extra tries after a transient failure")
    repairs: int = Field(default=2, ge=0, le=5, description="re-asks after an answer that is not the JSON asked for")
    backoff: float = Field(default=1.0, ge=0, description="seconds before the first retry; doubles each time")
    max_wait: float = Field(default=60.0, ge=0, description="the longest wait honoured, Retry-After included")
    json_mode: JsonMode = JsonMode.OBJECT_WITH_SCHEMA
    cache_dir: Path | None = Field(default=None, description="replies kept here; None keeps nothing")

    @field_validator("base_url")
    @classmethod
    def _http(cls, url: str) -> str:
        try:
            http_url(url, "base_url")
        except ConfigError as exc:  # pydantic reports ValueErrors; the base turns them into one ConfigError line
            raise ValueError(str(exc).removeprefix("base_url ")) from None
        return url.rstrip("/")

    def __repr__(self) -> str:  # pydantic already masks the key; keep the repr short and key-free
        return f"LLMSettings(base_url={self.base_url!r}, model={self.model!r})"

    @classmethod
    def build(cls, **values: Any) -> LLMSettings:
        """Settings from keyword values, or a ConfigError in one line naming what is wrong (the base's `of`)."""
        return cls.of(**values)

    @classmethod
    def check_env(cls, values: Mapping[str, Any], prefix: str, overrides: Mapping[str, Any]) -> None:
        """A base URL read from the environment is named by its variable (the checker's has a prefix of its own,
        e.g. `TIMELYQA_CHECK_LLM_`)."""
        if overrides.get("base_url") is None:
            http_url(str(values["base_url"]), f"LLM setting base_url ({prefix}BASE_URL)")

    def same_model(self, other: LLMSettings) -> bool:
        """True when two settings name one model: a check by it is not independent of what it checks."""
        return _model_key(self.model) == _model_key(other.model)


def _model_key(model: str) -> str:
    # "openai/gpt-4.1" and "gpt-4.1" are one model behind two routers; case never tells models apart.
    return model.strip().lower().rsplit("/", 1)[-1]
