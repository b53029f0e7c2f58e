"""Reading HTTP/1.1 requests off an episode socket connection's buffer.

The client is the sandboxed agent, so nothing here trusts it: the head is
bounded (``MAX_HEAD_BYTES``), a body over its route's limit (``body_limit``,
asked once the head is read; ``MAX_BODY_BYTES`` by default) is read and
dropped, never held (the request arrives flagged ``too_large``, the connection
stays in step), and anything outside HTTP/1.1's core raises ``BadRequest``
with the status to answer before the connection closes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

MAX_HEAD_BYTES = 64 * 1024
MAX_BODY_BYTES = 4 * 1024 * 1024
_TOKEN = frozenset(b"!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_HEX = frozenset(b"0123456789abcdefABCDEF")


@dataclass(slots=True)
class Request:
    method: str
    path: str  # the target's path, percent-encoded as sent; the query string is in ``query``
    query: str
    headers: dict[str, str]  # lower-case names; repeated headers joined by ", "
    body: bytes
    too_large: bool = False  # the body was over its route's limit: read and dropped, ``body`` is empty
    keep_alive: bool = True
    http10: bool = False


class BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class RequestReader:
    """Takes one request at a time off the front of the connection's buffer:
    ``read`` returns it once complete, else None (more bytes needed)."""

    def __init__(self, body_limit: Callable[[str, str], int] | None = None) -> None:
        # (method, path) -> the largest body that route can use
        self._body_limit = body_limit or (lambda method, path: MAX_BODY_BYTES)
        self._limit = MAX_BODY_BYTES
        self._reset()

    @property
    def held(self) -> int:
        """Body bytes held for the request being read."""
        return len(self._body)

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
                    raise BadRequest(431, f"request head over {MAX_HEAD_BYTES} bytes")
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
            raise BadRequest(400, "malformed request line")
        method, target, version = parts
        if version not in (b"HTTP/1.1", b"HTTP/1.0"):
            raise BadRequest(505, "only HTTP/1.1 and HTTP/1.0 are served")
        if not target.startswith(b"/"):
            raise BadRequest(400, "the request target must be a path")
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, colon, value = line.partition(b":")
            if not colon or not name or not _TOKEN.issuperset(name):
                raise BadRequest(400, "malformed header line")
            key = name.decode("ascii").lower()
            text = value.strip(b" \t").decode("latin-1")
            headers[key] = f"{headers[key]}, {text}" if key in headers else text
        self._http10 = version == b"HTTP/1.0"
        path, _, query = target.decode("latin-1").partition("?")
        if "transfer-encoding" in headers:
            if headers["transfer-encoding"].lower() != "chunked" or "content-length" in headers:
                raise BadRequest(501, "only a chunked transfer-encoding (without content-length) is served")
            self._chunked = True
        else:
            length = headers.get("content-length", "0")
            if not length.isdigit() or not length.isascii():
                # Repeated headers arrive joined ("5, 5"): a length that is not one number is refused.
                raise BadRequest(400, "invalid content-length")
            self._left = int(length)
        self._limit = self._body_limit(method.decode("ascii"), path)
        self._too_large = not self._chunked and self._left > self._limit
        self.wants_continue = headers.get("expect", "").lower() == "100-continue"
        return method.decode("ascii"), path, query, headers

    def _take(self, buffer: bytearray, count: int) -> None:
        if not self._too_large:
            self._body += buffer[:count]
            if len(self._body) > self._limit:
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
                    raise BadRequest(400, "malformed chunked body")
                return False
            line = bytes(buffer[:end])
            del buffer[: end + 2]
            if self._chunk_state == "crlf":
                if line:
                    raise BadRequest(400, "malformed chunked body")
                self._chunk_state = "size"
            elif self._chunk_state == "size":
                size = line.split(b";", 1)[0].strip(b" \t")
                if not size or len(size) > 8 or not _HEX.issuperset(size):
                    raise BadRequest(400, "malformed chunk size")
                self._left = int(size, 16)
                self._chunk_state = "data" if self._left else "trailer"
            elif not line:  # the empty line that ends the trailers
                return True
