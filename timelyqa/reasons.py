"""Why an item was dropped: reject reasons as enum members, each with the sentence that explains it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Self

SNAKE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$")


class Reason(StrEnum):
    """A reject reason: its value is the snake_case name written in `rejected.parquet` and counted in the manifest,
    its `explanation` the sentence the card's funnel table gives it. Declare members as `NAME = "name", "why"`."""

    explanation: str

    def __new__(cls, value: str, explanation: str = "") -> Self:
        member = str.__new__(cls, value)
        member._value_ = value
        member.explanation = explanation
        return member

    @classmethod
    def derived(cls, name: str, prefix: str, base: type[Reason], explain: str,
                extra: Mapping[str, tuple[str, str]] | None = None) -> Any:
        """A reason family made from another, member by member (`writer_` + each way a model reply fails), plus
        `extra` members; `explain` is formatted with `{explanation}`, the base member's own."""
        members = [(m.name, (f"{prefix}{m.value}", explain.format(explanation=m.explanation))) for m in base]
        return cls(name, [*members, *(extra or {}).items()])  # type: ignore[call-overload]


@dataclass(frozen=True, slots=True)
class Dropped:
    """An item dropped where no run is at hand (a reader, a client): the run's writer takes it as it is."""

    item: Mapping[str, Any] | str
    reason: Reason
    detail: str
