"""HTTP/1.1 on the episode socket: a lean server for one agent's requests.

Every step of an episode is two requests on this socket (a model call and a tool
call), and the runner's own share of a step must stay a few percent of a model
call. uvicorn with pure-Python h11 parsing, the ASGI hops and Starlette's
middleware spent about a millisecond a request on a busy 2-core validator; this
server spends tens of microseconds. Its one client is the sandboxed agent
(``arena.sdk``, httpx under the openai client, or the standard library), so the
protocol served is HTTP/1.1's core: origin-form request targets, a
Content-Length or chunked body, keep-alive, pipelining (answered in order),
``Expect: 100-continue``, HTTP/1.0 with close. Anything else is answered with a
4xx/5xx and the connection is closed. The client is untrusted: heads and bodies
are bounded, and nothing it sends raises out of here.

A handler gets a ``Request`` and returns a ``Reply`` (answered at once: the
tool route never leaves the event loop's callback) or an awaitable of a
``Reply`` or ``StreamReply``. A stream is sent chunked and is cancelled the
moment the agent hangs up, so the proxy's relay records the call and releases
its upstream at once; a plain reply in flight is left to finish (its record
matters more than the lost answer).
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from inspect import isawaitable

import orjson

logger = logging.getLogger(__name__)

MAX_HEAD_BYTES = 64 * 1024
MAX_BODY_BYTES = 4 * 1024 * 1024
_TOKEN = frozenset(b"!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_HEX = frozenset(b"0123456789abcdefABCDEF")
_REASONS = {status.value: status.phrase.encode() for status in HTTPStatus}


@dataclass(slots=True)
class Request:
    method: str
    path: str  # the target's path, percent-encoded as sent; the query string is in ``query``
    query: str
    headers: dict[str, str]  # lower-case names; repeated headers joined by ", "
    body: bytes
    too_large: bool = False  # the body was over MAX_BODY_BYTES: read and dropped, ``body`` is empty
    keep_alive: bool = True
    http10: bool = False


@dataclass(slots=True)
class Reply:
    status_code: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)  # lower-case names
    media_type: str = "application/json"


@dataclass(slots=True)
class StreamReply:
    chunks: AsyncIterator[bytes]  # closed by the server when the agent hangs up
    headers: dict[str, str] = field(default_factory=dict)
    media_type: str = "text/event-stream"
    status_code: int = 200


Handler = Callable[[Request], "Reply | Awaitable[Reply | StreamReply]"]


class _BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _error_body(message: str, kind: str = "invalid_request_error", code: str = "bad_http_request") -> bytes:
    # The proxy's error shape, so an OpenAI client reads these like the proxy's own refusals.
    return orjson.dumps({"error": {"message": message, "type": kind, "code": code}})


def _header_bytes(text: str) -> bytes:
    # Header values may carry agent-chosen text (the names of dropped JSON keys): no line breaks, latin-1 only.
    return text.encode("latin-1", "replace").replace(b"\r", b" ").replace(b"\n", b" ")


class _RequestReader:
    """Takes one request at a time off the front of the connection's buffer:
    ``read`` returns it once complete, else None (more bytes needed)."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._head: tuple[str, str, str, dict[str, str]] | None = None
        self._body = bytearray()
        self._left = 0  # bytes of the current Content-Length body or chunk still to come
        self._chunked = False
        self._chunk_state = "size"  # size -> data -> crlf -> size ... -> trailer
        self._http10 = False
        self._too_large = False
        self.wants_continue = False  # the client waits for "100 Continue" before sending its body

    def read(self, buffer: bytearray) -> Request | None:
        if self._head is None:
            end = buffer.find(b"\r\n\r\n", 0, MAX_HEAD_BYTES + 4)
            if end < 0:
                if len(buffer) > MAX_HEAD_BYTES:
                    raise _BadRequest(431, f"request head over {MAX_HEAD_BYTES} bytes")
                return None
            self._head = self._parse_head(bytes(buffer[:end]))
            del buffer[: end + 4]
        done = self._read_chunked(buffer) if self._chunked else self._read_length(buffer)
        if not done:
            return None
        method, path, query, headers = self._head
        body = b"" if self._too_large else bytes(self._body)
        close = "close" in headers.get("connection", "").lower()
        request = Request(
            method, path, query, headers, body, self._too_large, not (self._http10 or close), self._http10
        )
        self._reset()
        return request

    def _parse_head(self, head: bytes) -> tuple[str, str, str, dict[str, str]]:
        lines = head.split(b"\r\n")
        parts = lines[0].split(b" ")
        if len(parts) != 3 or not parts[0] or not _TOKEN.issuperset(parts[0]):
            raise _BadRequest(400, "malformed request line")
        method, target, version = parts
        if version not in (b"HTTP/1.1", b"HTTP/1.0"):
            raise _BadRequest(505, "only HTTP/1.1 and HTTP/1.0 are served")
        if not target.startswith(b"/"):
            raise _BadRequest(400, "the request target must be a path")
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, colon, value = line.partition(b":")
            if not colon or not name or not _TOKEN.issuperset(name):
                raise _BadRequest(400, "malformed header line")
            key = name.decode("ascii").lower()
            text = value.strip(b" \t").decode("latin-1")
            headers[key] = f"{headers[key]}, {text}" if key in headers else text
        self._http10 = version == b"HTTP/1.0"
        path, _, query = target.decode("latin-1").partition("?")
        if "transfer-encoding" in headers:
            if headers["transfer-encoding"].lower() != "chunked" or "content-length" in headers:
                raise _BadRequest(501, "only a chunked transfer-encoding (without content-length) is served")
            self._chunked = True
        else:
            length = headers.get("content-length", "0")
            if not length.isdigit() or not length.isascii():
                # Repeated headers arrive joined ("5, 5"): a length that is not one number is refused.
                raise _BadRequest(400, "invalid content-length")
            self._left = int(length)
            self._too_large = self._left > MAX_BODY_BYTES
        self.wants_continue = headers.get("expect", "").lower() == "100-continue"
        return method.decode("ascii"), path, query, headers

    def _take(self, buffer: bytearray, count: int) -> None:
        if not self._too_large:
            self._body += buffer[:count]
            if len(self._body) > MAX_BODY_BYTES:
                self._too_large = True  # the rest is read and dropped, so the connection stays usable
                self._body.clear()
        del buffer[:count]

    def _read_length(self, buffer: bytearray) -> bool:
        count = min(self._left, len(buffer))
        self._take(buffer, count)
        self._left -= count
        return self._left == 0

    def _read_chunked(self, buffer: bytearray) -> bool:
        while True:
            if self._chunk_state == "data":
                count = min(self._left, len(buffer))
                self._take(buffer, count)
                self._left -= count
                if self._left:
                    return False
                self._chunk_state = "crlf"
                continue
            end = buffer.find(b"\r\n", 0, 4096)
            if end < 0:
                if len(buffer) >= 4096:
                    raise _BadRequest(400, "malformed chunked body")
                return False
            line = bytes(buffer[:end])
            del buffer[: end + 2]
            if self._chunk_state == "crlf":
                if line:
                    raise _BadRequest(400, "malformed chunked body")
                self._chunk_state = "size"
            elif self._chunk_state == "size":
                size = line.split(b";", 1)[0].strip(b" \t")
                if not size or len(size) > 8 or not _HEX.issuperset(size):
                    raise _BadRequest(400, "malformed chunk size")
                self._left = int(size, 16)
                self._chunk_state = "data" if self._left else "trailer"
            elif not line:  # the empty line that ends the trailers
                return True


