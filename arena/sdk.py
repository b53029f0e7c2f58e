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

# The C halves of socket and json, not the modules: ``socket`` imports enum and selectors,
# ``json`` imports re (enum again, and the regex compiler), about 8 ms of every agent's
# start-up together (benchmarks/episode.py); the SDK needs neither's Python half.
import _json
import _socket
import io
import os
from _thread import _local  # threading.local itself, without importing threading at start

TYPE_CHECKING = False  # typing costs an agent ~4 ms of start-up; annotations only need it for checkers
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

__all__ = ["ToolError", "tool", "tool_schemas", "openai_client", "model", "problem"]

_SOCKET_ENV = "ARENA_SOCKET"
_DEFAULT_SOCKET = "/run/arena.sock"
_HOST = "arena.sandbox"
_DRAIN_S = 0.02
_episode_cache: dict[str, Any] | None = None


class ToolError(Exception):
    """A tool rejected the call (unknown tool, bad arguments, terminated episode)."""


class ArenaConnectionError(RuntimeError):
    """The validator's socket is not reachable (the agent is not in an episode)."""


_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def _quote(segment: str) -> str:
    # A tool name is the agent's text: percent-encoded, it is one path segment whatever it holds.
    return "".join(chr(b) if b in _UNRESERVED else f"%{b:02X}" for b in segment.encode())


class _SocketReader(io.RawIOBase):
    """What ``socket.makefile("rb")`` reads through, for the C socket: a timeout raises TimeoutError."""

    def __init__(self, sock: _socket.socket) -> None:
        self._sock = sock

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        return self._sock.recv_into(buffer)


