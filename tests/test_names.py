"""One spelling for versioned names (`name_vN`), and what the rename means for rows released under the old ones."""

from __future__ import annotations

import polars as pl
import pytest

from publish.changelog import changelog_entry, changes
from timelyqa.export import PROMPT_VERSION
from timelyqa.llm.client import REPAIR_VERSION
from timelyqa.llm.prompts import all_prompts
from timelyqa.names import VERSIONED, current_name, versioned
from timelyqa.wikidata.synth import GENERATORS
from timelyqa.wikipedia.answer import Rule
from timelyqa.wikipedia.infobox import PARSER
from timelyqa.wikipedia.labels import RULE
from timelyqa.wikipedia.questions import GENERATOR


def test_every_versioned_name_in_the_code_has_the_one_spelling() -> None:
    prompts = [p.id for p in all_prompts()]
    names = [*GENERATORS.values(), GENERATOR, RULE, PARSER, REPAIR_VERSION, PROMPT_VERSION, *prompts]
    assert len(prompts) >= 14
    assert [n for n in names if not VERSIONED.match(n)] == []


@pytest.mark.parametrize(("legacy", "now"), [
    ("template:wikipedia-infobox@v2", "wikipedia_infobox_template_v2"),
    ("rule:wikipedia-domain@v1", "wikipedia_domain_rule_v1"),
    ("timelyqa/repair@v1", "timelyqa_repair_v1"),
    ("dailyqa/query_writer@v1+llm:writer-7b", "dailyqa_query_writer_v1+llm:writer-7b"),
    ("wikidata_l1_v1", "wikidata_l1_v1"),
])
def test_a_legacy_spelling_maps_to_todays(legacy: str, now: str) -> None:
    assert current_name(legacy) == now


def test_versioned_refuses_what_cannot_be_spelled() -> None:
    assert versioned("dailyqa/query_writer", 1) == "dailyqa_query_writer_v1"
    with pytest.raises(ValueError):
        versioned("Query Writer", 1)


def test_a_released_recompute_rule_under_the_old_parser_name_still_reads() -> None:
    old = '{"key": "mayor", "page": "Port Alder", "page_id": 7, "parser": "wikipedia-infobox@v1"}'
    assert Rule.from_json(old) == Rule(page="Port Alder", key="mayor", page_id=7)


def test_the_changelog_says_which_generators_were_renamed_and_that_the_rows_did_not_change() -> None:
    before = pl.DataFrame({"id": ["a", "b", "c"], "source": ["wikipedia", "wikipedia", "wikidata"],
                           "split": ["test"] * 3,
                           "generator": ["template:wikipedia-infobox@v2", "template:wikipedia-infobox@v1",
                                         "wikidata_l1_v1"]})
    after = before.with_columns(pl.Series("generator", ["wikipedia_infobox_template_v2",
                                                        "wikipedia_infobox_template_v2", "wikidata_l1_v1"]))
    diff = changes(before, after)
    assert diff["renamed"] == {"template:wikipedia-infobox@v2 -> wikipedia_infobox_template_v2": 1}
    assert diff["regenerated"] == {"wikipedia": 1}, "v1 to v2 is a new generator, not a new name"
    entry = changelog_entry("v2", "2026-06-02T00:00:00+00:00", "v1", diff)
    assert "- 1 rows rewritten by a new generator version (wikipedia: 1)" in entry
    assert ("- generator `template:wikipedia-infobox@v2` is now spelled `wikipedia_infobox_template_v2` (1 rows): "
            "a new name only; the questions, answers and splits did not change") in entry
