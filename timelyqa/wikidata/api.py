"""The Wikidata Action API for the incremental mode: which entities changed in a window, and an entity's JSON at a
revision, at a moment or now, all through the polite MediaWiki client (timelyqa/mediawiki/client.py).

- `list=recentchanges` (items and properties, namespaces 0 and 120) gives the edits after T0 up to T1; the
  first edit's `old_revid` is the revision current at T0 (0: created in the window), the last edit's `revid`
  the one current at T1. Wikidata keeps 30 days of recent changes, so a window must start within them.
- `Special:EntityData/Q1.json?revision=N`, on the API's host, gives an entity at a revision in the JSON dump
  format (with each snak's datatype, which the revision's stored text lacks).
- `wbgetentities` gives up to 50 entities a call as they are now; one edited since T1 is asked for the revision
  current at T1 (`prop=revisions`, `rvstart=T1`, `rvdir=older`) and read at that revision instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, ClassVar

from pydantic import Field

from timelyqa.errors import ConfigError, SourceContractError
from timelyqa.mediawiki.client import ApiSettings, MediaWikiAPI

ENV_PREFIX = "TIMELYQA_WIKIDATA_API_"
DEFAULT_ENDPOINT = "https://www.wikidata.org/w/api.php"
NAMESPACES = {0: "", 120: "Property:"}
"""Items and properties, and the title prefix of each namespace; lexemes (146) are not in the dumps' shape."""
ENTITY_BATCH = 50
"""How many ids `wbgetentities` takes from a client without the bot right."""
RECENT_CHANGES_DAYS = 30
"""How long Wikidata keeps `recentchanges` rows ($wgRCMaxAge): an older window start cannot be listed."""
ENTITY_DATA = "/wiki/Special:EntityData/"


class WikidataApiSettings(ApiSettings):
    """The Wikidata Action API and how politely to use it; the same rules as the Wikipedia client's."""

    NAME: ClassVar[str] = "Wikidata API"
    ENV_PREFIX: ClassVar[str] = ENV_PREFIX
    endpoint: str = Field(default=DEFAULT_ENDPOINT, description="Wikidata's api.php URL")


@dataclass(frozen=True)
class Edited:
    """One entity edited in the window: the revision current at T0 (0 when created in it) and the one at T1."""

    entity: str
    title: str
    before: int
    after: int
    edits: int


def entity_of(title: str) -> str:
    return title.removeprefix("Property:")


def check_window(since: datetime, until: datetime, now: datetime) -> None:
    """A window the API can answer: T0 before T1, both in the past, T0 within the days recentchanges keeps."""
    if since.tzinfo is None or until.tzinfo is None:
        raise ConfigError(f"window {since} .. {until}: give both ends with a time zone (Wikidata's clock is UTC)")
    if since >= until:
        raise ConfigError(f"--since {since.isoformat()} is not before --until {until.isoformat()}")
    if until > now:
        raise ConfigError(f"--until {until.isoformat()} is in the future (now {now.isoformat(timespec='seconds')})")
    if since < now - timedelta(days=RECENT_CHANGES_DAYS):
        raise ConfigError(f"--since {since.isoformat()} is more than {RECENT_CHANGES_DAYS} days back: Wikidata keeps "
                          f"recent changes for {RECENT_CHANGES_DAYS} days; use the dump mode (--before/--after)")


