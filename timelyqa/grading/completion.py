"""The final answer in a completion: the last <answer> tag, an "Answer:" line, or the text without its thinking."""

import re
from typing import Any

_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.IGNORECASE | re.DOTALL)
_THINK_END = re.compile(r"</think>", re.IGNORECASE)
_THINK_OPEN = re.compile(r"<think>.*", re.IGNORECASE | re.DOTALL)
_ANSWER_LINE = re.compile(r"^[\s*_#>-]*(?:the\s+)?(?:final\s+)?answer(?:\s+is)?\s*[*_]*\s*[:：]\s*(.*)$",
                          re.IGNORECASE)


def extract_answer(completion: str) -> str:
    """The final answer a completion gives (timelyqa.rewards says the order of the rules)."""
    tagged = _ANSWER_TAG.findall(completion)
    if tagged:
        return tagged[-1].strip()
    # Reasoning is not the answer: drop all up to the last </think> (chat templates may open <think> in
    # the prompt), and an unterminated <think> to the end (a completion cut off while thinking).
    text = _THINK_OPEN.sub(" ", _THINK_END.split(completion)[-1])
    lines = [line for line in text.splitlines() if line.strip()]
    if lines and (line := _ANSWER_LINE.match(lines[-1])):
        return line.group(1).strip().strip("*_").strip()
    return text.strip()


def completion_text(completion: Any) -> str:
    """The text of a TRL completion: a string, or the last assistant message of a conversation."""
    if isinstance(completion, str):
        return completion
    messages = [m for m in completion if isinstance(m, dict)]
    replies = [m for m in messages if m.get("role", "assistant") == "assistant"] or messages
    content = replies[-1].get("content", "") if replies else ""
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}, ...]
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""

