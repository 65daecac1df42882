"""`--dumps latest`: the two newest weekly dumps from a mirror (tests/dumpmirror.py), resumed, checked, a week apart."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from tests.dumpmirror import DumpMirror, Run, json_run, rdf_run
from timelyqa.errors import ConfigError, SourceContractError, TransientSourceError
from timelyqa.wikidata.mirror import Mirror, MirrorSettings

FIXTURES = Path(__file__).parent / "fixtures" / "wikidata"
T0, T1 = (FIXTURES / "t0.json.gz").read_bytes(), (FIXTURES / "t1.json.gz").read_bytes()
UA = "timelyqa-tests/0.1 (https://example.org/timelyqa; tests@example.org)"
MAY25, JUN1, JUN8, JUN10 = date(2026, 5, 25), date(2026, 6, 1), date(2026, 6, 8), date(2026, 6, 10)


def weeks(**kw: bool) -> list[Run]:
    """Three weekly runs (the newest two being the fixture pair) and a newer RDF-only run."""
    return [json_run(MAY25, b"\x1f\x8b an older week"), json_run(JUN1, T0), json_run(JUN8, T1, **kw), rdf_run(JUN10)]


def mirror_of(server: DumpMirror, cache: Path, waits: list[float] | None = None, **kw: object) -> Mirror:
    settings = MirrorSettings(url=server.url, cache=cache, user_agent=UA, backoff=0.5, **kw)
    return Mirror(settings, sleep=(waits if waits is not None else []).append)


def test_latest_fetches_the_newest_weekly_pair_once_politely(tmp_path: Path) -> None:
    with DumpMirror(weeks()) as server:
        with mirror_of(server, tmp_path) as mirror:
            pair = mirror.fetch_pair("latest")
        assert pair.days == (JUN1, JUN8)  # the RDF-only run of the 10th has no JSON dump to take
        assert pair.t0 == tmp_path / "20260601" / "wikidata-20260601-all.json.gz"
        assert pair.t0.read_bytes() == T0 and pair.t1.read_bytes() == T1
        assert not list(tmp_path.rglob("*.part"))
        assert all(r.headers.get("User-Agent") == UA for r in server.requests)
        assert server.max_in_flight == 1
        assert not server.gets("wikidata-20260525-all.json.gz"), "older weeks are not fetched"

        with mirror_of(server, tmp_path) as mirror:  # the next run finds both in the cache
            assert mirror.fetch_pair("latest") == pair
        assert len(server.gets("wikidata-20260601-all.json.gz")) == len(server.gets("wikidata-20260608-all.json.gz"))
        assert len(server.gets("wikidata-20260608-all.json.gz")) == 1, "a finished file is never fetched twice"


def test_a_dated_pair_takes_that_week_and_the_one_before(tmp_path: Path) -> None:
    with DumpMirror(weeks()) as server, mirror_of(server, tmp_path) as mirror:
        pair = mirror.fetch_pair("20260601")
    assert pair.days == (MAY25, JUN1) and pair.t1.read_bytes() == T0


def test_a_connection_cut_mid_file_resumes_where_it_stopped(tmp_path: Path) -> None:
    waits: list[float] = []
    with DumpMirror(weeks()).cut("wikidata-20260608-all.json.gz", 20_000) as server:
        with mirror_of(server, tmp_path, waits) as mirror:
            pair = mirror.fetch_pair("latest")
        gets = server.gets("wikidata-20260608-all.json.gz")
    assert pair.t1.read_bytes() == T1
    assert [g.headers.get("Range") for g in gets] == [None, "bytes=20000-"]
    assert waits == [0.5]


def test_a_part_left_by_an_earlier_run_is_resumed_not_refetched(tmp_path: Path) -> None:
    folder = tmp_path / "20260608"
    folder.mkdir()
    (folder / "wikidata-20260608-all.json.gz.part").write_bytes(T1[:30_000])
    with DumpMirror(weeks()) as server:
        with mirror_of(server, tmp_path) as mirror:
            pair = mirror.fetch_pair("latest")
        assert [g.headers.get("Range") for g in server.gets("wikidata-20260608-all.json.gz")] == ["bytes=30000-"]
    assert pair.t1.read_bytes() == T1


def test_cuts_past_the_retries_leave_the_part_for_the_next_run(tmp_path: Path) -> None:
    name = "wikidata-20260608-all.json.gz"
    with DumpMirror(weeks()).cut(name, 10_000).cut(name, 10_000) as server:
        with mirror_of(server, tmp_path, retries=1) as mirror, pytest.raises(TransientSourceError) as err:
            mirror.fetch_pair("latest")
        assert "the next run resumes" in str(err.value) and "\n" not in str(err.value)
        assert (tmp_path / "20260608" / f"{name}.part").stat().st_size == 20_000
        with mirror_of(server, tmp_path) as mirror:
            assert mirror.fetch_pair("latest").t1.read_bytes() == T1
        assert server.gets(name)[-1].headers.get("Range") == "bytes=20000-"


def test_a_wrong_checksum_keeps_the_file_aside_and_stops(tmp_path: Path) -> None:
    with DumpMirror(weeks(wrong=True)) as server, mirror_of(server, tmp_path) as mirror:
        with pytest.raises(SourceContractError) as err:
            mirror.fetch_pair("latest")
    message = str(err.value)
    assert "wikidata-20260608-all.json.gz" in message and "sha1" in message and "\n" not in message
    assert not (tmp_path / "20260608" / "wikidata-20260608-all.json.gz").exists()
    aside = list((tmp_path / "20260608").glob("*.bad-*"))
    assert len(aside) == 1 and aside[0].read_bytes() == T1 and str(aside[0]) in message


def test_a_missing_week_refuses_the_pair(tmp_path: Path) -> None:
    runs = [json_run(MAY25, T0), rdf_run(JUN1), json_run(JUN8, T1)]  # the 1st's JSON dump never came
    with DumpMirror(runs) as server, mirror_of(server, tmp_path) as mirror:
        with pytest.raises(SourceContractError) as err:
            mirror.fetch_pair("latest")
        assert not [r for r in server.requests if r.path.endswith(".json.gz")], "nothing downloaded"
    assert "20260525 and 20260608, 14 days apart" in str(err.value) and "7 days" in str(err.value)


def test_an_unfinished_run_without_sums_is_passed_over(tmp_path: Path) -> None:
    newest = json_run(date(2026, 6, 15), b"half written")
    newest.sums = False
    with DumpMirror([*weeks(), newest]) as server, mirror_of(server, tmp_path) as mirror:
        assert mirror.fetch_pair("latest").days == (JUN1, JUN8)


@pytest.mark.parametrize(("setting", "value", "says"), [
    ("url", "ftp://dumps.example.org/", "not an http(s) URL"),
    ("user_agent", "timelyqa/0.1", "no contact details"),
    ("compression", "xz", "compression"),
])
def test_bad_settings_are_one_line_before_any_request(setting: str, value: str, says: str, tmp_path: Path) -> None:
    values = {"url": "https://dumps.example.org/", "user_agent": UA, "cache": tmp_path} | {setting: value}
    with pytest.raises(ConfigError) as err:
        MirrorSettings(**values)
    assert says in str(err.value) and setting in str(err.value) and "\n" not in str(err.value)


def test_a_user_agent_is_required_and_bad_dates_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="TIMELYQA_WIKIDATA_MIRROR_USER_AGENT"):
        MirrorSettings.from_env(environ={})
    settings = MirrorSettings.from_env(environ={"TIMELYQA_WIKIDATA_MIRROR_USER_AGENT": UA}, cache=tmp_path)
    with DumpMirror(weeks()) as server, Mirror(settings.model_copy(update={"url": server.url})) as mirror:
        with pytest.raises(ConfigError, match="--dumps 'last week'"):
            mirror.fetch_pair("last week")
        assert server.requests == []


# The command ------------------------------------------------------------------------------------------------

def cli(*args: str | Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    from typer.testing import CliRunner

    from timelyqa.cli import app

    result = CliRunner().invoke(app, ["wikidata", *map(str, args)], env={"TIMELYQA_QUIET": "1", **(env or {})})
    return result.exit_code, result.output


@pytest.mark.parametrize(("args", "env", "says"), [
    (["--dumps", "latest", "--before", FIXTURES / "t0.json.gz"], {"TIMELYQA_WIKIDATA_MIRROR_USER_AGENT": UA},
     "not both nor part of one"),
    ([], {}, "give either two dumps"),
    (["--dumps", "latest"], {"TIMELYQA_WIKIDATA_MIRROR_USER_AGENT": ""}, "TIMELYQA_WIKIDATA_MIRROR_USER_AGENT"),
    (["--dumps", "monday"], {"TIMELYQA_WIKIDATA_MIRROR_USER_AGENT": UA}, "--dumps 'monday'"),
    (["--dumps", "latest", "--mirror", "file:///srv/dumps/"], {"TIMELYQA_WIKIDATA_MIRROR_USER_AGENT": UA},
     "mirror (--mirror) 'file:///srv/dumps/': not an http(s) URL"),  # the request's line: the setting and its option
])
def test_the_command_refuses_a_wrong_dump_choice_in_one_line(args: list[str | Path], env: dict[str, str], says: str,
                                                             tmp_path: Path) -> None:
    with DumpMirror(weeks()) as server:
        code, output = cli("--out", tmp_path / "out", "--cache", tmp_path / "cache", *args,
                           env={"TIMELYQA_WIKIDATA_MIRROR_URL": server.url, **env})
        assert server.requests == []
    assert code == 2 and says in output and len(output.strip().splitlines()) == 1, output
    assert not (tmp_path / "out").exists() and not (tmp_path / "cache").exists()


@pytest.mark.slow  # two whole pipeline runs, each through a local Oxigraph
def test_dumps_latest_gives_the_questions_of_the_same_two_files(tmp_path: Path) -> None:
    env = {"TIMELYQA_WIKIDATA_MIRROR_USER_AGENT": UA}
    with DumpMirror(weeks()) as server:
        code, output = cli("--dumps", "latest", "--mirror", server.url, "--cache", tmp_path / "cache",
                           "--out", tmp_path / "fetched", env=env)
    assert code == 0, output
    code, output = cli("--before", FIXTURES / "t0.json.gz", "--after", FIXTURES / "t1.json.gz",
                       "--out", tmp_path / "given")
    assert code == 0, output
    import json

    import polars as pl

    fetched, given = (pl.read_parquet(tmp_path / d / "questions.parquet") for d in ("fetched", "given"))
    assert fetched.height > 0
    cols = ["id", "question", "answer", "level", "sparql"]
    assert fetched.select(cols).equals(given.select(cols))
    inputs = json.loads((tmp_path / "fetched" / "manifest.json").read_text())["inputs"]
    assert inputs["after"]["path"].endswith("20260608/wikidata-20260608-all.json.gz")
