"""A scripted OpenAI-compatible server on 127.0.0.1, for the tests of the LLM layer.

A test double, used because the failures under test (bad JSON, wrong shapes, timeouts, 429s, 5xx,
refusals) cannot be provoked from a real model at will; tests/test_llm_real.py drives a real one.
It speaks the chat-completions wire format: `POST /v1/chat/completions`, `GET /v1/models`.
Each request takes the next scripted `Step`; with the script empty, `default` answers.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.localserver import LocalServer


@dataclass
class Step:
    """One scripted answer: an assistant message, or an HTTP error, after `delay` seconds."""

    content: str | None = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    refusal: str | None = None
    finish_reason: str = "stop"
    body: bytes | None = None  # sent as is, in place of a completion


def reply(value: Any) -> Step:
    """A well-formed answer whose content is `value` as JSON."""
    return Step(content=json.dumps(value))


class ScriptedLLM:
    """The server; `with ScriptedLLM() as llm:` serves on a free port until the block ends."""

    def __init__(self, models: tuple[str, ...] = ("scripted-model",),
                 default: Callable[[dict[str, Any]], Step] | None = None) -> None:
        self.models = models
        self.default = default or (lambda request: Step(status=500, body=b'{"error": "script is empty"}'))
        self.script: deque[Step] = deque()
        self.requests: list[dict[str, Any]] = []  # bodies of chat requests, in arrival order
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._local = LocalServer(self._handler())

    @property
    def url(self) -> str:
        return f"{self._local.url}/v1"

    @property
    def calls(self) -> int:
        with self._lock:
            return len(self.requests)

    def then(self, *steps: Step) -> ScriptedLLM:
        with self._lock:
            self.script.extend(steps)
        return self

    def __enter__(self) -> ScriptedLLM:
        self._local.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._local.close()

    def _next(self, request: dict[str, Any], headers: dict[str, str]) -> Step:
        with self._lock:
            self.requests.append(request)
            self.headers.append(headers)
            if self.script:
                return self.script.popleft()
        return self.default(request)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet: pytest shows failures, not traffic
                pass

            def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and left

            def do_GET(self) -> None:
                if self.path.rstrip("/") == "/v1/models":
                    data = [{"id": m, "object": "model", "owned_by": "test"} for m in server.models]
                    self._send(200, json.dumps({"object": "list", "data": data}).encode())
                else:
                    self._send(404, b'{"error": {"message": "not found"}}')

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                request = json.loads(self.rfile.read(length) or b"{}")
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, b'{"error": {"message": "not found"}}')
                    return
                step = server._next(request, {k.lower(): v for k, v in self.headers.items()})
                if step.delay:
                    time.sleep(step.delay)
                if step.body is not None or step.status != 200:
                    body = step.body if step.body is not None else json.dumps(
                        {"error": {"message": f"scripted HTTP {step.status}", "type": "scripted"}}).encode()
                    self._send(step.status, body, step.headers)
                    return
                message = {"role": "assistant", "content": step.content, "refusal": step.refusal}
                completion = {
                    "id": f"chatcmpl-{server.calls}", "object": "chat.completion", "created": 1_700_000_000,
                    "model": request.get("model", ""),
                    "choices": [{"index": 0, "message": message, "finish_reason": step.finish_reason}],
                    "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
                }
                self._send(200, json.dumps(completion).encode(), step.headers)

        return Handler
