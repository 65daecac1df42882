"""`make bench` end to end on a tiny size: every figure lands in bench.json, both verifications agree, and the crawl
part crawls, parses and renders. Speeds are the bench's to report, never a test's to assert."""

from __future__ import annotations

import gzip
import json
import random
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "scripts" / "bench.py"
sys.path.insert(0, str(ROOT / "scripts"))

from synthetic_dumps import dump_pair  # noqa: E402

from timelyqa.wikidata.dump import BadLine, DumpReader  # noqa: E402
from timelyqa.wikidata.statements import read_statements, read_truthy  # noqa: E402


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, float], str, Path]:
    tmp = tmp_path_factory.mktemp("bench")
    out = tmp / "out" / "bench.json"
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--triples", "20000", "--verify-triples", "20000", "--questions", "150",
         "--crawl-pages", "100", "--render-pages", "10", "--realsite-depth", "1", "--scale-triples", "20000", "--cache", str(tmp / "cache"), "--out", str(out),
         "--no-fail"],
        capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return json.loads(out.read_text()), proc.stdout, tmp / "cache"


@pytest.mark.slow
def test_bench_writes_every_figure_as_a_positive_number(bench: tuple[dict[str, float], str, Path]) -> None:
    figures, _, _ = bench
    expected = {"scan_seconds", "delta_seconds", "delta_over_scan", "delta_peak_rss_mb", "triples_t0", "triples_t1",
                "verify_batched_qps", "verify_single_qps", "verify_speedup", "verify_questions", "verify_agreeing",
                "delta_entities_per_cpu_second", "delta_fine_peak_rss_mb", "delta_rss_mb_per_bucket_mb"}
    assert expected <= figures.keys()
    fitted = ("delta_rss_mb_per_bucket_mb", "delta_rss_base_mb")  # a fitted line's slope and base may be 0
    bad = {k: v for k, v in figures.items()
           if k not in ("crawl", "realsite", "extract", "grade", "scale")
           and (isinstance(v, bool) or not isinstance(v, int | float) or v <= 0)
           and not (k in fitted and v == 0)}
    assert not bad
    # The projection's figures: a rate per core from both dumps' entities, and a second run with 4x the buckets.
    assert figures["delta_fine_buckets"] == 4 * figures["delta_buckets"]
    assert figures["delta_entities_per_cpu_second"] == pytest.approx(
        (figures["entities_t0"] + figures["entities_t1"]) / figures["delta_cpu_seconds"], rel=0.02)
    # The delta really ran on dumps of the asked size, and found a few % of the triples changed.
    assert 15_000 < figures["triples_t0"] < 25_000
    assert 0.01 * figures["triples_t1"] < figures["delta_triples"] < 0.1 * figures["triples_t1"]
    # The ratio is computed before the seconds are rounded for printing: on tiny runs that is a few %.
    assert figures["delta_over_scan"] == pytest.approx(figures["delta_seconds"] / figures["scan_seconds"], rel=0.05)


@pytest.mark.slow
def test_batched_and_single_verification_agree_on_every_question(bench: tuple[dict[str, float], str, Path]) -> None:
    figures, stdout, _ = bench
    assert figures["verify_questions"] >= 100
    assert figures["verify_single_questions"] == figures["verify_questions"]
    assert figures["verify_agreeing"] == figures["verify_questions"]
    assert sum(figures[f"verify_questions_L{n}"] for n in (1, 2, 3)) == figures["verify_questions"]
    assert "same outcome both ways" in stdout and "delta / scan" in stdout


@pytest.mark.slow
def test_bench_times_the_news_extraction_beside_trafilatura_on_the_benchmark(bench: tuple[dict, str, Path]) -> None:
    figures, stdout, _ = bench
    extract = figures["extract"]
    assert extract["pages"] == 181
    # Both ways scored by the benchmark's metric in the same run: the pipeline's gain is what the gate pins.
    assert extract["pipeline_f1"] >= extract["trafilatura_f1"] >= 0.96
    assert extract["pipeline_over_trafilatura"] == pytest.approx(
        extract["pipeline_seconds"] / extract["trafilatura_seconds"], rel=0.02)
    assert "pipeline / trafilatura time" in stdout


