"""Every source refreshes its released rows through one helper: each keeps a row still true, retires a changed row
with its reason, and a row whose check raises costs that row alone, retired as `recheck_failed` naming the error.
Real inputs: N-Triples served by a local Oxigraph (Wikidata), a MediaWiki XML export (Wikipedia), a later crawl's
pages (site trees)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from tests.wikiworld import Rev, WikiPage, write_export
from timelyqa.errors import TransientSourceError
from timelyqa.reasons import Dropped
from timelyqa.refresh import NO_VERDICT, refresh, verdicts
from timelyqa.site_tree import refresh as site_tree
from timelyqa.stages import StageWriter
from timelyqa.wikidata import refresh as wikidata
from timelyqa.wikidata.query import PREFIXES
from timelyqa.wikipedia import refresh as wikipedia
from timelyqa.wikipedia.answer import Rule

WD = "http://www.wikidata.org/entity/"
AS_OF = datetime(2026, 3, 8, tzinfo=UTC)


def finished(source: str, out: Path, work: Path) -> tuple[dict, dict[str, tuple[str, str]], set[str]]:
    """What a user of the run sees: the manifest, the rejects of stage `refresh` by row id, rechecked.parquet's ids."""
    manifest = StageWriter.resume(source, out, work=work).finish(as_of=AS_OF, inputs={}, settings={})
    rejected = pl.read_parquet(out / "rejected.parquet").filter(pl.col("stage") == "refresh")
    why = {json.loads(item)["id"]: (reason, detail)
           for reason, detail, item in rejected.select("reason", "detail", "item").iter_rows()}
    rechecked = work / "rechecked.parquet" if (work / "rechecked.parquet").is_file() else out / "rechecked.parquet"
    return manifest.model_dump(mode="json"), why, set(pl.read_parquet(rechecked)["id"])


def wikidata_run(tmp_path: Path) -> Path:
    nt = tmp_path / "t1.nt"
    nt.write_text(f"<{WD}Q1> <http://www.wikidata.org/prop/direct/P6> <{WD}Q2> .\n"
                  f"<{WD}Q3> <http://www.wikidata.org/prop/direct/P6> <{WD}Q5> .\n", encoding="utf-8")

    def row(n: int, answer: str, where: str) -> dict[str, str]:
        return {"id": f"wikidata-{n}", "question": f"Who heads Q{n}?", "answer": answer, "answer_id": f"{WD}{answer}",
                "sparql": f"{PREFIXES}SELECT DISTINCT ?x WHERE {{ {where} }} LIMIT 2"}

    rows = pl.DataFrame([row(1, "Q2", f"<{WD}Q1> wdt:P6 ?x ."),   # still true
                         row(3, "Q4", f"<{WD}Q3> wdt:P6 ?x ."),   # now Q5
                         row(7, "Q8", f"<{WD}Q7> wdt:P6 ?x")])    # a stored query Oxigraph refuses (cut short)
    rows = rows.with_columns(pl.when(pl.col("id") == "wikidata-7").then(pl.col("sparql").str.replace(r" \}", ""))
                             .otherwise(pl.col("sparql")).alias("sparql"))
    work = tmp_path / "wikidata" / "work"
    wikidata.refresh_released(rows, work, endpoint=None, rdf=nt, concurrency=2)
    return work


def wikipedia_run(tmp_path: Path) -> Path:
    start = AS_OF - timedelta(days=10)

    def page(pid: int, title: str, club: str) -> WikiPage:
        text = "{{Infobox football biography\n| name = " + title + "\n| currentclub = " + club + "\n}}\n"
        return WikiPage(pid, title, 0, [Rev(pid * 100, None, start, text, {"name": title, "currentclub": club},
                                            "create")], "Infobox football biography")

    def row(pid: int, title: str, answer: str | None) -> dict[str, str | None]:
        return {"id": f"wikipedia-{pid}", "question": f"Which club does {title} play for?", "answer": answer,
                "recompute": Rule(page=title, key="currentclub", page_id=pid).to_json()}

    dump = write_export([page(1, "Ivo Landa", "Celtic"), page(2, "Dario Mesk", "Feyenoord"),
                         page(3, "Tin Brava", "Ajax")], tmp_path / "week.xml")
    rows = pl.DataFrame([row(1, "Ivo Landa", "Celtic"), row(2, "Dario Mesk", "Olympiacos"),
                         row(3, "Tin Brava", None)],  # a released row without its answer: its check cannot compare
                        schema={"id": pl.String, "question": pl.String, "answer": pl.String, "recompute": pl.String})
    work = tmp_path / "wikipedia" / "work"
    wikipedia.refresh_released(rows, dump, work, AS_OF)
    return work


