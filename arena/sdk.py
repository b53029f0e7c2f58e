"""What an agent imports inside the sandbox.

Standard library only at import time: a tool call must not pay for importing
openai or httpx. The agent's one channel out is the Unix socket at
``$ARENA_SOCKET`` (``/run/arena.sock`` in the sandbox), served by the
validator: ``/tools/<name>`` runs a shop tool against this episode's state,
``/v1/...`` is the validator's OpenAI-compatible inference proxy.

    import arena.sdk as sdk

    def agent_main(problem: dict) -> None:
        hits = sdk.tool("find_product", q=problem["query"], page=1)
        sdk.tool("recommend_product", product_ids=hits[0]["product_id"])
        sdk.tool("terminate", status="success")
"""

from __future__ import annotations

import http.client
import json
import os
import socket
from typing import Any

__all__ = ["ToolError", "tool", "tool_schemas", "openai_client", "model", "problem"]

_SOCKET_ENV = "ARENA_SOCKET"
_DEFAULT_SOCKET = "/run/arena.sock"
_HOST = "arena.sandbox"
_episode_cache: dict[str, Any] | None = None


class ToolError(Exception):
    """A tool rejected the call (unknown tool, bad arguments, terminated episode)."""


class ArenaConnectionError(RuntimeError):
    """The validator's socket is not reachable (the agent is not in an episode)."""


class _UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__(_HOST, timeout=timeout)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self._path)
        except OSError as exc:
            sock.close()
            raise ArenaConnectionError(f"cannot reach the arena socket {self._path}: {exc}") from None
        self.sock = sock


def socket_path() -> str:
    return os.environ.get(_SOCKET_ENV, _DEFAULT_SOCKET)


def _request(method: str, path: str, payload: Any = None, timeout: float = 120.0) -> Any:
    connection = _UnixHTTPConnection(socket_path(), timeout)
    try:
        body = None if payload is None else json.dumps(payload).encode()
        headers = {"Content-Type": "application/json"} if body is not None else {}
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        data = response.read()
    finally:
        connection.close()
    if response.status >= 400:
        raise ArenaConnectionError(f"{method} {path} answered {response.status}: {data[:300]!r}")
    return json.loads(data)


def _episode() -> dict[str, Any]:
    global _episode_cache
    if _episode_cache is None:
        _episode_cache = _request("GET", "/episode")
    return _episode_cache


def problem() -> dict[str, Any]:
    """The problem (id, intent, query); never the reward."""
    return dict(_episode()["problem"])


def model() -> str:
    """The model name to send to ``openai_client()``."""
    return str(_episode()["model"])


def tool_schemas() -> list[dict[str, Any]]:
    """OpenAI function schemas of the tools this problem allows."""
    return list(_episode()["tools"])


def tool(name: str, **arguments: Any) -> Any:
    """Call a shop tool; returns its result or raises ToolError."""
    answer = _request("POST", f"/tools/{name}", arguments)
    if not answer.get("ok"):
        raise ToolError(answer.get("error") or "tool call failed")
    return answer.get("result")


def openai_client(**kwargs: Any) -> Any:
    """An ``openai.OpenAI`` client wired to the validator's inference proxy."""
    import httpx  # imported here: only agents that use an LLM pay for it
    import openai

    transport = httpx.HTTPTransport(uds=socket_path())
    http_client = httpx.Client(transport=transport, timeout=kwargs.pop("timeout", 300.0))
    return openai.OpenAI(
        base_url=f"http://{_HOST}/v1", api_key="sandbox", http_client=http_client, max_retries=0, **kwargs
    )
