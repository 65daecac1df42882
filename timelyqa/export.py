"""Training files for RLVR trainers from a release split: verl's parquet rows and TRL GRPO rows."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from timelyqa.answers import unit_phrase
from timelyqa.errors import ConfigError
from timelyqa.record import CANARY, AnswerValue
from timelyqa.release_manifest import ReleaseManifest
from timelyqa.released import release_file
from timelyqa.rewards import GRADER_VERSION

PROMPT_VERSION = "timelyqa_answer_tag_v2"
"""Versioned name of the prompt below: a change of wording gets a new name, and rows record it."""
ABILITY = "temporal_qa"
INSTRUCTION = "Give only the final answer ({form}, no explanation) between <answer> and </answer>, for example {example}."
_FORMS = {
    "entity": ("a name", "<answer>Paris</answer>"),
    "number": ("a number", "<answer>42</answer>"),
    "quantity": ("a number", "<answer>42</answer>"),
    "date": ("a date", "<answer>5 November 2026</answer>"),
    "list": ("one or more names, separated by semicolons", "<answer>Paris; Rome</answer>"),
    "text": ("a short phrase", "<answer>Room 4.12</answer>"),
}
"""What each answer type asks for; a row of an older release (no type) gets the generic form."""
_UNTYPED = ("a name, a number or a date", "<answer>Paris</answer>")
LIVE = "live_question"
"""Why a row is left out of a training export: no fixed answer (an official-site test row, resolved when asked)."""
# A question that says its own moment ("Current time: ...", "As of ...", a news event's "On 4 November 2026: ...")
# is not told the time again.
_STATES_TIME = re.compile(r"^(?:current time:|as of\b|on \d{1,2} [A-Z][a-z]+ \d{4}\s*[:,]|in the news of\b)",
                          re.IGNORECASE)
# Question openings that stay correct when lower-cased after "As of DATE, "; anything else (a name) keeps its case.
_LOWERABLE = {"who", "whom", "whose", "what", "when", "where", "which", "why", "how", "in", "on", "at", "for",
              "from", "during", "since", "is", "are", "was", "were", "did", "does", "do", "has", "have", "had"}
_NEEDED = ("id", "question", "answer", "answer_aliases", "source", "level", "event_date", "as_of")

_MESSAGES = pa.list_(pa.struct([pa.field("role", pa.string()), pa.field("content", pa.string())]))
_VALUE = pa.struct([
    pa.field("number", pa.string()), pa.field("precision", pa.int64()), pa.field("unit", pa.string()),
    pa.field("scale", pa.int64()), pa.field("date", pa.string()), pa.field("date_precision", pa.string()),
    pa.field("items", pa.list_(pa.string())),
])
_EXTRA_INFO = pa.struct([
    pa.field("index", pa.int64()), pa.field("split", pa.string()), pa.field("id", pa.string()),
    pa.field("source", pa.string()), pa.field("level", pa.string()), pa.field("event_date", pa.string()),
    pa.field("as_of", pa.string()), pa.field("question", pa.string()), pa.field("answer", pa.string()),
    pa.field("answer_aliases", pa.list_(pa.string())), pa.field("answer_type", pa.string()),
    pa.field("prompt_version", pa.string()), pa.field("grader_version", pa.string()), pa.field("canary", pa.string()),
])
VERL_SCHEMA = pa.schema([
    pa.field("data_source", pa.string()),
    pa.field("prompt", _MESSAGES),
    pa.field("ability", pa.string()),
    # ground_truth as Search-R1 rows in verl carry it, {"target": [answer, *aliases]}, plus the typed gold that
    # rewards.compute_score grades by.
    pa.field("reward_model", pa.struct([pa.field("style", pa.string()), pa.field("ground_truth", pa.struct([
        pa.field("target", pa.list_(pa.string())), pa.field("answer_type", pa.string()),
        pa.field("answer_value", _VALUE)]))])),
    pa.field("extra_info", _EXTRA_INFO),
])
"""verl's five columns (docs: "Prepare Data for Post-Training"), typed as verl's RLHFDataset reads them."""
TRL_SCHEMA = pa.schema([
    pa.field("prompt", _MESSAGES), pa.field("answer", pa.string()), pa.field("answer_aliases", pa.list_(pa.string())),
    pa.field("answer_type", pa.string()), pa.field("answer_value", _VALUE), pa.field("id", pa.string()), pa.field("source", pa.string()), pa.field("level", pa.string()),
    pa.field("event_date", pa.string()), pa.field("as_of", pa.string()), pa.field("prompt_version", pa.string()),
    pa.field("grader_version", pa.string()), pa.field("canary", pa.string()),
])
"""TRL's conversational prompt column; every other column reaches reward functions as a keyword argument."""


