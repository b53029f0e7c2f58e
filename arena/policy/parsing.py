"""Reading a shopper's request: items, prices, services, voucher terms, the knowledge question.

ShoppingBench queries are templated English written by an LLM, so a handful
of patterns cover most of them: price phrases ("under 500 pesos", "between
100 and 200", "above PHP 1,200"), service phrases (free shipping, cash on
delivery, LazMall, LazFlash), multi-item lists ("(1) ...; (2) ...", "First,
... Second, ...", "a X, a Y, and a Z") and the voucher paragraph after "My
budget is". What no pattern recognises stays in the item's words, which go
to BM25 and to candidate matching: nothing is dropped on the floor.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

from arena.policy.constraints import (
    BUDGET_SENTENCE,
    PriceRange,
    VoucherTerms,
    extract_price,
    extract_services,
    parse_voucher,
)
from arena.policy.splitting import split_items, strip_lead
from arena.policy.text import FILLER, keywords, normalized, stem, words

__all__ = [
    "FILLER",
    "IntentName",
    "ItemRequest",
    "PriceRange",
    "ShoppingRequest",
    "VoucherTerms",
    "extract_price",
    "extract_services",
    "keywords",
    "normalized",
    "parse_item",
    "parse_request",
    "parse_voucher",
    "split_items",
    "stem",
    "words",
]

IntentName = Literal["product", "shop", "voucher", "knowledge"]


class ItemRequest(BaseModel):
    """One thing the shopper wants, with the constraints found in its words."""

    text: str
    keywords: list[str]
    price: PriceRange | None = None
    services: list[str] = Field(default_factory=list)

    def label(self) -> str:
        return " ".join(self.keywords[:6]) or self.text[:40]

    def search_query(self) -> str:
        return " ".join(self.keywords)


def parse_item(text: str) -> ItemRequest:
    price, rest = extract_price(text)
    services, rest = extract_services(rest)
    return ItemRequest(text=text.strip(), keywords=keywords(rest), price=price, services=services)


class ShoppingRequest(BaseModel):
    """A parsed query: what the policy searches for and the constraints it checks."""

    text: str
    intent: IntentName
    items: list[ItemRequest]
    voucher: VoucherTerms | None = None
    question: str | None = None  # the knowledge question, answered with web_search first

    @property
    def same_shop(self) -> bool:
        """Whether every item should come from one shop: shop tasks, and multi-item baskets whose voucher
        only applies within one shop (the discount is what makes such a basket fit the budget)."""
        if self.intent == "shop":
            return True
        return self.voucher is not None and self.voucher.scope == "shop" and len(self.items) > 1


_QUESTION = re.compile(
    r"^(?P<question>.*\?)\s*"
    r"(?P<purchase>[^?]*\b(?:buy|purchase|purchasing|get|order|find|interested|like|want|need|show)\b[^?]*)$",
    re.S,
)
_SHOP_WORDS = re.compile(r"\b(?:shops?|stores?|sellers?)\b", re.I)


def parse_request(text: str) -> ShoppingRequest:
    """Parse a ShoppingBench query of any intent."""
    text = text.strip()
    budget = BUDGET_SENTENCE.search(text)
    if budget is not None:
        body = text[: budget.start()].strip()
        voucher = parse_voucher(text[budget.start() :])
        items = [parse_item(p) for p in split_items(body)]
        return ShoppingRequest(text=text, intent="voucher", items=items, voucher=voucher)
    question = _QUESTION.match(text)
    if question is not None:
        purchase = question.group("purchase")
        item = parse_item(strip_lead(purchase))
        item.keywords = [w for w in item.keywords if w not in _KNOWLEDGE_FILLER]
        return ShoppingRequest(text=text, intent="knowledge", items=[item], question=question.group("question"))
    if _SHOP_WORDS.search(text):
        items = [parse_item(p) for p in split_items(text)]
        if len(items) > 1 or re.search(r"\b(?:shops|stores|sellers)\b", text, re.I):
            return ShoppingRequest(text=text, intent="shop", items=items)
    return ShoppingRequest(text=text, intent="product", items=[parse_item(strip_lead(text))])


# The purchase sentence of a knowledge riddle refers back to the answer; these words name it, not the product.
_KNOWLEDGE_FILLER = frozenset(
    "corresponding corresponds related relating according name named called this that year country animal "
    "person brand city major instrument same whose used use uses using exactly colour color material style "
    "pattern scent flavour flavor i'd".split()
)
