"""Variants of a generated problem: the same task said differently.

Each variant changes one thing a paraphrase would, and is tagged with it:

* ``paraphrase``: other templates (openers, constraint phrases, joins);
* ``constraint_order``: the constraints mentioned in another order, and for
  multi-item tasks the items too (the reward list follows the items, since the
  scorer matches recommendations to rewards by position);
* ``attribute_order``: the attribute constraints of an item reordered, in the
  query and in the reward's ``attributes`` list;
* ``price_phrasing``: the same price range in other words and number formats
  ("under 500", "less than PHP 500", "at most 500 pesos").

The gold products, constraints, voucher and fact never change, so a variant
has its source's reward up to list order: the leak-cluster guard must put it
in its source's cluster, and the tests check both facts.
"""

from __future__ import annotations

import random
from typing import Literal

from arena.problems.draft import Draft, ItemNeed
from arena.problems.phrasing import render_query

VariantKind = Literal["paraphrase", "constraint_order", "attribute_order", "price_phrasing"]
KINDS: tuple[VariantKind, ...] = ("paraphrase", "constraint_order", "attribute_order", "price_phrasing")
#: Tries per wanted variant before settling for fewer (a one-constraint task has few wordings).
_TRIES = 8


def applicable_kinds(draft: Draft) -> list[VariantKind]:
    kinds: list[VariantKind] = ["paraphrase"]
    if len(draft.needs) > 1 or any(len(n.constraints) > 1 for n in draft.needs):
        kinds.append("constraint_order")
    if any(sum(c.kind == "attribute" for c in n.constraints) > 1 for n in draft.needs):
        kinds.append("attribute_order")
    if any(c.kind == "price" for n in draft.needs for c in n.constraints):
        kinds.append("price_phrasing")
    return kinds


def make_variants(draft: Draft, query: str, k: int) -> list[tuple[Draft, str, VariantKind]]:
    """Up to ``k`` variants ``(draft, query, kind)``, kinds in turn, each text new.

    Deterministic: the variant seeds derive from the source's style.
    """
    if k <= 0:
        return []
    style = draft.style
    rng = random.Random(f"variants:{style.wording}:{style.order}:{style.money}")
    kinds = applicable_kinds(draft)
    first = rng.randrange(len(kinds))  # so one variant per problem is not always a paraphrase
    kinds = kinds[first:] + kinds[:first]
    seen = {query}
    out: list[tuple[Draft, str, VariantKind]] = []
    for attempt in range(k * _TRIES):
        if len(out) == k:
            break
        kind = kinds[attempt % len(kinds)]
        variant = _vary(draft, kind, rng)
        text = render_query(variant)
        if text not in seen:
            seen.add(text)
            out.append((variant, text, kind))
    return out


def _vary(draft: Draft, kind: VariantKind, rng: random.Random) -> Draft:
    style = draft.style
    if kind == "paraphrase":
        return draft.model_copy(update={"style": style.model_copy(update={"wording": rng.getrandbits(32)})})
    if kind == "price_phrasing":
        return draft.model_copy(update={"style": style.model_copy(update={"money": rng.getrandbits(32)})})
    if kind == "constraint_order":
        needs = list(draft.needs)
        if len(needs) > 1:
            needs = _derange(needs, rng)
        return draft.model_copy(
            update={"needs": needs, "style": style.model_copy(update={"order": rng.getrandbits(32)})}
        )
    return draft.model_copy(update={"needs": [_reorder_attributes(n, rng) for n in draft.needs]})


def _derange(items: list, rng: random.Random) -> list:
    """A permutation that moves at least one item."""
    order = list(range(len(items)))
    while order == sorted(order):
        rng.shuffle(order)
    return [items[i] for i in order]


def _reorder_attributes(need: ItemNeed, rng: random.Random) -> ItemNeed:
    slots = [i for i, c in enumerate(need.constraints) if c.kind == "attribute"]
    if len(slots) < 2:
        return need
    moved = _derange([need.constraints[i] for i in slots], rng)
    constraints = list(need.constraints)
    for slot, constraint in zip(slots, moved, strict=True):
        constraints[slot] = constraint
    return need.model_copy(update={"constraints": constraints})
