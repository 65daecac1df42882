"""The dataset card: README.md of a release, YAML front matter for the Hub plus a body for people."""

from __future__ import annotations

from typing import Any

import yaml

from publish import guide
from timelyqa.quality import GATE_PASSED, GATE_STAGE
from timelyqa.sources import sources
from timelyqa.record import Split
from timelyqa.release_manifest import ReleaseManifest, SourceSummary
from timelyqa.split import EXTRA_SPLITS, RELEASE_SPLITS, SPLITS

DEFAULT_CONFIG = "default"
"""The config holding every source with the common columns only; the one `load_dataset(repo)` returns."""
PRETTY_NAME = "TimelyQA"
HUMAN_VERIFIED, LONGITUDINAL = Split.HUMAN_VERIFIED.value, Split.LONGITUDINAL.value
ROW_SPLITS = (*SPLITS, LONGITUDINAL)
"""The splits whose rows are distinct: `human_verified` rows are copies of test rows, never counted twice."""
EXTRA_MEANING = {
    HUMAN_VERIFIED: "test rows a person reviewed against their evidence and accepted as they are (reviewers accept or "
                    "reject, they never edit; LiveNewsBench's human-verified test set). Each is also in `test`: "
                    "evaluate on one or the other, not both",
    LONGITUDINAL: "pairs whose answer may change over time (the source judged them temporally unstable): kept out of "
                  "train, validation and test, for studying how models follow answers that move (LiveNewsBench's "
                  "longitudinal set); `as_of` says when the answer was true",
}
"""What each extra split means, for the card."""
LIVING = [
    "Each release starts from the previous one: its rows carry forward exactly as they were released (no released "
    "row is ever edited), the week's new rows join them, and the split rule above is applied again, so rows age "
    "from test to validation to train. Carried rows are checked again against the newest state of their source: "
    "Wikidata rows by their SPARQL query on the new snapshot, Wikipedia rows by their `recompute` rule at the new "
    "date, site-tree rows against the newest crawl of their pages. A row whose answer no longer holds is retired "
    "with the reason `answer_changed` (the new fact enters as a new row with its own `event_date`); a row that can "
    "no longer be checked is retired with its reason. News rows are past events and official-site rows are "
    "answered at evaluation time: neither has anything to re-check. A row no run re-checked this week stays as it "
    "was, counted in `CHANGELOG.md` as carried, not re-checked.",
]
"""How a release lives from week to week, for the card."""

def _licence(source: str) -> str:
    """The Hub licence id of a source's rows; `other` when its terms follow each row's evidence pages."""
    spec = sources().get(source)
    return spec.licence if spec is not None else "other"


def _summary(source: str) -> str:
    spec = sources().get(source)
    return spec.card.summary if spec is not None else "questions from this source"


def _section(source: str) -> list[str]:
    """What a user needs to know of one source's rows, in the card when the release holds that source."""
    spec = sources().get(source)
    return list(spec.card.section) if spec is not None else []


def _explanation(source: str, reason: str) -> str:
    spec = sources().get(source)
    found = next((r for r in spec.reasons if r == reason), None) if spec is not None else None
    return found.explanation if found is not None else ""


