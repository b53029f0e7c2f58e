"""The model servers the inference proxy forwards to, and the exchange with them.

An upstream is any OpenAI-compatible chat server: vLLM in production, the
built-in offline policy in-process (through an ``httpx.ASGITransport``).
Routing is by model name only, so a model name must belong to one upstream.
What an answer becomes in the record is ``arena.runner.upstream_answers``.

The exchange helpers (``open_chat``, ``read_answer``, ``stream_events``) turn
every way an upstream can fail (refused connection, HTTP error, broken JSON,
the per-call deadline) into one ``CallFailure`` carrying the status the agent
gets.
"""

from __future__ import annotations

import asyncio
import re
import time
import urllib.request
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import orjson

from arena.runner.settings import Upstream

# The upstream's own limits still bound a call; the proxy's per-call deadline is what
# normally ends it, so these only stop a connection that hangs forever.
_TIMEOUTS = {"timeout": httpx.Timeout(600.0, connect=10.0).as_dict()}


@dataclass(frozen=True)
class UpstreamLink:
    """How one upstream is reached from one event loop: the pooled transport and the
    request parts that never change. The proxy sends through the transport itself, not
    an ``httpx.AsyncClient``: the client's URL merging, cookie jar, auth and redirect
    machinery cost about 0.2 ms a call and none of it applies to a chat completion."""

    transport: httpx.AsyncBaseTransport
    url: httpx.URL  # the chat completions endpoint
    headers: dict[str, str]
    owned: bool  # made by the registry (closed by it), not handed in


class UpstreamRegistry:
    """The configured upstreams and one connection pool per upstream, shared by
    every episode a validator runs (the proxy itself is per episode)."""

    def __init__(
        self,
        upstreams: list[Upstream],
        transports: dict[str, httpx.AsyncBaseTransport] | None = None,
    ) -> None:
        self._upstreams: dict[str, Upstream] = {}
        self._by_model: dict[str, Upstream] = {}
        for upstream in upstreams:
            if upstream.name in self._upstreams:
                raise ValueError(f"upstream name {upstream.name!r} is configured twice")
            self._upstreams[upstream.name] = upstream
            for model in upstream.models:
                owner = self._by_model.get(model)
                if owner is not None and owner.name != upstream.name:
                    raise ValueError(
                        f"model {model!r} is served by both upstream {owner.name!r} and {upstream.name!r}; "
                        "requests are routed by model name, so each model needs exactly one upstream"
                    )
                self._by_model[model] = upstream
        self._transports = dict(transports or {})
        unknown = sorted(set(self._transports) - set(self._upstreams))
        if unknown:
            raise ValueError(f"transports given for unknown upstream(s) {unknown}; known: {sorted(self._upstreams)}")
        self._links: dict[str, tuple[asyncio.AbstractEventLoop | None, UpstreamLink]] = {}

    @property
    def upstreams(self) -> list[Upstream]:
        return list(self._upstreams.values())

    def for_model(self, model: str) -> Upstream | None:
        return self._by_model.get(model)

    def link(self, upstream_name: str) -> UpstreamLink:
        upstream = self._upstreams.get(upstream_name)
        if upstream is None:
            raise KeyError(f"no upstream named {upstream_name!r}; known: {sorted(self._upstreams)}")
        loop = _running_loop()
        held = self._links.get(upstream_name)
        # A pooled connection belongs to the event loop that opened it: a registry outliving
        # one asyncio.run (a CLI, a test) gets a fresh pool in the next loop.
        if held is None or held[0] is not loop:
            url = httpx.URL(upstream.base_url.rstrip("/") + "/chat/completions")
            # The agent's own headers (its dummy api key included) never reach the upstream:
            # only the validator's configured key does.
            headers = {"content-type": "application/json", "accept": "application/json"}
            if upstream.api_key:
                headers["authorization"] = f"Bearer {upstream.api_key}"
            given = self._transports.get(upstream_name)
            transport = given or httpx.AsyncHTTPTransport(proxy=_environment_proxy(url))
            held = self._links[upstream_name] = (loop, UpstreamLink(transport, url, headers, owned=given is None))
        return held[1]

    async def aclose(self) -> None:
        held = list(self._links.values())
        self._links.clear()
        loop = _running_loop()
        for owner, link in held:
            # Another loop's pool cannot be closed from here; it dies with its loop.
            if owner is loop and link.owned:
                await link.transport.aclose()