class _Connection(asyncio.Protocol):
    def __init__(self, server: EpisodeWireServer) -> None:
        self._server = server
        self._transport: asyncio.Transport | None = None
        self._buffer = bytearray()
        self._reader = _RequestReader()
        self._busy = False  # a request is being answered (or the next one is due): new bytes wait
        self._task: asyncio.Task | None = None  # the request being answered asynchronously
        self._streaming = False
        self._closed = False
        self._keep_alive = True
        self._http10 = False
        self._writable = asyncio.Event()
        self._writable.set()

    # --- asyncio callbacks ---------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]
        self._server.connections.add(self)
        self._server.accepted += 1

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        if not self._busy:
            self._answer_next()
        elif len(self._buffer) > MAX_HEAD_BYTES:
            self._transport.pause_reading()  # pipelined requests wait for the one being answered

    def eof_received(self) -> None:
        self.connection_lost(None)  # the agent hung up: a half-open UDS socket has nobody to read the answer

    def connection_lost(self, exc: Exception | None) -> None:
        if self._closed:
            return
        self._closed = True
        self._server.connections.discard(self)
        self._writable.set()
        if self._transport is not None:
            self._transport.close()
        if self._task is not None and self._streaming:
            self._task.cancel()

    def pause_writing(self) -> None:
        self._writable.clear()

    def resume_writing(self) -> None:
        self._writable.set()

    # --- answering ------------------------------------------------------------------------------------

    def _answer_next(self) -> None:
        """Answers the next complete request in the buffer. One per turn of the event loop:
        an agent pipelining a thousand tool calls must not hold the loop, which the other
        episodes share, for all of them at once."""
        self._busy = False
        if self._closed:
            return
        try:
            request = self._reader.read(self._buffer)
        except _BadRequest as bad:
            self._keep_alive = False
            self._write_reply(Reply(bad.status, _error_body(str(bad))))
            return
        if request is None:
            if self._reader.wants_continue:
                self._reader.wants_continue = False
                self._transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            self._transport.resume_reading()
            return
        self._keep_alive, self._http10 = request.keep_alive, request.http10
        try:
            answer = self._server.handler(request)
            if not isawaitable(answer) and not isinstance(answer, Reply):
                raise TypeError(f"the handler answered {type(answer).__name__}, not a Reply")
        except Exception:
            answer = self._failed(request)
        self._busy = True
        if isawaitable(answer):
            self._task = asyncio.ensure_future(self._answer_later(answer))
            self._server.tasks.add(self._task)
            self._task.add_done_callback(self._finished)
            return
        self._write_reply(answer)
        if self._buffer and not self._closed:
            asyncio.get_running_loop().call_soon(self._answer_next)
        else:
            self._busy = False

    async def _answer_later(self, pending: Awaitable[Reply | StreamReply]) -> None:
        try:
            answer = await pending
            if not isinstance(answer, Reply | StreamReply):
                raise TypeError(f"the handler answered {type(answer).__name__}, not a Reply")
        except Exception:
            answer = self._failed(None)
        if not isinstance(answer, StreamReply):
            self._write_reply(answer)
            return
        try:
            await self._write_stream(answer)
        except Exception:  # after the status line nothing else can be said: end the connection
            logger.exception("episode server failed mid-stream")
            self._close()

    def _finished(self, task: asyncio.Task) -> None:
        self._server.tasks.discard(task)
        self._task = None
        self._streaming = False
        self._answer_next()

    def _failed(self, request: Request | None) -> Reply:
        where = f"{request.method} {request.path}" if request is not None else "a request"
        logger.exception("episode server failed on %s", where)
        return Reply(500, _error_body("internal server error", "server_error", "server_error"))

    def _head(self, status: int, media_type: str, headers: dict[str, str], framing: bytes) -> bytes:
        lines = [b"HTTP/1.1 %d %s\r\ncontent-type: %s\r\n" % (status, _REASONS.get(status, b""), media_type.encode())]
        lines += [b"%s: %s\r\n" % (_header_bytes(name), _header_bytes(value)) for name, value in headers.items()]
        lines.append(framing)
        if not self._keep_alive:
            lines.append(b"connection: close\r\n")
        lines.append(b"\r\n")
        return b"".join(lines)

    def _write_reply(self, reply: Reply) -> None:
        if self._closed:
            return
        framing = b"content-length: %d\r\n" % len(reply.body)
        self._transport.write(self._head(reply.status_code, reply.media_type, reply.headers, framing) + reply.body)
        if not self._keep_alive:
            self._close()

    async def _write_stream(self, reply: StreamReply) -> None:
        self._streaming = True
        chunked = not self._http10  # HTTP/1.0 has no chunks: the end of the connection ends the body
        if chunked:
            framing = b"transfer-encoding: chunked\r\n"
        else:
            self._keep_alive, framing = False, b""
        try:
            if self._closed:
                return
            self._transport.write(self._head(reply.status_code, reply.media_type, reply.headers, framing))
            async for chunk in reply.chunks:
                if self._closed:
                    return
                if chunk:
                    self._transport.write(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)
                    await self._writable.wait()  # an agent that does not read holds the relay, not our memory
            if not self._closed:
                if chunked:
                    self._transport.write(b"0\r\n\r\n")
                if not self._keep_alive:
                    self._close()
        finally:
            await reply.chunks.aclose()  # type: ignore[attr-defined]

    def _close(self) -> None:
        if self._transport is not None:
            self._transport.close()
        self.connection_lost(None)


class EpisodeWireServer:
    """Serves ``handler`` on an already listening socket (bound before the agent
    starts, so its first connection waits in the backlog, not on us)."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.connections: set[_Connection] = set()
        self.accepted = 0  # connections ever made: a kept-alive client makes one
        self.tasks: set[asyncio.Task] = set()
        self._server: asyncio.AbstractServer | None = None

    async def start(self, listener: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_unix_server(lambda: _Connection(self), sock=listener)

    async def close(self) -> None:
        """Stops accepting, hangs up on every agent connection and cancels what is
        in flight (the agent has exited: nobody will read those answers)."""
        if self._server is not None:
            self._server.close()
        for connection in list(self.connections):
            connection._close()
        for task in list(self.tasks):
            if not task.cancelling():  # a stream cancelled at hang-up is cleaning up: let it finish
                task.cancel()
        if self.tasks:
            await asyncio.gather(*self.tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