def _size_category(rows: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                        (1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M")):
        if rows < limit:
            return name
    return "10M<n<100M"


def _config_names(manifest: ReleaseManifest) -> list[str]:
    return [DEFAULT_CONFIG, *sorted(name for name in manifest.configs if name != DEFAULT_CONFIG)]


def _total(manifest: ReleaseManifest, config: str, split: str | None = None) -> int:
    splits = [split] if split else ROW_SPLITS
    return sum(sum(manifest.counts[config].get(s, {}).values()) for s in splits)


def front_matter(manifest: ReleaseManifest) -> dict[str, Any]:
    """The card's YAML metadata: licences, tags and one `configs:` entry per config with its data files."""
    names = sorted(manifest.sources)
    licenses = sorted({_licence(source) for source in names}) or ["other"]
    configs = []
    for name in _config_names(manifest):
        splits = manifest.configs[name].splits
        if not splits:  # a config without data files cannot be declared
            continue
        entry: dict[str, Any] = {"config_name": name, "data_files": [
            {"split": split, "path": paths[0] if len(paths) == 1 else paths}
            for split in RELEASE_SPLITS if (paths := splits.get(split))
        ]}
        if name == DEFAULT_CONFIG:
            entry["default"] = True
        configs.append(entry)
    return {
        "license": licenses[0] if len(licenses) == 1 else licenses,
        "pretty_name": PRETTY_NAME,
        "language": ["en"],
        "task_categories": ["question-answering"],
        "size_categories": [_size_category(_total(manifest, DEFAULT_CONFIG))],
        "tags": ["temporal", "live-benchmark", "rlvr", "canary", *names],
        "configs": configs,
        "dataset_info": [_dataset_info(manifest, name) for name in _config_names(manifest)
                         if manifest.configs[name].splits and manifest.configs[name].features],
    }


def _dataset_info(manifest: ReleaseManifest, config: str) -> dict[str, Any]:
    files = manifest.files
    splits = []
    for split, paths in manifest.configs[config].splits.items():
        splits.append({"name": split, "num_examples": sum(files[p].rows for p in paths),
                       "num_bytes": sum(files[p].bytes for p in paths)})
    return {"config_name": config, "features": manifest.configs[config].features, "splits": splits}


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    return lines + ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]


def _extras(manifest: ReleaseManifest) -> list[str]:
    """The extra splits some config of the release has, in card order."""
    return [split for split in EXTRA_SPLITS if any(split in info.splits for info in manifest.configs.values())]


def _counts_section(manifest: ReleaseManifest) -> list[str]:
    shown = [*SPLITS, *_extras(manifest)]
    rows = []
    for config in _config_names(manifest):
        counts = manifest.counts[config]
        levels = sorted({level for split in shown for level in counts.get(split, {})})
        for level in levels:
            per_split = [counts.get(split, {}).get(level, 0) for split in shown]
            total = sum(counts.get(split, {}).get(level, 0) for split in ROW_SPLITS)
            rows.append([f"`{config}`", level, *per_split, total])
        totals = [_total(manifest, config, split) for split in shown]
        rows.append([f"`{config}`", "**all**", *totals, _total(manifest, config)])
    lines = ["## Contents", "", "Rows per config, level and split (`default` holds every source with the common "
             "columns only; each source's own config adds its own columns)."
             + (" `human_verified` rows are copies of test rows: the total counts them once." if HUMAN_VERIFIED
                in shown else ""), ""]
    lines += _table(["config", "level", *shown, "total"], rows)
    missing = [f"`{config}` has no {split} rows" for config in _config_names(manifest) for split in SPLITS
               if not manifest.configs[config].splits.get(split)]
    if missing:
        lines += ["", "A split with no rows is not declared, because `datasets` cannot load an empty split: "
                  + "; ".join(missing) + "."]
    return lines


def _extra_section(manifest: ReleaseManifest) -> list[str]:
    """Which configs have the extra splits, what they mean, and the review behind `human_verified`."""
    extras = _extras(manifest)
    if not extras:
        return []
    repo = manifest.repo_id or "path/or/repo_id"
    lines = ["## Human-verified and longitudinal splits", ""]
    for split in extras:
        names = [c for c in _config_names(manifest) if split in manifest.configs[c].splits]
        lines += [f"- `{split}` ({', '.join(f'`{c}`: {_total(manifest, c, split)} rows' for c in names)}): "
                  f"{EXTRA_MEANING[split]}."]
    reviews = manifest.reviews
    if reviews:
        lines += ["", "Review decisions so far (kept in `reviews/`, one file per source, and applied to every later "
                  "release while the row still reads the same): " + "; ".join(
                      f"`{source}` {info.accepted} accepted, {info.rejected} rejected"
                      for source, info in sorted(reviews.items())) + "."]
    # The example names a source's own config where one has the split (`default` is listed first).
    source = next(c for c in [*_config_names(manifest)[1:], DEFAULT_CONFIG]
                  if extras[0] in manifest.configs[c].splits)
    return lines + ["", "```python", *(f'{split} = datasets.load_dataset("{repo}", "{source}", split="{split}")'
                                       for split in extras if split in manifest.configs[source].splits),
                    "```", ""]


def _split_section(manifest: ReleaseManifest) -> list[str]:
    dates = manifest.split_dates
    lines = ["## How the splits are made", "", manifest.split_rule, ""]
    if dates.newest_event_date:
        lines += [f"- newest `event_date`: {dates.newest_event_date}",
                  f"- `test`: groups whose latest `event_date` is on or after {dates.test_from}",
                  f"- `validation`: groups whose latest `event_date` is from {dates.validation_from} "
                  f"to before {dates.test_from}",
                  f"- `train`: groups whose latest `event_date` is before {dates.validation_from}", ""]
    lines += ["Group keys:", ""]
    lines += [f"- `{source}`: {info.group_key}" for source, info in sorted(manifest.sources.items())]
    lines += ["", *LIVING]
    refreshing = [source for source, info in sorted(manifest.sources.items()) if info.refresh_to_train]
    if refreshing:
        lines += ["", f"Refresh rule ({', '.join(f'`{s}`' for s in refreshing)}; LiveNewsBench's, any period): when a "
                  "release's newest month is later than the previous release's, the rows the previous release had in "
                  "validation or test move to train with their whole group, and a row once in train stays there; "
                  "new rows fill validation and test. `CHANGELOG.md` says how many moved."]
    return lines


def _funnel_section(manifest: ReleaseManifest) -> list[str]:
    lines = ["## From inputs to questions", "", "Each source's stages, and why candidates were dropped "
             "(the dropped ones are kept with their reason in the source's `rejected.parquet`).", ""]
    for source, info in sorted(manifest.sources.items()):
        runs = len(info.runs)
        merged = f"; {info.duplicates_dropped} duplicate ids merged away" if info.duplicates_dropped else ""
        plural = "s" if runs > 1 else ""
        carried = info.carried
        kept = (f" ({carried} carried from the previous release, {info.carried_not_rechecked} of them not "
                "re-checked this week)" if carried else "")
        lines += [f"### {source}", "", f"{info.rows} released rows{kept} from {runs} run{plural} this week{merged}.",
                  ""]
        lines += _table(["stage", "count"], [[f"`{s.stage}`", s.count] for s in info.funnel]) + [""]
        rejects = sorted(info.rejects.items(), key=lambda item: (-item[1], item[0]))
        lines += _gate_line(source, info)
        if rejects:
            lines += _table(["reject reason", "count", "why"],
                            [[f"`{reason}`", n, _explanation(source, reason)] for reason, n in rejects]) + [""]
        generators = ", ".join(f"`{g}`" for g in info.generators) or "none"
        lines += [f"Generators: {generators}.", ""]
    return lines


def _gate_line(source: str, info: SourceSummary) -> list[str]:
    """What the question-quality gate did to the source's candidates this week, in a sentence."""
    spec = sources().get(source)
    if spec is None or GATE_STAGE not in {stage.name for stage in spec.stages}:
        return []
    dropped = {reason: n for reason, n in info.rejects.items() if spec.reason_stage.get(reason) == GATE_STAGE}
    passed = info.funnel_counts().get(GATE_PASSED)
    if passed is None and not dropped:
        return []
    why = ", ".join(f"`{reason}` {n}" for reason, n in sorted(dropped.items(), key=lambda i: (-i[1], i[0])))
    total = sum(dropped.values())
    return [f"Question-quality gate: {passed or 0} candidates passed, {total} sent back" + (f" ({why})." if why else
                                                                                           "."), ""]


def _usage_section(manifest: ReleaseManifest) -> list[str]:
    repo = manifest.repo_id or "path/or/repo_id"
    # The example must run: name a source config that has a test split, Wikidata first.
    with_test = [name for name in sorted(manifest.sources, key=lambda n: (n != "wikidata", n))
                 if "test" in manifest.configs[name].splits]
    source = with_test[0] if with_test else DEFAULT_CONFIG
    cutoff = manifest.split_dates.test_from or "2026-01-01"
    year, month, day = (int(part) for part in cutoff.split("-"))
    return [
        "## How to load", "", "```python", "import datasets", "",
        f'test = datasets.load_dataset("{repo}", "{source}", split="test")',
        f'everything = datasets.load_dataset("{repo}")  # the default config: all sources, common columns',
        f'pinned = datasets.load_dataset("{repo}", "{source}", split="test", revision="{manifest.version}")',
        "```", "",
        "## Only questions newer than your model", "",
        "`event_date` is when the fact happened or changed. Keep the rows after your model's training cutoff:", "",
        "```python", "from datetime import date", "",
        f"cutoff = date({year}, {month}, {day})  # your model's training cutoff",
        'fresh = test.filter(lambda row: row["event_date"] > cutoff)', "```", "",
    ]


def _changes_section(manifest: ReleaseManifest) -> list[str]:
    lines = ["## What changed", ""]
    previous, diff = manifest.previous_version, manifest.changes
    if not previous or diff is None:
        return lines + ["The first release. `CHANGELOG.md` will list what each later release changes.", ""]
    counts = {part: sum(moves.values()) for part, moves in
              (("added", diff.added), ("retired", diff.retired), ("moved", diff.moved),
               ("regenerated", diff.regenerated))}
    refreshed = "".join(f" Refresh: `{source}` moved " + ", ".join(f"{n} rows {move}" for move, n in moves.items())
                        + "." for source, moves in sorted(diff.refreshed.items()))
    verified = diff.human_verified
    reviewed = (f" {sum(verified.added.values())} rows added to human_verified, "
                f"{sum(verified.removed.values())} removed." if verified.added or verified.removed else "")
    why = diff.retired_why
    reasons = f" ({', '.join(f'{reason}: {n}' for reason, n in why.items())})" if why else ""
    unchecked = sum(diff.carried_not_rechecked.values())
    carried = f" {unchecked} carried rows were not re-checked this week." if unchecked else ""
    return lines + [f"Since {previous}: {counts['added']} rows added, {counts['retired']} retired{reasons}, "
                    f"{counts['moved']} moved between splits, {counts['regenerated']} rewritten by a new "
                    f"generator version.{refreshed}{reviewed}{carried} `CHANGELOG.md` has every release and lists "
                    "each retired row with its reason.", ""]


def _answers_section(manifest: ReleaseManifest) -> list[str]:
    grader = manifest.grader_version or "timelyqa_grader_v1"
    return [
        "## Answers and grading", "",
        "`answer` is the display string. `answer_type` says what kind of answer it is (`entity`, `number`, "
        "`quantity`, `date`, `list`, `text`) and `answer_value` holds it normalised: a number as a decimal with its "
        "precision (the power of ten of its last digit), a quantity with its unit as a pint symbol (`m`, `°C`, "
        "`km**2`, `%`, `EUR`) and the scale the question asks in, a date in ISO at day, month or year precision, a "
        "list as its items. A question whose answer has a unit or a scale says it (\"..., in metres?\", \"in "
        "millions of euros\"). `answer_aliases` lists other surface forms for consumers that compare strings; no "
        "alias is the different answer of another row asking the same question.", "",
        f"Graded by `timelyqa.rewards` ({grader}): numbers and quantities by value at the gold's precision, with "
        "units converted; dates at the gold's precision in any common form, the weekday optional; lists as sets "
        "with any separators; names and text after SQuAD normalisation, against the answer and its aliases.", "",
        "| gold | accepted | graded wrong |", "|---|---|---|",
        "| `1.92 m` (quantity, m) | `1.92`, `192 cm`, `1.920 metres` | `1.93 m`, `1.9`, `1.92 kg` |",
        "| `18 million` (quantity, EUR, in millions) | `18`, `18,000,000`, `€18m` | `19 million`, `£18 million` |",
        "| `14 °C` (quantity, °C) | `14`, `57.2 °F` | `15 °C` |",
        "| `Thursday 5 November 2026` (date, day) | `5 November 2026`, `2026-11-05`, `Nov 5, 2026` | "
        "`4 November 2026`, `November 2026` |",
        "| `Alder Weir; Corran Sluice` (list) | `Corran Sluice and Alder Weir` | `Alder Weir` |", "",
    ]


def _training_section() -> list[str]:
    return [
        "## Training with RLVR (verl, TRL)", "",
        "`timelyqa export verl RELEASE --out DIR` and `timelyqa export trl RELEASE --out DIR` write "
        "`DIR/train.parquet` from the train split; a live question (no fixed answer) is never a training row, "
        "and the command says how many it left out. Each prompt states the time once and asks for the answer, in "
        "the form its type needs (\"a number in metres\", \"a date\", \"one or more names\"), inside "
        "`<answer></answer>`. verl rows have verl's five columns, with `reward_model.ground_truth` "
        '`{"target": [answer, *aliases], "answer_type": ..., "answer_value": {...}}`; TRL rows have a '
        "conversational `prompt` plus `answer`, `answer_aliases`, `answer_type` and `answer_value`. The reward "
        "file `timelyqa/rewards.py` (with the folder `timelyqa/grading/` beside it) needs one package beside the "
        "trainer: `pip install pint`. "
        "`compute_score` and `answer_reward` give the grade (1.0 or 0.0); `compute_score_f1` and "
        "`answer_f1_reward` give token F1 for names and text.", "",
        "```python", "from datasets import load_dataset",
        "from timelyqa.rewards import answer_reward, compute_score", "",
        "# verl: data.train_files=DIR/train.parquet reward.custom_reward_function.path=path/to/timelyqa/rewards.py "
        "reward.custom_reward_function.name=compute_score",
        'compute_score("timelyqa/official_site", "<answer>192 cm</answer>", {"target": ["1.92 m"], '
        '"answer_type": "quantity", "answer_value": {"number": "1.92", "precision": -2, "unit": "m"}})  # 1.0', "",
        '# TRL: split="train" gives the Dataset GRPOTrainer takes; without it load_dataset returns a DatasetDict',
        'train = load_dataset("parquet", data_files="DIR/train.parquet", split="train")',
        "# GRPOTrainer(model=..., reward_funcs=answer_reward, train_dataset=train)",
        'answer_reward(["<answer>Tomasz Wielki</answer>"], answer=["Tomasz Wielki"], answer_aliases=[[]], '
        'answer_type=["entity"], answer_value=[{}])  # [1.0]',
        "```", "",
    ]


def _scoring_section(manifest: ReleaseManifest) -> list[str]:
    version = manifest.version
    repo = manifest.repo_id or "ORG/NAME"
    return [
        "## Scoring a model", "",
        "`timelyqa eval` asks each test question with the training prompt (or reads a file of predictions), grades "
        "it with the grader above, resolves the live questions' recipes at the evaluation clock, and writes every "
        "row's prediction and verdict (`results.parquet`) and a report of accuracy by config, source, level and "
        "event month with 95% intervals, and around a model's training cutoff (`report.md`). A live question "
        "whose recipe fails is reported unscorable, never wrong.", "",
        "```",
        f"timelyqa eval {repo}@{version} --model NAME --base-url http://127.0.0.1:8080/v1 --after 2026-01-01 "
        "--out eval/",
        f"timelyqa eval {repo}@{version} --predictions answers.jsonl --out eval/   "
        '# {"id": ..., "answer": ...} per line',
        f"timelyqa export lm-eval {repo}@{version} --out tasks/   # lm_eval --include_path tasks/ "
        "--tasks timelyqa_default ...",
        "```", "",
    ]


def render_card(manifest: ReleaseManifest | dict[str, Any]) -> str:
    """README.md for a release manifest (the model, or the file's JSON object); the same manifest gives the same
    text."""
    manifest = ReleaseManifest.of(manifest)
    names = sorted(manifest.sources)
    described = "; ".join(f"**{s}** ({_summary(s)})" for s in names)
    body = [
        f"# {PRETTY_NAME} {manifest.version}", "",
        "Question-answer pairs whose answers change with the world, each dated by the event that made it true "
        f"and verified against its source. Sources in this release: {described}.", "",
        *guide.synthetic_note(manifest),
        f"Built {manifest.created} by timelyqa {manifest.code_version}. `manifest.json` lists the sha256 of "
        "every data file, the input hashes and the counts of every stage.", "",
        "## Canary", "",
        "Every row carries this string in its `canary` column, and so does this card. If you build a pretraining "
        "or fine-tuning corpus, drop any document that contains it, so the test split stays unseen:", "",
        "```", manifest.canary, "```", "",
        *_counts_section(manifest), "",
        *guide.glossary(manifest),
        *_split_section(manifest), "",
        *_extra_section(manifest),
        *[line for source in names for line in _section(source)],
        *_funnel_section(manifest),
        *_usage_section(manifest),
        *guide.live_resolve(manifest),
        *_changes_section(manifest),
        *_answers_section(manifest),
        *_training_section(),
        *_scoring_section(manifest),
        *guide.licences(manifest),
    ]
    front = yaml.safe_dump(front_matter(manifest), sort_keys=False, allow_unicode=True, default_flow_style=False)
    return "---\n" + front + "---\n\n" + "\n".join(body)
