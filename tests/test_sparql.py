"""SparqlEndpoint against a real Oxigraph and against small misbehaving servers; LocalOxigraph's lifecycle."""

from __future__ import annotations

import gzip
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from tests.localserver import LocalServer
from timelyqa.errors import ConfigError, SourceContractError, TransientSourceError
from timelyqa.oxigraph import LocalOxigraph, free_port
from timelyqa.sparql import USER_AGENT, SparqlEndpoint

WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
NT = (
    f"<{WD}Q42> <{WDT}P31> <{WD}Q5> .\n"
    f"<{WD}Q42> <http://www.w3.org/2000/01/rdf-schema#label> \"Douglas Adams\"@en .\n"
    f"<{WD}Q1> <{WDT}P31> <{WD}Q5> .\n"
)
# A real SPARQL 1.1 JSON result, as Oxigraph and query.wikidata.org write it.
RESULT = (
    b'{"head":{"vars":["x"]},"results":{"bindings":'
    b'[{"x":{"type":"uri","value":"http://www.wikidata.org/entity/Q42"}}]}}'
)

Reply = tuple[int, dict[str, str], bytes]


@pytest.fixture(scope="module")
def oxigraph(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalOxigraph]:
    nt = tmp_path_factory.mktemp("nt") / "tiny.nt.gz"
    nt.write_bytes(gzip.compress(NT.encode()))
    with LocalOxigraph(nt) as server:
        yield server


@contextmanager
def serve(answer: Callable[[str], Reply]) -> Iterator[tuple[list[str | None], str]]:
    """A local HTTP server whose reply to each POSTed body comes from `answer`, for a with-block: the User-Agent of
    each request, and its /query URL."""
    agents: list[str | None] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
            agents.append(self.headers.get("User-Agent"))
            status, headers, payload = answer(body)
            self.send_response(status)
            for name, value in {"Content-Length": str(len(payload)), **headers}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:
            pass

    with LocalServer(Handler) as server:
        yield agents, f"{server.url}/query"


@pytest.fixture
def html_server() -> Iterator[tuple[list[str | None], str]]:
    with serve(lambda body: (200, {"Content-Type": "text/html; charset=utf-8"}, b"<html>Login</html>")) as served:
        yield served


def test_select_returns_bindings_from_oxigraph(oxigraph: LocalOxigraph) -> None:
    endpoint = SparqlEndpoint(oxigraph.query_url)
    endpoint.ping()
    rows = endpoint.select(
        "PREFIX wdt: <http://www.wikidata.org/prop/direct/>\n"
        "SELECT ?x WHERE { ?x wdt:P31 ?c } ORDER BY ?x"
    )
    assert rows == [{"x": f"{WD}Q1"}, {"x": f"{WD}Q42"}]
    assert endpoint.calls == 2


def test_long_query_is_posted(oxigraph: LocalOxigraph) -> None:
    # Some 160 KB of query text: far too long for a GET URL on most servers.
    values = " ".join(f"<{WD}Q{i}>" for i in range(4000))
    query = f"SELECT (COUNT(*) AS ?c) WHERE {{ VALUES ?x {{ {values} }} ?x ?p ?o }}"
    assert len(query) > 100_000
    assert SparqlEndpoint(oxigraph.query_url).select(query) == [{"c": "3"}]


def test_bad_query_is_a_contract_error_with_the_server_line(oxigraph: LocalOxigraph) -> None:
    endpoint = SparqlEndpoint(oxigraph.query_url, backoff=0.001)
    with pytest.raises(SourceContractError) as err:
        endpoint.select("SELECT ?x WHERE { ?x wdt:P31 ?c }")  # wdt: is not declared: Oxigraph predefines none
    message = str(err.value)
    assert oxigraph.query_url in message and "400" in message and "error at" in message
    assert "\n" not in message
    assert endpoint.calls == 1  # a bad query is not retried


def test_ping_names_the_url_when_the_endpoint_answers_html(html_server: tuple[list[str | None], str]) -> None:
    agents, url = html_server
    with pytest.raises(ConfigError) as err:
        SparqlEndpoint(url).ping()
    assert str(err.value) == f"endpoint {url} is not a SPARQL endpoint: it answered text/html"
    assert agents == [USER_AGENT]


def test_select_on_html_is_a_contract_error(html_server: tuple[list[str | None], str]) -> None:
    _, url = html_server
    endpoint = SparqlEndpoint(url, backoff=0.001)
    with pytest.raises(SourceContractError, match="text/html") as err:
        endpoint.select("SELECT ?x WHERE { ?x ?p ?o }")
    assert url in str(err.value)
    assert endpoint.calls == 1


def test_cut_json_body_is_a_contract_error() -> None:
    with serve(lambda body: (200, {"Content-Type": "application/sparql-results+json"}, RESULT[:50])) as (_, url), \
            pytest.raises(SourceContractError) as err:
        SparqlEndpoint(url).select("SELECT ?x WHERE { ?x ?p ?o }")
    assert url in str(err.value) and "application/sparql-results+json" in str(err.value)