class _Decoding:
    """The settings ``_json``'s scanner reads, as ``json.loads`` has them by default."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}.__getitem__


_scan = _json.make_scanner(_Decoding())  # type: ignore[arg-type]  # typeshed wants a JSONDecoder; it reads only these
_JSON_SPACE = " \t\n\r"


def _not_json(value: Any) -> Any:
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


def _dumps(value: Any) -> str:
    """``json.dumps(value)``, through the same C encoder ``json`` itself uses (a fresh one per call:
    it keeps the circular-reference markers of the value it encodes)."""
    encode = _json.make_encoder({}, _not_json, _json.encode_basestring_ascii, None, ": ", ", ", False, False, True)
    return "".join(encode(value, 0))


def _loads(data: bytes) -> Any:
    """``json.loads(data)`` for a well-formed UTF-8 answer; anything else goes to ``json`` itself,
    which decodes the other encodings and raises its own error on malformed input."""
    try:
        text = data.decode()
        value, end = _scan(text, len(text) - len(text.lstrip(_JSON_SPACE)))
        if not text[end:].strip(_JSON_SPACE):
            return value
    except (ValueError, StopIteration):
        pass
    import json

    return json.loads(data)


class _Channel:
    """One keep-alive HTTP/1.1 connection to the arena socket.

    A hand-written client, not ``http.client`` (nor httpcore under the openai client):
    it speaks to one known server, and a general client's header handling plus, for
    http.client, a fresh connection per call cost several times the runner's whole
    per-call budget. A connection serves one request at a time and belongs to the
    process that opened it (a forked child opens its own).
    """

    def __init__(self, path: str, timeout: float | None) -> None:
        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(path)
        except OSError as exc:
            sock.close()
            raise ArenaConnectionError(f"cannot reach the arena socket {path}: {exc}") from None
        self.sock = sock
        self.reader = io.BufferedReader(_SocketReader(sock))
        self.pid = os.getpid()
        self.keep = True  # False once the server said it closes, or a message was left half read

    def close(self) -> None:
        self.keep = False
        self.reader.close()
        self.sock.close()

    def send(self, method: str, target: str, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        lines = [f"{method} {target} HTTP/1.1\r\n".encode()]
        lines += [b"%s: %s\r\n" % pair for pair in headers]
        self.sock.sendall(b"".join(lines) + b"\r\n" + body)  # one write: the server wakes once

    def read_head(self) -> tuple[int, list[tuple[bytes, bytes]], int | None, bool]:
        """(status, headers, content length, chunked); ValueError when it is not HTTP."""
        status_line = self.reader.readline(65537)
        version, status = status_line.split(None, 2)[:2]
        if not version.startswith(b"HTTP/") or not status.isdigit():
            raise ValueError(f"the arena socket answered {status_line[:100]!r}, not HTTP")
        headers, length, chunked = [], None, False
        self.keep = version == b"HTTP/1.1"
        while True:
            line = self.reader.readline(65537)
            if line in (b"\r\n", b"\n", b""):
                break
            name, _, value = line.partition(b":")
            name, value = name.strip(), value.strip()
            headers.append((name, value))
            key = name.lower()
            if key == b"content-length":
                length = int(value)
            elif key == b"transfer-encoding":
                chunked = value.lower() == b"chunked"
            elif key == b"connection" and value.lower() == b"close":
                self.keep = False
        if length is None and not chunked:
            self.keep = False  # the body ends with the connection
        return int(status), headers, length, chunked

    def body(self, length: int | None, chunked: bool) -> Iterator[bytes]:
        """The body's pieces as they arrive (a stream's events one by one)."""
        if chunked:
            while size := int(self.reader.readline(1024).split(b";", 1)[0], 16):
                data = self.reader.read(size)
                self.reader.readline(1024)
                if len(data) < size:
                    raise ConnectionResetError("the arena socket closed in the middle of an answer")
                yield data
            while self.reader.readline(65537) not in (b"\r\n", b"\n", b""):
                pass  # trailers
        elif length is not None:
            data = self.reader.read(length)
            if len(data) < length:
                raise ConnectionResetError("the arena socket closed in the middle of an answer")
            yield data
        else:
            yield self.reader.read()


_channels = _local()


def socket_path() -> str:
    return os.environ.get(_SOCKET_ENV, _DEFAULT_SOCKET)


def _request(method: str, path: str, payload: Any = None, timeout: float = 120.0) -> Any:
    channel: _Channel | None = getattr(_channels, "channel", None)
    if channel is None or channel.pid != os.getpid():
        channel = _channels.channel = _Channel(socket_path(), timeout)
    body = b"" if payload is None else _dumps(payload).encode()
    headers = [(b"host", _HOST.encode())]
    if payload is not None:
        headers += [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    try:
        channel.sock.settimeout(timeout)
        channel.send(method, path, headers, body)
        status, _, length, chunked = channel.read_head()
        data = b"".join(channel.body(length, chunked))
    except ValueError as exc:
        channel.keep = False
        raise ArenaConnectionError(f"{method} {path}: {exc}") from None
    except BaseException:
        # A failed or interrupted exchange leaves the connection mid-message: never reuse it.
        # No retry either: the server may have run the call (a tool call is not idempotent).
        channel.keep = False
        raise
    finally:
        if not channel.keep:
            _channels.channel = None
            channel.close()
    if status >= 400:
        raise ArenaConnectionError(f"{method} {path} answered {status}: {data[:300]!r}")
    return _loads(data)


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


_FALLBACK_TIMEOUT_S = 300.0  # outside an episode, or from a runner that states no limits
_TIMEOUT_MARGIN_S = 30.0


def call_timeout_s() -> float:
    """How long the SDK's openai client waits for one answer: longer than the episode may run and
    than the proxy's own limit on one call, so the proxy (whose time-out is the validator's, and is
    never charged to the agent) or the episode's wall clock ends a slow call, never the agent."""
    try:
        limits = _episode().get("limits") or {}
    except ArenaConnectionError:
        return _FALLBACK_TIMEOUT_S
    bounds = [float(limits[key]) for key in ("wall_s", "llm_call_timeout_s") if limits.get(key)]
    return max(bounds) + _TIMEOUT_MARGIN_S if bounds else _FALLBACK_TIMEOUT_S


