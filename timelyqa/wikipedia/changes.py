"""Which infobox change of a page becomes a question: changed keys, the key and value rules, reverts, one seeded pick.

DailyQA's rules, as data to data: a change is one key whose value differs between a revision and the
one before it. Setting-type keys (colours, images, captions, maps...) and file values never make a
question; a key whose value at the window's end is its value at the window's start (a revert, or
vandalism changed and restored) makes none either, nor does one whose old value comes back in the
week after the window (vandalism reverted late). Of what is left, a page keeps its last change in
the window, and of the keys that revision changed, one, picked by a generator seeded with the run's
seed, the page and the revision: the same on every run and whatever order the pages come in.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from timelyqa.reasons import Reason

# Whole key tokens (split on _, space, -, digits) that name how the box looks, not a fact.
_SETTING_TOKENS = frozenset({
    "alt", "caption", "captions", "image", "images", "img", "logo", "logos", "map", "maps", "mapsize", "signature",
    "color", "colour", "colors", "colours", "bgcolor", "bgcolour", "fgcolor", "pushpin", "icon", "upright",
    "style", "bodystyle", "float", "width", "size", "imagesize", "embed", "module", "relief", "seal", "blazon",
    "coa", "flag", "banner", "imagemap", "alttext", "collapsible", "expand", "hide", "nocat", "noicon",
    "dot", "label_position", "position_map", "child", "subbox", "autocat", "abovestyle", "headerstyle",
    "labelstyle", "datastyle", "belowstyle", "footnotes", "pixels", "px", "photo", "picture", "screenshot",
    "shield", "cover", "artwork", "poster", "sig", "crest",
})
# Fragments that mark a setting wherever they sit in the key: 'image_skyline', 'colour1', 'logo_alt', 'map_caption'.
_SETTING_PARTS = re.compile(r"colou?r|image|logo|caption|signature|pushpin|imagemap|coat_?of_?arms|_style$|^style")
_FILE = re.compile(r"(^|[\s:=|])(file|image|media):|\.(png|jpe?g|gif|svg|tiff?|webp|xcf|bmp|ogg|ogv|oga|opus|"
                   r"webm|mp3|mp4|mid|midi|flac|wav|pdf|djvu|stl)\b", re.IGNORECASE)


class Drop(Reason):
    SETTING_KEY = "setting_key", "the key is a display setting (image, caption, colour, map...), not a fact"
    FILE_VALUE = "file_value", "the new value is a file"
    REVERTED_IN_WINDOW = "reverted_in_window", "the value at the window's end is its value at the start (a revert)"
    REVERTED_AFTER_WINDOW = "reverted_after_window", "the old value came back in the week after the window (vandalism)"
    VALUE_REMOVED = "value_removed", "the key was removed"


@dataclass(frozen=True, slots=True)
class State:
    """One revision as these rules see it: its id, time and infobox fields ({} when it has no infobox)."""

    rev_id: int
    timestamp: datetime
    fields: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class Change:
    """The chosen change of a page: `after` is the answer, `before` the value the revision replaced."""

    key: str
    before: str | None
    after: str
    rev_id: int
    timestamp: datetime
    parent_rev_id: int | None


@dataclass(frozen=True, slots=True)
class Dropped:
    key: str
    reason: Drop
    detail: str


@dataclass(slots=True)
class PageChanges:
    chosen: Change | None = None
    dropped: list[Dropped] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)


def keep_key(key: str) -> bool:
    """True for keys that hold facts; False for setting-type keys (colours, images, captions, maps, ...)."""
    low = key.strip().lower()
    tokens = [t for t in re.split(r"[\s_\-\d]+", low) if t]
    if any(t in _SETTING_TOKENS for t in tokens) or low in _SETTING_TOKENS:
        return False
    return not _SETTING_PARTS.search(low.replace(" ", "_"))


def keep_value(value: str) -> bool:
    """True unless the value is, or holds, a file: 'Foo.jpg', 'File:Foo.svg', '[[Image:...]]'."""
    return not _FILE.search(value)


def changed_keys(before: Mapping[str, str], after: Mapping[str, str]) -> set[str]:
    """Keys whose value differs between two revisions, keys added and removed included."""
    return {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}


def key_drop(key: str, at_start: str | None, at_end: str | None) -> Drop | None:
    """Why a key changed in the window makes no question, judged on its values at the window's ends."""
    if not keep_key(key):
        return Drop.SETTING_KEY
    if at_start == at_end:
        return Drop.REVERTED_IN_WINDOW
    if at_end is None:
        return Drop.VALUE_REMOVED
    if not keep_value(at_end):
        return Drop.FILE_VALUE
    return None


