"""One typed model for the four ShoppingBench intents.

The reward shapes are the official ones, kept as they are in the task files so
that generated problems, official problems and the scorer share one format.
"""

from __future__ import annotations

import hashlib
from enum import StrEnum
from typing import Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field

from arena.shop.product import Product


class Intent(StrEnum):
    product = "product"
    shop = "shop"
    voucher = "voucher"
    knowledge = "knowledge"

    @classmethod
    def parse(cls, name: str) -> Intent:
        """Accepts the official code name ``web`` as an alias of ``knowledge``."""
        return cls.knowledge if name == "web" else cls(name)


class Difficulty(StrEnum):
    easy = "easy"
    medium = "medium"
    hard = "hard"

    @classmethod
    def from_constraint_count(cls, n: int) -> Difficulty:
        """Official rows carry no difficulty; ours: easy <= 2, medium 3-4, hard >= 5."""
        if n <= 2:
            return cls.easy
        if n <= 4:
            return cls.medium
        return cls.hard


PriceMode = Literal["between", "greater than", "less than"]


class ProductReward(BaseModel):
    """The gold product of one (sub-)task and the constraints it satisfies."""

    model_config = ConfigDict(extra="allow")

    product_id: str
    title: list[str] = Field(default_factory=list)
    price: list[dict[PriceMode, list[float | None]]] = Field(default_factory=list)
    attributes: list[dict[str, list[str]]] = Field(default_factory=list)
    sku_options: list[dict[str, str]] = Field(default_factory=list)
    service: list[str] = Field(default_factory=list)

    def constraint_count(self) -> int:
        """Scoreable constraints, counted as the scorer counts them."""
        n = len(self.title) + len(self.service)
        n += sum(len(rng) for rng in self.price)
        n += sum(len(option) for option in self.sku_options)
        n += sum(len(values) for attr in self.attributes for values in attr.values())
        return n


class Voucher(BaseModel):
    voucher_type: Literal["platform", "shop"]
    threshold: float
    discount_type: Literal["fixed", "percentage"]
    face_value: float | None = None
    discount: float | None = None
    cap: float | None = None
    price_after_voucher: float | None = None
    budget: float


class KnowledgeReward(BaseModel):
    """A knowledge task's answer: the fact and the full gold product record."""

    knowledge_attribute: str
    product: Product


class Problem(BaseModel):
    """One shopping problem of any intent.

    ``rewards`` holds one entry for product tasks and one per requested item
    for shop and voucher tasks; knowledge tasks use ``knowledge`` instead.
    """

    id: str
    intent: Intent
    query: str
    difficulty: Difficulty
    rewards: list[ProductReward] = Field(default_factory=list)
    voucher: Voucher | None = None
    knowledge: KnowledgeReward | None = None
    source: str = ""
    # Variants of one underlying problem share a leak cluster (set by `arena problems cluster`).
    cluster_id: str | None = None
    extra: dict = Field(default_factory=dict)

    def constraint_count(self) -> int:
        if self.knowledge is not None:
            return 2  # the fact and the gold title
        return sum(r.constraint_count() for r in self.rewards)

    def gold_product_ids(self) -> list[str]:
        if self.knowledge is not None:
            return [self.knowledge.product.product_id]
        return [r.product_id for r in self.rewards]

    def to_row(self) -> dict:
        """The official row shape, plus our ``id``, ``intent`` and ``difficulty``."""
        row: dict = {"query": self.query}
        if self.knowledge is None and not self.rewards:
            pass  # a query-only problem (``parse_row(..., query_only=True)``): no reward to write
        elif self.intent is Intent.knowledge:
            assert self.knowledge is not None
            row["Knowledge_Attribute"] = self.knowledge.knowledge_attribute
            row["reward"] = self.knowledge.product.model_dump()
        elif self.intent is Intent.product:
            row["reward"] = _reward_row(self.rewards[0])
        else:
            row["reward"] = [_reward_row(r) for r in self.rewards]
        if self.voucher is not None:
            row["voucher"] = self.voucher.model_dump()
        row.update(self.extra)
        row.update(id=self.id, intent=self.intent.value, difficulty=self.difficulty.value)
        if self.cluster_id is not None:
            row["cluster_id"] = self.cluster_id
        return row


def _reward_row(reward: ProductReward) -> dict:
    return reward.model_dump(exclude_defaults=True, exclude={"product_id"}) | {"product_id": reward.product_id}


CONTENT_KEYS = ("query", "reward", "voucher", "Knowledge_Attribute")


def content_id(row: dict) -> str:
    """A stable id: a hash of the row's task content (query, reward, voucher, fact)."""
    keyed = {k: row.get(k) for k in CONTENT_KEYS}
    digest = hashlib.sha256(orjson.dumps(keyed, option=orjson.OPT_SORT_KEYS)).hexdigest()
    return f"p-{digest[:16]}"