def openai_client(**kwargs: Any) -> Any:
    """An ``openai.OpenAI`` client wired to the validator's inference proxy; its time-out outlasts
    the episode (``call_timeout_s``) unless the caller passes one."""
    import httpx  # imported here: only agents that use an LLM pay for it
    import openai

    # The SDK's defaults; any keyword the caller passes overrides them (max_retries=0 given by an agent
    # used to reach openai twice, a TypeError in every episode).
    options: dict[str, Any] = {"base_url": f"http://{_HOST}/v1", "api_key": "sandbox", "max_retries": 0}
    timeout = kwargs.pop("timeout") if "timeout" in kwargs else call_timeout_s()
    if "http_client" in kwargs:
        options["timeout"] = timeout
    else:
        # openai types http_client as an httpx2 client; it takes an httpx one too (openai/_httpx2.py)
        options["http_client"] = httpx.Client(transport=_socket_transport(), timeout=timeout)
    return openai.OpenAI(**{**options, **kwargs})


def _socket_transport() -> Any:
    """An httpx transport over the arena socket with the SDK's own channels: the request
    leaves in one write and the answer is read without httpcore and h11, which cost the
    openai client about 0.4 ms of every call. Kept-alive channels are pooled, one per
    request in flight, so threads and streams read alongside each other."""
    import httpx

    class _Body(httpx.SyncByteStream):
        def __init__(self, pool: _SocketTransport, channel: _Channel, parts: Iterator[bytes]) -> None:
            self.pool, self.channel, self.parts, self.done = pool, channel, parts, False

        def __iter__(self) -> Iterator[bytes]:
            try:
                yield from self.parts
            except TimeoutError:
                self.channel.keep = False
                raise httpx.ReadTimeout("the arena socket stopped answering in time") from None
            except (OSError, ValueError) as exc:
                self.channel.keep = False
                raise httpx.ReadError(f"the arena socket failed: {exc!r}") from None
            self.done = True

        def close(self) -> None:
            if not self.done and self.channel.keep:
                self.done = self._ends_now()
            self.pool.release(self.channel, self.done)

        def _ends_now(self) -> bool:
            """The openai client stops reading a stream at its [DONE] event, a few bytes before
            the body's end, which is on its way: waiting briefly for it keeps the connection.
            A stream the agent gave up still has data coming, and its connection is dropped."""
            self.channel.sock.settimeout(_DRAIN_S)
            try:
                for _ in self.parts:
                    return False
            except (OSError, ValueError):
                return False
            return True

    class _SocketTransport(httpx.BaseTransport):
        def __init__(self, path: str) -> None:
            self.path = path
            self.idle: list[_Channel] = []

        def release(self, channel: _Channel, clean: bool) -> None:
            if clean and channel.keep and channel.pid == os.getpid():
                self.idle.append(channel)
            else:
                channel.close()

        def handle_request(self, request: httpx.Request) -> httpx.Response:
            read_timeout = request.extensions.get("timeout", {}).get("read")
            channel = None
            while channel is None:
                try:
                    channel = self.idle.pop()  # atomic: threads share the pool
                except IndexError:
                    break
                if channel.pid != os.getpid():
                    channel = None  # inherited over a fork: the parent's
            try:
                if channel is None:
                    channel = _Channel(self.path, read_timeout)
            except ArenaConnectionError as exc:
                raise httpx.ConnectError(str(exc), request=request) from None
            try:
                channel.sock.settimeout(read_timeout)
                channel.send(request.method, request.url.raw_path.decode("ascii"), request.headers.raw, request.read())
                status, headers, length, chunked = channel.read_head()
            except TimeoutError:
                channel.close()
                raise httpx.ReadTimeout("the arena socket did not answer in time", request=request) from None
            except (OSError, ValueError) as exc:
                channel.close()
                raise httpx.RemoteProtocolError(f"the arena socket failed: {exc!r}", request=request) from None
            body = _Body(self, channel, channel.body(length, chunked))
            return httpx.Response(status, headers=headers, stream=body, extensions={"http_version": b"HTTP/1.1"})

        def close(self) -> None:
            while self.idle:
                self.idle.pop().close()

    return _SocketTransport(socket_path())
