"""A Wikidata Action API test double on 127.0.0.1, built from a pair of JSON dumps, for the tests only.

A test double because Wikidata (MediaWiki with Wikibase, and its databases) cannot run here. It serves
the world of two dumps as a revision history, in the wire format of Wikidata with `format=json&formatversion=2`:

- an entity in the T0 dump has a revision at its T0 `modified` time (at or before `since`);
- an entity whose JSON differs in the T1 dump has its T1 revision at its T1 `modified` time (inside the
  window), and every other one an edit between the two as well (T1's labels over T0's claims, or for a
  created entity its labels alone), so that only the last edit of the window is the state at T1;
- an entity only in the T0 dump was deleted: wbgetentities says `missing`, EntityData 404;
- `later` edits land after `until`: the state "now" differs from T1 for those entities.

It answers, at `/w/api.php`, `list=recentchanges` and `prop=revisions` (tests/mwapi.py's, over these
revisions, with small limits so that clients follow `continue`), `meta=siteinfo`, and `action=wbgetentities`
(at most 50 ids, `missing` for unknown ones); at `/wiki/Special:EntityData/<id>.json?revision=N`, the entity at
revision N as `{"entities": {id: ...}}`. Each served entity carries its `pageid`, `ns`, `title`, `lastrevid` and
`modified` as Wikidata's do. Requests are recorded (EntityData ones with the params `entitydata=<id>` and
`revision`), with the most in flight at once; faults are scripted with tests/mwapi.py's `Fault`s.
"""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import unquote, urlsplit

from tests.mwapi import PATH, MediaWikiDouble, Params, iso
from tests.wikiworld import Rev, WikiPage

ENTITY_DATA = "/wiki/Special:EntityData/"
MULTI_LIMIT = 50
Entity = dict[str, Any]


def modified(entity: Entity) -> datetime:
    return datetime.fromisoformat(str(entity["modified"]).replace("Z", "+00:00")).astimezone(UTC)


def title_of(eid: str) -> tuple[int, str]:
    return (120, f"Property:{eid}") if eid.startswith("P") else (0, eid)


def is_entitydata(p: Params) -> bool:
    return "entitydata" in p


def is_wbgetentities(p: Params) -> bool:
    return p.get("action") == "wbgetentities"


def rebase(t0: list[Entity], t1: list[Entity], *, since: datetime, days: int = 7
           ) -> tuple[list[Entity], list[Entity], datetime]:
    """The pair with its clock moved so that its changes fall in `days` after `since` (recent changes reach 30 days
    back): T0's newest edit lands at `since`, T1's spread in order over the window. Returns (t0, t1, until)."""
    old_since, old_until = max(map(modified, t0)), max(map(modified, t1))
    scale = timedelta(days=days) / (old_until - old_since)

    def moved(e: Entity) -> Entity:
        at = modified(e)
        if at <= old_since:
            new = since - (old_since - at) / 100
        else:
            new = max(since + (at - old_since) * scale, since + timedelta(seconds=1))
        return {**e, "modified": iso(new)}

    return [moved(e) for e in t0], [moved(e) for e in t1], since + timedelta(days=days)


