"""A release's recipes are a stranger's data: each reaches its own host only, a private or link-local address only
when the operator names it, and each does bounded work, so a hostile recipe fails with its reason and costs only
itself. Traffic goes to loopback only: two sites on 127.0.0.1 (named by the operator) and a witness on 127.0.0.9
(named by no one) that counts every connection made to it; that 169.254.169.254 and 10.0.0.1 are refused is read
from the refusal the crawl counts, never by connecting."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tests.localserver import LocalServer
from tests.witness import Witness
from timelyqa.official.bounded import Reader
from timelyqa.official.draft import l1_recipe
from timelyqa.official.recipe import MAX_DEPTH, RecipeError, parse_recipe
from timelyqa.official.resolve import plan

ROOT = Path(__file__).resolve().parent.parent
BIG_PAGE = "<html><body>" + "<p>x</p>" * 400_000 + "<p class='v'>7</p></body></html>"  # 3.1 MiB: under the 5 MiB cap
A_PAGE = "<html><body><p>" + "a" * 1_000_000 + "b</p><p class='v'>8</p></body></html>"
QUADRATIC = "//p[count(preceding::p) = count(following::p)]"  # 400,000 pages' worth of work for each p: hours
ALIAS_BOMB = "\n".join(
    ['lol0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"lol{i}: &l{i} [{','.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 10)])


# ---- the witness and the two sites -----------------------------------------------------------------------------

@dataclass
class Site:
    """A site on 127.0.0.1 at an ephemeral port: `pages` by path (a str is HTML, a tuple a redirect's target)."""

    pages: dict[str, Any]
    asked: list[str] = field(default_factory=list)
    server: LocalServer | None = None

    def start(self) -> Site:
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                site.asked.append(self.path)
                page = site.pages.get(self.path)
                if isinstance(page, tuple):
                    self.send_response(302)
                    self.send_header("Location", page[0])
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = (page or "").encode()
                self.send_response(200 if page is not None else 404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = LocalServer(Handler).start()
        return self

    @property
    def url(self) -> str:
        assert self.server is not None
        return self.server.url

    def stop(self) -> None:
        if self.server is not None:
            self.server.close()


@pytest.fixture
def world() -> Iterator[dict[str, Any]]:
    """Two sites on 127.0.0.1 and the witness on 127.0.0.9 (tests/witness.py), which no recipe's operator names."""
    with Witness() as witness:
        b = Site({"/value.html": "<p class='v'>2</p>"}).start()
        a = Site({"/value.html": "<p class='v'>1</p>", "/aaaa.html": A_PAGE, "/big.html": BIG_PAGE,
                  "/to-b.html": (f"{b.url}/value.html",), "/to-witness.html": (f"{witness.url}/x",)}).start()
        try:
            yield {"a": a, "b": b, "witness": witness}
        finally:
            a.stop()
            b.stop()


def recipe_text(recipe_id: str, url: str, extract: str = '{css: "p.v", type: number}', extra: str = "") -> str:
    return (f"recipe: 1\nid: {recipe_id}\nquestion: What is the value?\nlevel: L1\ntimezone: UTC\n"
            f"fetch: {{url: {json.dumps(url)}}}\nextract: {extract}\n{extra}")


def timelyqa(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TIMELYQA_QUIET": "1", "COLUMNS": "250",
           "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    return subprocess.run([sys.executable, "-m", "timelyqa.cli", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env=env)


# ---- `live resolve` on a release with hostile recipes ---------------------------------------------------------------

@pytest.mark.slow
def test_live_resolve_confines_a_releases_hostile_recipes(world: dict[str, Any], tmp_path: Path) -> None:
    """Every hostile recipe fails with its reason, in seconds, without a connection to the witness; the good ones,
    on the hosts the operator named with --allow-host, are answered."""
    a, b, witness = world["a"], world["b"], world["witness"]
    rows = {
        # first: the worker that reads it is killed at the limit, and the recipes after it are still read
        "quadratic-xpath": recipe_text("quadratic-xpath", f"{a.url}/big.html", f'{{xpath: "{QUADRATIC}", type: text}}'),
        "good-a": recipe_text("good-a", f"{a.url}/value.html"),
        "good-b": recipe_text("good-b", f"{b.url}/value.html"),
        "metadata": recipe_text("metadata", "http://169.254.169.254/latest/meta-data/"),
        "private": recipe_text("private", "http://10.0.0.1:6379/"),
        "witness-direct": recipe_text("witness-direct", f"http://{witness.host}/x"),
        "host-in-date": recipe_text("host-in-date", f"http://{{today:{witness.host}}}/x"),
        "host-in-suffix": recipe_text("host-in-suffix", f"{a.url}{{sfx}}/x",
                                      extra=f'vars: {{sfx: "@{witness.host}"}}\n'),
        "site-suffix": recipe_text("site-suffix", "{site}.attacker.example/x",
                                   extra='vars: {site: "http://127.0.0"}\n'),
        "redirect-to-b": recipe_text("redirect-to-b", f"{a.url}/to-b.html"),
        "redirect-to-witness": recipe_text("redirect-to-witness", f"{a.url}/to-witness.html"),
        "backtracking": recipe_text("backtracking", f"{a.url}/aaaa.html", '{css: "p", regex: "^(a+)+$", type: text}'),
        "alias-bomb": recipe_text("alias-bomb", f"{a.url}/value.html", extra=ALIAS_BOMB + "\n"),
    }
    assert len(rows["alias-bomb"]) - len(recipe_text("alias-bomb", f"{a.url}/value.html")) < 700
    release = tmp_path / "test-00000-of-00001.parquet"
    pl.DataFrame({"recipe_id": list(rows), "recipe": list(rows.values())}).write_parquet(release)

    began = time.monotonic()
    proc = timelyqa("live", "resolve", "--recipes", release, "--allow-host", "127.0.0.1", "--extract-timeout", "3",
                    "--out", tmp_path / "out")
    took = time.monotonic() - began
    assert proc.returncode == 1, proc.stderr  # the run goes on; the exit status says some recipes failed
    assert "Traceback" not in proc.stdout + proc.stderr
    assert took < 90, f"the hostile recipes cost seconds, not hours ({took:.1f} s)"
    assert witness.connections == 0, "nothing reached the address no one named"

    refused = {line.split(" row ")[1].split(")")[0].split("(")[1]: line for line in proc.stderr.splitlines()
               if line.startswith("refused: ")}
    assert set(refused) == {"host-in-date", "host-in-suffix", "site-suffix", "alias-bomb"}, proc.stderr
    assert "fetch.url: {today} stands where the host is (a date's format can write any text)" in refused["host-in-date"]
    assert "fetch.url: {sfx} stands where the host is (a variable)" in refused["host-in-suffix"]
    assert "must be followed by /, ? or #" in refused["site-suffix"]
    assert "anchors and aliases" in refused["alias-bomb"]
    assert all(len(line) < 400 for line in refused.values()), "one short line each"

    answers = {r["id"]: r for r in pl.read_parquet(tmp_path / "out" / "answers.parquet").iter_rows(named=True)}
    got = {i: (r["status"], r["answer"] or r["reason"]) for i, r in answers.items()}
    assert got == {
        "good-a": ("ok", "1"), "good-b": ("ok", "2"),
        "quadratic-xpath": ("failed", "extract_limit"),
        "metadata": ("failed", "host_not_allowed"), "private": ("failed", "host_not_allowed"),
        "witness-direct": ("failed", "host_not_allowed"),
        "redirect-to-b": ("failed", "host_not_allowed"), "redirect-to-witness": ("failed", "host_not_allowed"),
        "backtracking": ("failed", "extracted_nothing")}
    for name in ("metadata", "private", "witness-direct"):
        assert "private_address: never requested" in answers[name]["detail"], answers[name]["detail"]
    assert answers["redirect-to-b"]["detail"].endswith(f"redirected to {b.url}/value.html (off_site): never requested")
    assert "(off_site): never requested" in answers["redirect-to-witness"]["detail"]
    assert "ran past 3 s" in answers["quadratic-xpath"]["detail"]
    stats = json.loads((tmp_path / "out" / "work" / "crawl_stats.json").read_text())
    assert stats["refused"] == {"private_address": 3, "off_site": 2}, "each attempt counted with its reason"
    assert b.asked.count("/value.html") == 1, "site b served its own recipe once, and recipe A's redirect never"
    assert "/x" not in a.asked


@pytest.mark.slow
def test_a_releases_recipe_on_loopback_is_refused_until_the_operator_names_the_host(world: dict[str, Any],
                                                                                     tmp_path: Path) -> None:
    """The same release row: refused as private_address alone; answered once --allow-host (or --var) names it."""
    a = world["a"]
    release = tmp_path / "test.parquet"
    pl.DataFrame({"recipe_id": ["good-a", "via-var"],
                  "recipe": [recipe_text("good-a", f"{a.url}/value.html"),
                             recipe_text("via-var", "{site}/value.html")]}).write_parquet(release)
    alone = timelyqa("live", "resolve", "--recipes", release, "--out", tmp_path / "alone")
    named = timelyqa("live", "resolve", "--recipes", release, "--allow-host", a.url.removeprefix("http://"),
                     "--var", f"site={a.url}", "--out", tmp_path / "named")
    assert alone.returncode == 1 and named.returncode == 0, alone.stderr + named.stderr
    first = {r["id"]: r for r in pl.read_parquet(tmp_path / "alone" / "answers.parquet").iter_rows(named=True)}
    assert (first["good-a"]["reason"], first["good-a"]["detail"]) == (
        "host_not_allowed", f"{a.url}/value.html: private_address: never requested")
    assert (first["via-var"]["reason"], first["via-var"]["detail"]) == (
        "recipe_invalid", "fetch.url: {site} is neither a date expression nor a variable given (vars: or --var "
        "site=VALUE)")
    second = pl.read_parquet(tmp_path / "named" / "answers.parquet")
    assert second.select("id", "status", "answer").rows() == [("good-a", "ok", "1"), ("via-var", "ok", "1")]
    assert a.asked.count("/value.html") == 1, "one page, asked once for both"


@pytest.mark.slow  # starts the confined resolver
def test_a_bad_allow_host_is_a_wrong_setting_in_one_line(tmp_path: Path) -> None:
    proc = timelyqa("live", "resolve", "--recipes", ROOT / "data" / "demo" / "official" / "recipes",
                    "--allow-host", "http://127.0.0.1/x", "--out", tmp_path / "out")
    assert proc.returncode == 2 and not (tmp_path / "out").exists()
    assert proc.stderr.strip().splitlines()[-1].startswith("error: --allow-host 'http://127.0.0.1/x': not HOST")


# ---- the host fixed in the recipe's text -----------------------------------------------------------------------

@pytest.mark.parametrize(("url", "said"), [
    ("http://{today:127.0.0.9:19001}/x", "fetch.url: {today} stands where the host is (a date's format can write "
                                         "any text)"),
    ("http://{today:%Y}.example.org/x", "fetch.url: {today} stands where the host is"),
    ("http://example.org{sfx}/x", "fetch.url: {sfx} stands where the host is (a variable)"),
    ("http://{sub}.example.org/x", "fetch.url: {sub} stands where the host is"),
    ("{site}.attacker.example/x", "fetch.url: {site} stands for a whole origin (scheme://host[:port]) and must be "
                                  "followed by /, ? or # (here by '.attacker.example/x')"),
    ("{site}{path}", "fetch.url: {site} stands for a whole origin"),
    ("{today}/x", "fetch.url: {today} is a date, and cannot stand for the host"),
    ("http://user@127.0.0.9:19001/x", "fetch.url: 'user@127.0.0.9:19001' is not a host[:port]"),
    ("http://example.org\\@127.0.0.9/x", "fetch.url: 'example.org\\\\@127.0.0.9' is not a host[:port]"),
])
def test_a_host_that_is_not_written_out_is_refused_when_the_recipe_is_read(url: str, said: str) -> None:
    with pytest.raises(RecipeError) as caught:
        parse_recipe(recipe_text("r", url, extra='vars: {sfx: ".x", sub: "a", site: "http://a.example"}\n'),
                     name="r.yaml")
    assert f"r.yaml: {said}" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_an_origin_variable_must_hold_an_origin_in_the_recipe_and_from_the_operator() -> None:
    with pytest.raises(RecipeError, match=r"r.yaml: vars.site: \{site\} = 'http://a.example@127.0.0.9' is not an "
                                          r"origin"):
        parse_recipe(recipe_text("r", "{site}/x", extra='vars: {site: "http://a.example@127.0.0.9"}\n'), name="r.yaml")
    recipe = parse_recipe(recipe_text("r", "{site}/x?d={today}"), name="r.yaml")
    at = datetime(2026, 11, 16, 9, tzinfo=UTC)
    bad = plan(recipe, at, {"site": "http://127.0.0.1:8000.attacker.example:1@127.0.0.9"}, now=at)
    assert bad.fail is not None and bad.fail[0] == "recipe_invalid" and "is not an origin" in bad.fail[1]
    good = plan(recipe, at, {"site": "http://127.0.0.1:8000/mirror"}, now=at)
    assert good.urls == ("http://127.0.0.1:8000/mirror/x?d=2026-11-16",)


@pytest.mark.parametrize("url", ["{site}.attacker.example/x", "http://127.0.0.1:8000.attacker.example/x",
                                 "http://127.0.0.1:8000@127.0.0.9:19001/x", "https://127.0.0.1:8000/x",
                                 "http://127.0.0.1:8001/x"])
def test_a_draft_off_the_site_is_dropped_by_its_parsed_host(url: str) -> None:
    dropped = l1_recipe({"id": "d", "question": "What is the value?", "fetch": {"url": url},
                         "extract": {"css": "p", "type": "number"}}, number=1, site="http://127.0.0.1:8000",
                        timezone="UTC", today=date(2026, 11, 16))
    assert getattr(dropped, "reason", None) == "recipe_invalid", dropped
    assert "is not on the site" in dropped.detail


def test_a_draft_on_the_site_says_its_origin_as_site() -> None:
    drafted = l1_recipe({"id": "d", "question": "What is the value?", "fetch": {"url": "HTTP://127.0.0.1:8000/x"},
                         "extract": {"css": "p", "type": "number"}}, number=1, site="http://127.0.0.1:8000",
                        timezone="UTC", today=date(2026, 11, 16))
    assert drafted.fetch.url == "{site}/x"


# ---- reading a recipe is bounded ---------------------------------------------------------------------------------

def test_a_yaml_alias_bomb_is_refused_at_once_in_one_line() -> None:
    began = time.monotonic()
    with pytest.raises(RecipeError) as caught:
        parse_recipe(ALIAS_BOMB, name="bomb.yaml")
    assert time.monotonic() - began < 1
    assert str(caught.value) == ("bomb.yaml: line 1: not valid YAML (anchors and aliases (&name, *name) are not "
                                 "allowed in a recipe)")


def test_deep_nesting_and_a_long_recipe_are_refused_before_they_are_built() -> None:
    deep = recipe_text("r", "http://a.example/x", extra="vars: " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5))
    with pytest.raises(RecipeError, match=f"r.yaml: line \\d+: not valid YAML \\(nested deeper than {MAX_DEPTH}"):
        parse_recipe(deep, name="r.yaml")
    with pytest.raises(RecipeError, match=r"^r.yaml: the recipe is 100\d{3} characters, over the 65536"):
        parse_recipe(recipe_text("r", "http://a.example/x", extra="unit: " + "m" * 100_000), name="r.yaml")


def test_a_long_value_in_a_message_is_cut_before_it_is_built() -> None:
    huge = "x" * 50_000
    with pytest.raises(RecipeError) as caught:
        parse_recipe(recipe_text("r", "http://a.example/x", extra=f"round: [{', '.join([repr(huge)] * 1)}]"),
                     name="r.yaml")
    assert len(str(caught.value)) < 200, str(caught.value)


@pytest.mark.parametrize(("regex", "said"), [
    (r"(?<!\d)5", "does not compile: invalid perl operator: (?<! (recipes' regexes are RE2's"),
    (r"(a)\1", "does not compile: invalid escape sequence: \\1"),
])
def test_a_regex_re2_cannot_compile_refuses_its_recipe_with_the_reason(regex: str, said: str) -> None:
    with pytest.raises(RecipeError) as caught:
        parse_recipe(recipe_text("r", "http://a.example/x", f"{{css: p, regex: {json.dumps(regex)}, type: text}}"),
                     name="r.yaml")
    assert "r.yaml: extract.regex: " in str(caught.value) and said in str(caught.value)


def test_a_backtracking_regex_reads_a_long_page_in_linear_time() -> None:
    recipe = parse_recipe(recipe_text("r", "http://a.example/x", '{css: "p", regex: "^(a+)+$", type: text}'),
                          name="r")
    began = time.monotonic()
    outcome = Reader().evaluate(recipe, [A_PAGE], seconds=10)
    assert time.monotonic() - began < 5
    assert (outcome.reason, outcome.detail) == ("extracted_nothing",
                                                "css 'p' with regex '^(a+)+$' matched nothing on page 1")


@pytest.mark.slow  # a costly XPath run to its limit
def test_a_costly_xpath_is_stopped_at_its_limit_and_the_next_recipe_is_read() -> None:
    slow = parse_recipe(recipe_text("slow", "http://a.example/x", f'{{xpath: "{QUADRATIC}", type: text}}'), name="s")
    good = parse_recipe(recipe_text("good", "http://a.example/x"), name="g")
    reader = Reader()
    try:
        began = time.monotonic()
        stopped = reader.evaluate(slow, [BIG_PAGE], seconds=1)
        assert time.monotonic() - began < 4
        assert (stopped.reason, stopped.detail) == ("extract_limit", f"xpath '{QUADRATIC}' ran past 1 s on 1 page; "
                                                                     "stopped")
        assert reader.evaluate(good, [BIG_PAGE], seconds=10).text == "7"
    finally:
        reader.close()


def test_a_page_that_needs_more_memory_than_a_recipe_may_use_fails_that_recipe() -> None:
    good = parse_recipe(recipe_text("good", "http://a.example/x"), name="g")
    reader = Reader(memory=32 * 2**20)  # lxml's tree of a 3 MiB page takes more than that
    try:
        outcome = reader.evaluate(good, [BIG_PAGE], seconds=20)
        assert outcome.reason == "extract_limit" and "MiB a recipe may use" in outcome.detail, outcome
        assert reader.evaluate(good, ["<p class='v'>3</p>"], seconds=20).text == "3", "the next one is read"
    finally:
        reader.close()


@pytest.mark.slow  # Chromium, through the crawl's policy proxy
def test_a_rendered_page_that_chromium_follows_to_another_recipes_host_is_not_read(world: dict[str, Any],
                                                                                    tmp_path: Path) -> None:
    """Chromium follows a redirect itself, and the browser's proxy holds it to every recipe's hosts together: recipe
    A's rendered page redirected to recipe B's host reaches it, but is refused by A's own guard, never read as A's
    answer; B, and A's own page, are answered."""
    a, b, witness = world["a"], world["b"], world["witness"]

    def rendered(recipe_id: str, url: str) -> str:
        return recipe_text(recipe_id, url).replace(f"fetch: {{url: {json.dumps(url)}}}",
                                                   f"fetch: {{url: {json.dumps(url)}, render: always}}")

    release = tmp_path / "test.parquet"
    rows = {"a-to-b": rendered("a-to-b", f"{a.url}/to-b.html"), "good-a": rendered("good-a", f"{a.url}/value.html"),
            "good-b": recipe_text("good-b", f"{b.url}/value.html")}
    pl.DataFrame({"recipe_id": list(rows), "recipe": list(rows.values())}).write_parquet(release)
    proc = timelyqa("live", "resolve", "--recipes", release, "--allow-host", "127.0.0.1", "--out", tmp_path / "out")
    assert proc.returncode == 1, proc.stderr  # a-to-b failed
    answers = {r["id"]: r for r in pl.read_parquet(tmp_path / "out" / "answers.parquet").iter_rows(named=True)}
    assert {i: (r["status"], r["answer"] or r["reason"]) for i, r in answers.items()} == {
        "a-to-b": ("failed", "host_not_allowed"), "good-a": ("ok", "1"), "good-b": ("ok", "2")}
    assert f"redirected to {b.url}/value.html (off_site)" in answers["a-to-b"]["detail"]
    assert witness.connections == 0


# ---- a URL with no canonical form (issue 26): its recipe fails, the others are answered ------------------------

@pytest.mark.parametrize(("url", "said"), [
    ("http://127.0.0.1:99999/x", "fetch.url: 'http://127.0.0.1:99999/x' has no canonical form: its port is out of "
                                 "range (1-65535)"),
    ("http://127.0.0.1:0/x", "has no canonical form: port 0 is no port"),
    ("http://example.org:65536/x?d={today}", "has no canonical form: its port is out of range"),
    ("{site}/x", "has no canonical form: its port is out of range"),
])
def test_a_recipe_url_with_no_canonical_form_is_refused_when_the_recipe_is_read(url: str, said: str) -> None:
    with pytest.raises(RecipeError) as caught:
        parse_recipe(recipe_text("r", url, extra='vars: {site: "http://a.example:70000"}\n'), name="r.yaml")
    assert str(caught.value).startswith("r.yaml: fetch.url: ") and said in str(caught.value), str(caught.value)
    assert "\n" not in str(caught.value)


def test_an_origin_from_the_operator_with_no_canonical_form_fails_its_recipe_only() -> None:
    recipe = parse_recipe(recipe_text("r", "{site}/x?d={today}"), name="r.yaml")
    at = datetime(2026, 11, 16, 9, tzinfo=UTC)
    bad = plan(recipe, at, {"site": "http://127.0.0.1:99999"}, now=at)
    assert bad.fail == ("recipe_invalid", "fetch.url: 'http://127.0.0.1:99999/x?d=2026-11-16': its port is out of "
                                          "range (1-65535), cannot canonicalise")
    assert bad.urls == ()


@pytest.mark.slow
def test_live_resolve_answers_every_other_recipe_and_exits_1_when_one_url_cannot_be_canonicalised(
        world: dict[str, Any], tmp_path: Path) -> None:
    a, b = world["a"], world["b"]
    recipes = tmp_path / "recipes"
    recipes.mkdir()
    (recipes / "good-a.yaml").write_text(recipe_text("good-a", f"{a.url}/value.html"))
    (recipes / "good-b.yaml").write_text(recipe_text("good-b", f"{b.url}/value.html"))
    (recipes / "bad-port.yaml").write_text(recipe_text("bad-port", "http://127.0.0.1:99999/value.html"))
    (recipes / "via-var.yaml").write_text(recipe_text("via-var", "{mirror}/value.html"))
    proc = timelyqa("live", "resolve", "--recipes", recipes, "--var", "mirror=http://127.0.0.1:99999",
                    "--out", tmp_path / "out")
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert f"refused: {recipes / 'bad-port.yaml'}: fetch.url: 'http://127.0.0.1:99999/value.html' has no canonical " \
           "form" in " ".join(proc.stderr.split())
    answers = {r["id"]: r for r in pl.read_parquet(tmp_path / "out" / "answers.parquet").iter_rows(named=True)}
    assert {i: (r["status"], r["answer"] or r["reason"]) for i, r in answers.items()} == {
        "good-a": ("ok", "1"), "good-b": ("ok", "2"), "via-var": ("failed", "recipe_invalid")}
    assert "its port is out of range" in answers["via-var"]["detail"]
    assert "2 of 3 recipes answered" in proc.stdout and "1 recipe(s) refused" in proc.stdout

    every = timelyqa("live", "resolve", "--recipes", recipes / "good-a.yaml", "--out", tmp_path / "all")
    assert every.returncode == 0, every.stderr  # all answered
    bad = timelyqa("live", "resolve", "--recipes", recipes / "bad-port.yaml", "--out", tmp_path / "none")
    assert bad.returncode == 2 and "no valid recipe" in bad.stderr  # bad input: nothing to resolve
