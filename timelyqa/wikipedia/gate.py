"""The Wikipedia source's question-quality gate: the common rules (timelyqa.quality) and the source's own."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from timelyqa.quality import COMMON, Rule
from timelyqa.reasons import Reason
from timelyqa.wikipedia.questions import label


class InfoboxGateReject(Reason):
    NUMBERED_LABEL = "numbered_label", ("the question reads a numbered infobox key as a noun (\"What is the leader "
                                        "name 1 of Albania?\") instead of the title or row it pairs with")


def numbered_label(row: Mapping[str, Any]) -> InfoboxGateReject | None:
    """A numbered key (`leader_name1`, `youth_clubs2`) asked by its label, number and all: no reader knows what
    "leader name 1" is; the template asks it by its paired title or not at all."""
    key = str(row.get("infobox_key") or "")
    if not re.search(r"\d$", key):
        return None
    words = label(key)
    asked = re.search(rf"(?<!\w){re.escape(words)}(?!\w)", str(row["question"]), re.IGNORECASE)
    return InfoboxGateReject.NUMBERED_LABEL if asked else None


RULES: tuple[Rule, ...] = (*COMMON, numbered_label)
"""What the Wikipedia gate runs: every source's rules, then the source's own."""
