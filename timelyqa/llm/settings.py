"""Where a model is and how to call it: settings from code or from `TIMELYQA_LLM_*` variables, checked up front."""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from timelyqa.checks import http_url
from timelyqa.errors import ConfigError

ENV_PREFIX = "TIMELYQA_LLM_"


class JsonMode(StrEnum):
    """How a call asks the server for JSON; servers disagree on what they accept."""

    OBJECT_WITH_SCHEMA = "json_object_schema"  # {"type": "json_object", "schema": ...}: llama.cpp's server
    SCHEMA = "json_schema"  # {"type": "json_schema", "json_schema": {...}}: OpenAI's structured outputs, vLLM
    OBJECT = "json_object"  # {"type": "json_object"}: JSON, any shape; the prompt carries the schema
    NONE = "none"  # no response_format at all: the prompt and validation do the work


class LLMSettings(BaseModel):
    """One model behind one OpenAI-compatible chat-completions endpoint."""

    model_config = ConfigDict(frozen=True, extra="forbid")

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
        except ConfigError as exc:  # pydantic reports ValueErrors; build() turns them into one ConfigError line
            raise ValueError(str(exc).removeprefix("base_url ")) from None
        return url.rstrip("/")

    def __repr__(self) -> str:  # pydantic already masks the key; keep the repr short and key-free
        return f"LLMSettings(base_url={self.base_url!r}, model={self.model!r})"

    @classmethod
    def build(cls, **values: Any) -> LLMSettings:
        """Settings from keyword values, or a ConfigError in one line naming what is wrong."""
        try:
            return cls(**values)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "settings"
            raise ConfigError(f"LLM setting {where}: {str(first['msg']).removeprefix('Value error, ')}") from None

    @classmethod
    def from_env(cls, prefix: str = ENV_PREFIX, environ: dict[str, str] | None = None, **overrides: Any
                 ) -> LLMSettings:
        """Settings from `{prefix}BASE_URL`, `{prefix}MODEL`, `{prefix}API_KEY`, ... with `overrides` on top.

        A checker is configured apart from the writer with another prefix, e.g. `TIMELYQA_CHECK_LLM_`."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for name in cls.model_fields:
            raw = env.get(prefix + name.upper())
            if raw is not None and raw != "":
                values[name] = raw
        values.update({k: v for k, v in overrides.items() if v is not None})
        missing = [name for name in ("base_url", "model") if name not in values]
        if missing:
            raise ConfigError(f"LLM settings need {' and '.join(prefix + m.upper() for m in missing)} "
                              "(or the matching option)")
        if "base_url" not in overrides or overrides["base_url"] is None:
            http_url(str(values["base_url"]), f"LLM setting base_url ({prefix}BASE_URL)")  # names the variable
        return cls.build(**values)

    def same_model(self, other: LLMSettings) -> bool:
        """True when two settings name one model: a check by it is not independent of what it checks."""
        return _model_key(self.model) == _model_key(other.model)


def _model_key(model: str) -> str:
    # "openai/gpt-4.1" and "gpt-4.1" are one model behind two routers; case never tells models apart.
    return model.strip().lower().rsplit("/", 1)[-1]
