"""What a run of the Wikidata source is asked to do: one model that `timelyqa wikidata` builds from its options
and the `wikidata` flow from its parameters (the flow's parameters are its fields, by the same names and defaults),
so each option has one default and one check, and a wrong value is the same one line from either."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field, ValidationError, field_validator

from timelyqa import checks
from timelyqa.errors import ConfigError
from timelyqa.settings import Settings, problem
from timelyqa.wikidata.pipeline import Settings as RunSettings
from timelyqa.wikidata.pipeline import buckets_problem
from timelyqa.wikidata.reader_run import parts_problem

DAYS = 7
"""An API window's length when only its end, or neither end, is given: a week."""
FLOW_ONLY = ("days", "dask_address")
"""Fields the command has no option for: an API window's default length and a Dask cluster are the flow's."""
CLI_ONLY = ("dumps", "mirror", "cache", "user_agent")
"""Fields the flow has no parameter for: dumps fetched from a mirror, and a User-Agent the worker's environment
gives it (TIMELYQA_WIKIDATA_API_USER_AGENT)."""
_RENAMED = {"before_endpoint": "--endpoint-before"}
"""The command's option where it is not the field's name with dashes."""
_RUN = RunSettings.model_fields


def dask_problem(address: str) -> str | None:
    """What is wrong with a Dask address (`local:N` or a scheduler's URL), None when nothing is."""
    if address.startswith("local:"):
        workers = address.removeprefix("local:")
        return None if workers.isdigit() and 1 <= int(workers) <= 256 else "local:N wants N workers from 1 to 256"
    if "://" not in address or not address.split("://", 1)[1]:
        return "give local:N or a scheduler address such as tcp://scheduler:8786"
    return None


class WikidataRequest(Settings):
    """A run of the Wikidata source: two dumps (`before`, `after`), dumps from a mirror (`dumps`), or a window of
    the API (`api`, `since`, `until`); where T1 and T0 are checked; how the run is cut into parts. Which of these
    ways is given is checked by incremental.mode (the command and the flow each fill in what they default)."""

    NAME: ClassVar[str] = "Wikidata"

    out: Path = Path("out/wikidata")
    before: Path | None = None
    after: Path | None = None
    dumps: str | None = None
    mirror: str | None = None
    cache: Path | None = None
    api: str | None = None
    since: str | None = None
    until: str | None = None
    days: int = Field(default=DAYS, ge=1, le=30, description="an API window's days when `since` is not given")
    endpoint: str | None = None
    before_endpoint: str | None = None
    local_store: bool = False
    user_agent: str | None = None
    previous: Path | None = None
    seed: int = _RUN["seed"]
    max_anchors: int | None = _RUN["max_anchors"]
    batch_size: int = _RUN["batch_size"]
    concurrency: int = _RUN["concurrency"]
    synthesis_batch: int = _RUN["synthesis_batch"]
    verify_batch: int = _RUN["verify_batch"]
    subgraphs: bool = _RUN["subgraphs"]
    buckets: int | None = Field(default=None, description="buckets of subjects a snapshot is cut into")
    read_parts: int | None = Field(default=None, description="parts a dump is read in")
    dask_address: str | None = None

    @field_validator("before", "after", "dumps", "mirror", "cache", "api", "since", "until", "endpoint",
                     "before_endpoint", "user_agent", "previous", mode="before")
    @classmethod
    def _empty(cls, value: Any) -> Any:
        """An empty value is none given (a deployment's `previous: ""`), not the current folder."""
        return None if value == "" else value

    @field_validator("endpoint", "before_endpoint", "api", "mirror")
    @classmethod
    def _http(cls, url: str | None) -> str | None:
        if url is None:
            return url
        try:
            return checks.http_url(url, "")
        except ConfigError as exc:  # its words without the URL, which the line quotes once
            raise ValueError(str(exc).strip().removeprefix(f"{url!r}: ").removeprefix(f"{url}: ")) from None

    @field_validator("buckets")
    @classmethod
    def _buckets(cls, n: int | None) -> int | None:
        if (why := buckets_problem(n)) is not None:
            raise ValueError(why)
        return n

    @field_validator("read_parts")
    @classmethod
    def _parts(cls, n: int | None) -> int | None:
        if (why := parts_problem(n)) is not None:
            raise ValueError(why)
        return n

    @field_validator("dask_address")
    @classmethod
    def _dask(cls, address: str | None) -> str | None:
        if address and (why := dask_problem(address)) is not None:
            raise ValueError(why)
        return address

    @classmethod
    def invalid(cls, exc: ValidationError, values: Any) -> ConfigError:
        """The base's line with the command's option beside the field: `Wikidata setting read_parts (--read-parts)
        0: ...`, the same from the command and the flow."""
        error = super().invalid(exc, values)
        where, _ = problem(exc)
        if where not in cls.model_fields or where in FLOW_ONLY:
            return error
        option = _RENAMED.get(where, "--" + where.replace("_", "-"))
        return ConfigError(str(error).replace(f"setting {where}", f"setting {where} ({option})", 1))

    def settings(self) -> RunSettings:
        """What shapes the output besides the inputs, as the manifest records it."""
        return RunSettings(**{name: getattr(self, name) for name in RunSettings.model_fields
                              if name in type(self).model_fields})
