"""Training files for RLVR trainers from a release split: verl's parquet rows and TRL GRPO rows."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from timelyqa.errors import ConfigError
from timelyqa.manifest import MANIFEST
from timelyqa.record import CANARY
from timelyqa.released import release_file

PROMPT_VERSION = "timelyqa_answer_tag_v1"
"""Versioned name of the prompt below: a change of wording gets a new name, and rows record it."""
ABILITY = "temporal_qa"
INSTRUCTION = ("Give only the final answer (a name, a number or a date, no explanation) between <answer> and "
               "</answer>, for example <answer>Paris</answer>.")
# Question openings that stay correct when lower-cased after "As of DATE, "; anything else (a name) keeps its case.
_LOWERABLE = {"who", "whom", "whose", "what", "when", "where", "which", "why", "how", "in", "on", "at", "for",
              "from", "during", "since", "is", "are", "was", "were", "did", "does", "do", "has", "have", "had"}
_NEEDED = ("id", "question", "answer", "answer_aliases", "source", "level", "event_date", "as_of")

_MESSAGES = pa.list_(pa.struct([pa.field("role", pa.string()), pa.field("content", pa.string())]))
_EXTRA_INFO = pa.struct([
    pa.field("index", pa.int64()), pa.field("split", pa.string()), pa.field("id", pa.string()),
    pa.field("source", pa.string()), pa.field("level", pa.string()), pa.field("event_date", pa.string()),
    pa.field("as_of", pa.string()), pa.field("question", pa.string()), pa.field("answer", pa.string()),
    pa.field("answer_aliases", pa.list_(pa.string())), pa.field("prompt_version", pa.string()),
    pa.field("canary", pa.string()),
])
VERL_SCHEMA = pa.schema([
    pa.field("data_source", pa.string()),
    pa.field("prompt", _MESSAGES),
    pa.field("ability", pa.string()),
    # ground_truth as Search-R1 rows in verl carry it: {"target": [answer, *aliases]}; rewards.compute_score reads it.
    pa.field("reward_model", pa.struct([pa.field("style", pa.string()), pa.field(
        "ground_truth", pa.struct([pa.field("target", pa.list_(pa.string()))]))])),
    pa.field("extra_info", _EXTRA_INFO),
])
"""verl's five columns (docs: "Prepare Data for Post-Training"), typed as verl's RLHFDataset reads them."""
TRL_SCHEMA = pa.schema([
    pa.field("prompt", _MESSAGES), pa.field("answer", pa.string()), pa.field("answer_aliases", pa.list_(pa.string())),
    pa.field("id", pa.string()), pa.field("source", pa.string()), pa.field("level", pa.string()),
    pa.field("event_date", pa.string()), pa.field("as_of", pa.string()), pa.field("prompt_version", pa.string()),
    pa.field("canary", pa.string()),
])
"""TRL's conversational prompt column; every other column reaches reward functions as a keyword argument."""


