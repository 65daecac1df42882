"""The two newest weekly Wikidata JSON dumps from a Wikimedia dump mirror, fetched into a cache and checked.

A mirror holds the layout of https://dumps.wikimedia.org/wikidatawiki/entities/: one folder a dump run,
`YYYYMMDD/`, holding `wikidata-YYYYMMDD-all.json.gz` and `.bz2` (the weekly JSON dumps; other runs' folders
hold only the RDF dumps) beside the checksums of every file of the run, `wikidata-YYYYMMDD-sha1sums.txt` and
`-md5sums.txt` (`<hex digest>  <file name>` a line). A dump counts once its checksum file lists it: the files
are written before their sums, so a listed file is a finished one.

- Resumable: a download goes to `<name>.part` and continues with an HTTP Range request after a cut, in this
  run or the next; a file under its own name passed its checksum and is never fetched again.
- Checked: the mirror's SHA-1 (its MD5 when it publishes no SHA-1); a file that fails is kept aside as
  `<name>.bad-<digest>` and the run stops with one line.
- Polite: a User-Agent with contact details is required, and one request at a time.
- A pair is two dumps seven days apart: when the newest two are not (a week failed or is unfinished), the
  run stops and says which dates it found rather than diff a fortnight as if it were a week.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar, Literal
from urllib.parse import urljoin, urlsplit

import httpx
from pydantic import Field, field_validator

from timelyqa.errors import ConfigError, SourceContractError, TransientSourceError
from timelyqa.http import RetryPolicy, retry_after, transient_status
from timelyqa.settings import Settings
from timelyqa.useragent import wikimedia_user_agent

DEFAULT_MIRROR = "https://dumps.wikimedia.org/wikidatawiki/entities/"
DEFAULT_CACHE = Path("out/dumps")
ENV_PREFIX = "TIMELYQA_WIKIDATA_MIRROR_"
WEEK = timedelta(days=7)
SUMS = (("sha1", "sha1sums"), ("md5", "md5sums"))
"""The checksum files a run folder publishes, strongest first."""
CHUNK = 1 << 20
_FOLDER = re.compile(r'href="(?:\./)?(\d{8})/?"')

Progress = Callable[[str, int, int], None]
"""Called with (file name, bytes on disk, bytes in all) as a dump downloads."""


class MirrorSettings(Settings):
    """Where the dumps come from, where they are kept, and how politely they are fetched."""

    NAME: ClassVar[str] = "dump mirror"
    ENV_PREFIX: ClassVar[str] = ENV_PREFIX
    REQUIRED_FROM_ENV: ClassVar[tuple[str, ...]] = ("user_agent",)

    url: str = Field(default=DEFAULT_MIRROR, description="the mirror's wikidatawiki/entities/ folder")
    cache: Path = Field(default=DEFAULT_CACHE, description="where fetched dumps are kept, in the mirror's layout")
    user_agent: str = Field(description="who is asking and how to reach them (an e-mail address or a URL)")
    compression: Literal["gz", "bz2"] = "gz"
    timeout: float = Field(default=60.0, gt=0, description="seconds without a byte before a request fails")
    retries: int = Field(default=5, ge=0, le=50, description="extra tries after a cut connection or a busy mirror")
    backoff: float = Field(default=2.0, ge=0, description="seconds before the first retry; doubles")
    max_wait: float = Field(default=300.0, ge=0, description="the longest wait honoured, Retry-After included")

    @field_validator("url")
    @classmethod
    def _url(cls, url: str) -> str:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{url!r} is not an http(s) URL (like {DEFAULT_MIRROR})")
        return url if url.endswith("/") else url + "/"

    @field_validator("user_agent")
    @classmethod
    def _user_agent(cls, agent: str) -> str:
        return wikimedia_user_agent(agent)

    @classmethod
    def missing(cls, names: list[str], prefix: str) -> ConfigError:
        return ConfigError(f"the dump mirror needs {prefix}USER_AGENT: a client name with contact details, "
                           "per Wikimedia's User-Agent policy")


@dataclass(frozen=True)
class Dump:
    """One weekly JSON dump as its mirror lists it."""

    day: date
    name: str
    url: str
    algorithm: str
    digest: str
    sums_url: str


@dataclass(frozen=True)
class DumpPair:
    t0: Path
    t1: Path
    days: tuple[date, date]


def parse_which(which: str) -> date | None:
    """`latest` (None) or the T1 dump's date as YYYYMMDD; anything else is a ConfigError naming --dumps."""
    if which == "latest":
        return None
    try:
        return datetime.strptime(which, "%Y%m%d").date()
    except ValueError:
        raise ConfigError(f"--dumps {which!r}: say 'latest' or the newer dump's date as YYYYMMDD") from None


