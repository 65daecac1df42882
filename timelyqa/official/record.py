"""The official-site record: a question answered by a recipe, released as a resolved snapshot or as a live question."""

from __future__ import annotations

from pydantic import field_validator, model_validator

from timelyqa.record import QARecord

LEVELS = ("L1", "L2", "L3")
"""RT-QA's levels: L1 names the target, L2 and L3 describe it through one or two hops (its Table 1)."""
KINDS = ("snapshot", "live")
"""`snapshot`: the answer the recipe gave at `as_of` (train and validation); `live`: no fixed answer, the recipe
computes it at evaluation time (test)."""


class OfficialRecord(QARecord):
    """A real-time question about an authoritative site, with the recipe that answers it at any clock."""

    recipe_id: str
    family: str
    """The L1 recipe's id, shared by its L2/L3 variants: they reuse its fetch and extraction, so share one split."""
    kind: str
    recipe: str
    """The recipe in format v1 as YAML, self-contained (an L2/L3 variant carries its L1's fetch and extraction)."""
    timezone: str
    dates: str
    """JSON: the dates the clock resolved to in the recipe's zone (`today`, each placeholder, each `{day}`); `{}` for
    a live row, whose dates are resolved when it is evaluated."""
    value: float | None
    unit: str | None

    @field_validator("level")
    @classmethod
    def _level(cls, value: str) -> str:
        if value not in LEVELS:
            raise ValueError(f"level must be one of {', '.join(LEVELS)}, not {value!r}")
        return value

    @field_validator("kind")
    @classmethod
    def _kind(cls, value: str) -> str:
        if value not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {value!r}")
        return value

    @model_validator(mode="after")
    def _answered(self) -> OfficialRecord:
        if (self.kind == "live") != (self.answer == ""):
            raise ValueError("a live row has no fixed answer, and a snapshot row has one")
        return self
