"""Wrong settings as an operator types them: each stops the command with exit 2 and one line naming the option,
before any work (nothing written, no server asked).

The commands run in this interpreter (typer's CliRunner: the same app as the installed `timelyqa`, without a new
interpreter per case), so the table stays fast; tests/test_cli.py runs the installed entry point itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from publish.release import build_release
from tests.localserver import LocalServer
from tests.runs import write_source
from tests.test_release import wikidata_rows
from timelyqa.cli import app
from timelyqa.record import WikidataRecord, to_frame

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "data" / "demo"
T0, T1, HISTORY = DEMO / "wikidata-t0.json.gz", DEMO / "wikidata-t1.json.bz2", DEMO / "wikipedia-history.xml.bz2"
WINDOW = ("--start", "2024-01-01", "--end", "2024-02-01")


class Witness(LocalServer):
    """An HTTP server on 127.0.0.1 that answers every request with a web page and counts them: a wrong setting must
    stop the run before it is asked anything; as an LLM endpoint it is the HTML page the client must refuse."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        witness = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _page(self) -> None:
                witness.requests.append(f"{self.command} {self.path}")
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = b"<!doctype html><html><body><h1>Welcome to nginx!</h1></body></html>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_HEAD = _page

        super().__init__(Handler)
        self.start()


@dataclass
class Place:
    """What a case may name: files and folders that exist, and the witness server."""

    tmp: Path
    witness: Witness
    release: Path
    source: Path

    @property
    def file(self) -> Path:
        path = self.tmp / "notes.txt"
        path.write_text("an operator's notes, not a folder\n")
        return path

    @property
    def empty(self) -> Path:
        path = self.tmp / "empty"
        path.mkdir(exist_ok=True)
        return path

    @property
    def out(self) -> Path:
        return self.tmp / "out"


@dataclass
class Case:
    name: str
    args: Callable[[Place], list[Any]]
    names: str  # what the one line must say: the option (or variable) at fault
    env: Callable[[Place], dict[str, str]] = field(default=lambda p: {})
    asks: bool = False  # the setting is only known wrong from the service's answer (one request allowed)


def wikidata(p: Place, *extra: Any) -> list[Any]:
    return ["wikidata", "--before", T0, "--after", T1, *extra]


def wikipedia(p: Place, *extra: Any) -> list[Any]:
    return ["wikipedia", "--dump", HISTORY, *WINDOW, *extra]


def news(p: Place, *extra: Any) -> list[Any]:
    return ["news", "--start", "2024-01-01", "--end", "2024-01-02", "--dump", HISTORY, *extra]