def _environment_proxy(url: httpx.URL) -> str | None:
    """The HTTP(S)_PROXY that applies to ``url`` unless NO_PROXY exempts it, as an
    ``httpx.AsyncClient`` would have used."""
    proxies = urllib.request.getproxies()
    proxy = proxies.get(url.scheme) or proxies.get("all")
    if proxy is None or urllib.request.proxy_bypass(url.host):
        return None
    return proxy


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


# --- errors ---------------------------------------------------------------------------------------


def error_message(body: bytes) -> str:
    """The human message inside an upstream's error body (OpenAI, vLLM or FastAPI
    shape), else the start of the body itself."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        data = None
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"]
        for value in (error, data.get("message"), data.get("detail")):
            if isinstance(value, str):
                return value
    text = body.decode("utf-8", errors="replace").strip()
    return text[:300] or "(empty body)"


# vLLM: "'max_tokens' or 'max_completion_tokens' is too large: 16384. This model's maximum context
# length is 32768 tokens and your request has 20000 input tokens (16384 > 32768 - 20000)."
_CONTEXT_OVERFLOW = re.compile(r"maximum context length is (\d+) tokens and your request has (\d+) input tokens")


def context_overflow(message: str) -> tuple[int, int] | None:
    """(context length, prompt tokens) read from vLLM's "max_tokens is too large"
    rejection; None when the message is not that one."""
    match = _CONTEXT_OVERFLOW.search(message)
    return (int(match.group(1)), int(match.group(2))) if match else None


# --- exchanging with an upstream ------------------------------------------------------------------

_ERROR_TYPES = {
    400: "invalid_request_error",
    403: "permission_error",
    404: "invalid_request_error",
    409: "invalid_request_error",
    413: "invalid_request_error",
    422: "invalid_request_error",
    429: "insufficient_quota",
    499: "client_closed_request",
    500: "server_error",
    504: "timeout",
}


class CallFailure(Exception):
    """How a call ends when it ends in an error: the HTTP status and OpenAI error code
    the agent gets, and the message both the agent and the record read."""

    def __init__(self, status: int, code: str, message: str, limit: str | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        self.limit = limit  # the EpisodeLimits field that refused the call, if a bound did

    def body(self) -> dict[str, Any]:
        kind = _ERROR_TYPES.get(self.status, "upstream_error")
        return {"error": {"message": self.message, "type": kind, "code": self.code, "param": None}}


def _timed_out(upstream: str, timeout_s: float) -> CallFailure:
    return CallFailure(
        504, "upstream_timeout", f"upstream {upstream} did not finish within the {timeout_s:g}s call limit"
    )


def _left(deadline: float) -> float:
    return deadline - time.perf_counter()


async def close(response: httpx.Response) -> None:
    # Shielded: a cancelled call must still release its pooled connection.
    with anyio.CancelScope(shield=True):
        await response.aclose()


async def _read_body(response: httpx.Response) -> bytes:
    # Straight from the transport's stream when nothing is to be decoded: httpx's decoder chain
    # and bookkeeping cost a tenth of a millisecond here, right when the agent is waiting.
    if response.headers.get("content-encoding", "identity") != "identity":
        return await response.aread()
    return b"".join([part async for part in response.stream])  # type: ignore[union-attr]


async def _post(
    link: UpstreamLink, payload: dict[str, Any], upstream: str, deadline: float, timeout_s: float, whole: bool
) -> tuple[httpx.Response, bytes]:
    """POSTs a chat completion and waits, within ``deadline`` (a ``time.perf_counter``
    value), for the status line, and for the whole body when ``whole`` or when the
    status is not 200. A non-200 answer raises."""
    # orjson, not httpx's json=: a long dialogue is encoded in a tenth of the time.
    request = httpx.Request("POST", link.url, headers=link.headers, content=orjson.dumps(payload), extensions=_TIMEOUTS)
    response: httpx.Response | None = None
    body = b""
    try:
        # asyncio's timeout, not anyio's: a third of the cost, on a path taken twice a step.
        async with asyncio.timeout(_left(deadline)):
            response = await link.transport.handle_async_request(request)
            if response.status_code != 200 or whole:
                try:
                    body = await _read_body(response)
                except BaseException:
                    await close(response)
                    raise
                await response.aclose()
    except (TimeoutError, httpx.TimeoutException):
        raise _timed_out(upstream, timeout_s) from None
    except Exception as exc:  # an in-process (ASGI) upstream raises its own exceptions, not httpx's
        if response is not None and response.status_code == 200:
            raise CallFailure(502, "upstream_error", f"upstream {upstream} broke off its answer: {exc!r}") from None
        raise CallFailure(502, "upstream_unavailable", f"upstream {upstream} failed: {exc!r}") from None
    if response.status_code == 200:
        return response, body
    message = error_message(body)
    if response.status_code in (400, 413, 422):
        # The upstream judged the agent's request (context too long, bad parameter): its verdict stands.
        raise CallFailure(response.status_code, "upstream_rejected_request", f"upstream {upstream}: {message}")
    raise CallFailure(502, "upstream_error", f"upstream {upstream} answered HTTP {response.status_code}: {message}")


async def open_chat(
    link: UpstreamLink, payload: dict[str, Any], upstream: str, deadline: float, timeout_s: float
) -> httpx.Response:
    """A streamed chat completion: the open 200 response, its events still to come."""
    response, _ = await _post(link, payload, upstream, deadline, timeout_s, whole=False)
    return response


async def fetch_chat(
    link: UpstreamLink, payload: dict[str, Any], upstream: str, deadline: float, timeout_s: float
) -> tuple[bytes, dict[str, Any]]:
    """A whole chat completion: the raw bytes (passed to the agent as they are) and the
    parsed ``chat.completion``."""
    _, raw = await _post(link, payload, upstream, deadline, timeout_s, whole=True)
    try:
        answer = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise CallFailure(
            502, "upstream_invalid_response", f"upstream {upstream} answered invalid JSON: {raw[:200]!r}"
        ) from None
    if not isinstance(answer, dict) or not isinstance(answer.get("choices"), list):
        raise CallFailure(502, "upstream_invalid_response", f"upstream {upstream} answered without a choices list")
    return raw, answer


async def stream_events(
    response: httpx.Response, upstream: str, deadline: float, timeout_s: float
) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """Each SSE ``data:`` event of a chat stream as (its text, its chunk), up to
    ``[DONE]`` or the end of the body; any failure, the deadline's included, raises."""
    lines = response.aiter_lines()
    while True:
        try:
            async with asyncio.timeout(_left(deadline)):
                line = await anext(lines)
        except StopAsyncIteration:
            return
        except (TimeoutError, httpx.TimeoutException):
            raise _timed_out(upstream, timeout_s) from None
        except Exception as exc:
            raise CallFailure(502, "upstream_error", f"upstream {upstream} broke off the stream: {exc!r}") from None
        if not line.startswith("data:"):
            continue  # blank separators, comments, event names
        data = line[5:].strip()
        if data == "[DONE]":
            return
        try:
            chunk = orjson.loads(data)
        except orjson.JSONDecodeError:
            chunk = None
        if not isinstance(chunk, dict):
            raise CallFailure(502, "upstream_invalid_response", f"upstream {upstream} sent a bad chunk: {data[:200]!r}")
        if chunk.get("error") and not chunk.get("choices"):
            # vLLM reports a failure after the headers as an error chunk.
            message = error_message(data.encode())
            raise CallFailure(502, "upstream_error", f"upstream {upstream} failed mid-stream: {message}")
        yield data, chunk


async def count_prompt_tokens(link: UpstreamLink, url: str, payload: dict[str, Any], deadline: float) -> int | None:
    """The chat prompt's token count from vLLM's ``/tokenize`` (the chat template applied, as the
    completion will be), or None when it cannot be had: the caller's own bound then stands."""
    body: dict[str, Any] = {
        key: payload[key] for key in ("model", "messages", "tools", "chat_template_kwargs") if key in payload
    }
    body["add_generation_prompt"] = True
    request = httpx.Request("POST", url, headers=link.headers, content=orjson.dumps(body), extensions=_TIMEOUTS)
    try:
        async with asyncio.timeout(min(_left(deadline), 10.0)):
            response = await link.transport.handle_async_request(request)
            try:
                raw = await _read_body(response)
            finally:
                await close(response)
        count = orjson.loads(raw).get("count") if response.status_code == 200 else None
    except Exception:  # a tokenizer that is down or odd costs the agent only the exactness
        return None
    return count if isinstance(count, int) and not isinstance(count, bool) and count >= 0 else None
