"""Human review of a release's test rows (LiveNewsBench's human-verified set): rows out for reviewers, accept or
reject decisions in (no edits), kept in the release folder and applied to every later release."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from publish.changelog import read_config
from timelyqa.errors import ConfigError
from timelyqa.files import sha256_file, write_text
from timelyqa.reasons import Reason
from timelyqa.record import Split
from timelyqa.release_manifest import ReleaseManifest

REVIEWS = "reviews"
"""The folder of a release holding the decisions, one `{source}.jsonl` per source of the rows decided."""
ACCEPT, REJECT = "accept", "reject"
EXCERPT_CHARS = 400
"""About how much of the article a reviewer sees around the answer."""


class ReviewReject(Reason):
    NOT_JSON = "not_json", "the line is not a JSON object"
    MISSING_FIELD = "missing_field", "the line lacks one of id, question, answer, decision (or one is not text)"
    UNKNOWN_ID = "unknown_id", "no row of the release has this id"
    NOT_IN_TEST = "not_in_test", "the row is not in the release's test split, the only one reviewed"
    QUESTION_CHANGED = "question_changed", ("the question differs from the release row: a review accepts or "
                                            "rejects a pair, it never edits it")
    ANSWER_CHANGED = "answer_changed", ("the answer differs from the release row: a review accepts or rejects a "
                                        "pair, it never edits it")
    BAD_DECISION = "bad_decision", "the decision is neither accept nor reject"
    UNDECIDED = "undecided", "the decision is empty: the row waits for a later review"
    DECIDED_TWICE = "decided_twice", "an earlier line of the file decides the same id"


@dataclass(frozen=True)
class Decision:
    """A reviewer's verdict on one pair, with the exact question and answer it was given on."""

    id: str
    source: str
    decision: str
    question: str
    answer: str
    decided_at: str

    def applies(self, question: str, answer: str) -> bool:
        """True when the row still reads as it did when reviewed (a rewritten row needs a new review)."""
        return (self.question, self.answer) == (question, answer)

    def line(self) -> str:
        return json.dumps({"id": self.id, "decision": self.decision, "question": self.question,
                           "answer": self.answer, "decided_at": self.decided_at}, sort_keys=True, ensure_ascii=False)


Decisions = dict[str, Decision]


def read_decisions(folder: Path) -> Decisions:
    """The decisions kept in a release folder, by row id; ConfigError names a line that is not one."""
    found: Decisions = {}
    for path in sorted((Path(folder) / REVIEWS).glob("*.jsonl")):
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            try:
                item = json.loads(text)
                found[item["id"]] = Decision(id=item["id"], source=path.stem, decision=item["decision"],
                                             question=item["question"], answer=item["answer"],
                                             decided_at=item["decided_at"])
            except (ValueError, KeyError, TypeError) as exc:
                raise ConfigError(f"{path} line {number}: not a review decision ({exc})") from None
    return found


def merge_decisions(*stores: Decisions) -> Decisions:
    """One decision per id: the latest made; on equal times the later store's."""
    merged: Decisions = {}
    for store in stores:
        for row_id, decision in store.items():
            if row_id not in merged or decision.decided_at >= merged[row_id].decided_at:
                merged[row_id] = decision
    return merged


def write_decisions(folder: Path, decisions: Decisions) -> dict[str, dict[str, Any]]:
    """Write the decisions as `reviews/{source}.jsonl`, sorted by id; return what the manifest says of each file."""
    by_source: dict[str, list[Decision]] = {}
    for decision in decisions.values():
        by_source.setdefault(decision.source, []).append(decision)
    info = {}
    for source, group in sorted(by_source.items()):
        path = Path(folder) / REVIEWS / f"{source}.jsonl"
        write_text(path, "".join(d.line() + "\n" for d in sorted(group, key=lambda d: d.id)))
        verdicts = Counter(d.decision for d in group)
        info[source] = {"path": f"{REVIEWS}/{source}.jsonl", "sha256": sha256_file(path),
                        "accepted": verdicts[ACCEPT], "rejected": verdicts[REJECT]}
    return info


def _applied(decisions: Decisions, verdict: str) -> pl.DataFrame:
    rows = [(d.id, d.question, d.answer) for d in decisions.values() if d.decision == verdict]
    return pl.DataFrame(rows, schema={"id": pl.String(), "question": pl.String(), "answer": pl.String()},
                        orient="row")


def human_verified(frame: pl.DataFrame, decisions: Decisions) -> pl.DataFrame:
    """Copies of the config's test rows a reviewer accepted as they read now, with split `human_verified`."""
    accepted = _applied(decisions, ACCEPT)
    test = frame.filter(pl.col("split") == Split.TEST.value)
    kept = test.join(accepted, on=["id", "question", "answer"], how="semi", maintain_order="left")
    return kept.with_columns(pl.lit(Split.HUMAN_VERIFIED.value, dtype=pl.String()).alias("split"))


