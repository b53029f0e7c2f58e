"""What a generated problem asks for: the draft, before any wording.

A ``Draft`` is the structured content of one problem: the gold products, the
constraints each must satisfy, the voucher or the knowledge fact. The reward
is derived from it, never from the text, so every wording of one draft has the
same answer (``arena.problems.phrasing`` writes the text; ``Style`` holds the
seeds it writes with).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from arena.problems.model import Intent, ProductReward, Voucher
from arena.shop.product import Product

ConstraintKind = Literal["attribute", "sku", "service", "price"]


class Constraint(BaseModel):
    """One requirement on one product. Prices use ``key`` for the official
    mode ("between", "greater than", "less than") and ``low``/``high``."""

    model_config = ConfigDict(frozen=True)

    kind: ConstraintKind
    key: str = ""
    value: str = ""
    low: int | None = None
    high: int | None = None

    def price_bounds(self) -> list[float | None]:
        """The official row's bounds: ``[lo, hi]``, ``[lo, null]`` or ``[0, hi]``."""
        if self.key == "greater than":
            return [self.low, None]
        if self.key == "less than":
            return [0, self.high]
        return [self.low, self.high]


class ItemNeed(BaseModel):
    """One gold product and what the query says about it."""

    product: Product
    noun: str  # the title noun phrase the shopper names ("gate roller")
    article: bool = True  # "a gate roller" vs "jeans"
    constraints: list[Constraint] = Field(default_factory=list)

    def reward(self) -> ProductReward:
        """The official reward: the gold title plus every constraint, in spec order."""
        cs = self.constraints
        sku = {c.key: c.value for c in cs if c.kind == "sku"}
        return ProductReward(
            product_id=self.product.product_id,
            title=[self.product.title],
            price=[{c.key: c.price_bounds()} for c in cs if c.kind == "price"],
            attributes=[{c.key: [c.value]} for c in cs if c.kind == "attribute"],
            sku_options=[sku] if sku else [],
            service=[c.value for c in cs if c.kind == "service"],
        )


FactKind = Literal["material", "color", "flavor", "scent", "pattern", "style"]


class Fact(BaseModel):
    """A knowledge riddle's fact: a fictional entity called ``name`` (unique per candidate) has ``value``."""

    kind: FactKind
    value: str
    name: str  # the invented proper name, e.g. "Kavelon"
    place: str
    year: int
    doc_id: str


#: The sentence shape a draft is said in: the official-style templates, or one of the restatements
#: the hard variant kinds use (``arena.problems.restating``): other sentence shapes and synonyms, one
#: short sentence per constraint, or a knowledge riddle with the purchase first and the clue reworded.
Shape = Literal["template", "deep", "split", "riddle"]


class Style(BaseModel):
    """The seeds a draft is worded with (``arena.problems.wording.Renderer``), and its sentence shape."""

    model_config = ConfigDict(frozen=True)

    wording: int
    order: int
    money: int
    shape: Shape = "template"


class Draft(BaseModel):
    intent: Intent
    needs: list[ItemNeed]
    style: Style
    voucher: Voucher | None = None
    fact: Fact | None = None