def _iso(moment: date | datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def question_text(question: str, as_of: datetime | None) -> str:
    """The question with the moment its answer is true, for a question whose answer changes with time."""
    if as_of is None:
        return question
    first, _, rest = question.partition(" ")
    if first.lower() in _LOWERABLE:
        question = f"{first.lower()} {rest}" if rest else first.lower()
    return f"As of {as_of.date().isoformat()}, {question}"


def prompt_messages(question: str, as_of: datetime | None) -> list[dict[str, str]]:
    """The chat prompt both exports use (PROMPT_VERSION): one user message."""
    return [{"role": "user", "content": f"{question_text(question, as_of)}\n\n{INSTRUCTION}"}]


def read_split(release: Path, config: str = "default", split: str = "train") -> pl.DataFrame:
    """The rows of one split of one config of a release folder, shards in order, each file checked against the
    sha256 the release's manifest records (a killed or hand-edited release is refused, naming the file)."""
    release = Path(release)
    if not release.is_dir():
        raise ConfigError(f"{release}: no such release folder")
    try:
        manifest = json.loads((release / MANIFEST).read_text(encoding="utf-8"))
        listed = {name: meta for name, meta in manifest["files"].items() if isinstance(meta, dict)}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        raise ConfigError(f"{release}: not a release folder (no manifest.json of a release listing its files)") from None
    in_config = {name: meta for name, meta in listed.items() if meta.get("config") == config}
    if not in_config:
        configs = sorted({str(meta.get("config")) for meta in listed.values()})
        raise ConfigError(f"{release}: no config {config!r} in this release (configs: {', '.join(configs) or 'none'})")
    shards = sorted(name for name, meta in in_config.items() if meta.get("split") == split)
    if not shards:
        splits = sorted({str(meta.get("split")) for meta in in_config.values()})
        raise ConfigError(f"{release}: config {config!r} has no {split!r} split "
                          f"(splits: {', '.join(splits) or 'none'})")
    shards = [release_file(release, manifest, name) for name in shards]
    frame = pl.read_parquet(shards)
    missing = [name for name in _NEEDED if name not in frame.columns]
    if missing:
        raise ConfigError(f"{release / config}: {split} parquet lacks columns {', '.join(missing)}")
    return frame


def verl_row(row: dict[str, Any], index: int, split: str) -> dict[str, Any]:
    """One release row as verl's row: data_source, prompt, ability, reward_model, extra_info."""
    aliases = list(row["answer_aliases"] or [])
    return {
        "data_source": f"timelyqa/{row['source']}",
        "prompt": prompt_messages(row["question"], row["as_of"]),
        "ability": ABILITY,
        "reward_model": {"style": "rule", "ground_truth": {"target": [row["answer"], *aliases]}},
        "extra_info": {"index": index, "split": split, "id": row["id"], "source": row["source"],
                       "level": row["level"], "event_date": _iso(row["event_date"]), "as_of": _iso(row["as_of"]),
                       "question": row["question"], "answer": row["answer"], "answer_aliases": aliases,
                       "prompt_version": PROMPT_VERSION, "canary": row.get("canary") or CANARY},
    }


def trl_row(row: dict[str, Any], index: int, split: str) -> dict[str, Any]:
    """One release row as a TRL GRPO row: a conversational prompt plus the columns rewards.answer_reward reads."""
    return {"prompt": prompt_messages(row["question"], row["as_of"]), "answer": row["answer"],
            "answer_aliases": list(row["answer_aliases"] or []), "id": row["id"], "source": row["source"],
            "level": row["level"], "event_date": _iso(row["event_date"]), "as_of": _iso(row["as_of"]),
            "prompt_version": PROMPT_VERSION, "canary": row.get("canary") or CANARY}


def _export(release: Path, out: Path, config: str, split: str, schema: pa.Schema,
            make_row: Callable[[dict[str, Any], int, str], dict[str, Any]]) -> Path:
    frame = read_split(release, config, split)
    rows = [make_row(row, index, split) for index, row in enumerate(frame.iter_rows(named=True))]
    path = Path(out) / f"{split}.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    # Fixed writer options and no pandas metadata: the same release gives the same bytes.
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path, compression="zstd", compression_level=3,
                   version="2.6", data_page_version="1.0", write_statistics=True)
    return path


def export_verl(release: Path, out: Path, *, config: str = "default", split: str = "train") -> Path:
    """Write `out/{split}.parquet` in verl's data format; score it with timelyqa.rewards.compute_score."""
    return _export(release, out, config, split, VERL_SCHEMA, verl_row)


def export_trl(release: Path, out: Path, *, config: str = "default", split: str = "train") -> Path:
    """Write `out/{split}.parquet` for TRL's GRPOTrainer; score it with timelyqa.rewards.answer_reward."""
    return _export(release, out, config, split, TRL_SCHEMA, trl_row)