@pytest.mark.slow
def test_bench_crawls_the_whole_site_parses_it_alone_alike_and_renders(bench: tuple[dict, str, Path]) -> None:
    figures, stdout, cache = bench
    crawl = figures["crawl"]
    rates = {"crawl_pages_per_s", "parse_pages_per_s", "crawl_over_parse", "rendered_pages_per_s"}
    assert rates | {"crawl_seconds", "parse_seconds", "crawl_cpu_seconds", "rendered_seconds"} <= crawl.keys()
    assert all(isinstance(crawl[k], float) and crawl[k] > 0 for k in rates)
    # Every page of the site was crawled, parsed alone to the same clickables and content, and 10 were rendered.
    assert crawl["site_pages"] == crawl["crawl_pages"] == crawl["parse_pages"] == crawl["parse_same_as_crawl"] == 100
    assert crawl["rendered_pages"] == 10
    assert crawl["crawl_over_parse"] == pytest.approx(crawl["crawl_pages_per_s"] / crawl["parse_pages_per_s"], rel=0.01)
    assert "crawl / parse alone" in stdout and "rendered through Chromium" in stdout
    # the store's end over a journal of as many pages and over a quarter of it, each in a process of its own
    assert crawl["store_pages"] == 100 and crawl["store_journal_mb"] > 9 and crawl["store_held_mb"] >= 0
    assert crawl["store_quarter_held_mb"] >= 0 and crawl["store_growth_over_journal"] >= 0
    assert "the store's end:" in stdout and "of the journal's growth" in stdout
    assert not (cache / "crawl-work").exists(), "the site and the crawls are removed after the run"


@pytest.mark.slow  # two crawls of the documentation's index and the 22 pages it links to: about 15 s here
def test_the_real_site_bench_crawls_the_python_docs_both_ways_to_the_same_depth(tmp_path: Path,
                                                                                capsys: pytest.CaptureFixture) -> None:
    import bench_realsite

    real = bench_realsite.measure(tmp_path / "work", depth=1, repeat=1)
    assert real["depth"] == 1 and real["site_pages"] > 500  # Debian's python3.11-doc, crawled one click deep
    # Both reached the index and the pages it links to; ours every page the plain one reached, none in error.
    assert 20 < real["plain_pages"] <= real["ours_pages"] < 60 and real["plain_pages_ours_missed"] == 0
    assert real["ours_errors"] == 0
    for who in ("ours", "plain"):
        assert real[f"{who}_pages_per_s"] > 0 and real[f"{who}_cpu_seconds"] > 0
        assert real[f"{who}_cpu_ms_per_page"] == pytest.approx(
            1000 * real[f"{who}_cpu_seconds"] / real[f"{who}_pages"], rel=0.02)
    assert real["ours_over_plain"] == pytest.approx(real["ours_pages_per_s"] / real["plain_pages_per_s"], rel=0.02)
    for workers in (1, 2):  # the extraction stage after the crawl read every page it fetched, with 1 and 2 workers
        stage = {k.removeprefix(f"extract_{workers}_"): v for k, v in real.items() if k.startswith(f"extract_{workers}_")}
        assert stage["pages"] == real["ours_pages"] and stage["failed"] == 0 and stage["pages_per_s"] > 0
        assert stage["cpu_ms_per_page"] == pytest.approx(1000 * stage["cpu_seconds"] / stage["pages"], rel=0.02)
    missed = bench_realsite.report(real)
    assert ("site-tree / plain pages/s" in capsys.readouterr().out
            and (real["ours_over_plain"] >= 0.8) == (not any("ours_over_plain" in m for m in missed)))
    assert not (tmp_path / "work").exists(), "both crawls are removed after the run"