def mw_time(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


class WikidataAPI:
    """What the incremental mode asks of Wikidata, over one shared polite client (at most three in flight)."""

    def __init__(self, client: MediaWikiAPI) -> None:
        self.client = client

    def edited(self, since: datetime, until: datetime) -> list[Edited]:
        """Entities edited after `since` up to and including `until`, by id, with their revisions at both ends."""
        rows: list[tuple[str, int, str, int, int]] = []
        params = {"list": "recentchanges", "rcdir": "newer", "rcstart": mw_time(since), "rcend": mw_time(until),
                  "rcnamespace": "|".join(map(str, NAMESPACES)), "rctype": "edit|new",
                  "rcprop": "ids|title|timestamp", "rclimit": "max"}
        for batch in self.client.query(params):
            for rc in (batch.get("query") or {}).get("recentchanges") or []:
                try:
                    stamp, title = str(rc["timestamp"]), str(rc["title"])
                    row = (stamp, int(rc.get("rcid", 0)), title, int(rc.get("old_revid") or 0), int(rc["revid"]))
                except (KeyError, TypeError, ValueError) as exc:
                    raise SourceContractError(f"{self.client.settings.endpoint}: a recent change without "
                                              f"{exc}: {rc!r}") from None
                # rcstart is inclusive, and an edit at T0 itself is part of the state at T0.
                if datetime.fromisoformat(stamp.replace("Z", "+00:00")) > since:
                    rows.append(row)
        by_title: dict[str, list[tuple[str, int, str, int, int]]] = {}
        for row in sorted(rows):
            by_title.setdefault(row[2], []).append(row)
        edited = [Edited(entity_of(t), t, before=changes[0][3], after=changes[-1][4], edits=len(changes))
                  for t, changes in by_title.items()]
        return sorted(edited, key=lambda e: e.entity)

    def entity_at(self, entity: str, revision: int) -> dict[str, Any]:
        """The entity's JSON at `revision`, as Special:EntityData gives it (the dumps' format)."""
        data = self.client.get({"revision": str(revision)}, path=f"{ENTITY_DATA}{entity}.json")
        entities = data.get("entities")
        if not isinstance(entities, dict) or len(entities) != 1:
            raise SourceContractError(f"EntityData of {entity} at revision {revision}: no single entity in the answer")
        found = next(iter(entities.values()))
        if not isinstance(found, dict) or "id" not in found:
            raise SourceContractError(f"EntityData of {entity} at revision {revision}: not an entity object")
        return found

    def entities_at(self, wanted: Iterable[tuple[str, int]], read: Callable[[], None] | None = None
                    ) -> dict[str, dict[str, Any]]:
        """Many (entity, revision) pairs read in parallel, within the client's limit on requests in flight; `read`
        is called as each one comes in (a progress bar's step)."""
        pairs = sorted(set(wanted))

        def one(pair: tuple[str, int]) -> dict[str, Any]:
            data = self.entity_at(*pair)
            if read is not None:
                read()
            return data

        with ThreadPoolExecutor(max_workers=self.client.settings.concurrency) as pool:
            found = list(pool.map(one, pairs))
        return {entity: data for (entity, _), data in zip(pairs, found, strict=True)}

    def entities_now(self, ids: Iterable[str]) -> dict[str, dict[str, Any] | None]:
        """`wbgetentities`, 50 ids a call: each entity as it is now, None when it does not exist."""
        todo = sorted(set(ids))
        batches = [todo[i:i + ENTITY_BATCH] for i in range(0, len(todo), ENTITY_BATCH)]
        params = {"action": "wbgetentities", "props": "info|labels|aliases|claims|datatype", "languages": "en"}
        out: dict[str, dict[str, Any] | None] = {}
        with ThreadPoolExecutor(max_workers=self.client.settings.concurrency) as pool:
            for batch, data in zip(batches, pool.map(lambda b: self.client.get({**params, "ids": "|".join(b)}),
                                                     batches), strict=True):
                entities = data.get("entities") or {}
                for eid in batch:
                    found = entities.get(eid)
                    out[eid] = None if not isinstance(found, dict) or "missing" in found or "id" not in found else found
        return out

    def revision_at(self, title: str, moment: datetime) -> int | None:
        """The id of the page's revision current at `moment`; None when the page did not exist then."""
        data = self.client.get({"action": "query", "prop": "revisions", "titles": title, "rvstart": mw_time(moment),
                                "rvdir": "older", "rvlimit": "1", "rvprop": "ids|timestamp"})
        pages = (data.get("query") or {}).get("pages") or []
        revisions = (pages[0].get("revisions") or []) if pages and isinstance(pages[0], dict) else []
        return int(revisions[0]["revid"]) if revisions else None

    def entities_as_of(self, ids: Iterable[str], moment: datetime) -> dict[str, dict[str, Any] | None]:
        """Each entity as it was at `moment`: as it is now when not edited since, else read at the revision then."""
        now = self.entities_now(ids)
        later = {eid: e for eid, e in now.items() if e is not None and _modified(e) > moment}
        with ThreadPoolExecutor(max_workers=self.client.settings.concurrency) as pool:
            revisions = dict(zip(later, pool.map(lambda e: self.revision_at(str(e.get("title") or e["id"]), moment),
                                                 later.values()), strict=True))
        then = self.entities_at((eid, rev) for eid, rev in revisions.items() if rev is not None)
        return {**now, **{eid: then.get(eid) for eid in later}}


def _modified(entity: dict[str, Any]) -> datetime:
    stamp = entity.get("modified")
    if not isinstance(stamp, str):
        raise SourceContractError(f"wbgetentities gave {entity.get('id')} without a modification time")
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
