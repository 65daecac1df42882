"""The production setup docs/operations.md describes, run: a Prefect server on PostgreSQL (Debian's, which `make test`
installs when it is missing), the `local` pool, the deployments of prefect.yaml and a worker; a release run completes,
and a second server started on the same database, with a fresh home, knows that run. Nothing lives in SQLite."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.prefect_server import (REPO, Background, free_port, prefect, prefect_env, start_server, start_worker,
                                  wait_healthy)
from tests.runs import write_source
from tests.test_release import news_rows, wikidata_rows
from timelyqa.record import QARecord, WikidataRecord, to_frame

BIN = next(iter(sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)), None)
"""Debian's PostgreSQL programs (initdb, postgres), newest version first."""


def _as_postgres(args: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: as root, run it as Debian's `postgres` user."""
    return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else args


@pytest.fixture
def postgres() -> Iterator[str]:
    """A throwaway PostgreSQL cluster on 127.0.0.1 with a database `prefect`; its asyncpg URL."""
    assert BIN is not None and (BIN / "postgres").is_file(), "install Debian's postgresql (make test does)"
    # Outside pytest's tmp folders, which only root may enter: the server runs as `postgres`.
    folder = Path(tempfile.mkdtemp(prefix="timelyqa-pg-"))
    data, port = folder / "data", free_port()
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        os.chown(folder, user.pw_uid, user.pw_gid)
    try:
        subprocess.run(_as_postgres([str(BIN / "initdb"), "-D", str(data), "-U", "prefect", "-A", "trust",
                                     "--no-sync"]), check=True, capture_output=True, timeout=120)
        server = Background(_as_postgres([str(BIN / "postgres"), "-D", str(data), "-h", "127.0.0.1", "-p",
                                          str(port), "-k", str(folder), "-c", "fsync=off"]),
                            env=os.environ, cwd=folder, log=folder / "server.log")
        try:
            for _ in range(120):
                made = subprocess.run([str(BIN / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "prefect",
                                       "prefect"], capture_output=True, text=True, timeout=30)
                if made.returncode == 0:
                    break
                assert server.alive(), server.tail()
                time.sleep(0.5)
            else:
                raise TimeoutError(f"PostgreSQL did not start: {made.stderr}\n{server.tail()}")
            yield f"postgresql+asyncpg://prefect@127.0.0.1:{port}/prefect"
        finally:
            server.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def api(env: dict[str, str], path: str, body: dict[str, object]) -> list[dict[str, object]]:
    """One POST to the server's REST API (a filter), its JSON answer."""
    request = urllib.request.Request(f"{env['PREFECT_API_URL']}/{path}", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())


def ok(result: subprocess.CompletedProcess[str], what: str) -> str:
    assert result.returncode == 0, f"{what} exited {result.returncode}:\n{result.stdout[-3000:]}\n{result.stderr}"
    return result.stdout


@pytest.mark.slow
@pytest.mark.timeout(420)
def test_a_server_on_postgresql_runs_a_deployment_and_a_new_server_on_it_knows_the_run(
        postgres: str, tmp_path: Path) -> None:
    sources = [write_source(tmp_path / "wikidata", to_frame(wikidata_rows(), WikidataRecord), "wikidata"),
               write_source(tmp_path / "bulletin", to_frame(news_rows(), QARecord), "bulletin")]
    release = tmp_path / "release"
    home = tmp_path / "home"
    home.mkdir()
    env = {**prefect_env(home, free_port()), "PREFECT_API_DATABASE_CONNECTION_URL": postgres}
    server = start_server(home, env, timeout=120)
    worker: Background | None = None
    try:
        ok(prefect(["work-pool", "create", "local", "--type", "process"], env=env, cwd=home), "work-pool create")
        ok(prefect(["--no-prompt", "deploy", "--all"], env=env, cwd=REPO, timeout=180), "deploy --all")
        worker = start_worker("local", env, cwd=REPO, log=home / "worker.log")
        ran = prefect(["deployment", "run", "release/release-weekly", "--watch", "--watch-interval", "2",
                       "--watch-timeout", "200", "--param", f"sources={json.dumps([str(s) for s in sources])}",
                       "--param", f"out={release}"], env=env, cwd=REPO, timeout=240)
        assert ran.returncode == 0, f"{ran.stdout[-3000:]}\n{ran.stderr[-2000:]}\nworker:\n{worker.tail()}"
        version = json.loads((release / "manifest.json").read_text())["version"]
    finally:
        if worker is not None:
            worker.stop()
        server.stop()
    assert not list(home.rglob("*.db")), "the server kept its state in SQLite"

    # A second server, with a home of its own, on the same database: the run and the deployments are there.
    home2 = tmp_path / "home2"
    home2.mkdir()
    env2 = {**prefect_env(home2, free_port()), "PREFECT_API_DATABASE_CONNECTION_URL": postgres}
    again = start_server(home2, env2, timeout=120)
    try:
        wait_healthy(env2["PREFECT_API_URL"], again)
        completed = api(env2, "flow_runs/filter", {"flow_runs": {"state": {"type": {"any_": ["COMPLETED"]}}}})
        assert [run["name"] for run in completed] == [f"release {version}"]
        deployments = {d["name"] for d in api(env2, "deployments/filter", {})}
        assert {"release-weekly", "wikidata-weekly", "news-daily"} <= deployments
    finally:
        again.stop()