class Mirror:
    """A dump mirror behind one polite HTTP client; `with Mirror(settings) as m: m.fetch_pair("latest")`."""

    def __init__(self, settings: MirrorSettings, *, sleep: Callable[[float], None] = time.sleep,
                 progress: Progress | None = None) -> None:
        self.settings = settings
        self._sleep, self._progress = sleep, progress
        self._policy = RetryPolicy(settings.retries, settings.backoff, settings.max_wait)
        # One connection: the mirror gets one request at a time from this client, never a parallel download.
        # Bytes as stored (identity): the checksums are of the file, not of a transfer encoding.
        self._http = httpx.Client(headers={"User-Agent": settings.user_agent, "Accept-Encoding": "identity"},
                                  follow_redirects=True,
                                  timeout=settings.timeout, limits=httpx.Limits(max_connections=1))

    def __enter__(self) -> Mirror:
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.close()

    def fetch_pair(self, which: str = "latest") -> DumpPair:
        """The T0 and T1 dumps, on disk and checked: the newest two, or the one of the given date and a week before."""
        newer = parse_which(which)
        if newer is None:
            found = self.newest(2)
            if len(found) < 2:
                raise SourceContractError(f"{self.settings.url}: {len(found)} finished JSON dump(s) found, "
                                          "a pair needs two")
            t1, t0 = found
        else:
            t1, t0 = self.dump_of(newer), self.dump_of(newer - WEEK)
        if t1.day - t0.day != WEEK:
            raise SourceContractError(
                f"{self.settings.url}: the newest JSON dumps are {t0.day:%Y%m%d} and {t1.day:%Y%m%d}, "
                f"{(t1.day - t0.day).days} days apart; a pair must be 7 days apart (a week's dump failed or is "
                f"unfinished): give --dumps {t0.day:%Y%m%d} for the week before, or wait for the next")
        return DumpPair(self.download(t0), self.download(t1), (t0.day, t1.day))

    def newest(self, n: int) -> list[Dump]:
        """The newest `n` finished JSON dumps, newest first; folders without one (RDF-only runs) are passed over."""
        index = self._get(self.settings.url).text
        found: list[Dump] = []
        for day in sorted({datetime.strptime(d, "%Y%m%d").date() for d in _FOLDER.findall(index)}, reverse=True):
            dump = self._listed(day)
            if dump is not None:
                found.append(dump)
                if len(found) == n:
                    break
        return found

    def dump_of(self, day: date) -> Dump:
        dump = self._listed(day)
        if dump is None:
            raise SourceContractError(f"{self.settings.url}{day:%Y%m%d}/: no finished JSON dump (none listed in the "
                                      "run's checksum files)")
        return dump

    def _listed(self, day: date) -> Dump | None:
        """The run's JSON dump as its checksum file lists it, or None when no checksum file lists one."""
        stamp = f"{day:%Y%m%d}"
        name = f"wikidata-{stamp}-all.json.{self.settings.compression}"
        for algorithm, kind in SUMS:
            sums_url = urljoin(self.settings.url, f"{stamp}/wikidata-{stamp}-{kind}.txt")
            response = self._get(sums_url, missing_ok=True)
            if response is None:
                continue
            for line in response.text.splitlines():
                digest, _, listed = line.strip().partition(" ")
                if listed.strip().lstrip("*") == name:
                    return Dump(day, name, urljoin(self.settings.url, f"{stamp}/{name}"), algorithm,
                                digest.lower(), sums_url)
            return None  # the strongest published sums decide: a dump they do not list is not finished
        return None

    def download(self, dump: Dump) -> Path:
        """The dump under the cache, fetched (or resumed from its .part) and checked unless already there."""
        folder = self.settings.cache / f"{dump.day:%Y%m%d}"
        dest = folder / dump.name
        if dest.exists():
            return dest
        folder.mkdir(parents=True, exist_ok=True)
        part = dest.with_name(dest.name + ".part")
        digest = self._fetch(dump, part)
        if digest != dump.digest:
            aside = dest.with_name(f"{dest.name}.bad-{digest[:12]}")
            shutil.move(part, aside)
            raise SourceContractError(f"{dump.url}: {dump.algorithm} {digest} but {dump.sums_url} says {dump.digest}; "
                                      f"the file is kept aside as {aside}")
        part.rename(dest)
        (folder / f"{dump.name}.{dump.algorithm}").write_text(f"{dump.digest}  {dump.name}\n")
        return dest

    def _fetch(self, dump: Dump, part: Path) -> str:
        """Bring `part` to the whole file, resuming after each cut; the hex digest of what is on disk."""
        try:
            return self._policy.run(lambda _: self._fetch_once(dump, part), sleep=self._sleep)
        except TransientSourceError as exc:
            raise TransientSourceError(f"{dump.url}: {exc}; {part} keeps what arrived, the next run resumes "
                                       "from it") from None

    def _fetch_once(self, dump: Dump, part: Path) -> str:
        hasher = hashlib.new(dump.algorithm)
        have = _hash_into(hasher, part) if part.exists() else 0
        try:
            with self._http.stream("GET", dump.url, headers={"Range": f"bytes={have}-"} if have else {}) as r:
                if r.status_code == 416 and have:  # the .part already holds every byte
                    return hasher.hexdigest()
                self._check(r, dump.url)
                total = _total(r, have)
                if r.status_code == 206 and not _resumes_at(r, have):
                    part.unlink()
                    raise TransientSourceError(f"answered a range that does not start at byte {have}")
                if r.status_code == 200:  # no range asked, or the mirror ignored it: the whole file comes
                    hasher, have = hashlib.new(dump.algorithm), 0
                with part.open("ab" if have else "wb") as f:
                    for chunk in r.iter_raw():  # as it arrives: a cut keeps every byte that came
                        f.write(chunk)
                        hasher.update(chunk)
                        have += len(chunk)
                        if self._progress:
                            self._progress(dump.name, have, total)
            return hasher.hexdigest()
        except httpx.TransportError as exc:
            raise TransientSourceError(str(exc)) from exc

    def _get(self, url: str, *, missing_ok: bool = False) -> httpx.Response | None:
        try:
            return self._policy.run(lambda _: self._get_once(url, missing_ok), sleep=self._sleep)
        except TransientSourceError as exc:
            raise TransientSourceError(f"{url}: {exc}") from None

    def _get_once(self, url: str, missing_ok: bool) -> httpx.Response | None:
        try:
            response = self._http.get(url)
        except httpx.TransportError as exc:
            raise TransientSourceError(str(exc)) from exc
        if missing_ok and response.status_code == 404:
            return None
        self._check(response, url)
        return response

    @staticmethod
    def _check(response: httpx.Response, url: str) -> None:
        if response.status_code in (200, 206):
            return
        if transient_status(response.status_code):
            raise TransientSourceError(f"{url}: HTTP {response.status_code}",
                                       retry_after=retry_after(response.headers.get("Retry-After")))
        raise ConfigError(f"{url}: HTTP {response.status_code} (is the mirror URL right?)")


def _hash_into(hasher: Any, path: Path) -> int:
    """Feed a partial download to the hasher; its size."""
    size = 0
    with path.open("rb") as f:
        while chunk := f.read(CHUNK):
            hasher.update(chunk)
            size += len(chunk)
    return size


def _resumes_at(response: httpx.Response, offset: int) -> bool:
    """Whether a 206 answer starts where the .part ends (`Content-Range: bytes <offset>-...`)."""
    match = re.match(r"bytes (\d+)-", response.headers.get("Content-Range", ""))
    return bool(match) and int(match.group(1)) == offset


def _total(response: httpx.Response, have: int) -> int:
    match = re.search(r"/(\d+)$", response.headers.get("Content-Range", ""))
    if response.status_code == 206 and match:
        return int(match.group(1))
    return int(response.headers.get("Content-Length", 0)) + (have if response.status_code == 206 else 0)
