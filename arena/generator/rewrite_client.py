"""The query rewriter's chat client: any OpenAI-compatible endpoint (vLLM, a hosted API).

It stands above the problem library because it talks to the network; what a
rewrite may change, and the instructions sent, are the library's rules
(``arena.problems.rewriter``). The ``openai`` client is used when installed,
plain ``httpx`` otherwise.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from arena.problems.draft import Draft
from arena.problems.rewriter import SYSTEM_PROMPT, rewrite_query

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam


class RewriterUnavailable(ImportError):
    pass


class RewriteError(RuntimeError):
    pass


class RewriterConfig(BaseModel):
    base_url: str = Field(description="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1")
    model: str
    api_key: str | None = None
    temperature: float = Field(0.7, ge=0, le=2)
    timeout_s: float = Field(60.0, gt=0)
    retries: int = Field(2, ge=0, description="Retries of a failed request (connection errors, 5xx).")
    backend: Literal["auto", "openai", "httpx"] = "auto"


class QueryRewriter:
    """Callable as the generator's ``rewrite`` hook: ``rewriter(query, draft) -> query``."""

    def __init__(self, config: RewriterConfig) -> None:
        self.config = config
        self.backend = _backend(config.backend)
        self.stats: Counter[str] = Counter()
        self._client = None
        if self.backend == "openai":
            import openai

            self._client = openai.OpenAI(
                base_url=config.base_url,
                api_key=config.api_key or "unused",
                timeout=config.timeout_s,
                max_retries=config.retries,
            )

    def complete(self, text: str) -> str:
        """One chat completion of ``text`` under the rewriting instructions."""
        messages: list[ChatCompletionMessageParam] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": text},
        ]
        where = f"rewriter endpoint {self.config.base_url} (model {self.config.model})"
        if self._client is not None:
            import openai

            try:
                reply = self._client.chat.completions.create(
                    model=self.config.model, messages=messages, temperature=self.config.temperature
                )
            except openai.OpenAIError as exc:
                raise RewriteError(f"{where}: {exc}") from None
            content = reply.choices[0].message.content if reply.choices else None
        else:
            content = self._complete_httpx(messages, where)
        if not isinstance(content, str) or not content.strip():
            raise RewriteError(f"{where}: the reply has no text")
        return content.strip()

    def _complete_httpx(self, messages: list[ChatCompletionMessageParam], where: str) -> str | None:
        import httpx

        headers = {"Authorization": f"Bearer {self.config.api_key}"} if self.config.api_key else {}
        body = {"model": self.config.model, "messages": messages, "temperature": self.config.temperature}
        url = self.config.base_url.rstrip("/") + "/chat/completions"
        for attempt in range(self.config.retries + 1):
            try:
                response = httpx.post(url, json=body, headers=headers, timeout=self.config.timeout_s)
                if response.status_code >= 500 and attempt < self.config.retries:
                    continue
                response.raise_for_status()
                choices = response.json().get("choices") or [{}]
                return (choices[0].get("message") or {}).get("content")
            except httpx.TransportError as exc:
                if attempt == self.config.retries:
                    raise RewriteError(f"{where}: {exc}") from None
            except (httpx.HTTPError, ValueError) as exc:
                raise RewriteError(f"{where}: {exc}") from None
        return None

    def __call__(self, query: str, draft: Draft) -> str:
        return rewrite_query(query, draft, self.complete, self.stats)


def _backend(wanted: str) -> str:
    names = ("openai", "httpx") if wanted == "auto" else (wanted,)
    for name in names:
        try:
            __import__(name)
        except ImportError:
            continue
        return name
    raise RewriterUnavailable(
        "the query rewriter needs the 'openai' package (or 'httpx'), which is not installed: "
        "pip install openai  (or run without --rewrite-base-url / --rewrite-model)"
    )
