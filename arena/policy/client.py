"""A synchronous ``openai.OpenAI`` client talking to the policy app in-process.

``httpx.ASGITransport`` only serves async clients, while agents (and the
``openai.OpenAI`` client the SDK hands them) are synchronous; this bridge
runs each request through the ASGI transport on a private event loop, so
tests, benchmarks and local runs get the real server and the real client
with no socket in between.
"""

from __future__ import annotations

import asyncio

import httpx


class SyncASGITransport(httpx.BaseTransport):
    """``httpx.ASGITransport`` for a synchronous ``httpx.Client`` (the response body is read whole)."""

    def __init__(self, app) -> None:
        self._transport = httpx.ASGITransport(app=app)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        async def run() -> httpx.Response:
            forwarded = httpx.Request(request.method, request.url, headers=request.headers, content=request.read())
            response = await self._transport.handle_async_request(forwarded)
            body = await response.aread()
            return httpx.Response(response.status_code, headers=response.headers, content=body, request=request)

        return asyncio.run(run())


def local_client(app=None, *, seed: int = 0, **kwargs):
    """An ``openai.OpenAI`` client bound to ``app`` (default: a fresh policy app with ``seed``)."""
    import openai

    from arena.policy.server import create_policy_app

    transport = SyncASGITransport(app if app is not None else create_policy_app(seed=seed))
    http_client = httpx.Client(transport=transport, base_url="http://heuristic-policy")
    # openai types http_client as an httpx2 client; it takes an httpx one too (openai/_httpx2.py)
    return openai.OpenAI(
        base_url="http://heuristic-policy/v1",
        api_key="local",
        http_client=http_client,  # type: ignore[arg-type]
        max_retries=0,
        **kwargs,
    )
