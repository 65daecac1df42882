"""An lm-evaluation-harness task for a release's static configs: the same prompt as the training export and the
same grader, so that `lm_eval --include_path DIR --tasks timelyqa_<config>` scores a model the way timelyqa does.

`write_tasks` writes DIR: one task YAML per config (reading the release folder, or the Hub repository, with
`datasets.load_dataset`) and a `utils.py` that points lm-eval at the functions below. Live questions (no fixed
answer) are left out: `timelyqa eval` resolves them when it asks them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from timelyqa.export import PROMPT_VERSION, prompt_messages
from timelyqa.rewards import GRADER_VERSION, Gold, extract_answer, grade

TASK_PREFIX = "timelyqa_"
MAX_GEN_TOKS = 256
_UTILS = '''"""lm-eval's hooks for timelyqa's tasks (written by `timelyqa export lm-eval`): timelyqa's own prompt and grader."""

from timelyqa.harness import doc_to_text, process_docs, process_results  # noqa: F401
'''


def process_docs(dataset: Any) -> Any:
    """The rows with a fixed answer (a `datasets.Dataset`); live questions are `timelyqa eval`'s."""
    return dataset.filter(lambda doc: bool((doc.get("answer") or "").strip()))


def doc_to_text(doc: dict[str, Any]) -> str:
    """The question with its one statement of time and the answer's form (timelyqa.export's prompt)."""
    return prompt_messages(doc["question"], doc.get("as_of"), doc.get("answer_type"), doc.get("answer_value"))[0][
        "content"]


def process_results(doc: dict[str, Any], results: Sequence[str]) -> dict[str, float]:
    """The grade (1.0 or 0.0) of the reply's final answer by the release's grader."""
    gold = Gold.of(doc["answer"], doc.get("answer_aliases"), doc.get("answer_type"), doc.get("answer_value"))
    return {"exact_match": grade(extract_answer(results[0] if results else ""), gold)}


class Hook(str):
    """A function of utils.py, written as lm-eval's `!function utils.NAME` tag."""


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(Hook, lambda dumper, hook: dumper.represent_scalar("!function", f"utils.{hook}"))


def task(config: str, dataset_path: str, split: str, revision: str | None = None) -> dict[str, Any]:
    """One task's YAML as a mapping: a generative task on `split` of `config`."""
    kwargs: dict[str, Any] = {"revision": revision} if revision else {}
    return {
        "task": f"{TASK_PREFIX}{config}",
        "dataset_path": dataset_path,
        "dataset_name": config,
        **({"dataset_kwargs": kwargs} if kwargs else {}),
        "test_split": split,
        "output_type": "generate_until",
        "process_docs": Hook("process_docs"),
        "doc_to_text": Hook("doc_to_text"),
        "doc_to_target": "answer",
        "process_results": Hook("process_results"),
        "generation_kwargs": {"until": [], "max_gen_toks": MAX_GEN_TOKS, "do_sample": False, "temperature": 0.0},
        "metric_list": [{"metric": "exact_match", "aggregation": "mean", "higher_is_better": True}],
        "metadata": {"version": 1.0, "prompt": PROMPT_VERSION, "grader": GRADER_VERSION},
    }


def write_tasks(configs: Sequence[str], dataset_path: str, out: Path, *, split: str = "test",
                revision: str | None = None) -> list[str]:
    """Write one task YAML per config and the shared utils.py into `out`; the task names."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "utils.py").write_text(_UTILS, encoding="utf-8")
    names = []
    for config in configs:
        spec = task(config, dataset_path, split, revision)
        text = yaml.dump(spec, Dumper=_Dumper, sort_keys=False, allow_unicode=True)
        (out / f"{spec['task']}.yaml").write_text(text, encoding="utf-8")
        names.append(spec["task"])
    (out / "README.md").write_text(
        f"# timelyqa tasks for lm-evaluation-harness\n\nRelease: `{dataset_path}`"
        + (f" at `{revision}`" if revision else "") + f", split `{split}`; prompt `{PROMPT_VERSION}`, grader "
        f"`{GRADER_VERSION}`.\n\n```\nlm_eval --include_path {out} --tasks {','.join(names)} \\\n"
        "    --model local-chat-completions --model_args model=NAME,base_url=http://HOST/v1/chat/completions \\\n"
        "    --apply_chat_template\n```\n\n" + json.dumps({"tasks": names}) + "\n", encoding="utf-8")
    return names