def site_tree_run(tmp_path: Path) -> Path:
    root = "http://127.0.0.1:8000/"
    pages = pl.DataFrame([{"url": f"{root}fees", "root_url": root, "error": None,
                           "facts": [{"label": "Tuition", "value": "EUR 9,800"}]},
                          {"url": f"{root}dean", "root_url": root, "error": None,
                           "facts": [{"label": "Dean", "value": "Ana Ruiz"}]}])

    def row(n: int, url: str, label: str, value: str, facts: str | None = None) -> dict[str, str]:
        return {"id": f"site_tree-{n}", "question": f"What is the {label}?", "answer": value, "root_url": root,
                "facts": facts or json.dumps([{"url": url, "label": label, "value": value}])}

    rows = pl.DataFrame([row(1, f"{root}fees", "Tuition", "EUR 9,800"), row(2, f"{root}dean", "Dean", "Lee Park"),
                         row(3, f"{root}fees", "Tuition", "EUR 9,800", facts="[{'url': 'cut")])  # facts not JSON
    out = tmp_path / "site_tree"
    ledger = StageWriter("site_tree", out)
    site_tree.refresh_released(rows, pages, ledger, out)
    ledger.save("refresh")
    return ledger.work


RUNS: dict[str, tuple[Callable[[Path], Path], tuple[str, str, str], str]] = {
    # source: (its run, the ids (still true, changed, broken), what the changed row's detail says)
    "wikidata": (wikidata_run, ("wikidata-1", "wikidata-3", "wikidata-7"), f"one other answer, {WD}Q5"),
    "wikipedia": (wikipedia_run, ("wikipedia-1", "wikipedia-2", "wikipedia-3"), "currentclub = 'Feyenoord'"),
    "site_tree": (site_tree_run, ("site_tree-1", "site_tree-2", "site_tree-3"), "now reads 'Ana Ruiz'"),
}
BROKEN = {"wikidata": "its check raised SourceContractError", "wikipedia": "its check raised AttributeError",
          "site_tree": "its check raised JSONDecodeError"}


@pytest.mark.parametrize("source", sorted(RUNS))
def test_each_source_keeps_the_true_row_retires_the_changed_one_and_a_broken_check_costs_its_row(
        source: str, tmp_path: Path) -> None:
    run, (holds, changed, broken), new_value = RUNS[source]
    work = run(tmp_path)
    manifest, why, rechecked = finished(source, work.parent, work)
    assert rechecked == {holds}, "only the row still true is kept as stored"
    assert why[changed][0] == "answer_changed" and new_value in why[changed][1]
    assert why[changed][1].startswith(f"released row {changed}:")
    reason, detail = why[broken]
    assert reason == "recheck_failed" and detail.startswith(f"released row {broken}: {BROKEN[source]}"), detail
    assert set(why) == {changed, broken}, "the broken row cost nothing else"
    assert manifest["counts"]["rechecked"] == 3 and manifest["counts"]["still_true"] == 1
    assert manifest["rejects"] == {"answer_changed": 1, "recheck_failed": 1}


def test_no_verdict_carries_and_a_transient_failure_stops_the_refresh() -> None:
    rows = pl.DataFrame({"id": ["b", "a", "c"], "question": ["?"] * 3, "answer": ["x", "y", "z"]})
    reason = wikidata.RefreshReject.ANSWER_CHANGED

    def check(row: dict) -> Dropped | object | None:
        if row["id"] == "c":
            return NO_VERDICT
        return Dropped({"id": row["id"]}, reason, "changed") if row["answer"] == "x" else None

    done = verdicts(rows, check, failed=wikidata.RefreshReject.RECHECK_FAILED, concurrency=2)
    assert (done.kept, [d.item["id"] for d in done.rejected], done.unchecked) == (["a"], ["b"], 1)
    assert done.counts == {"rechecked": 2, "still_true": 1, "not_rechecked": 1}

    def busy(row: dict) -> None:
        raise TransientSourceError("endpoint answered 503")

    with pytest.raises(TransientSourceError, match="503"):  # retried as a run; no row is retired for it
        verdicts(rows, busy, failed=wikidata.RefreshReject.RECHECK_FAILED, concurrency=2)


def test_a_row_without_a_verdict_in_a_source_that_cannot_count_it_is_refused(tmp_path: Path) -> None:
    rows = pl.DataFrame({"id": ["a"], "question": ["?"], "answer": ["x"]})
    ledger = StageWriter("wikidata", tmp_path)
    with pytest.raises(ValueError, match="'wikidata': 1 released rows got no verdict"):
        refresh(rows, lambda row: NO_VERDICT, ledger, failed=wikidata.RefreshReject.RECHECK_FAILED,
                         into=tmp_path)
