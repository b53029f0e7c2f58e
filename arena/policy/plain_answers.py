"""Plain-text answers (requests without tools): yes/no product classification, or a summary.

Sub-task agents ask the model narrow questions ("Does this product match
the request? Answer yes or no") and keep the search loop in code; the
policy answers those with the same candidate fit it uses when shopping.
"""

from __future__ import annotations

import json
import re

from arena.policy.candidates import Assessment, Candidate, assess
from arena.policy.conversation import Transcript
from arena.policy.parsing import parse_request

_YES_NO = re.compile(r"\byes or no\b|\byes/no\b|\banswer (?:with )?(?:\"?yes\"?|only yes)", re.I)
_LABEL = re.compile(
    r"^\s*(?P<label>shopper'?s? request|user request|request|query|task|product|candidate|item)\s*:\s*(?P<rest>.*)$",
    re.I,
)
YES_THRESHOLD = 0.45


def plain_answer(transcript: Transcript) -> str:
    prompt = transcript.last_user
    if _YES_NO.search(prompt):
        return classify(prompt, fallback_request=transcript.task)
    sections = _sections(prompt)
    if "request" in sections and "product" in sections:
        return justify(sections["request"], sections["product"])
    return narrate(transcript)


def _judge(request_text: str, product_text: str) -> Assessment:
    request = parse_request(request_text)
    candidate = _candidate(product_text)
    return max((assess(item, candidate) for item in request.items), key=lambda a: a.score)


def justify(request_text: str, product_text: str) -> str:
    """A one-line reason for (or against) a product, for agents that ask the model to explain a choice."""
    best = _judge(request_text, product_text)
    stance = "fits the request" if best.score >= YES_THRESHOLD and not best.problems else "is a weak fit"
    return f"Product {best.explain()}, so it {stance} (heuristic fit {best.score:.2f})."


def _sections(prompt: str) -> dict[str, str]:
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for line in prompt.splitlines():
        match = _LABEL.match(line)
        if match:
            label = match.group("label").lower()
            current = "product" if label in ("product", "candidate", "item") else "request"
            sections.setdefault(current, []).append(match.group("rest"))
        elif current is not None:
            sections[current].append(line)
    return {k: "\n".join(v).strip() for k, v in sections.items()}


def _candidate(text: str) -> Candidate:
    """A product given as JSON (search hit and/or information record), or as free text."""
    start, end = text.find("{"), text.rfind("}")
    if start >= 0 and end > start:
        try:
            record = json.loads(text[start : end + 1])
        except json.JSONDecodeError:
            record = None
        if isinstance(record, dict):
            return Candidate(
                product_id=str(record.get("product_id", "?")),
                shop_id=str(record.get("shop_id") or ""),
                title=str(record.get("title") or ""),
                price=_price(record.get("price")),
                service=[str(s) for s in record.get("service") or []],
                rank=0,
                info=record if ("attributes" in record or "sku_options" in record) else None,
            )
    price = re.search(r"price\D{0,5}(\d[\d,]*(?:\.\d+)?)", text, re.I)
    return Candidate(product_id="?", title=text, price=_price(price.group(1).replace(",", "")) if price else None)


def _price(value: object) -> float | None:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def classify(prompt: str, fallback_request: str = "") -> str:
    sections = _sections(prompt)
    best = _judge(sections.get("request") or fallback_request or prompt, sections.get("product") or prompt)
    verdict = "Yes" if best.score >= YES_THRESHOLD and not best.problems else "No"
    return f"{verdict}. {best.explain()} (heuristic fit {best.score:.2f})."


def narrate(transcript: Transcript) -> str:
    request = parse_request(transcript.task or transcript.last_user)
    parts = []
    for index, item in enumerate(request.items, start=1):
        constraints = [f"price {item.price.describe()}"] if item.price else []
        constraints += item.services
        suffix = f" ({', '.join(constraints)})" if constraints else ""
        parts.append(f"{index}. {item.label()}{suffix}")
    summary = f"A {request.intent} request: " + "; ".join(parts) + "."
    if request.voucher is not None:
        summary += f" Budget {request.voucher.budget:g}."
    recommended = [c for c in transcript.named("recommend_product") if c.ok]
    if recommended:
        summary += f" Recommended: {recommended[-1].arguments.get('product_ids')}."
    elif transcript.calls:
        summary += f" {len(transcript.calls)} tool call(s) so far."
    return summary
