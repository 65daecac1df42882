"""The `timelyqa` command as a user runs it: the installed entry point, real files, real exit codes."""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from datetime import timedelta

import datasets
import polars as pl
import pytest

from tests import answer_forms
from tests.mwapi import MediaWikiDouble
from tests.wikiworld import World, make_world, value_at, write_export

pytestmark = pytest.mark.slow  # each test runs the installed command in a new interpreter, most a whole pipeline

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "data" / "demo"
T0, T1 = DEMO / "wikidata-t0.json.gz", DEMO / "wikidata-t1.json.bz2"


def timelyqa(*args: str | Path, cwd: Path = ROOT, env: dict[str, str] | None = None
             ) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("timelyqa")
    env = {**os.environ, "TIMELYQA_QUIET": "1", "COLUMNS": "200", **(env or {})}
    return subprocess.run([str(exe), *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=600, env=env)


def error_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    return lines[0]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_missing_dump_stops_before_any_work(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = timelyqa("wikidata", "--before", tmp_path / "nope.json.gz", "--after", T1, "--out", out)
    assert proc.returncode == 2
    assert "nope.json.gz: no such file" in error_line(proc)
    assert not out.exists()


def test_a_file_that_is_not_a_dump_is_named(tmp_path: Path) -> None:
    page = tmp_path / "page.json.gz"
    with gzip.open(page, "wt") as f:
        f.write("<!doctype html><html><body>Not found</body></html>\n")
    proc = timelyqa("wikidata", "--before", T0, "--after", page, "--out", tmp_path / "out")
    assert proc.returncode == 2
    line = error_line(proc)
    assert "page.json.gz" in line and "not a Wikidata JSON dump" in line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("option", ["--endpoint", "--endpoint-before"])
def test_an_endpoint_that_is_down_stops_before_any_work(tmp_path: Path, option: str) -> None:
    url = f"http://127.0.0.1:{closed_port()}/query"
    proc = timelyqa("wikidata", "--before", T0, "--after", T1, "--out", tmp_path / "out", option, url)
    assert proc.returncode == 2
    assert url in error_line(proc)
    assert not (tmp_path / "out").exists()


def test_a_wrong_setting_is_named(tmp_path: Path) -> None:
    proc = timelyqa("wikidata", "--before", T0, "--after", T1, "--out", tmp_path / "out", "--max-anchors", "0")
    assert proc.returncode == 2
    assert "setting max_anchors" in error_line(proc)


def test_release_of_a_folder_without_outputs_is_refused(tmp_path: Path) -> None:
    proc = timelyqa("release", "--from", tmp_path, "--out", tmp_path / "release")
    assert proc.returncode == 2
    assert str(tmp_path) in error_line(proc)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """One `timelyqa demo` run shared by the tests that read what it wrote."""
    out = tmp_path_factory.mktemp("demo")
    proc = timelyqa("demo", "--out", out)
    assert proc.returncode == 0, proc.stderr
    return out / "release", proc


def test_demo_writes_a_release_that_datasets_loads(demo: tuple[Path, subprocess.CompletedProcess[str]],
                                                    tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    release, proc = demo
    assert f"load_dataset('{release}', 'wikidata', split='test')" in proc.stdout
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    test = datasets.load_dataset(str(release), "wikidata", split="test", cache_dir=str(tmp_path / "cache"))
    everything = datasets.load_dataset(str(release), "default", cache_dir=str(tmp_path / "cache"))
    assert test.num_rows > 0
    assert set(everything) == {"train", "validation", "test"}
    manifest = json.loads((release / "manifest.json").read_text())
    for config in ("default", "wikidata"):  # every config and split the release declares loads offline
        loaded = datasets.load_dataset(str(release), config, cache_dir=str(tmp_path / "cache"))
        assert {split: ds.num_rows for split, ds in loaded.items()} == {
            split: sum(manifest["files"][p]["rows"] for p in paths)
            for split, paths in manifest["configs"][config]["splits"].items()}
    assert {row["level"] for split in everything.values() for row in split if row["source"] == "wikidata"} == {
        "L1", "L2", "L3"}
    assert all(row["verification"]["passed"] and row["verification"]["result_count"] == 1 for row in test)
    assert "funnel" in proc.stderr  # the funnel table is shown to the user


def test_demo_runs_official_sites_as_snapshots_for_training_and_live_recipes_for_test(
        demo: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path) -> None:
    """The test split ships questions with recipes and no answer; resolved at a clock by `timelyqa live resolve` next to
    the evaluated model, a recipe gives what the source's own check gave at that clock."""
    from timelyqa.localsite import LocalSite

    release, proc = demo
    loaded = datasets.load_dataset(str(release), "official_site", cache_dir=str(tmp_path / "cache"))
    assert {split: {row["kind"] for row in rows} for split, rows in loaded.items()} == {
        "train": {"snapshot"}, "validation": {"snapshot"}, "test": {"live"}}
    test = loaded["test"]
    assert all(row["answer"] == "" and row["recipe"].startswith("recipe: 1\n") for row in test)
    assert all(row["question"].startswith("Current time: ") and row["answer"] for row in loaded["train"])
    default = datasets.load_dataset(str(release), "default", cache_dir=str(tmp_path / "cache"))
    assert all(row["answer"] for split in default.values() for row in split), "no live row in default"
    assert "recipe `aldern-flood-warnings` is broken" in (release / "CHANGELOG.md").read_text()
    assert "aldern-flood-warnings" not in set(test["recipe_id"]), "a broken recipe is out of test"

    source = pl.read_parquet(release.parent / "official_site" / "questions.parquet")
    clock = "2026-11-16T09:00:00+00:00"
    checked = {r["recipe_id"]: r["answer"] for r in source.filter(pl.col("kind") == "snapshot").iter_rows(named=True)
               if r["as_of"].isoformat() == clock}
    test_file = release / "official_site" / "test-00000-of-00001.parquet"
    with LocalSite(DEMO / "official" / "site") as site:  # another port than the demo's: the recipe's {site} moves
        proc = timelyqa("live", "resolve", "--recipes", test_file, "--at", clock, "--var",
                        f"site=http://127.0.0.1:{site.port}", "--out", tmp_path / "live")
    assert proc.returncode == 0, proc.stderr
    answers = pl.read_parquet(tmp_path / "live" / "answers.parquet")
    assert set(answers["status"]) == {"ok"} and answers.height == len(set(test["recipe_id"])) >= 2
    assert {r["id"]: r["answer"] for r in answers.iter_rows(named=True)} == {i: checked[i] for i in answers["id"]}


def test_demo_runs_the_wikipedia_source_into_the_release(demo: tuple[Path, subprocess.CompletedProcess[str]],
                                                         tmp_path: Path) -> None:
    release, proc = demo
    assert f"load_dataset('{release}', 'wikipedia', split='test')" in proc.stdout
    wiki = datasets.load_dataset(str(release), "wikipedia", cache_dir=str(tmp_path / "cache"))
    rows = [row for split in wiki.values() for row in split]
    assert set(wiki) == {"train", "validation", "test"} and len(rows) >= 10
    assert {row["level"] for row in rows} == {"frequent_update", "infrequent_update"}
    assert len({row["domain"] for row in rows}) >= 5
    for row in rows:  # every answer is what the bundled history's page held at the window's end
        assert row["page_title"] in row["question"] and row["answer"] and "{{" not in row["answer"]
        assert row["verification"]["method"] == "infobox_rederive" and row["verification"]["passed"]
    rejects = json.loads((release.parent / "wikipedia" / "manifest.json").read_text())["rejects"]
    assert {"setting_key", "reverted_in_window", "file_value"} <= set(rejects)
    # Each released row's recompute rule, applied to the bundled history at the row's as_of, gives its answer.
    as_of = {row["as_of"] for row in rows}
    assert len(as_of) == 1
    out = tmp_path / "answers.parquet"
    proc = timelyqa("wikipedia", "answer", "--date", as_of.pop().isoformat(), "--questions", release,
                    "--dump", DEMO / "wikipedia-history.xml.bz2", "--out", out)
    assert proc.returncode == 0, proc.stderr
    answers = pl.read_parquet(out)
    assert answers.height == len(rows) and not answers["changed"].any()


def test_the_demo_inputs_are_what_their_scripts_write(tmp_path: Path) -> None:
    """data/demo is made by scripts; a hand edit to a file, or a script changed without running it, shows here."""
    for script in ("make_demo_dumps.py", "make_demo_wiki.py", "make_demo_site.py", "make_demo_news.py",
                   "make_demo_official.py"):
        subprocess.run([sys.executable, str(ROOT / "scripts" / script), str(tmp_path)], check=True,
                       capture_output=True, timeout=120)
    made = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert made == sorted(str(p.relative_to(DEMO)) for p in DEMO.rglob("*") if p.is_file())
    for name in made:
        assert (tmp_path / name).read_bytes() == (DEMO / name).read_bytes(), name


def test_demo_runs_the_news_source_into_the_release(demo: tuple[Path, subprocess.CompletedProcess[str]],
                                                    tmp_path: Path) -> None:
    """The bundled archive's nine portal days in both wikitext forms, its outlets crawled on their own hosts: one
    question an event, each answered in the article its evidence names, split by event date; bodies not shipped."""
    release, proc = demo
    assert f"load_dataset('{release}', 'news', split='test')" in proc.stdout
    news = datasets.load_dataset(str(release), "news", cache_dir=str(tmp_path / "cache"))
    rows = [row for split in news.values() for row in split]
    assert set(news) == {"train", "validation", "test"} and len(rows) == 9
    assert "text" not in news["test"].column_names  # the articles belong to their outlets
    articles = {row["url"]: row for row in pl.read_parquet(release.parent / "news" / "articles.parquet").to_dicts()}
    for row in rows:
        article = articles[row["article_url"]]
        assert row["evidence"][0]["sha256"] == article["sha256"] and row["outlet"] == article["outlet"]
        assert row["answer"].rstrip("%").split()[0] in article["text"]
        split = {"2026-10": "test", "2026-11": "test", "2026-09": "validation"}.get(str(row["event_date"])[:7], "train")
        assert split in news and row in list(news[split])
    assert any(row["outlet"] == "Port Alder Times" and row["event_date"].isoformat() == "2026-09-09" for row in rows)
    rejects = json.loads((release.parent / "news" / "manifest.json").read_text())["rejects"]
    assert {k: rejects[k] for k in ("outlet_not_allowed", "dead_link", "not_article", "outside_window")} == {
        "outlet_not_allowed": 1, "dead_link": 1, "not_article": 1, "outside_window": 1}


def test_export_commands_write_rows_the_rewards_accept(demo: tuple[Path, subprocess.CompletedProcess[str]],
                                                       tmp_path: Path) -> None:
    release = demo[0]
    from timelyqa.rewards import answer_reward, compute_score

    proc = timelyqa("export", "verl", release, "--out", tmp_path / "verl")
    assert proc.returncode == 0, proc.stderr
    verl = datasets.load_dataset("parquet", data_files=str(tmp_path / "verl" / "train.parquet"), split="train",
                                 cache_dir=str(tmp_path / "cache"))
    assert verl.num_rows > 0
    for row in verl:
        right = f"<answer>{row['extra_info']['answer']}</answer>"
        assert compute_score(row["data_source"], right, row["reward_model"]["ground_truth"], row["extra_info"]) == 1.0
        assert compute_score(row["data_source"], "<answer>no idea</answer>", row["reward_model"]["ground_truth"]) == 0.0
    proc = timelyqa("export", "trl", release, "--out", tmp_path / "trl", "--split", "test")
    assert proc.returncode == 0, proc.stderr
    trl = datasets.load_dataset("parquet", data_files=str(tmp_path / "trl" / "test.parquet"), split="train",
                                cache_dir=str(tmp_path / "cache"))
    assert answer_reward([f"<answer>{a}</answer>" for a in trl["answer"]], trl["answer"], trl["answer_aliases"],
                         trl["answer_type"], trl["answer_value"]) == [1.0] * trl.num_rows


def test_every_demo_training_row_grades_its_gold_in_every_other_form_and_a_wrong_value_wrong(
        demo: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path) -> None:
    """As a trainer calls it: the verl export of the train and validation splits, read with datasets, scored by the
    reward file loaded by path (verl's custom_reward_function) with verl's keywords. Each row's gold written the
    other ways a prompt-following model writes it scores 1.0; the same forms with a wrong value score 0.0."""
    release = demo[0]
    spec = importlib.util.spec_from_file_location("custom_module", ROOT / "timelyqa" / "rewards.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    graded: dict[str, int] = {}
    for split in ("train", "validation"):
        proc = timelyqa("export", "verl", release, "--out", tmp_path / split, "--split", split)
        assert proc.returncode == 0, proc.stderr
        rows = list(datasets.load_dataset("parquet", data_files=str(tmp_path / split / f"{split}.parquet"),
                                          split="train", cache_dir=str(tmp_path / "cache")))
        assert rows
        others = [r["extra_info"]["answer"] for r in rows]
        for row in rows:
            truth = row["reward_model"]["ground_truth"]
            gold = {"answer": truth["target"][0], "answer_type": truth["answer_type"],
                    "answer_value": truth["answer_value"]}
            assert gold["answer_type"] in ("entity", "number", "quantity", "date", "list", "text"), row["extra_info"]

            def score(form: str) -> float:
                return module.compute_score(data_source=row["data_source"], solution_str=f"<answer>{form}</answer>",
                                            ground_truth=truth, extra_info=row["extra_info"],
                                            reward_router_address=None, reward_model_tokenizer=None)

            for form in answer_forms.right_forms(gold):
                assert score(form) == 1.0, (row["extra_info"]["question"], gold["answer"], form)
            for form in answer_forms.wrong_forms(gold, others):
                assert score(form) == 0.0, (row["extra_info"]["question"], gold["answer"], form)
            graded[gold["answer_type"]] = graded.get(gold["answer_type"], 0) + 1
    # The demo's training rows span the types a benchmark user meets.
    assert {"entity", "number", "quantity", "date", "list"} <= set(graded), graded


def test_eval_scores_known_answers_on_the_demo_release_and_resolves_its_live_rows_at_two_clocks(
        demo: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path) -> None:
    """A scripted agent's predictions whose verdicts are known: each fixed test row of `default` gets, in turn, its
    gold in another form (right), a wrong value, an empty answer or nothing; each live row the answer the official
    source's own check gave at the clock. Scored at two clocks against the bundled official site, every verdict and
    the report's accuracy are what the script says."""
    from timelyqa.localsite import LocalSite

    release = demo[0]
    default = pl.read_parquet(sorted((release / "default").glob("test-*.parquet"))).to_dicts()
    live = pl.read_parquet(sorted((release / "official_site").glob("test-*.parquet"))).to_dicts()
    snapshots = pl.read_parquet(release.parent / "official_site" / "questions.parquet").filter(
        pl.col("kind") == "snapshot")
    others = [r["answer"] for r in default]
    expected: dict[str, str] = {}
    fixed: list[str] = []
    for index, row in enumerate(default):
        gold = {k: row[k] for k in ("answer", "answer_type", "answer_value")}
        kind = index % 4
        if kind == 0:
            fixed.append(json.dumps({"id": row["id"], "answer": answer_forms.right_forms(gold)[-1]}))
            expected[row["id"]] = "correct"
        elif kind == 1:
            fixed.append(json.dumps({"id": row["id"], "answer": answer_forms.wrong_forms(gold, others)[0]}))
            expected[row["id"]] = "wrong"
        elif kind == 2:
            fixed.append(json.dumps({"id": row["id"], "completion": "I cannot say."}))
            expected[row["id"]] = "wrong"  # a refusal is an answer, and not the right one
        else:
            expected[row["id"]] = "no_prediction"
    clocks = sorted({r["as_of"] for r in snapshots.iter_rows(named=True)})[-2:]
    assert len(clocks) == 2
    with LocalSite(DEMO / "official" / "site") as site:
        for clock in clocks:
            checked = {r["recipe_id"]: r["answer"] for r in snapshots.iter_rows(named=True) if r["as_of"] == clock}
            lines = fixed + [json.dumps({"id": r["id"], "answer": checked[r["recipe_id"]]}) for r in live]
            predictions = tmp_path / f"{clock:%H%M%d}.jsonl"
            predictions.write_text("\n".join(lines) + "\n")
            out = tmp_path / f"eval-{clock:%d}"
            proc = timelyqa("eval", release, "--predictions", predictions, "--at", clock.isoformat(), "--var",
                            f"site=http://127.0.0.1:{site.port}", "--out", out)
            assert proc.returncode == 0, proc.stderr
            results = pl.read_parquet(out / "results.parquet")
            verdicts = dict(zip(results["id"], results["verdict"], strict=True))
            assert {i: verdicts[i] for i in expected} == expected
            resolved = results.filter(pl.col("config") == "official_site")
            assert resolved.height == len(live) and set(resolved["verdict"]) == {"correct"}, resolved.select(
                "id", "verdict", "reason")
            assert all(a == checked[r["recipe_id"]] for a, r in zip(resolved["answer"], live, strict=True))
            right = sum(v == "correct" for v in expected.values()) + len(live)
            report = (out / "report.md").read_text()
            assert f"| all | {right / (len(expected) + len(live)):.1%} |" in report
            assert f"{len(live)} official_site" not in report and f"clock: {clock.isoformat()}" in report


def test_the_readmes_demo_questions_are_in_the_demo_release(demo: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    """docs/demo.md shows questions of each source "as they are": each one, with its answer and type, is a row of the
    release `make demo` writes, so the page changes when the questions do; so are the README's examples."""
    release = demo[0]
    section = (ROOT / "docs/demo.md").read_text(encoding="utf-8").split("## Questions from the demo, as they are", 1)[1]
    section = section.split("\n## ", 1)[0]
    shown: dict[str, list[tuple[str, str, str]]] = {}
    source = ""
    for line in section.splitlines():
        if line.startswith("**") and line.endswith("**"):
            source = line.strip("*")
        elif line.startswith("- "):
            question, _, rest = line[2:].rpartition(" → ")
            answer, _, kind = rest.rpartition(" (")
            shown.setdefault(source, []).append((question, answer, kind.rstrip(")")))
    assert set(shown) == {"wikidata", "wikipedia", "site_tree", "news", "official_site"}
    for source, rows in shown.items():
        frame = pl.concat([pl.read_parquet(p) for p in sorted((release / source).glob("*.parquet"))],
                          how="diagonal_relaxed")
        released = {(q.removeprefix("On the Lakeside Institute of Data Science website, "),
                     a or "(live: resolved when asked)", t)
                    for q, a, t in frame.select("question", "answer", "answer_type").iter_rows()}
        missing = [row for row in rows if row not in released]
        assert not missing, (source, missing)
        # Ten of each, or all when a source has fewer; the official sites by recipe (one row each, of every clock).
        whole = frame.select("recipe_id", "kind").n_unique() if source == "official_site" else frame.height
        assert len(rows) == min(10, whole), source
    readme = (ROOT / "README.md").read_text(encoding="utf-8").split("A question of each source", 1)[1]
    examples = [" ".join(item.split()).rpartition(" → ")[0]
                for item in readme.split("\n## ", 1)[0].split("\n- ")[1:]]
    questions = set(pl.concat([pl.read_parquet(p) for p in sorted(release.glob("*/*.parquet"))],
                              how="diagonal_relaxed")["question"])
    assert len(examples) == 5 and not [q for q in examples if q not in questions], examples


def test_export_of_a_missing_config_names_it(demo: tuple[Path, subprocess.CompletedProcess[str]],
                                             tmp_path: Path) -> None:
    proc = timelyqa("export", "verl", demo[0], "--out", tmp_path / "x", "--config", "bulletin")
    assert proc.returncode == 2
    assert "no config 'bulletin'" in error_line(proc)


# timelyqa wikipedia ----------------------------------------------------------------------------------------

UA = "timelyqa-tests/0.1 (https://example.org/timelyqa; tests@example.org)"


@pytest.fixture(scope="module")
def wiki(tmp_path_factory: pytest.TempPathFactory) -> tuple[World, Path]:
    world = make_world(21, pages=24)
    return world, write_export(world.pages, tmp_path_factory.mktemp("wiki") / "history.xml.bz2")


def test_wikipedia_from_a_dump_then_answers_on_other_dates(wiki: tuple[World, Path], tmp_path: Path) -> None:
    world, dump = wiki
    out = tmp_path / "wikipedia"
    proc = timelyqa("wikipedia", "--dump", dump, "--start", world.start.isoformat(), "--end", world.end.isoformat(),
                    "--out", out)
    assert proc.returncode == 0, proc.stderr
    questions = pl.read_parquet(out / "questions.parquet")
    assert questions.height > 5 and f"{questions.height} questions in" in proc.stdout
    assert "funnel" in proc.stderr and "pages_changed_in_window" in proc.stderr
    by_title = {p.title: p for p in world.pages}
    for day in (world.start - timedelta(days=20), world.end + timedelta(days=3)):
        answers_file = tmp_path / f"answers-{day:%Y%m%d}.parquet"
        proc = timelyqa("wikipedia", "answer", "--date", f"{day:%Y-%m-%d}", "--questions", out, "--dump", dump,
                        "--out", answers_file)
        assert proc.returncode == 0, proc.stderr
        answers = pl.read_parquet(answers_file).join(questions.select("id", "page_title", "infobox_key"), on="id")
        assert answers.height == questions.height
        day_end = day + timedelta(days=1, seconds=-1)  # a date answers as of its last second
        for row in answers.iter_rows(named=True):
            assert row["answer"] == value_at(by_title[row["page_title"]], row["infobox_key"], day_end), row
            assert row["changed"] == (row["answer"] != row["answer_as_of"])
        assert f"{answers.height} questions" in proc.stdout
    # Before the window most answers differ (they changed in it); after it most still hold.
    before = pl.read_parquet(tmp_path / f"answers-{world.start - timedelta(days=20):%Y%m%d}.parquet")
    assert before.filter(pl.col("changed")).height > questions.height / 2


def test_wikipedia_over_the_api_gives_the_questions_of_the_dump(wiki: tuple[World, Path], tmp_path: Path) -> None:
    world, dump = wiki
    window = ["--start", world.start.isoformat(), "--end", world.end.isoformat()]
    assert timelyqa("wikipedia", "--dump", dump, *window, "--out", tmp_path / "dump").returncode == 0
    with MediaWikiDouble(world.pages) as double:
        proc = timelyqa("wikipedia", "--api", double.endpoint, "--user-agent", UA, *window, "--out", tmp_path / "api")
        assert proc.returncode == 0, proc.stderr
        assert {r.headers.get("User-Agent") for r in double.requests} == {UA}
    columns = ["id", "question", "answer", "event_date", "level", "domain", "revision_id", "recompute"]
    from_dump = pl.read_parquet(tmp_path / "dump" / "questions.parquet").select(columns)
    from_api = pl.read_parquet(tmp_path / "api" / "questions.parquet").select(columns)
    assert from_api.equals(from_dump)
    manifest = json.loads((tmp_path / "api" / "manifest.json").read_text())
    assert manifest["inputs"] == {"api": {"path": None, "url": double.endpoint, "sha256": None}} and manifest["usage"]["api_requests"] > 0
    # Answers on another date from the live wiki are those of the dump.
    day = f"{world.end + timedelta(days=2):%Y-%m-%d}"
    ask = ["wikipedia", "answer", "--date", day, "--questions", tmp_path / "api"]
    assert timelyqa(*ask, "--dump", dump, "--out", tmp_path / "by-dump.parquet").returncode == 0
    with MediaWikiDouble(world.pages) as double:
        proc = timelyqa(*ask, "--api", double.endpoint, "--user-agent", UA, "--out", tmp_path / "by-api.parquet")
        assert proc.returncode == 0, proc.stderr
    by_api, by_dump = (pl.read_parquet(tmp_path / f"by-{k}.parquet") for k in ("api", "dump"))
    assert by_api.equals(by_dump) and by_api["answer"].drop_nulls().len() > 0


@pytest.mark.parametrize(("args", "says"), [
    (["--dump", "{missing}"], "no such file"),
    (["--dump", "{not_xml}"], "not a MediaWiki XML export"),
    (["--dump", "{dump}", "--api", "https://en.wikipedia.org/w/api.php"], "give one of --dump FILE or --api URL"),
    (["--api", "https://en.wikipedia.org/w/api.php"], "TIMELYQA_WIKIPEDIA_API_USER_AGENT"),
    (["--api", "https://en.wikipedia.org/w/api.php", "--user-agent", "bot"], "no contact details"),
    (["--api", "http://127.0.0.1:9/index.html", "--user-agent", UA], "not an Action API URL"),
    (["--dump", "{dump}", "--start", "2026-13-01"], "--start '2026-13-01' is not a date"),
    (["--dump", "{dump}", "--end", "2026-01-01"], "the start must come before the end"),
    (["--dump", "{dump}", "--cap-per-domain", "0"], "setting cap_per_domain 0: Input should be greater than or equal to 1"),
])
def test_wikipedia_bad_input_stops_before_any_work_in_one_line(wiki: tuple[World, Path], tmp_path: Path,
                                                               args: list[str], says: str) -> None:
    world, dump = wiki
    not_xml = tmp_path / "dump.json"
    not_xml.write_text('[\n{"id": "Q1"}\n]\n')
    paths = {"missing": tmp_path / "nope.xml", "not_xml": not_xml, "dump": dump}
    window = {"--start": world.start.isoformat(), "--end": world.end.isoformat()}
    given = [a.format(**paths) for a in args]
    for option, value in window.items():
        if option not in given:
            given += [option, value]
    # No User-Agent from the developer's environment: every case must stop before any request leaves 127.0.0.1.
    proc = timelyqa("wikipedia", *given, "--out", tmp_path / "out", env={"TIMELYQA_WIKIPEDIA_API_USER_AGENT": ""})
    assert proc.returncode == 2
    assert says in error_line(proc)
    assert not (tmp_path / "out").exists()


def test_wikipedia_answer_of_something_that_holds_no_questions_is_named(wiki: tuple[World, Path],
                                                                        tmp_path: Path) -> None:
    proc = timelyqa("wikipedia", "answer", "--date", "2026-03-01", "--questions", tmp_path, "--dump", wiki[1],
                    "--out", tmp_path / "a.parquet")
    assert proc.returncode == 2
    assert f"{tmp_path}: no Wikipedia questions" in error_line(proc)


def test_wikipedia_with_the_llm_writer_configured_by_the_environment_reruns_without_calls(tmp_path: Path) -> None:
    """Models behind scripted OpenAI-compatible servers (test doubles; tests/test_llm_real.py runs a real one)."""
    from tests.llmserver import ScriptedLLM
    from tests.test_wikipedia_llm import END, SCRIPT, START, _player, checker_script, writer_script

    dump = write_export([_player(n, title) for n, title in enumerate(SCRIPT, start=1)], tmp_path / "players.xml")
    with ScriptedLLM(models=("writer-7b",), default=writer_script) as writer, \
            ScriptedLLM(models=("checker-8b",), default=checker_script) as checker:
        env = {"TIMELYQA_LLM_BASE_URL": writer.url, "TIMELYQA_LLM_MODEL": "writer-7b", "TIMELYQA_LLM_BACKOFF": "0",
               "TIMELYQA_LLM_API_KEY": "sk-test-0d9f1e", "TIMELYQA_CHECK_LLM_BASE_URL": checker.url,
               "TIMELYQA_CHECK_LLM_MODEL": "checker-8b"}
        args = ["wikipedia", "--dump", dump, "--start", START.isoformat(), "--end", END.isoformat(),
                "--generator", "llm", "--out", tmp_path / "out"]
        first = timelyqa(*args, env=env)
        calls = writer.calls + checker.calls
        again = timelyqa(*args, env=env)
        assert first.returncode == 0 and again.returncode == 0, first.stderr + again.stderr
        assert calls > len(SCRIPT) and writer.calls + checker.calls == calls, "the re-run is answered by the cache"
        assert (tmp_path / "out" / "llm-cache").is_dir()
        assert all("sk-test-0d9f1e" not in text for text in (first.stdout, first.stderr, again.stderr))
        wrong = timelyqa(*args, env={**env, "TIMELYQA_LLM_MODEL": "writer-70b"})
    questions = pl.read_parquet(tmp_path / "out" / "questions.parquet")
    assert questions["page_title"].to_list() == ["Ana Lima"]
    assert questions["generator"].to_list() == ["dailyqa_query_writer_v1+wikipedia_unit_phrase_v1+llm:writer-7b"]
    assert wrong.returncode == 2 and "does not serve model 'writer-70b'" in error_line(wrong)
