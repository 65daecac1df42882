"""A bundled official-site world: a website folder served on a loopback port, its recipes and the clocks to check
them at. The demo's (data/demo/official/bundle.yaml) and the registry fixture's are of this kind."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Annotated

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError

from timelyqa.errors import ConfigError
from timelyqa.official.clock import parse_at
from timelyqa.settings import problem


def _clock(text: str) -> str:
    parse_at(text)
    return text


class Bundle(BaseModel):
    """`site` and `recipes` are relative to the bundle file; `vars` name the site as its recipes do ({site})."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    site: str
    recipes: str
    host: str = "127.0.0.1"
    port: int
    vars: dict[str, str] = {}
    clocks: list[Annotated[str, AfterValidator(_clock)]]

    @classmethod
    def load(cls, path: Path) -> Bundle:
        try:
            return cls.model_validate(yaml.safe_load(Path(path).read_text(encoding="utf-8")))
        except (OSError, yaml.YAMLError) as exc:
            raise ConfigError(f"{path}: {' '.join(str(exc).split())}") from None
        except ValidationError as exc:
            where, what = problem(exc)
            raise ConfigError(f"{path}: {where or 'bundle'}: {what}") from None

    def at(self) -> list[datetime]:
        return [parse_at(c) for c in self.clocks]