def value_at(states: Sequence[State], key: str, when: datetime) -> str | None:
    """The key's value at a moment: from the last state at or before it (None before the page or without the key)."""
    best = max((s for s in states if s.timestamp <= when), key=lambda s: (s.timestamp, s.rev_id), default=None)
    return None if best is None else best.fields.get(key)


def choose(keys: Sequence[str], *, seed: int, page: str, revision: int) -> str:
    """One key, by a generator seeded with (seed, page, revision): stable across runs and input orders."""
    digest = hashlib.blake2b(f"{seed}\x1f{page}\x1f{revision}".encode(), digest_size=8).digest()
    return random.Random(int.from_bytes(digest, "big")).choice(sorted(keys))


def split_window(states: Sequence[State], start: datetime, end: datetime) -> tuple[State | None, list[State]]:
    """The state at `start` (None for a page created in the window) and the states in (start, end].

    The window is open at its start and closed at its end so that its ends read as answers do: the
    value at a moment is the last revision at or before it.
    """
    ordered = sorted(states, key=lambda s: (s.timestamp, s.rev_id))
    before = [s for s in ordered if s.timestamp <= start]
    return (before[-1] if before else None), [s for s in ordered if start < s.timestamp <= end]


def reverted_later(key: str, steps: Sequence[tuple[State, State, set[str]]], later: Sequence[State]) -> str | None:
    """The value the key's last change in the window replaced, when a revision after the window puts it back
    (vandalism reverted after the window closed); None otherwise."""
    replaced = next((prev.fields.get(key) for prev, _, keys in reversed(steps) if key in keys), None)
    return replaced if replaced is not None and any(s.fields.get(key) == replaced for s in later) else None


def page_changes(states: Sequence[State], *, start: datetime, end: datetime, seed: int, page: str) -> PageChanges:
    """The page's one change in (start, end], if any, and every changed key left out with its reason.

    States after `end` (the history holds those of the horizon) are read only to see a change undone there.
    """
    out = PageChanges()
    base, inside = split_window(states, start, end)
    if not inside:
        return out
    chain = [base or State(rev_id=0, timestamp=start, fields={}), *inside]
    steps = [(prev, cur, changed_keys(prev.fields, cur.fields)) for prev, cur in zip(chain, chain[1:])]
    later = [s for s in states if s.timestamp > end]
    at_start, at_end = chain[0].fields, chain[-1].fields
    eligible: set[str] = set()
    for key in sorted(set().union(*(keys for _, _, keys in steps))):
        reason = key_drop(key, at_start.get(key), at_end.get(key))
        detail = f"{key}: {at_start.get(key)!r} -> {at_end.get(key)!r}"
        if reason is None and (back := reverted_later(key, steps, later)) is not None:
            reason, detail = Drop.REVERTED_AFTER_WINDOW, f"{key}: {at_end.get(key)!r}, back to {back!r} after the window"
        if reason is None:
            eligible.add(key)
        else:
            out.dropped.append(Dropped(key, reason, detail))
    out.counts["keys_changed"] = len(eligible) + len(out.dropped)
    if not eligible:
        return out
    prev, cur, keys = next((p, c, k & eligible) for p, c, k in reversed(steps) if k & eligible)
    key = choose(sorted(keys), seed=seed, page=page, revision=cur.rev_id)
    out.counts["keys_superseded"] = len(eligible - keys)
    out.counts["keys_not_chosen"] = len(keys) - 1
    parent = None if prev is chain[0] and base is None else prev.rev_id
    out.chosen = Change(key=key, before=prev.fields.get(key), after=cur.fields[key], rev_id=cur.rev_id,
                        timestamp=cur.timestamp, parent_rev_id=parent)
    return out
