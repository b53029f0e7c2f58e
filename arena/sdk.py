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

import json
import os
import socket
from _thread import _local  # threading.local itself, without importing threading at start
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


_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def _quote(segment: str) -> str:
    # A tool name is the agent's text: percent-encoded, it is one path segment whatever it holds.
    return "".join(chr(b) if b in _UNRESERVED else f"%{b:02X}" for b in segment.encode())


class _Channel:
    """One keep-alive HTTP/1.1 connection to the arena socket.

    A hand-written client, not ``http.client``: it speaks to one known server, and
    http.client's header parsing plus a fresh connection per call cost several
    times the runner's whole per-call budget. One channel per thread and process,
    since a connection cannot be shared by concurrent requests or across a fork.
    """

    def __init__(self, path: str, timeout: float) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(path)
        except OSError as exc:
            sock.close()
            raise ArenaConnectionError(f"cannot reach the arena socket {path}: {exc}") from None
        self.sock = sock
        self.reader = sock.makefile("rb")
        self.pid = os.getpid()

    def close(self) -> None:
        self.reader.close()
        self.sock.close()

    def exchange(self, method: str, path: str, body: bytes | None, timeout: float) -> tuple[int, bytes, bool]:
        """Sends one request; returns (status, body, whether the server keeps the connection)."""
        self.sock.settimeout(timeout)
        head = f"{method} {path} HTTP/1.1\r\nhost: {_HOST}\r\n"
        if body is not None:
            head += f"content-type: application/json\r\ncontent-length: {len(body)}\r\n"
        self.sock.sendall(head.encode() + b"\r\n" + (body or b""))
        status_line = self.reader.readline(65537)
        try:
            return self._read_response(status_line)
        except ValueError:
            raise ArenaConnectionError(
                f"{method} {path}: the arena socket answered {status_line[:100]!r}, not HTTP"
            ) from None

    def _read_response(self, status_line: bytes) -> tuple[int, bytes, bool]:
        version, status = status_line.split(None, 2)[:2]
        if not version.startswith(b"HTTP/") or not status.isdigit():
            raise ValueError(status_line)
        length, chunked, keep = None, False, version == b"HTTP/1.1"
        while True:
            line = self.reader.readline(65537)
            if line in (b"\r\n", b"\n", b""):
                break
            name, _, value = line.partition(b":")
            name, value = name.strip().lower(), value.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding":
                chunked = value == b"chunked"
            elif name == b"connection" and value == b"close":
                keep = False
        if chunked:
            data = self._read_chunked()
        elif length is not None:
            data = self.reader.read(length)
            if len(data) < length:
                raise ConnectionResetError("the arena socket closed in the middle of an answer")
        else:
            data, keep = self.reader.read(), False
        return int(status), data, keep

    def _read_chunked(self) -> bytes:
        parts = []
        while True:
            size = int(self.reader.readline(1024).split(b";", 1)[0], 16)
            if size == 0:
                while self.reader.readline(65537) not in (b"\r\n", b"\n", b""):
                    pass
                return b"".join(parts)
            parts.append(self.reader.read(size))
            self.reader.readline(1024)


_channels = _local()


def socket_path() -> str:
    return os.environ.get(_SOCKET_ENV, _DEFAULT_SOCKET)


def _request(method: str, path: str, payload: Any = None, timeout: float = 120.0) -> Any:
    channel: _Channel | None = getattr(_channels, "channel", None)
    if channel is None or channel.pid != os.getpid():
        channel = _channels.channel = _Channel(socket_path(), timeout)
    body = None if payload is None else json.dumps(payload).encode()
    try:
        status, data, keep = channel.exchange(method, path, body, timeout)
    except BaseException:
        # A failed or interrupted exchange leaves the connection mid-message: never reuse it.
        # No retry either: the server may have run the call (a tool call is not idempotent).
        keep = False
        raise
    finally:
        if not keep:
            _channels.channel = None
            channel.close()
    if status >= 400:
        raise ArenaConnectionError(f"{method} {path} answered {status}: {data[:300]!r}")
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
    answer = _request("POST", f"/tools/{_quote(name)}", arguments)
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