CASES = [
    # service URLs: http(s) with a host, nothing else
    Case("endpoint not a URL", lambda p: wikidata(p, "--out", p.out, "--endpoint", "not-a-url"), "--endpoint"),
    Case("endpoint a file URL", lambda p: wikidata(p, "--out", p.out, "--endpoint", "file:///etc/passwd"),
         "--endpoint"),
    Case("endpoint-before a file URL",
         lambda p: wikidata(p, "--out", p.out, "--endpoint-before", "file:///etc/passwd"), "--endpoint-before"),
    Case("endpoint without a host", lambda p: wikidata(p, "--out", p.out, "--endpoint", "http:///sparql"),
         "--endpoint"),
    Case("wikidata api a file URL", lambda p: ["wikidata", "--api", "file:///etc/api.php", "--since", "2024-01-01",
                                               "--until", "2024-01-02", "--out", p.out], "--api"),
    Case("mirror a file URL", lambda p: ["wikidata", "--dumps", "latest", "--mirror", "file:///srv/dumps/",
                                         "--out", p.out], "--mirror",
         env=lambda p: {"TIMELYQA_WIKIDATA_MIRROR_USER_AGENT": "timelyqa-test/0 (test@example.org)"}),
    Case("wikipedia api an ftp URL", lambda p: ["wikipedia", "--api", "ftp://example.org/w/api.php", *WINDOW,
                                                "--out", p.out], "--api"),
    Case("news archive-base a file URL", lambda p: news(p, "--out", p.out, "--archive", "wayback",
                                                        "--archive-base", "file:///etc"), "--archive-base"),
    Case("crawl root without a host", lambda p: ["crawl", "site-tree", "--root", "http://", "--out", p.out],
         "--root"),
    Case("LLM base URL a file URL", lambda p: wikipedia(p, "--out", p.out, "--generator", "llm"),
         "TIMELYQA_LLM_BASE_URL",
         env=lambda p: {"TIMELYQA_LLM_BASE_URL": "file:///etc/passwd", "TIMELYQA_LLM_MODEL": "m"}),
    Case("LLM endpoint an HTML page", lambda p: wikipedia(p, "--out", p.out, "--generator", "llm"), "text/html",
         env=lambda p: {"TIMELYQA_LLM_BASE_URL": p.witness.url + "/v1", "TIMELYQA_LLM_MODEL": "m"}, asks=True),
    # --out: a folder, never an existing file (and a file output never an existing folder)
    Case("wikidata out a file", lambda p: wikidata(p, "--out", p.file), "--out"),
    Case("wikipedia out a file", lambda p: wikipedia(p, "--out", p.file), "--out"),
    Case("wikipedia out under a file", lambda p: wikipedia(p, "--out", p.file / "run"), "--out"),
    Case("wikipedia answer out a folder", lambda p: ["wikipedia", "answer", "--date", "2024-02-01", "--questions",
                                                     p.source, "--dump", HISTORY, "--out", p.empty], "--out"),
    Case("release out a file", lambda p: ["release", "--from", p.source, "--out", p.file], "--out"),
    Case("news out a file", lambda p: news(p, "--out", p.file), "--out"),
    Case("site-tree out a file", lambda p: ["site-tree", "--crawl", p.empty, "--out", p.file], "--out"),
    Case("crawl out a file", lambda p: ["crawl", "site-tree", "--root", p.witness.url + "/", "--out", p.file],
         "--out"),
    Case("review export out a folder", lambda p: ["review", "export", p.release, "--config", "wikidata",
                                                  "--out", p.empty], "--out"),
    Case("export out a file", lambda p: ["export", "verl", p.release, "--out", p.file], "--out"),
    Case("live resolve out a file", lambda p: ["live", "resolve", "--recipes", DEMO / "official" / "recipes",
                                               "--out", p.file], "--out"),
    # numbers with a bound
    Case("horizon-days negative", lambda p: wikipedia(p, "--out", p.out, "--horizon-days", "-30"),
         "--horizon-days"),
    Case("horizon-days huge", lambda p: wikipedia(p, "--out", p.out, "--horizon-days", "99999999"),
         "--horizon-days"),
    # a release's version names a folder's tag: a plain word
    Case("version with a path", lambda p: ["release", "--from", p.source, "--out", p.out, "--version",
                                           "../../etc x"], "--version"),
    Case("version with a slash", lambda p: ["release", "--from", p.source, "--out", p.out, "--version",
                                            "v1/2"], "--version"),
    # --previous: a release (or, for a source, an earlier output), said what is missing
    Case("release previous an empty folder", lambda p: ["release", "--from", p.source, "--out", p.out,
                                                        "--previous", p.empty], "--previous"),
    Case("release previous a source folder", lambda p: ["release", "--from", p.source, "--out", p.out,
                                                        "--previous", p.source], "--previous"),
    Case("wikidata previous an empty folder", lambda p: wikidata(p, "--out", p.out, "--previous", p.empty),
         "--previous"),
    Case("wikipedia previous a file", lambda p: wikipedia(p, "--out", p.out, "--previous", p.file), "--previous"),
    # what a newcomer types first: a source's folder for a release, a web page without its scheme, two ways of
    # answering an evaluation
    Case("export of a source folder", lambda p: ["export", "verl", p.source, "--out", p.out],
         "not a release folder"),
    Case("eval of a source folder", lambda p: ["eval", p.source, "--predictions", p.file, "--out", p.out],
         "not a release folder"),
    Case("extract a page without its scheme", lambda p: ["extract", "example.com/news/page"],
         "https://example.com/news/page"),
    Case("eval with predictions and a model", lambda p: ["eval", p.release, "--predictions", p.file, "--model", "m",
                                                         "--out", p.out], "give one way of answering"),
    # a Hub token never crosses the network in clear
    Case("hub token over plain http", lambda p: ["publish", p.release, "--repo", "org/name"], "HF_ENDPOINT",
         env=lambda p: {"HF_ENDPOINT": "http://hub.example.invalid", "HF_TOKEN": "hf_secret_token_1234"}),
]
"""The settings refused, one a row: the README's count of settings refused is len(CASES)."""