def test_the_plain_crawl_of_the_real_site_bench_keeps_the_products_politeness() -> None:
    """The ratio measures our cost a page only if both crawls go at the same pace: robots.txt, AutoThrottle,
    concurrency and the User-Agent of the product's settings, each passed to the plain crawl."""
    import bench_realsite

    import spiders.settings as product

    plain = bench_realsite.plain_settings()
    assert plain["ROBOTSTXT_OBEY"] is True and plain["AUTOTHROTTLE_ENABLED"] is True
    assert {k: getattr(product, k) for k in ("CONCURRENT_REQUESTS", "CONCURRENT_REQUESTS_PER_DOMAIN",
                                             "AUTOTHROTTLE_START_DELAY", "AUTOTHROTTLE_TARGET_CONCURRENCY",
                                             "USER_AGENT")}.items() <= plain.items()


@pytest.mark.slow
def test_bench_times_the_typed_grade_beside_plain_exact_match_on_the_same_pairs(bench: tuple[dict, str, Path]) -> None:
    figures, stdout, _ = bench
    grade = figures["grade"]
    assert grade["rows"] == 20 * grade["pairs"] and grade["typed_rows_per_s"] > 0 and grade["exact_rows_per_s"] > 0
    assert grade["typed_over_exact"] == pytest.approx(grade["typed_seconds"] / grade["exact_seconds"], rel=0.01)
    assert "grader: rows per second, typed grade vs plain exact match" in stdout


def test_the_grader_bench_grades_the_same_pairs_both_ways_and_only_the_typed_grade_takes_every_right_form() -> None:
    import bench_grade

    cases = bench_grade.pairs()
    kinds = {truth["answer_type"] for _, truth, _ in cases}
    assert kinds == {"entity", "number", "quantity", "date", "list", "text"}
    grade = bench_grade.measure(rounds=1)
    assert grade["pairs"] == grade["rows"] == len(cases) and 0 < grade["right_forms"] < len(cases)
    wrong = grade["pairs"] - grade["right_forms"]
    # The typed grade takes every right form (converted units, other date forms, lists reordered) and no wrong one;
    # plain exact match refuses the wrong ones too, but also the forms no alias spells.
    assert grade["typed_right_taken"] == grade["right_forms"] and grade["typed_wrong_refused"] == wrong
    assert grade["exact_wrong_refused"] == wrong and grade["exact_right_taken"] < grade["right_forms"]


@pytest.mark.slow
def test_synthetic_dumps_are_real_dump_format_and_cached(bench: tuple[dict[str, float], str, Path]) -> None:
    _, _, cache = bench
    meta = next(cache.glob("*-20000-seed0-*/meta.json"))
    written = meta.stat().st_mtime_ns
    pair = dump_pair(cache, triples=20000)  # the bench's own pair: found in the cache, not written again
    assert pair.t0.parent == meta.parent and meta.stat().st_mtime_ns == written
    with gzip.open(pair.t1, "rb") as f:
        lines = f.read().split(b"\n")
    assert lines[0] == b"[" and lines[-2] == b"]" and lines[-1] == b""
    body = lines[1:-2]
    assert all(line.endswith(b",") for line in body[:-1]) and not body[-1].endswith(b",")
    items = [orjson.loads(line.rstrip(b",")) for line in body]
    human = next(e for e in items if e.get("claims", {}).get("P31", [{}])[0].get("mainsnak", {})
                 .get("datavalue", {}).get("value", {}).get("id") == "Q5")
    statement = human["claims"]["P31"][0]
    assert {"mainsnak", "type", "id", "rank"} <= statement.keys() and statement["id"].startswith(human["id"] + "$")
    assert len(human["labels"]) >= 1 and "sitelinks" in human and human["modified"].endswith("Z")
    assert any("references" in st for claims in human["claims"].values() for st in claims)
    assert any(b"\\/" in line for line in body)  # "/" escaped as Wikidata's dumps write it


