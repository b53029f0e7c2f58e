"""The rules of an optional LLM rewrite of a templated query (the official recipe used GPT-4.1).

Templates give variety but still read as templates; a chat model turns them
into the way shoppers write. It is optional: generation needs no LLM. The chat
client that asks the model lives above this library (``arena.generator.rewrite_client``),
so the problem library stays pure: these rules receive the model as a
``complete(text) -> text`` callable.

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
from collections.abc import Callable

from arena.problems.draft import Draft
from arena.problems.phrasing import voucher_rules

SYSTEM_PROMPT = (
    "You rewrite online-shopping requests so they read like a real shopper wrote them. "
    "Keep every requirement: the products, brands, attributes, sizes, colours, services, price limits and "
    "every number exactly as given; do not add requirements, do not answer the question, do not name a "
    "product that the request does not name. Keep the order of the items. Reply with the rewritten request only."
)
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def rewrite_query(query: str, draft: Draft, complete: Callable[[str], str], stats: Counter[str]) -> str:
    """``query`` as ``complete`` rewrites it when the rewrite is safe, else ``query`` itself; counts which in
    ``stats``."""
    rules = voucher_rules(draft.voucher) if draft.voucher is not None else ""
    request = query.removesuffix(rules) if rules and query.endswith(rules) else query
    rewritten = complete(request)
    reason = _unsafe(request, rewritten, draft)
    if reason:
        stats[f"kept_template:{reason}"] += 1
        return query
    stats["rewritten"] += 1
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
