"""One page's revision history, read once: infobox states around the window, parsed only where they matter.

A full-history dump holds every revision since the page began; the rules need only the state at the
window's start, the revisions in the window, and those of the week after it (for the update
frequency). Older revisions are passed over, keeping just the newest of them, and the text of only
one revision is held: the last at or before the window's end, the page as the question's answer
stands.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from timelyqa.errors import ConfigError
from timelyqa.wikipedia.changes import State
from timelyqa.mediawiki.dump import Page, Revision
from timelyqa.wikipedia.infobox import Infobox, parse_infobox


@dataclass(slots=True)
class PageHistory:
    page_id: int
    title: str
    states: list[State] = field(default_factory=list)
    """The state at the window's start (if the page existed), then every revision in (start, end + horizon]."""
    end: Revision | None = None
    """The last revision at or before the window's end: the golden document."""
    templates: dict[int, str] = field(default_factory=dict)
    """Revision id -> the name of its first infobox ('' without one)."""
    sha256: dict[int, str] = field(default_factory=dict)
    revisions_in_window: int = 0


def read_history(page: Page, *, start: datetime, end: datetime, horizon: timedelta) -> PageHistory:
    """Consume the page's revisions (in any order) into a PageHistory; identical texts are parsed once."""
    if horizon < timedelta(0):
        raise ConfigError(f"horizon {horizon}: must not be negative (it is the span watched after the window)")
    try:
        watched = end + horizon  # once, not per revision: a full history has millions
    except OverflowError:
        raise ConfigError(f"horizon {horizon.days} days after {end.date()} is past the last date Python knows"
                          ) from None
    history = PageHistory(page_id=page.id, title=page.title)
    cache: dict[bytes, Infobox | None] = {}
    base: Revision | None = None
    for rev in page.revisions:
        if rev.timestamp <= start:
            if base is None or _later(rev, base):
                base = rev
            continue
        if rev.timestamp > watched:
            continue
        _add(history, rev, cache)
        if rev.timestamp <= end:
            history.revisions_in_window += 1
            if history.end is None or _later(rev, history.end):
                history.end = rev
    if base is not None:
        _add(history, base, cache)
        history.end = history.end or base
    history.states.sort(key=lambda s: (s.timestamp, s.rev_id))
    return history


def _add(history: PageHistory, rev: Revision, cache: dict[bytes, Infobox | None]) -> None:
    digest = hashlib.sha256(rev.text.encode())
    key = digest.digest()
    if key not in cache:
        cache[key] = parse_infobox(rev.text)
    box = cache[key]
    history.states.append(State(rev_id=rev.id, timestamp=rev.timestamp, fields=box.fields if box else {}))
    history.templates[rev.id] = box.template if box else ""
    history.sha256[rev.id] = digest.hexdigest()


def _later(a: Revision, b: Revision) -> bool:
    return (a.timestamp, a.id) > (b.timestamp, b.id)
