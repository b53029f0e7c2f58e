"""A looping student for the serving tests: the server's greedy head (continuous batching) or its
whole-batch generate (static batches) replaced by a fixed script of tokens, the real decoder still
running, and one request sent to the app in-process."""

from __future__ import annotations

import asyncio


class Scripted:
    """The greedy head replaced by a script: every row chooses the script's next token."""

    def __init__(self, tokens: list[int]) -> None:
        self.tokens, self.at = tokens, 0

    def choose(self, hidden):
        token = self.tokens[min(self.at, len(self.tokens) - 1)]
        self.at += 1
        return [token] * hidden.shape[0]


def script_backend(app, script: list[int], *, continuous: bool) -> None:
    """Make ``app``'s backend write ``script`` whatever it is asked."""
    backend = app.state.backend
    if continuous:
        backend.head = Scripted(script)
    else:
        backend.generate = lambda group: [list(script) for _ in group]


def ask(app, body: dict) -> dict:
    import httpx

    async def go():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://s") as client:
            reply = await client.post("/v1/chat/completions", json=body)
        assert reply.status_code == 200, reply.text
        return reply.json()

    return asyncio.run(go())