def _iso(moment: date | datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def question_text(question: str, as_of: datetime | None) -> str:
    """The question with the moment its answer is true, said once: a question that states its own is kept."""
    if as_of is None or _STATES_TIME.match(question.strip()):
        return question
    first, _, rest = question.partition(" ")
    if first.lower() in _LOWERABLE:
        question = f"{first.lower()} {rest}" if rest else first.lower()
    return f"As of {as_of.date().isoformat()}, {question}"


def answer_form(answer_type: str | None, value: AnswerValue | dict[str, Any] | None) -> tuple[str, str]:
    """What the instruction asks for, from the answer's type: ("a number in metres", "<answer>42</answer>")."""
    if answer_type not in _FORMS:
        return _UNTYPED
    form, example = _FORMS[answer_type]
    if answer_type in ("number", "quantity") and value:
        phrase = unit_phrase(value if isinstance(value, AnswerValue) else AnswerValue(**value))
        form = f"{form} {phrase}" if phrase else form
    return form, example


def prompt_messages(question: str, as_of: datetime | None, answer_type: str | None = None,
                    value: AnswerValue | dict[str, Any] | None = None) -> list[dict[str, str]]:
    """The chat prompt both exports use (PROMPT_VERSION): one user message."""
    form, example = answer_form(answer_type, value)
    instruction = INSTRUCTION.format(form=form, example=example)
    return [{"role": "user", "content": f"{question_text(question, as_of)}\n\n{instruction}"}]


def read_split(release: Path, config: str = "default", split: str = "train") -> pl.DataFrame:
    """The rows of one split of one config of a release folder, shards in order, each file checked against the
    sha256 the release's manifest records (a killed or hand-edited release is refused, naming the file)."""
    release = Path(release)
    if not release.is_dir():
        raise ConfigError(f"{release}: no such release folder")
    manifest = ReleaseManifest.load(release)
    listed = manifest.files
    if not any(meta.config for meta in listed.values()):
        raise ConfigError(f"{release}: not a release folder (its manifest.json lists no configs: a source's output? "
                          f"make a release of it with `timelyqa release --from {release} --out DIR`)")
    in_config = {name: meta for name, meta in listed.items() if meta.config == config}
    if not in_config:
        configs = sorted({meta.config for meta in listed.values()})
        raise ConfigError(f"{release}: no config {config!r} in this release (configs: {', '.join(configs) or 'none'})")
    shards = sorted(name for name, meta in in_config.items() if meta.split == split)
    if not shards:
        splits = sorted({meta.split for meta in in_config.values()})
        raise ConfigError(f"{release}: config {config!r} has no {split!r} split "
                          f"(splits: {', '.join(splits) or 'none'})")
    shards = [release_file(release, manifest, name) for name in shards]
    frame = pl.read_parquet(shards)
    missing = [name for name in _NEEDED if name not in frame.columns]
    if missing:
        raise ConfigError(f"{release / config}: {split} parquet lacks columns {', '.join(missing)}")
    return frame


def _typed(row: dict[str, Any]) -> tuple[str | None, dict[str, Any] | None]:
    return row.get("answer_type"), row.get("answer_value")


def verl_row(row: dict[str, Any], index: int, split: str) -> dict[str, Any]:
    """One release row as verl's row: data_source, prompt, ability, reward_model, extra_info."""
    aliases = list(row["answer_aliases"] or [])
    answer_type, value = _typed(row)
    return {
        "data_source": f"timelyqa/{row['source']}",
        "prompt": prompt_messages(row["question"], row["as_of"], answer_type, value),
        "ability": ABILITY,
        "reward_model": {"style": "rule", "ground_truth": {"target": [row["answer"], *aliases],
                                                           "answer_type": answer_type, "answer_value": value}},
        "extra_info": {"index": index, "split": split, "id": row["id"], "source": row["source"],
                       "level": row["level"], "event_date": _iso(row["event_date"]), "as_of": _iso(row["as_of"]),
                       "question": row["question"], "answer": row["answer"], "answer_aliases": aliases,
                       "answer_type": answer_type, "prompt_version": PROMPT_VERSION,
                       "grader_version": GRADER_VERSION, "canary": row.get("canary") or CANARY},
    }


def trl_row(row: dict[str, Any], index: int, split: str) -> dict[str, Any]:
    """One release row as a TRL GRPO row: a conversational prompt plus the columns rewards.answer_reward reads."""
    answer_type, value = _typed(row)
    return {"prompt": prompt_messages(row["question"], row["as_of"], answer_type, value), "answer": row["answer"],
            "answer_aliases": list(row["answer_aliases"] or []), "answer_type": answer_type, "answer_value": value,
            "id": row["id"], "source": row["source"], "level": row["level"], "event_date": _iso(row["event_date"]),
            "as_of": _iso(row["as_of"]), "prompt_version": PROMPT_VERSION, "grader_version": GRADER_VERSION,
            "canary": row.get("canary") or CANARY}


@dataclass(frozen=True)
class Exported:
    """What an export wrote: the file, its rows, and the rows left out by reason."""

    path: Path
    rows: int
    left_out: dict[str, int] = field(default_factory=dict)

    def summary(self) -> str:
        why = ", ".join(f"{n} {reason}" for reason, n in sorted(self.left_out.items()))
        return f"{self.rows} rows in {self.path}" + (f"; left out: {why} (no fixed answer to train on)" if why else "")


def _export(release: Path, out: Path, config: str, split: str, schema: pa.Schema,
            make_row: Callable[[dict[str, Any], int, str], dict[str, Any]]) -> Exported:
    frame = read_split(release, config, split)
    left_out: Counter[str] = Counter()
    rows = []
    for row in frame.iter_rows(named=True):
        if not (row["answer"] or "").strip():
            left_out[LIVE] += 1
            continue
        rows.append(make_row(row, len(rows), split))
    path = Path(out) / f"{split}.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    # Fixed writer options and no pandas metadata: the same release gives the same bytes.
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path, compression="zstd", compression_level=3,
                   version="2.6", data_page_version="1.0", write_statistics=True)
    return Exported(path, len(rows), dict(left_out))


def export_verl(release: Path, out: Path, *, config: str = "default", split: str = "train") -> Exported:
    """Write `out/{split}.parquet` in verl's data format; score it with timelyqa.rewards.compute_score."""
    return _export(release, out, config, split, VERL_SCHEMA, verl_row)


def export_trl(release: Path, out: Path, *, config: str = "default", split: str = "train") -> Exported:
    """Write `out/{split}.parquet` for TRL's GRPOTrainer; score it with timelyqa.rewards.answer_reward."""
    return _export(release, out, config, split, TRL_SCHEMA, trl_row)
