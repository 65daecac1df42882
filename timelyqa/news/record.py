"""The news record: the common fields plus the event and the article its answer is stated in."""

from __future__ import annotations

from datetime import date

from pydantic import field_validator

from timelyqa.record import QARecord

STABILITY = ("Unlikely to change over time", "May change in the next few years", "May change within one year")
"""The writer's judgement of temporal stability (LiveNewsBench Figure 6); rows judged likely to change go to the
`longitudinal` split."""
KINDS = ("entity", "number", "date", "phrase")
"""What kind of answer a row has: its `level` (a masked entity, number or date of the template generator; a phrase
written by a model)."""


class NewsRecord(QARecord):
    """A question about one portal event, answered by an article on an allowed outlet that cites it."""

    event_id: str
    event_summary: str
    """The portal's summary of the event with the answer masked (`___`). A benchmark user needs to know which event
    a question is about (to read it, to group or audit rows by event) but must be able to show a model the row
    without showing it the answer: the template asks about a span of this very summary, and a writer model's answer
    is often in it, so released whole it would hand the answer over. The unmasked text is the event's, kept in the
    run's events.parquet and on the portal's day page."""
    category: str
    topic: str | None
    """The portal's topic line above the event, masked like `event_summary` (a topic may be the answer: "Port Alder
    Film Festival")."""
    article_url: str
    """The article the answer is stated in (also the first `evidence` entry, with its title, time and sha256)."""
    outlet: str
    published: date | None
    temporal_stability: str

    @field_validator("level")
    @classmethod
    def _level(cls, value: str) -> str:
        if value not in KINDS:
            raise ValueError(f"level must be one of {', '.join(KINDS)}, not {value!r}")
        return value

    @field_validator("temporal_stability")
    @classmethod
    def _stability(cls, value: str) -> str:
        if value not in STABILITY:
            raise ValueError(f"temporal_stability must be one of {', '.join(STABILITY)}, not {value!r}")
        return value
