"""Optional LLM rewriting of templated queries (the official recipe used GPT-4.1).

Templates give variety but still read as templates; a chat model turns them
into the way shoppers write. It is optional: generation needs no LLM, and the
``openai`` package is not a core dependency. Any OpenAI-compatible endpoint
works (vLLM, a hosted API); the ``openai`` client is used when installed,
plain ``httpx`` otherwise.

A rewrite is only kept when it cannot have changed the task:

* every number of the templated text is still there (prices, sizes);
* a knowledge riddle's answer is still absent (the agent must look it up);
* a voucher's rules paragraph is never sent: it is kept word for word, as the
  official files write it, and appended to the rewritten request.

Otherwise the templated text stays and the reason is counted in ``stats``.
Rewritten output is not deterministic; the templated query is kept in the row
as ``query_template`` so a run can be audited.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from arena.problems.draft import Draft
from arena.problems.phrasing import voucher_rules

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam

SYSTEM_PROMPT = (
    "You rewrite online-shopping requests so they read like a real shopper wrote them. "
    "Keep every requirement: the products, brands, attributes, sizes, colours, services, price limits and "
    "every number exactly as given; do not add requirements, do not answer the question, do not name a "
    "product that the request does not name. Keep the order of the items. Reply with the rewritten request only."
)
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


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
        rules = voucher_rules(draft.voucher) if draft.voucher is not None else ""
        request = query.removesuffix(rules) if rules and query.endswith(rules) else query
        rewritten = self.complete(request)
        reason = _unsafe(request, rewritten, draft)
        if reason:
            self.stats[f"kept_template:{reason}"] += 1
            return query
        self.stats["rewritten"] += 1
        return rewritten + rules


def _unsafe(request: str, rewritten: str, draft: Draft) -> str | None:
    kept = set(_numbers(rewritten))
    if any(n not in kept for n in _numbers(request)):
        return "number_changed"
    if draft.fact is not None and draft.fact.value.lower() in rewritten.lower():
        return "answer_revealed"
    return None


def _numbers(text: str) -> list[str]:
    return [n.replace(",", "") for n in _NUMBER.findall(text)]


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
