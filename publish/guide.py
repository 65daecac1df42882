"""The card's parts for a first-time user: whether the rows are synthetic demo data, what each common column means
(and how a model is given `as_of`), the licence of every config, and the complete command that answers the live
questions of this release."""

from __future__ import annotations

import shlex

from timelyqa.release_manifest import ReleaseManifest
from timelyqa.sources import sources

DEFAULT_CONFIG = "default"
LIVE_SOURCE = "official_site"
"""The source whose test rows are live questions: a recipe and no answer, resolved at the evaluation clock."""

COLUMNS = (
    ("id", "a stable hash of the source, the question and the facts that define the answer: the same fact has the "
           "same id in every release"),
    ("question", "English text, as it is asked"),
    ("answer", "the short answer as displayed (an entity, a number, a date, a phrase); empty for a live question"),
    ("answer_aliases", "other accepted surface forms (labels, unit variants)"),
    ("answer_type", "what kind of answer it is: `entity`, `number`, `quantity`, `date`, `list` or `text`"),
    ("answer_value", "the answer normalised for grading (number and precision, unit, ISO date, list items)"),
    ("source", "where the row comes from: `wikidata`, `wikipedia`, `news`, `site_tree` or `official_site`"),
    ("level", "the source's difficulty (`L1`-`L3`, `easy`-`hard`, `frequent_update`, ...)"),
    ("event_date", "when the fact happened or changed: what the splits and a model's cutoff filter go by"),
    ("as_of", "the moment at which `answer` is true (for a live question: when its recipe last resolved)"),
    ("split", "`train`, `validation` or `test` (and `human_verified`, `longitudinal` where a config has them)"),
    ("evidence", "the pages or revisions the answer was read from: url, title, revision, fetched_at, sha256"),
    ("verification", "how the row was checked and what the check returned"),
    ("generator", "the versioned name of the code that wrote the question"),
    ("canary", "the canary string (see above)"),
)
"""Every column of the `default` config, in its order, with what it means (timelyqa.record.RECORD_SCHEMA)."""

AS_OF = [
    "**A model must be given `as_of`.** An answer here is true at `as_of`, and may be false a week later: ask the "
    "question at that moment. The training and evaluation prompts (`timelyqa export`, `timelyqa eval`) say it once "
    "in front of the question, `As of 2026-11-16, who ...?`, unless the question states its own time (an official "
    "site's `Current time: ...`, a news event's `On 4 November 2026: ...`). Do the same in your own harness:", "",
    "```python",
    "from timelyqa.export import question_text  # the prompts' own rule",
    "",
    'text = question_text(row["question"], row["as_of"])  # "As of 2026-11-16, who ...?"',
    "```", "",
    "A live question (`answer` empty) has no fixed moment: choose the evaluation clock, tell the model that clock "
    "(`Current time: 2026-11-20 09:00 (UTC). ...`), and resolve its recipe at the same clock (below).", "",
]


def synthetic_note(manifest: ReleaseManifest) -> list[str]:
    """The first thing the card says when `timelyqa demo` made the release."""
    if not manifest.synthetic:
        return []
    return ["> **Synthetic demo data.** `timelyqa demo` made this release from the small invented inputs bundled "
            "with timelyqa (`data/demo`: an invented institute's website, news outlets and official sites served on "
            "127.0.0.1, and small Wikidata and Wikipedia snapshots). Its questions are about things that do not "
            "exist: use it to try the tools, never to train or to measure a model. It is dated by its inputs "
            f"({manifest.created}), so the same checkout gives the same release on any day.", ""]


def glossary(manifest: ReleaseManifest) -> list[str]:
    """The common columns (every config has them; a source's own config adds its own), then how to give `as_of`."""
    lines = ["## The common columns", "",
             "Every config has these columns, and `default` has only these; a source's own config adds its own "
             "(described in its section below).", "", "| column | meaning |", "|---|---|"]
    lines += [f"| `{name}` | {meaning} |" for name, meaning in COLUMNS]
    return [*lines, "", *AS_OF]


def _licence(source: str) -> str:
    spec = sources().get(source)
    return spec.licence if spec is not None else "other"


def _terms(licence: str) -> str:
    return licence.upper() if licence != "other" else "other: the terms of the pages in each row's `evidence`"


def licences(manifest: ReleaseManifest) -> list[str]:
    """The licence of every config the release declares, `default` first."""
    names = sorted(manifest.sources)
    mixed = sorted({_licence(s) for s in names})
    default = (_terms(mixed[0]) if len(mixed) == 1 else
               "mixed: each row's terms are those of its `source` (" + "; ".join(
                   f"`{s}`: {_licence(s).upper() if _licence(s) != 'other' else 'other'}" for s in names) + ")")
    rows = [(DEFAULT_CONFIG, default), *((s, _terms(_licence(s))) for s in names if s in manifest.configs)]
    return ["## Licence", "", "| config | licence |", "|---|---|", *(f"| `{c}` | {t} |" for c, t in rows), ""]


def live_resolve(manifest: ReleaseManifest) -> list[str]:
    """The complete command that answers this release's live questions, when it has any."""
    config = manifest.configs.get(LIVE_SOURCE)
    paths = config.splits.get("test") if config is not None else None
    if not paths:
        return []
    summary = manifest.sources.get(LIVE_SOURCE)
    names: dict[str, str] = {}
    for run in summary.runs if summary is not None else []:
        names |= run.manifest.settings.get("vars") or {}
    command = ["timelyqa", "live", "resolve", "--recipes", paths[0], "--at", manifest.created,
               *(a for k, v in sorted(names.items()) for a in ("--var", f"{k}={v}")), "--out", "answers/"]
    lines = ["## Resolving the live questions", "",
             f"The `{LIVE_SOURCE}` test rows are live. Resolve them from this release's folder; `--at` is the clock "
             "you tell the model (ISO 8601 with its offset; here the release's own date):", "", "```", shlex.join(command), "```", "",
             "`answers/answers.parquet` then holds each recipe's answer (or why it failed: a failure is never a "
             "wrong answer). "
             + ("`--var` gives each recipe's `{site}` the origin this release's checks used; " if names else "")
             + "a recipe may reach a private or loopback host only when you name it: `--var site=http://HOST:PORT` "
             "for a recipe that starts with `{site}`, `--allow-host HOST:PORT` for any other."]
    if manifest.synthetic and names:
        lines += ["", "The demo's official sites are the bundled folder `data/demo/official/site` of a timelyqa "
                  "checkout; serve it there first, on the port above: `python3 -m http.server "
                  f"{_port(names)} --bind 127.0.0.1 --directory data/demo/official/site`."]
    return [*lines, ""]


def _port(names: dict[str, str]) -> str:
    from urllib.parse import urlsplit  # noqa: PLC0415

    port = next((urlsplit(v).port for v in names.values() if urlsplit(v).port), None)
    return str(port or 80)