def undecided(frame: pl.DataFrame, decisions: Decisions) -> pl.DataFrame:
    """The rows of frame no decision applies to (never reviewed, or rewritten since)."""
    decided = pl.concat([_applied(decisions, ACCEPT), _applied(decisions, REJECT)])
    return frame.join(decided, on=["id", "question", "answer"], how="anti", maintain_order="left")


def _manifest(release: Path) -> ReleaseManifest:
    manifest = ReleaseManifest.find(release)
    if manifest is None:
        raise ConfigError(f"{release}: not a release folder (no manifest.json of a release)")
    return manifest


def _articles(path: Path) -> dict[str, str]:
    """Article text by URL from a parquet with columns url and text (the news source's articles.parquet)."""
    try:
        schema = pl.read_parquet_schema(path)
    except Exception as exc:  # polars raises several kinds for a file that is missing or not parquet
        raise ConfigError(f"{path}: --articles is not a parquet file ({exc})") from None
    missing = [name for name in ("url", "text") if name not in schema]
    if missing:
        raise ConfigError(f"{path}: --articles has no column {', '.join(missing)} (it needs url and text)")
    frame = pl.read_parquet(path, columns=["url", "text"]).drop_nulls()
    return dict(frame.unique("url", keep="first", maintain_order=True).iter_rows())