def test_503_with_retry_after_is_retried_then_succeeds() -> None:
    replies: list[Reply] = [
        (503, {"Retry-After": "0", "Content-Type": "text/plain"}, b"busy"),
        (503, {"Retry-After": "0", "Content-Type": "text/plain"}, b"busy"),
        (200, {"Content-Type": "application/sparql-results+json"}, RESULT),
    ]
    waits: list[float] = []
    with serve(lambda body: replies.pop(0)) as (_, url):
        # A long backoff that Retry-After: 0 must override, or the waits below would be 5 and 10.
        endpoint = SparqlEndpoint(url, retries=3, backoff=5.0, sleep=waits.append)
        rows = endpoint.select("SELECT ?x WHERE { ?x ?p ?o }")
    assert rows == [{"x": f"{WD}Q42"}]
    assert endpoint.calls == 3 and waits == [0.0, 0.0]


def test_429_retries_are_bounded_and_keep_retry_after() -> None:
    waits: list[float] = []
    with serve(lambda body: (429, {"Retry-After": "7", "Content-Type": "text/plain"}, b"slow down")) as (_, url):
        endpoint = SparqlEndpoint(url, retries=2, sleep=waits.append)
        with pytest.raises(TransientSourceError) as err:
            endpoint.select("SELECT ?x WHERE { ?x ?p ?o }")
    assert err.value.retry_after == 7.0 and "429" in str(err.value)
    assert endpoint.calls == 3 and waits == [7.0, 7.0]


def test_closed_port_is_transient_after_bounded_retries() -> None:
    url = f"http://127.0.0.1:{free_port()}/query"
    endpoint = SparqlEndpoint(url, retries=2, backoff=0.001)
    with pytest.raises(TransientSourceError, match="refused") as err:
        endpoint.select("SELECT ?x WHERE { ?x ?p ?o }")
    assert url in str(err.value) and "3 attempts" in str(err.value)
    assert endpoint.calls == 3


def test_ping_on_closed_port_is_a_config_error() -> None:
    url = f"http://127.0.0.1:{free_port()}/query"
    with pytest.raises(ConfigError) as err:
        SparqlEndpoint(url).ping()
    assert str(err.value) == f"endpoint {url} is unreachable: [Errno 111] Connection refused"


def test_ping_on_a_busy_server_stays_transient() -> None:
    with serve(lambda body: (503, {"Retry-After": "30", "Content-Type": "text/plain"}, b"overloaded")) as (_, url), \
            pytest.raises(TransientSourceError) as err:
        SparqlEndpoint(url).ping()
    assert err.value.retry_after == 30.0 and "503" in str(err.value)


@pytest.mark.slow
def test_a_server_that_never_answers_times_out() -> None:
    never = threading.Event()

    def hang(body: str) -> Reply:
        never.wait(5)
        return 200, {"Content-Type": "application/sparql-results+json"}, RESULT

    with serve(hang) as (_, url):
        endpoint = SparqlEndpoint(url, timeout=0.5, retries=0)
        try:
            with pytest.raises(TransientSourceError, match="timed out") as err:
                endpoint.select("SELECT ?x WHERE { ?x ?p ?o }")
        finally:
            never.set()
    assert url in str(err.value)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_local_oxigraph_leaves_no_process(tmp_path: Path) -> None:
    nt = tmp_path / "tiny.nt"
    nt.write_text(NT)
    with LocalOxigraph(nt, workdir=tmp_path / "work") as server:
        pid = server.pid
        assert pid is not None and not _gone(pid)
        assert len(SparqlEndpoint(server.query_url).select("SELECT ?s WHERE { ?s ?p ?o }")) == 3
    assert _gone(pid)
    assert list((tmp_path / "work").iterdir()) == []  # the store is removed too

    with pytest.raises(RuntimeError, match="boom"):
        with LocalOxigraph(nt) as server:
            pid = server.pid
            raise RuntimeError("boom")
    assert pid is not None and _gone(pid)


def test_a_server_that_dies_at_start_reports_its_stderr(tmp_path: Path) -> None:
    nt = tmp_path / "tiny.nt"
    nt.write_text(NT)
    fake = tmp_path / "oxigraph"  # loads fine, then its server fails the way a broken store would
    fake.write_text('#!/bin/sh\n[ "$1" = load ] && exit 0\necho "Error: store is corrupted" >&2\nexit 1\n')
    fake.chmod(0o755)
    with pytest.raises(ConfigError, match="exited at start: Error: store is corrupted") as err:
        with LocalOxigraph(nt, binary=str(fake)):
            pass
    assert "tiny.nt" in str(err.value)


def test_missing_oxigraph_binary_is_a_config_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nt = tmp_path / "tiny.nt"
    nt.write_text(NT)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ConfigError, match="oxigraph binary not found"):
        with LocalOxigraph(nt):
            pass


def test_local_oxigraph_rejects_malformed_and_missing_files(tmp_path: Path) -> None:
    bad = tmp_path / "bad.nt"
    bad.write_text(NT + "this is not a triple\n")
    with pytest.raises(ConfigError, match="bad.nt") as err:
        LocalOxigraph(bad).__enter__()
    assert "line 4" in str(err.value)
    with pytest.raises(ConfigError, match="missing.nt"):
        with LocalOxigraph(tmp_path / "missing.nt"):
            pass
