"""Reading a validator's public /v1 API from the terminal: one GET, or a clear line naming the cause and the fix.

`arena submissions show` and `arena leaderboard` read what the dashboard shows, through the same JSON a
script would fetch, so a miner needs neither a browser nor the validator's database.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from arena.commands.common import fail

ValidatorUrlOption = Annotated[
    str, typer.Option("--validator-url", help="The validator's API, http(s)://HOST[:PORT] (its announcement says).")
]
TimeoutOption = Annotated[float, typer.Option("--timeout", min=1.0, help="Seconds per HTTP request.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print exactly one JSON object on stdout.")]


class PublicApi:
    """A validator's public API; every failure ends the command with the cause and what to do about it."""

    def __init__(self, validator_url: str, timeout: float):
        import httpx

        self.base = validator_url.rstrip("/")
        if not self.base.startswith(("http://", "https://")):
            fail(f"--validator-url {validator_url!r} is not an http(s):// URL: give it as http://HOST:PORT")
        self.client = httpx.Client(base_url=self.base, timeout=timeout)

    def get(self, path: str, params: dict[str, Any] | None = None, missing: str = "") -> Any:
        """The JSON answer of ``GET path``; a 404 fails with ``missing`` (what was not found and why)."""
        import httpx

        try:
            answer = self.client.get(path, params=params)
        except httpx.HTTPError as exc:
            fail(f"cannot reach the validator at {self.base} ({exc}): check the URL, or that its API is serving "
                 f"(curl {self.base}/healthz)")  # fmt: skip
        if answer.status_code == 404 and missing:
            fail(missing)
        if answer.status_code != 200:
            fail(f"{self.base}{path} answered {answer.status_code}: {_detail(answer)}")
        try:
            return answer.json()
        except ValueError:
            fail(f"{self.base}{path} answered no JSON: is {self.base} an arena validator's API?")

    def pages(self, path: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Every item of a paged list (``total``, ``offset``, ``items``), page after page."""
        items: list[dict[str, Any]] = []
        while True:
            page = self.get(path, {**(params or {}), "offset": len(items)})
            items.extend(page["items"])
            if not page["items"] or len(items) >= page["total"]:
                return items

    def close(self) -> None:
        self.client.close()


def _detail(answer) -> str:
    try:
        body = answer.json()
        return f"{body['error']}: {body['detail']}"
    except (ValueError, KeyError, TypeError):
        return answer.text[:300]


def score(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def uid(value: int | None) -> str:
    return "-" if value is None else str(value)