def excerpt(text: str, answers: list[str], chars: int = EXCERPT_CHARS) -> tuple[str, bool]:
    """About `chars` characters of text around the first place it states one of `answers` (case aside), cut at
    spaces and marked with … where cut; the article's opening and False when it states none."""
    hits = [(m.start(), m.end()) for a in answers if a and (m := re.search(re.escape(a), text, re.IGNORECASE))]
    first, last = min(hits) if hits else (0, 0)
    start = max(0, min(first - (chars - (last - first)) // 2, len(text) - chars))
    end = min(len(text), start + chars)
    if start > 0 and (space := text.find(" ", start, first)) >= 0:
        start = space + 1
    if end < len(text) and (space := text.rfind(" ", max(last, start), end)) >= 0:
        end = space
    body = " ".join(text[start:end].split())
    return ("…" if start > 0 else "") + body + ("…" if end < len(text) else ""), bool(hits)


@dataclass(frozen=True)
class ExportResult:
    path: Path
    rows: int
    decided: int
    with_article: int
    answer_found: int

    def summary(self) -> str:
        return (f"{self.rows} test rows to review in {self.path} ({self.decided} already decided, left out; "
                f"{self.with_article} with an article excerpt, {self.answer_found} of them stating the answer)")


def export_review(release: Path, config: str, out: Path, *, articles: Path | None = None,
                  force: bool = False) -> ExportResult:
    """Write the config's test rows that no decision applies to, one JSON object a line, each with an empty
    `decision` for the reviewer to fill with accept or reject; with `articles`, an excerpt of the row's article
    around its answer (the first evidence URL the articles have). A file already at `out` is kept (ConfigError)
    unless `force`: it may hold a reviewer's decisions not yet imported."""
    if Path(out).exists() and not force:
        raise ConfigError(f"{out}: --out exists already (it may hold a reviewer's decisions not yet imported); give "
                          "another file, or --force to overwrite it")
    manifest = _manifest(release)
    if config not in manifest.configs:
        raise ConfigError(f"{release}: no config {config!r} (configs: {', '.join(sorted(manifest.configs))})")
    texts = _articles(articles) if articles is not None else None
    test = read_config(release, manifest, config, splits=[Split.TEST.value])
    test = test.sort("id") if test is not None else pl.DataFrame(schema={"id": pl.String(), "question": pl.String(),
                                                                         "answer": pl.String()})
    todo = undecided(test, read_decisions(release))
    lines, with_article, found = [], 0, 0
    for row in todo.iter_rows(named=True):
        urls = [e["url"] for e in row.get("evidence") or []]
        item: dict[str, Any] = {"id": row["id"], "question": row["question"], "answer": row["answer"],
                                "answer_aliases": row.get("answer_aliases") or [], "evidence_urls": urls}
        if texts is not None:
            url = next((u for u in urls if u in texts), None)
            item["article_url"], item["excerpt"], item["answer_in_excerpt"] = url, None, None
            if url is not None:
                item["excerpt"], item["answer_in_excerpt"] = excerpt(texts[url], [row["answer"],
                                                                                  *item["answer_aliases"]])
                with_article, found = with_article + 1, found + item["answer_in_excerpt"]
        item["decision"] = ""
        lines.append(json.dumps(item, ensure_ascii=False, default=str) + "\n")
    write_text(Path(out), "".join(lines))
    return ExportResult(Path(out), len(lines), test.height - todo.height, with_article, found)


@dataclass(frozen=True)
class Refusal:
    """A line of a decisions file not taken, with its reason."""

    line: int
    reason: ReviewReject
    detail: str
    text: str


@dataclass(frozen=True)
class ImportResult:
    file: Path
    taken: dict[str, int]
    refused: tuple[Refusal, ...]
    aside: Path | None
    """Where the refused lines were kept, with their reasons (`FILE.refused.jsonl`)."""

    def messages(self) -> list[str]:
        return [f"{self.file} line {r.line}: {r.reason}: {r.detail}" for r in self.refused]

    def summary(self) -> str:
        taken = ", ".join(f"{verdict} {n}" for verdict, n in sorted(self.taken.items())) or "none"
        refused = Counter(str(r.reason) for r in self.refused)
        text = f"{sum(self.taken.values())} decisions taken ({taken}); {len(self.refused)} lines refused"
        return text + (f" ({', '.join(f'{k} {n}' for k, n in sorted(refused.items()))}), kept in {self.aside}"
                       if self.refused else "")


def _check(item: Any, rows: dict[str, dict[str, Any]]) -> tuple[ReviewReject, str] | None:
    """Why a decision line cannot be taken, or None when it can."""
    if not isinstance(item, dict):
        return ReviewReject.NOT_JSON, f"a JSON {type(item).__name__}, not an object"
    for name in ("id", "question", "answer", "decision"):
        if not isinstance(item.get(name), str):
            return ReviewReject.MISSING_FIELD, f"no text `{name}`"
    row = rows.get(item["id"])
    verdict = item["decision"].strip().lower()
    if row is None:
        return ReviewReject.UNKNOWN_ID, f"id {item['id']} is not a row of the release"
    if row["split"] != Split.TEST.value:
        return ReviewReject.NOT_IN_TEST, f"id {item['id']} is in {row['split']}, not test"
    for name, reason in (("question", ReviewReject.QUESTION_CHANGED), ("answer", ReviewReject.ANSWER_CHANGED)):
        if item[name] != row[name]:
            return reason, f"id {item['id']}: {name} {item[name]!r} is not the release's {row[name]!r}"
    if not verdict:
        return ReviewReject.UNDECIDED, f"id {item['id']} has no decision yet"
    if verdict not in (ACCEPT, REJECT):
        return ReviewReject.BAD_DECISION, f"id {item['id']}: decision {item['decision']!r} is not accept or reject"
    return None


def record_decisions(file: Path, release: Path, *, now: datetime | None = None) -> tuple[ImportResult, Decisions]:
    """The release's decisions with the accept/reject lines of a reviewed file taken in; each other line is refused
    with one reason naming it (kept in `FILE.refused.jsonl`). Later decisions on an id replace earlier ones.
    Nothing of the release is written here: publish.release.import_review builds the release with these decisions
    beside the old one and swaps it in, so a killed import leaves the old release and its `reviews/` as they were."""
    manifest = _manifest(release)
    try:
        lines = Path(file).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: cannot read the decisions ({exc})") from None
    default = manifest.configs.get("default")
    index = read_config(release, manifest, "default", splits=[s for s in (default.splits if default else {})
                                                               if s != Split.HUMAN_VERIFIED.value],
                        columns=["id", "source", "question", "answer", "split"])
    rows = {row["id"]: row for row in index.iter_rows(named=True)} if index is not None else {}
    stamp = (now or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0).isoformat()
    taken: Decisions = {}
    seen: dict[str, int] = {}
    refused: list[Refusal] = []
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            item = json.loads(text)
        except ValueError as exc:
            refused.append(Refusal(number, ReviewReject.NOT_JSON, f"not JSON ({exc.args[0]})", text))
            continue
        why = _check(item, rows)
        if why is None and item["id"] in seen:
            why = ReviewReject.DECIDED_TWICE, f"id {item['id']} is decided on line {seen[item['id']]} already"
        if why is not None:
            refused.append(Refusal(number, why[0], why[1], text))
            continue
        seen[item["id"]] = number
        row = rows[item["id"]]
        taken[item["id"]] = Decision(id=item["id"], source=row["source"], decision=item["decision"].strip().lower(),
                                     question=row["question"], answer=row["answer"], decided_at=stamp)
    kept = read_decisions(release)
    # The same verdict on the same pair again is no new decision: it keeps its time, so the release keeps its bytes.
    fresh = {i: d for i, d in taken.items() if i not in kept or (kept[i].decision, kept[i].question,
                                                                  kept[i].answer) != (d.decision, d.question, d.answer)}
    decisions = merge_decisions(kept, fresh) if fresh else kept
    aside = Path(file).with_name(Path(file).name.removesuffix(".jsonl") + ".refused.jsonl")
    if refused:
        write_text(aside, "".join(json.dumps({"line": r.line, "reason": str(r.reason), "detail": r.detail,
                                              "text": r.text}, ensure_ascii=False) + "\n" for r in refused))
    else:
        aside.unlink(missing_ok=True)
    return ImportResult(Path(file), dict(Counter(d.decision for d in taken.values())), tuple(refused),
                        aside if refused else None), decisions