def test_synthetic_dumps_are_deterministic_by_seed(tmp_path: Path) -> None:
    a = dump_pair(tmp_path / "a", triples=3000, seed=7)
    b = dump_pair(tmp_path / "b", triples=3000, seed=7)
    c = dump_pair(tmp_path / "c", triples=3000, seed=8)
    assert a.t0.read_bytes() == b.t0.read_bytes() and a.t1.read_bytes() == b.t1.read_bytes()
    assert a.t0.read_bytes() != c.t0.read_bytes()
    assert a.t0.read_bytes() != a.t1.read_bytes()


# The optimised readers the bench drove must say exactly what the plain ones say.

def _claim(rank: object, snak: object, sid: str | None = "Q1$x") -> dict[str, object]:
    claim: dict[str, object] = {"mainsnak": snak, "type": "statement"}
    if rank is not None:
        claim["rank"] = rank
    if sid:
        claim["id"] = sid
    return claim


def _value(datavalue: object) -> dict[str, object]:
    return {"snaktype": "value", "property": "P1", "datavalue": datavalue}


ITEM = {"type": "wikibase-entityid", "value": {"entity-type": "item", "numeric-id": 5, "id": "Q5"}}
NUMERIC = {"type": "wikibase-entityid", "value": {"entity-type": "item", "numeric-id": 7}}
TRICKY = [
    _claim("normal", _value(ITEM)), _claim("preferred", _value(NUMERIC)), _claim("deprecated", _value(ITEM)),
    _claim(None, _value({"type": "string", "value": "x"})), _claim("bogus", _value(ITEM)), _claim(["x"], _value(ITEM)),
    _claim("normal", {"snaktype": "somevalue"}), _claim("preferred", {"snaktype": "novalue"}),
    _claim("normal", "not a snak"), _claim("normal", {"snaktype": "value"}),
    _claim("normal", _value({"type": "wikibase-entityid", "value": {"id": "Q0"}})),
    _claim("normal", _value({"type": "string", "value": 3})), _claim("normal", _value({"type": "globe"})),
    _claim("normal", _value({"type": "time", "value": {"time": "+2001-02-03T00:00:00Z", "precision": 11}})),
    _claim("normal", _value({"type": "quantity", "value": {"amount": "+1.5", "unit": "1"}}), sid=None),
    "not a claim",
]


def test_column_reader_agrees_with_read_statements() -> None:
    rng = random.Random(0)
    for n in range(3000):
        claims: dict[str, object] = {f"P{j}": rng.sample(TRICKY, rng.randrange(0, 5)) for j in range(rng.randrange(5))}
        if n % 50 == 0:
            claims["P99"] = "not a list"
        entity = {"id": f"Q{n + 1}", "claims": claims}
        expected = read_statements(entity)
        s, p, o, k, bad = ["kept"], ["kept"], ["kept"], ["kept"], []  # columns already hold earlier rows
        counts = read_truthy(entity, s, p, o, k, bad)
        assert list(zip(s[1:], p[1:], o[1:], k[1:], strict=True)) == [
            (st.subject, st.prop, st.form, st.kind.value) for st in expected.truthy]
        assert counts == (len(expected.statements), len(expected.truthy), expected.other_snaks)
        assert bad == expected.bad and s[0] == "kept"


def test_dump_reader_reads_concatenated_members_and_reports_a_cut_file(tmp_path: Path) -> None:
    lines = [b'{"type":"item","id":"Q%d","claims":{}}' % i for i in range(1, 2001)]
    body = b"[\n" + b",\n".join(lines) + b"\n]\n"
    whole = tmp_path / "members.json.gz"
    whole.write_bytes(gzip.compress(body[:30_000]) + b"\0" * 8 + gzip.compress(body[30_000:]))
    assert [e["id"] for e in DumpReader(whole)] == [f"Q{i}" for i in range(1, 2001)]
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(gzip.compress(body, compresslevel=1)[:-2000])
    items = list(DumpReader(cut))
    assert isinstance(items[-1], BadLine) and items[-1].reason == "truncated_file"
    assert 0 < len(items) - 1 < 2000 and all(isinstance(e, dict) for e in items[:-1])
