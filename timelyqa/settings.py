"""One base for settings: frozen, no unknown field, every wrong value a one-line ConfigError naming the setting, and
values read from `{PREFIX}{FIELD}` environment variables with the caller's options on top."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, ValidationError

from timelyqa.errors import ConfigError


def problem(exc: ValidationError) -> tuple[str, str]:
    """(where, what) of a validation's first error: the dotted path of the field ('' for the whole object) and
    pydantic's message on one line, without the "Value error, " it puts before a validator's own words."""
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return where, " ".join(str(first["msg"]).removeprefix("Value error, ").split())


class Settings(BaseModel):
    """Settings however they are made (in code, by `of` from a flow's loose values, by `from_env`): a wrong value is
    a ConfigError in one line, `{NAME} setting {field} {value}: {what is wrong}` (the value left out when the message
    quotes it already)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    NAME: ClassVar[str] = ""
    """How messages name these settings ("LLM" -> "LLM setting model: ..."); empty: "setting model: ..."."""
    ENV_PREFIX: ClassVar[str] = ""
    """The default prefix of `from_env`'s variables, e.g. TIMELYQA_LLM_."""
    REQUIRED_FROM_ENV: ClassVar[tuple[str, ...]] = ()
    """Fields `from_env` must find (in the environment or the overrides) before it builds anything."""
    CHECKED_IN_CODE: ClassVar[bool] = True
    """False: built directly in code, they raise pydantic's ValidationError as any model does; `of` and `from_env`
    still give the one-line ConfigError."""

    def __init__(self, **values: Any) -> None:
        if not type(self).CHECKED_IN_CODE:
            super().__init__(**values)
            return
        try:
            super().__init__(**values)
        except ValidationError as exc:
            raise type(self).invalid(exc, values) from None

    @classmethod
    def of(cls, **values: Any) -> Self:
        """Settings from loose values (a flow's parameters, the environment's text): a wrong one is a ConfigError."""
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            raise cls.invalid(exc, values) from None

    @classmethod
    def invalid(cls, exc: ValidationError, values: Mapping[str, Any]) -> ConfigError:
        """The one line that names the setting, the value given (unless the message quotes it) and what is wrong."""
        where, what = problem(exc)
        if not where:
            return ConfigError(f"{cls.NAME} settings: {what}" if cls.NAME else what)
        given = values.get(where)
        quoted = re.search(rf"(?<![\w.]){re.escape(repr(given))}(?![\w.])", what)
        shown = f" {given!r}" if where in values and not quoted and not cls._secret(where) else ""
        return ConfigError(f"{cls.NAME + ' ' if cls.NAME else ''}setting {where}{shown}: {what}")

    @classmethod
    def _secret(cls, name: str) -> bool:
        """A key or a token is never repeated in a message, wrong or not."""
        field = cls.model_fields.get(name)
        return field is not None and "SecretStr" in str(field.annotation)

    @classmethod
    def from_env(cls, prefix: str | None = None, environ: Mapping[str, str] | None = None, **overrides: Any) -> Self:
        """Settings from `{prefix}FIELD` variables (empty ones ignored), `overrides` that are not None on top;
        `prefix` defaults to the class's ENV_PREFIX, `environ` to the process environment."""
        prefix = cls.ENV_PREFIX if prefix is None else prefix
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {name: env[prefix + name.upper()] for name in cls.model_fields
                                  if env.get(prefix + name.upper())}
        values.update({k: v for k, v in overrides.items() if v is not None})
        missing = [name for name in cls.REQUIRED_FROM_ENV if name not in values]
        if missing:
            raise cls.missing(missing, prefix)
        cls.check_env(values, prefix, overrides)
        return cls.of(**values)

    @classmethod
    def missing(cls, names: list[str], prefix: str) -> ConfigError:
        """What to say when `from_env` lacks required settings: the variables to set."""
        wanted = " and ".join(prefix + name.upper() for name in names)
        return ConfigError(f"{cls.NAME or 'the'} settings need {wanted} (or the matching option)")

    @classmethod
    def check_env(cls, values: Mapping[str, Any], prefix: str, overrides: Mapping[str, Any]) -> None:
        """A check of the variables' text before the settings are built, for a message naming the variable."""
