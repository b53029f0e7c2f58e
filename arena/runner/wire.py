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
are bounded, and nothing it sends raises out of here. What one agent can make
the server hold is bounded too (``WireBounds``): its open connections, the
request bytes held over all of them, and the answers a connection leaves unread
(past that bound the connection is no longer read until the agent reads).

A handler gets a ``Request`` and returns a ``Reply`` (answered at once) or an
awaitable of a ``Reply`` or ``StreamReply``. A stream is sent chunked and is cancelled the
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

from arena.runner.request_reader import MAX_HEAD_BYTES, BadRequest, Request, RequestReader

logger = logging.getLogger(__name__)

_REASONS = {status.value: status.phrase.encode() for status in HTTPStatus}


_MIN_UNSENT = 64 * 1024  # asyncio's own default high-water mark


def _ignore(limit: str, detail: str) -> None:
    pass


@dataclass(frozen=True, slots=True)
class WireBounds:
    """What one agent's connections may make the server hold; ``on_limit(name, detail)``
    hears each bound hit (the episode records it). The defaults suit a bare server; the
    episode's come from its ``EpisodeLimits``."""

    connections: int = 64  # open at once; one more is answered 429 and closed
    buffered_bytes: int = 64 * 1024 * 1024  # request bytes held over all connections
    unsent_bytes: int = 4 * 1024 * 1024  # answers queued unread over all connections (split evenly)
    body_limit: Callable[[str, str], int] | None = None  # (method, path) -> largest body; MAX_BODY_BYTES
    on_limit: Callable[[str, str], None] = _ignore


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


def _error_body(message: str, kind: str = "invalid_request_error", code: str = "bad_http_request") -> bytes:
    # The proxy's error shape, so an OpenAI client reads these like the proxy's own refusals.
    return orjson.dumps({"error": {"message": message, "type": kind, "code": code}})


def _header_bytes(text: str) -> bytes:
    # Header values may carry agent-chosen text (the names of dropped JSON keys): no line breaks, latin-1 only.
    return text.encode("latin-1", "replace").replace(b"\r", b" ").replace(b"\n", b" ")


class _Connection(asyncio.Protocol):
    def __init__(self, server: EpisodeWireServer) -> None:
        self._server = server
        self._transport: asyncio.Transport | None = None
        self._buffer = bytearray()
        self._reader = RequestReader(server.bounds.body_limit)
        self._held = 0  # this connection's share of the server's ``buffered``
        self._draining = False  # answering waits until the agent reads what is unsent
        self._busy = False  # a request is being answered (or the next one is due): new bytes wait
        self._task: asyncio.Task | None = None  # the request being answered asynchronously
        self._streaming = False
        self._closed = False
        self._keep_alive = True
        self._http10 = False
        self._writable = asyncio.Event()
        self._writable.set()

    @property
    def _open_transport(self) -> asyncio.Transport:
        assert self._transport is not None  # connection_made sets it before asyncio calls anything else
        return self._transport

    # --- asyncio callbacks ---------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]
        self._server.accepted += 1
        bounds = self._server.bounds
        if len(self._server.connections) >= bounds.connections:
            bounds.on_limit("connections", f"a connection was refused: {bounds.connections} already open")
            self._refuse(429, f"at most {bounds.connections} connections at once", "connections")
            return
        self._server.connections.add(self)
        # Past this many unsent bytes pause_writing is called, and no further request is answered:
        # the episode's bound split over as many connections as it may open.
        self._open_transport.set_write_buffer_limits(high=max(_MIN_UNSENT, bounds.unsent_bytes // bounds.connections))

    def data_received(self, data: bytes) -> None:
        if self._closed:
            return
        self._buffer += data
        self._account()
        server = self._server
        if server.buffered > server.bounds.buffered_bytes:
            limit = server.bounds.buffered_bytes
            server.bounds.on_limit("buffered_bytes", f"a connection was closed: over {limit} request bytes held")
            if self._busy:  # an answer is due on this connection first: nothing can be said in its place
                self._close()
            else:
                self._refuse(429, f"over {limit} request bytes held at once", "buffered_bytes")
            return
        if not self._busy:
            self._answer_next()
        elif len(self._buffer) > MAX_HEAD_BYTES:
            self._open_transport.pause_reading()  # pipelined requests wait for the one being answered

    def eof_received(self) -> None:
        # The end of what the agent sends is how a hang-up looks here (no client of ours half-closes
        # and waits), and a stream must notice it at once, not at its next write.
        self.connection_lost(None)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._closed:
            return
        self._closed = True
        self._server.connections.discard(self)
        self._buffer.clear()
        self._server.buffered -= self._held
        self._held = 0
        self._writable.set()
        if self._transport is not None:
            self._transport.close()
        if self._task is not None and self._streaming:
            self._task.cancel()

    def pause_writing(self) -> None:
        self._writable.clear()

    def resume_writing(self) -> None:
        self._writable.set()
        if self._draining:
            self._draining = False
            asyncio.get_running_loop().call_soon(self._answer_next)

    def _account(self) -> None:
        if self._closed:  # connection_lost has given its share back
            return
        held = len(self._buffer) + self._reader.held
        self._server.buffered += held - self._held
        self._held = held

    def _refuse(self, status: int, message: str, code: str) -> None:
        self._keep_alive = False
        self._write_reply(
            Reply(status, _error_body(message, "invalid_request_error", code), {"x-should-retry": "false"})
        )
        self._close()

    # --- answering ------------------------------------------------------------------------------------

    def _answer_next(self) -> None:
        """Answers the next complete request in the buffer. One per turn of the event loop:
        an agent pipelining a thousand tool calls must not hold the loop, which the other
        episodes share, for all of them at once."""
        self._busy = False
        if self._closed:
            return
        if not self._writable.is_set():
            # The agent leaves its answers unread: stop reading it until it does, so what it
            # pipelines waits in its own socket buffer, not in the validator's memory.
            self._busy = self._draining = True
            self._open_transport.pause_reading()
            high = self._open_transport.get_write_buffer_limits()[1]
            self._server.bounds.on_limit("unsent_bytes", f"a connection was paused: over {high} answer bytes unread")
            return
        try:
            request = self._reader.read(self._buffer)
        except BadRequest as bad:
            self._keep_alive = False
            self._write_reply(Reply(bad.status, _error_body(str(bad))))
            return
        finally:
            self._account()
        if request is None:
            if self._reader.wants_continue:
                self._reader.wants_continue = False
                self._open_transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            self._open_transport.resume_reading()
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
        self._open_transport.write(self._head(reply.status_code, reply.media_type, reply.headers, framing) + reply.body)
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
            self._open_transport.write(self._head(reply.status_code, reply.media_type, reply.headers, framing))
            async for chunk in reply.chunks:
                if self._closed:
                    return
                if chunk:
                    self._open_transport.write(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)
                    await self._writable.wait()  # an agent that does not read holds the relay, not our memory
            if not self._closed:
                if chunked:
                    self._open_transport.write(b"0\r\n\r\n")
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

    def __init__(self, handler: Handler, bounds: WireBounds | None = None) -> None:
        self.handler = handler
        self.bounds = bounds or WireBounds()
        self.buffered = 0  # request bytes held now, over all connections
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
