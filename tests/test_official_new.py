"""`timelyqa live new`: drafts for a page from the model (a test double: tests/llmserver.py's ScriptedLLM, since a paid
model cannot be scripted), checked as recipes, resolved now against the real page through the crawling layer, and
written for review; what failed is dropped with its reason."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from tests.llmserver import ScriptedLLM, reply
from timelyqa.localsite import LocalSite
from timelyqa.official.recipe import load_recipe

PAGE = """<!DOCTYPE html><html><head><title>Port of Heysham: now</title></head><body><h1>Port of Heysham</h1>
<p>Ships waiting to berth: <b id="waiting">7</b></p><p>Pilot on duty: <span id="pilot">A. Moss</span></p></body></html>
"""
DRAFTS = {"drafts": [
    {"reason": "The count of waiting ships changes through the day.",
     "recipe": {"id": "heysham-waiting", "question": "How many ships are waiting to berth at Heysham now?",
                "fetch": {"url": "{site}/port.html"}, "extract": {"css": "#waiting", "type": "integer"},
                "valid": {"min": 0, "max": 200}}},
    {"reason": "The pilot on duty changes by shift.",
     "recipe": {"id": "heysham-pilot", "question": "Who is the pilot on duty at Heysham now?",
                "fetch": {"url": "{site}/port.html"}, "extract": {"css": "#pilot", "type": "name"}}},
    {"reason": "Tide height.",
     "recipe": {"id": "heysham-tide", "question": "What is the tide height at Heysham now?",
                "fetch": {"url": "{site}/port.html"}, "extract": {"css": "#tide", "type": "number"}}},
]}
HOPS = {"variants": [{"base": "heysham-waiting", "hops": ["the port where the Isle of Man ferry docks in Lancashire"],
                      "question": "How many ships are waiting to berth now at the Lancashire port where the Isle of "
                                  "Man ferry docks?"}]}


@pytest.mark.slow
def test_drafts_that_resolve_go_to_review_and_the_others_are_dropped_with_their_reason(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<html><body><a href='/port.html'>Port</a></body></html>")
    (site / "port.html").write_text(PAGE)
    out = tmp_path / "review"
    with LocalSite(site) as served, ScriptedLLM(models=("writer-7b",)) as llm:
        llm.then(reply(DRAFTS), reply(HOPS))
        env = {**os.environ, "TIMELYQA_QUIET": "1", "COLUMNS": "200", "TIMELYQA_LLM_BASE_URL": llm.url,
               "TIMELYQA_LLM_MODEL": "writer-7b", "TIMELYQA_LLM_BACKOFF": "0"}
        proc = subprocess.run([str(Path(sys.executable).with_name("timelyqa")), "live", "new", "--url",
                               f"{served.url}port.html", "--topic", "the port's traffic", "--timezone",
                               "Europe/London", "--out", str(out)], capture_output=True, text=True, env=env,
                              timeout=300)
        calls, origin = llm.calls, served.url.rstrip("/")
    assert proc.returncode == 0, proc.stderr
    assert calls == 2, "one call for the drafts, one for their L2/L3 variants"
    kept = {p.stem: load_recipe(p) for p in out.glob("*.yaml")}
    assert set(kept) == {"heysham-waiting", "heysham-waiting-l2"}
    l1, l2 = kept["heysham-waiting"], kept["heysham-waiting-l2"]
    assert l1.vars["site"] == origin and l1.timezone == "Europe/London" and l1.level == "L1"
    assert (l2.base, l2.level, l2.fetch, l2.extract) == ("heysham-waiting", "L2", l1.fetch, l1.extract)
    answers = pl.read_parquet(out / "answers.parquet")
    assert {r["id"]: (r["status"], r["answer"]) for r in answers.iter_rows(named=True)} == {
        "heysham-waiting": ("ok", "7"), "heysham-waiting-l2": ("ok", "7"),
        "heysham-tide": ("failed", None)}, "resolved now, against the page itself"
    dropped = [json.loads(line) for line in (out / "dropped.jsonl").read_text().splitlines()]
    assert sorted(d["reason"] for d in dropped) == ["extracted_nothing", "recipe_invalid"]
    invalid = next(d for d in dropped if d["reason"] == "recipe_invalid")
    assert "extract.type" in invalid["detail"] and "'name'" in invalid["detail"]
    assert "2 drafts resolved now" in proc.stdout