@pytest.fixture(scope="module")
def witness() -> Iterator[Witness]:
    server = Witness()
    yield server
    server.close()


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A source output folder and a release built from it, as the week before left them."""
    base = tmp_path_factory.mktemp("made")
    source = write_source(base / "wikidata", to_frame(wikidata_rows(), WikidataRecord), "wikidata")
    build_release([source], base / "release")
    return source, base / "release"


def tree(folder: Path) -> dict[str, float]:
    return {str(p.relative_to(folder)): p.stat().st_mtime for p in folder.rglob("*")}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_bad_setting_stops_the_command_in_one_line_before_any_work(
        case: Case, tmp_path: Path, witness: Witness, made: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("TIMELYQA_LLM_BASE_URL", "TIMELYQA_LLM_MODEL", "TIMELYQA_CHECK_LLM_BASE_URL", "HF_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    place = Place(tmp_path, witness, release=made[1], source=made[0])
    args = [str(a) for a in case.args(place)]
    env = {"TIMELYQA_QUIET": "1", "COLUMNS": "200", **case.env(place)}
    before, release_before, asked = tree(tmp_path), tree(made[1]), len(witness.requests)

    result = CliRunner().invoke(app, args, env=env)

    assert result.exit_code == 2, (result.exception, result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert case.names in lines[0], lines[0]
    assert "Traceback" not in result.stdout + result.stderr
    assert tree(tmp_path) == before, "the command wrote something"
    assert tree(made[1]) == release_before, "the command touched the release"
    if case.asks:
        assert witness.url in lines[0]  # the URL that answered a page, and what it answered
    else:
        assert len(witness.requests) == asked, witness.requests[asked:]


@pytest.mark.slow  # importing Prefect takes seconds
def test_the_release_flow_refuses_the_same_parameters_before_its_task(tmp_path: Path,
                                                                     made: tuple[Path, Path]) -> None:
    from flows.release import release_flow
    from timelyqa.errors import ConfigError

    with pytest.raises(ConfigError, match=r"^version '\.\./\.\./etc x': not a plain tag"):
        release_flow.fn(sources=[str(made[0])], out=str(tmp_path / "release"), version="../../etc x")
    with pytest.raises(ConfigError, match=r"^out .*notes\.txt: a file is there, not a folder"):
        (tmp_path / "notes.txt").write_text("notes\n")
        release_flow.fn(sources=[str(made[0])], out=str(tmp_path / "notes.txt"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_library_calls_a_flow_makes_refuse_the_same_values(tmp_path: Path, made: tuple[Path, Path]) -> None:
    """What flows hand the core directly (a SPARQL endpoint, the Hub endpoint, a release version) is refused there
    too."""
    from publish.hub import publish_release
    from publish.release import build_release
    from timelyqa.errors import ConfigError
    from timelyqa.sparql import SparqlEndpoint

    with pytest.raises(ConfigError, match=r"^endpoint 'file:///etc/passwd': not an http\(s\) URL"):
        SparqlEndpoint("file:///etc/passwd")
    with pytest.raises(ConfigError, match=r"^endpoint 'http://10\.1\.2\.3:8080': a Hub token goes only over https"):
        publish_release(made[1], "org/name", token="hf_secret_token_1234", endpoint="http://10.1.2.3:8080")
    with pytest.raises(ConfigError, match=r"^--version '\.\./\.\./etc x'"):
        build_release([made[0]], tmp_path / "release", version="../../etc x")
    assert list(tmp_path.iterdir()) == []


@dataclass(frozen=True)
class _Prompt:
    """The least a prompt is to the client (timelyqa.llm.prompts holds the real ones; the shape is all that counts)."""

    id: str = "probe_v1"

    @property
    def shape(self) -> type[Any]:
        from pydantic import BaseModel

        class Answer(BaseModel):
            answer: str

        return Answer

    def render(self, **values: str) -> list[dict[str, str]]:
        return [{"role": "user", "content": "Reply with JSON."}]


def test_an_html_page_at_the_first_chat_call_is_a_setting_error_naming_the_url(witness: Witness) -> None:
    """A server without /models is asked at the first call: a web page there is no reply to re-ask, no failure to
    retry, but a wrong base URL, said in one line with what came back."""
    from timelyqa.errors import ConfigError
    from timelyqa.llm.client import LLM
    from timelyqa.llm.settings import LLMSettings

    asked = len(witness.requests)
    with LLM(LLMSettings(base_url=witness.url + "/v1", model="m", retries=3)) as llm:
        with pytest.raises(ConfigError) as error:
            llm.ask(_Prompt(), {})
    message = str(error.value)
    assert message.startswith(f"{witness.url}/v1/chat/completions answered text/html that is not JSON")
    assert "\n" not in message
    assert witness.requests[asked:] == ["POST /v1/chat/completions"]  # asked once: not retried, not re-asked


@pytest.mark.parametrize(("url", "sent"), [
    ("https://huggingface.co", True), ("http://127.0.0.1:8080", True), ("http://127.8.9.10", True),
    ("http://[::1]:9000", True), ("http://localhost:8080", True), ("http://hub.internal:8080", False),
    ("http://10.0.0.5", False), ("http://127.0.0.1.example.org", False), ("http://localhost.example.org", False),
    ("http://[::ffff:10.0.0.5]", False), ("file:///srv/hub", False), ("https://", False),
])
def test_a_hub_token_goes_only_over_https_or_to_this_machine(url: str, sent: bool) -> None:
    from publish.hub import check_token_endpoint
    from timelyqa.errors import ConfigError

    if sent:
        assert check_token_endpoint(url, "HF_ENDPOINT") == url
    else:
        with pytest.raises(ConfigError, match="^HF_ENDPOINT "):
            check_token_endpoint(url, "HF_ENDPOINT")
