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
    ANSWER_IS_SERIES = "answer_is_series", ("the answer is the box's series of dated figures (\"US$ 1,714 million "
                                            "(2014), US$ 1,230 million (2013)\"), not the one the question asks for")


def numbered_label(row: Mapping[str, Any]) -> InfoboxGateReject | None:
    """A numbered key (`leader_name1`, `youth_clubs2`) asked by its label, number and all: no reader knows what
    "leader name 1" is; the template asks it by its paired title or not at all."""
    key = str(row.get("infobox_key") or "")
    if not re.search(r"\d$", key):
        return None
    words = label(key)
    asked = re.search(rf"(?<!\w){re.escape(words)}(?!\w)", str(row["question"]), re.IGNORECASE)
    return InfoboxGateReject.NUMBERED_LABEL if asked else None


_DATED = re.compile(r"\((?:[A-Za-z]+\.? )?(?:1[89]|20)\d\d\)")


def answer_is_series(row: Mapping[str, Any]) -> InfoboxGateReject | None:
    """A figure given for several years at once (a `{{ubl}}` of yearly revenues): which one the question means is
    anyone's guess, and a model that names the current one is graded wrong."""
    return InfoboxGateReject.ANSWER_IS_SERIES if len(_DATED.findall(str(row.get("answer") or ""))) >= 2 else None


RULES: tuple[Rule, ...] = (*COMMON, numbered_label, answer_is_series)
"""What the Wikipedia gate runs: every source's rules, then the source's own."""