class WikidataDouble(MediaWikiDouble):
    """`with WikidataDouble(t0, t1, since=..., until=...) as wd:` serves `wd.endpoint` until the block ends."""

    def __init__(self, t0: list[Entity], t1: list[Entity], *, since: datetime, until: datetime,
                 later: dict[str, Entity] | None = None, rc_limit: int = 7, latency: float = 0.0) -> None:
        self.since, self.until = since, until
        self.states: dict[int, Entity] = {}
        self.deleted: set[str] = {e["id"] for e in t0} - {e["id"] for e in t1}
        pages = self._history(t0, t1, later or {})
        super().__init__(pages, rc_limit=rc_limit, rv_limit=1, latency=latency)
        self.entity_pages = {p.title.removeprefix("Property:"): p for p in pages}

    def _history(self, t0: list[Entity], t1: list[Entity], later: dict[str, Entity]) -> list[WikiPage]:
        before, after = {e["id"]: e for e in t0}, {e["id"]: e for e in t1}
        edits: list[tuple[datetime, str, Entity]] = []
        changed = 0
        for eid in sorted(before.keys() | after.keys()):
            old, new = before.get(eid), after.get(eid)
            if old is not None:
                edits.append((min(modified(old), self.since), eid, old))
            if new is None or new == old:
                continue
            at = modified(new)
            if not self.since < at <= self.until:
                raise ValueError(f"{eid} changed but its T1 modified {new['modified']} is outside the window")
            changed += 1
            if changed % 2:  # an edit on the way: the window's first edit is not its last
                mid = {**new, "claims": old["claims"]} if old is not None else {**new, "claims": {}}
                edits.append((self.since + (at - self.since) / 2, eid, mid))
            edits.append((at, eid, new))
        for n, (eid, entity) in enumerate(sorted(later.items()), start=1):
            edits.append((self.until + timedelta(minutes=n), eid, entity))
        edits.sort(key=lambda e: (e[0], e[1]))
        pages: dict[str, WikiPage] = {}
        for revid, (at, eid, entity) in enumerate(edits, start=2_300_000_000):
            if eid not in pages:
                ns, title = title_of(eid)
                pages[eid] = WikiPage(id=1000 + len(pages), title=title, ns=ns, revisions=[])
            page = pages[eid]
            parent = page.revisions[-1].id if page.revisions else None
            state = copy.deepcopy(entity)
            state.update(pageid=page.id, ns=page.ns, title=page.title, lastrevid=revid, modified=iso(at))
            self.states[revid] = state
            page.revisions.append(Rev(revid, parent, at, json.dumps(state), None, "edit"))
        return list(pages.values())

    def now(self, eid: str) -> Entity | None:
        page = self.entity_pages.get(eid)
        if page is None or eid in self.deleted:
            return None
        return self.states[page.revisions[-1].id]

    # --- answers ---------------------------------------------------------------------------------------

    def answer(self, p: Params) -> tuple[int, dict[str, str], bytes]:
        if is_entitydata(p):
            return self._entity_data(p)
        if is_wbgetentities(p) and p.get("format") == "json":
            return self._json(self._wbgetentities(p))
        return super().answer(p)

    def _entity_data(self, p: Params) -> tuple[int, dict[str, str], bytes]:
        eid, revision = p["entitydata"], p.get("revision", "")
        state = self.states.get(int(revision)) if revision.isdigit() else self.now(eid)
        if state is None or state["id"] != eid or eid in self.deleted:
            return 404, {"Content-Type": "text/html; charset=utf-8"}, b"<h1>Not Found</h1><p>No such entity.</p>"
        body = json.dumps({"entities": {eid: state}}, ensure_ascii=False).encode()
        return 200, {"Content-Type": "application/json; charset=utf-8"}, body

    def _wbgetentities(self, p: Params) -> dict[str, Any]:
        ids = [i for i in p.get("ids", "").split("|") if i]
        if len(ids) > MULTI_LIMIT:
            return self._error("toomanyvalues", f"Too many values supplied for parameter \"ids\". The limit is "
                               f"{MULTI_LIMIT}.")
        languages = set(p.get("languages", "").split("|")) - {""}
        entities: dict[str, Any] = {}
        for eid in ids:
            state = self.now(eid)
            if state is None:
                entities[eid] = {"id": eid, "missing": ""}
                continue
            if languages:
                state = {**state, **{f: {k: v for k, v in (state.get(f) or {}).items() if k in languages}
                                     for f in ("labels", "descriptions", "aliases")}}
            entities[eid] = state
        return {"entities": entities, "success": 1}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        base: Any = super()._handler()

        class Handler(base):  # type: ignore[misc, valid-type]
            def _serve(self, method: str) -> None:
                # EntityData goes through the same recording, faults and answer as the API, tagged by a parameter.
                url = urlsplit(self.path)
                if url.path.startswith(ENTITY_DATA) and url.path.endswith(".json"):
                    eid = unquote(url.path.removeprefix(ENTITY_DATA).removesuffix(".json"))
                    self.path = f"{PATH}?{url.query}{'&' if url.query else ''}entitydata={eid}"
                super()._serve(method)

        return Handler
