"""A scripted OpenAI-compatible judge server, for the tests and the benchmark.

It speaks ``POST /v1/chat/completions`` and ``GET /v1/models`` as vLLM does,
and answers each request from a script: a valid judgment, raw content
(malformed JSON, schema-violating values), an HTTP error status, or a delay
(past the client's timeout: a hang). Scripts are keyed by model and episode
(the episode id is read from the judge's prompt), consumed in order, the last
step repeating. Every request body is kept for assertions.

Run standalone (the benchmark does): ``python -m judge.calibration.scripted_server --port 8011 --latency-ms 300``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal

import uvicorn
from fastapi import FastAPI, Request
from pydantic import BaseModel
from starlette.responses import JSONResponse

_EPISODE = re.compile(r"^Episode (\S+) \(rubric", re.MULTILINE)


class Step(BaseModel):
    kind: Literal["reply", "raw", "status", "delay"]
    level: float | None = None
    explanation: str = "scripted judgment"
    content: str | None = None
    status: int = 500
    delay_s: float = 0.0


def reply(level: float, explanation: str = "scripted judgment", delay_s: float = 0.0) -> Step:
    return Step(kind="reply", level=level, explanation=explanation, delay_s=delay_s)


def raw(content: str) -> Step:
    """Content sent as is: malformed JSON, or JSON that violates the schema."""
    return Step(kind="raw", content=content)


def status(code: int) -> Step:
    return Step(kind="status", status=code)


def hang(seconds: float) -> Step:
    """A reply that comes only after ``seconds``: past the client's timeout it is a hang."""
    return Step(kind="delay", level=0.9, delay_s=seconds)


class ScriptedJudgeServer:
    """``script`` keys: "model/episode", "episode", "model" or "*" (tried in that order)."""

    def __init__(
        self,
        script: dict[str, list[Step]] | None = None,
        *,
        default: Step | None = None,
        latency_s: float = 0.0,
        models: list[str] | None = None,
    ) -> None:
        self.script = {key: list(steps) for key, steps in (script or {}).items()}
        self.default = default or reply(0.9)
        self.latency_s = latency_s
        self.models = models
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0  # the most requests it held at once: what a concurrency limit is checked by
        self._cursor: dict[str, int] = {}
        self._lock = threading.Lock()

    def _next(self, model: str, episode: str) -> Step:
        with self._lock:
            for key in (f"{model}/{episode}", episode, model, "*"):
                steps = self.script.get(key)
                if steps:
                    position = self._cursor.get(key, 0)
                    self._cursor[key] = position + 1
                    return steps[min(position, len(steps) - 1)]
        return self.default

    def calls_for(self, episode: str) -> list[dict[str, Any]]:
        return [body for body in self.requests if episode_of(body) == episode]

    async def complete(self, body: dict[str, Any]) -> JSONResponse:
        self.requests.append(body)
        model = str(body.get("model", ""))
        if self.models is not None and model not in self.models:
            return _error(404, f"The model `{model}` does not exist.")
        step = self._next(model, episode_of(body) or "")
        self.in_flight += 1  # one event loop serves every request, so no lock is needed
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.latency_s or step.delay_s:
                await asyncio.sleep(self.latency_s + step.delay_s)
        finally:
            self.in_flight -= 1
        if step.kind == "status":
            return _error(step.status, f"scripted status {step.status}")
        if step.kind == "raw":
            content = step.content
        else:
            content = json.dumps({"level": step.level, "explanation": step.explanation})
        prompt_chars = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
        usage = {"prompt_tokens": prompt_chars // 4, "completion_tokens": len(content or "") // 4}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        return JSONResponse(
            {
                "id": f"chatcmpl-scripted-{len(self.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
                ],
                "usage": usage,
            }
        )


def episode_of(body: dict[str, Any]) -> str | None:
    for message in body.get("messages", []):
        found = _EPISODE.search(str(message.get("content", "")))
        if found:
            return found.group(1)
    return None


def _error(code: int, message: str) -> JSONResponse:
    return JSONResponse({"object": "error", "message": message, "type": "ScriptedError", "code": code}, code)


def create_app(server: ScriptedJudgeServer) -> FastAPI:
    app = FastAPI(title="scripted judge server")

    @app.post("/v1/chat/completions")
    async def chat_completions(request: Request) -> JSONResponse:
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "body is not JSON")
        return await server.complete(body)

    @app.get("/v1/models")
    async def models() -> dict:
        names = server.models or sorted({key.split("/")[0] for key in server.script} - {"*"})
        return {"object": "list", "data": [{"id": n, "object": "model", "owned_by": "scripted"} for n in names]}

    return app


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def serve_in_thread(server: ScriptedJudgeServer) -> Iterator[str]:
    """Serve on a loopback port in a thread with its own event loop; yields the base URL."""
    port = free_port()
    config = uvicorn.Config(
        create_app(server), host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=1
    )
    runner = uvicorn.Server(config)
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not runner.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the scripted judge server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        runner.should_exit = True
        thread.join(timeout=10)


def main() -> None:  # pragma: no cover - exercised by benchmarks/judge.py
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8011)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--level", type=float, default=0.9, help="The level every reply carries.")
    args = parser.parse_args()
    server = ScriptedJudgeServer(default=reply(args.level), latency_s=args.latency_ms / 1000.0)
    uvicorn.run(create_app(server), host="127.0.0.1", port=args.port, log_level="warning", access_log=False)


if __name__ == "__main__":  # pragma: no cover
    main()
