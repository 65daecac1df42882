"""What the card tells a first-time user, read on built cards: that a demo release is synthetic, what each common
column means and how a model is given `as_of`, and the licence of every config. (The live-resolve command is run as
written, on the demo's own card, in tests/test_demo_clock.py.)"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import yaml

from publish.release import build_release
from tests.test_publish import plain_rows, wikidata_rows, write_source
from timelyqa.record import RECORD_SCHEMA, QARecord, WikidataRecord

CREATED = datetime(2026, 11, 1, tzinfo=UTC)


def release(tmp: Path, name: str, *, synthetic: bool = False, previous: Path | None = None,
            news: tuple[str, ...] = ("a", "b")) -> Path:
    rows = {"wikidata": wikidata_rows(), "news": plain_rows("news", list(news)),
            "wikipedia": plain_rows("wikipedia", ["x", "y"])}
    folders = [write_source(tmp / name / source, r, WikidataRecord if source == "wikidata" else QARecord, source)
               for source, r in rows.items()]
    build_release(folders, tmp / name / "release", created=CREATED, synthetic=synthetic, previous=previous)
    return tmp / name / "release"


def card(folder: Path) -> str:
    return (folder / "README.md").read_text(encoding="utf-8")


def section(text: str, title: str) -> str:
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else None]


def test_a_demo_release_says_it_is_synthetic_on_its_first_screen_and_a_real_one_never_does(tmp_path: Path) -> None:
    demo = release(tmp_path, "demo", synthetic=True)
    first_screen = card(demo).split("## Canary")[0]
    assert "**Synthetic demo data.**" in first_screen and "never to train or to measure a model" in first_screen
    assert json.loads((demo / "manifest.json").read_text())["synthetic"] is True
    # A release built on the demo's still holds its rows: it stays synthetic.
    later = release(tmp_path, "later", previous=demo, news=("a", "b", "c"))
    assert "**Synthetic demo data.**" in card(later)
    real = release(tmp_path, "real")
    assert "Synthetic" not in card(real) and "synthetic" not in json.loads((real / "manifest.json").read_text())


def test_the_glossary_names_every_common_column_in_order_and_how_to_give_a_model_as_of(tmp_path: Path) -> None:
    folder = release(tmp_path, "r")
    glossary = section(card(folder), "The common columns")
    named = re.findall(r"^\| `(\w+)` \| .+ \|$", glossary, flags=re.MULTILINE)
    assert named == RECORD_SCHEMA.names()
    assert "**A model must be given `as_of`.**" in glossary
    # The snippet the card gives, run as written on a released row, puts the row's moment in front of its question.
    code = re.search(r"```python\n(.*?)```", glossary, flags=re.DOTALL).group(1)
    row = pl.read_parquet(folder / "default" / "train-00000-of-00001.parquet").row(0, named=True)
    scope = {"row": row}
    exec(code, scope)  # noqa: S102 - the card's own example
    first, rest = row["question"].split(" ", 1)
    assert scope["text"] == f"As of {row['as_of']:%Y-%m-%d}, {first.lower()} {rest}"


def test_the_card_gives_the_licence_of_every_config_it_declares(tmp_path: Path) -> None:
    text = card(release(tmp_path, "r"))
    front = yaml.safe_load(text.split("---\n")[1])
    table = dict(re.findall(r"^\| `(\w+)` \| (.+) \|$", section(text, "Licence"), flags=re.MULTILINE))
    assert list(table) == [c["config_name"] for c in front["configs"]] == ["default", "news", "wikidata", "wikipedia"]
    assert table["wikidata"] == "CC0-1.0" and table["wikipedia"] == "CC-BY-SA-4.0"
    assert table["news"].startswith("other: the terms of the pages in each row's `evidence`")
    assert table["default"] == "mixed: each row's terms are those of its `source` (`news`: other; `wikidata`: " \
                               "CC0-1.0; `wikipedia`: CC-BY-SA-4.0)"
