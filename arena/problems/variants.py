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

The hard kinds restate the whole request (``arena.problems.restating``), as a
shopper rewording it would, with every seed new:

* ``deep_paraphrase``: another sentence shape and other words; values before
  the noun, relative clauses, the price and services as their own sentence,
  prices in words or another format, units written another way;
* ``split_sentences``: the request as several short sentences, one per constraint;
* ``shop_items``: a multi-item request (shop, or a voucher basket) with its
  items in another order and each reworded (the reward list follows the items);
* ``riddle_reworded``: a knowledge riddle with the purchase first (or the clue
  as a statement) and the clue reworded; same fact, same product.

The gold products, constraints, voucher and fact never change, so a variant
has its source's reward up to list order: the leak-cluster guard must put it
in its source's cluster, and the tests check both facts.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence
from typing import Literal, cast, get_args

from arena.problems.draft import Draft, ItemNeed, Shape, Style
from arena.problems.model import Intent, Problem
from arena.problems.phrasing import render_query

VariantKind = Literal[
    "paraphrase",
    "constraint_order",
    "attribute_order",
    "price_phrasing",
    "deep_paraphrase",
    "split_sentences",
    "shop_items",
    "riddle_reworded",
]
KINDS: tuple[VariantKind, ...] = get_args(VariantKind)
#: The kinds that restate the whole request (issue 31): the ones the leak-cluster guard finds hardest.
HARD_KINDS: tuple[VariantKind, ...] = ("deep_paraphrase", "split_sentences", "shop_items", "riddle_reworded")
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
    if draft.intent is not Intent.knowledge:
        kinds.append("deep_paraphrase")
    kinds.append("split_sentences")
    if len(draft.needs) > 1:
        kinds.append("shop_items")
    if draft.intent is Intent.knowledge:
        kinds.append("riddle_reworded")
    return kinds


def parse_kinds(text: str) -> list[VariantKind]:
    """ "deep_paraphrase,split_sentences" or "hard" / "all" -> kinds; a clear error names the known ones."""
    out: list[VariantKind] = []
    for name in (part.strip() for part in text.split(",")):
        if not name:
            continue
        group = {"all": KINDS, "hard": HARD_KINDS}.get(name)
        if group is None and name not in KINDS:
            raise ValueError(f"unknown variant kind {name!r}; choose from {', '.join(KINDS)} (or all, hard)")
        for kind in group or (cast(VariantKind, name),):
            if kind not in out:
                out.append(kind)
    if not out:
        raise ValueError("no variant kinds given")
    return out


def make_variants(
    draft: Draft, query: str, k: int, kinds: Sequence[VariantKind] | None = None
) -> list[tuple[Draft, str, VariantKind]]:
    """Up to ``k`` variants ``(draft, query, kind)``, kinds in turn, each text new.

    ``kinds`` limits the kinds (default: every kind); a kind that does not apply
    to the draft (``shop_items`` to one item, ``riddle_reworded`` to a product)
    is skipped. Deterministic: the variant seeds derive from the source's style.
    """
    if k <= 0:
        return []
    style = draft.style
    rng = random.Random(f"variants:{style.wording}:{style.order}:{style.money}")
    kinds = [kind for kind in applicable_kinds(draft) if kinds is None or kind in kinds]
    if not kinds:
        return []
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
        if text not in seen and not _tells_the_fact(variant, text):
            seen.add(text)
            out.append((variant, text, kind))
    return out


def _tells_the_fact(draft: Draft, text: str) -> bool:
    """A riddle's answer in its text would need no lookup (the source passed this check; a restated one must too)."""
    return draft.fact is not None and re.search(rf"\b{re.escape(draft.fact.value)}\b", text.lower()) is not None


_SHAPES: dict[VariantKind, Shape] = {"deep_paraphrase": "deep", "split_sentences": "split", "riddle_reworded": "riddle"}


def _vary(draft: Draft, kind: VariantKind, rng: random.Random) -> Draft:
    style = draft.style
    if kind in HARD_KINDS:  # every seed new: another shape, other words, another order and money format
        # Reworded shop items are said either way: in one sentence, or one short sentence per constraint.
        shape = rng.choice(("deep", "split")) if kind == "shop_items" else _SHAPES[kind]
        restyled = Style(wording=rng.getrandbits(32), order=rng.getrandbits(32), money=rng.getrandbits(32),
                         shape=shape)  # fmt: skip
        needs = _derange(list(draft.needs), rng) if kind == "shop_items" else draft.needs
        return draft.model_copy(update={"needs": needs, "style": restyled})
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


def family_joins(problems: Iterable[Problem]) -> dict[str, tuple[int, int]]:
    """Per variant kind: (variants in their source's leak cluster, variants whose source is present).

    Read from the rows a generator wrote (``variant_of``, ``variant_kind``) after
    clustering: what share of each kind the guard kept with its source. A variant
    apart from its source could land in another partition than it.
    """
    problems = list(problems)
    cluster = {p.id: p.cluster_id for p in problems}
    out: dict[str, tuple[int, int]] = {}
    for p in problems:
        kind, source = p.extra.get("variant_kind"), p.extra.get("variant_of")
        if not isinstance(kind, str) or source not in cluster:
            continue
        joined, total = out.get(kind, (0, 0))
        out[kind] = (joined + (cluster[p.id] is not None and cluster[p.id] == cluster[source]), total + 1)
    return dict(sorted(out.items()))
