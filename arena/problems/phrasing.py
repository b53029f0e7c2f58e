"""How a generated problem is said: whole-query templates over a ``Draft``.

``render_query`` writes a draft's text from its ``Style`` (three independent
seeds: ``wording`` picks the templates, ``order`` the order constraints are
mentioned in, ``money`` the number and currency format; see
``arena.problems.wording``). Variants (``arena.problems.variants``) change one
seed at a time, so a variant differs from its source in one way that can be
named. A draft whose ``Style.shape`` is not ``template`` (the hard variant kinds)
is said by ``arena.problems.restating`` instead, in another sentence shape;
voucher rules stay word for word either way. Seeds feed ``random.Random`` with strings (hashed with SHA-512, never
Python's salted ``hash``), so a draft renders to the same text in every process.
"""

from __future__ import annotations

from arena.problems.draft import Draft, ItemNeed
from arena.problems.model import Intent, Voucher
from arena.problems.restating import Restater, restated_request
from arena.problems.riddles import knowledge_query, restated_riddle
from arena.problems.wording import Renderer, capital, listing

_PRODUCT_OPENERS = (
    "Show me {need}.", "Looking for {need}.", "I'm looking for {need}.", "Can you find {need}?", "I need {need}.",
    "Find me {need}.", "Help me find {need}.", "I want to buy {need}.", "Searching for {need}.",
    "Do you have {need}?", "Please recommend {need}.",
)  # fmt: skip
_CLOSERS = ("", "", "", " Thanks!", " Please show me some options.", " What would you recommend?")

_SHOP_FRAMES = ("numbered", "ordinal", "one_store", "lines", "same_shop", "single_seller")
_ORDINALS = ("First", "Second", "Third", "Fourth")
_VOUCHER_FRAMES = ("list", "also", "few_things", "shopping_list", "sentences")


def render_query(draft: Draft) -> str:
    """The templated natural-language query of a draft (deterministic in its style)."""
    if draft.style.shape != "template":
        return _restated(draft)
    r = Renderer(draft.style)
    if draft.intent is Intent.product:
        return capital(r.pick(_PRODUCT_OPENERS).format(need=r.need(draft.needs[0]))) + r.pick(_CLOSERS)
    if draft.intent is Intent.shop:
        return _shop_query(r, draft.needs)
    if draft.intent is Intent.voucher:
        assert draft.voucher is not None
        return _voucher_items(r, draft.needs) + voucher_rules(draft.voucher)
    assert draft.fact is not None
    return knowledge_query(r, draft.needs[0], draft.fact)


def _restated(draft: Draft) -> str:
    """The hard variant kinds' shapes (``arena.problems.restating``); voucher rules stay word for word."""
    if draft.intent is Intent.knowledge:
        assert draft.fact is not None
        return restated_riddle(Restater(draft.style), draft.needs[0], draft.fact, split=draft.style.shape == "split")
    text = restated_request(draft)
    if draft.intent is Intent.voucher:
        assert draft.voucher is not None
        return text + voucher_rules(draft.voucher)
    return text


def _shop_query(r: Renderer, needs: list[ItemNeed]) -> str:
    items = [r.need(n) for n in needs]
    frame = r.pick(_SHOP_FRAMES)
    if frame == "numbered":
        body = "; ".join(f"({i + 1}) {capital(t)}" for i, t in enumerate(items))
        return (
            f"{r.pick(('Find a shop that offers these items', 'Looking for a shop with these items'))}: {body}. "
            + r.pick(("The shop should sell all these products.", "All of them should come from the same shop."))
        )
    if frame == "ordinal":
        words = [*_ORDINALS[: len(items) - 1], "Lastly"]
        body = " ".join(f"{w}, {t}." for w, t in zip(words, items, strict=True))
        return f"Looking for a shop that offers these items: {body} Please show shops that sell all of them."
    if frame == "one_store":
        return f"I'd like to buy everything from one store: {listing(items, oxford=True)}."
    if frame == "lines":
        body = "\n".join(f"{i + 1}. {capital(t)}" for i, t in enumerate(items))
        return f"Which seller has all of the following?\n{body}"
    if frame == "same_shop":
        return f"Find shops offering {listing(items, oxford=False)}, all from the same shop."
    return f"Is there a single shop where I can get {listing(items, oxford=False, last='as well as')}? " + r.pick(
        ("I want to order them together.", "I'd like one delivery for all of them.")
    )


def _voucher_items(r: Renderer, needs: list[ItemNeed]) -> str:
    if len(needs) == 1:
        return capital(r.pick(_PRODUCT_OPENERS).format(need=r.need(needs[0])))
    items = [r.need(n) for n in needs]
    frame = r.pick(_VOUCHER_FRAMES)
    if frame == "list":
        return f"I'm looking for {listing(items, oxford=True)}. Please show me these products."
    if frame == "also":
        return f"Show me {', '.join(items[:-1])}, and also {items[-1]}."
    if frame == "few_things":
        return f"I need a few things: {'; '.join(items)}."
    if frame == "shopping_list":
        return "Shopping list: " + " ".join(f"{i + 1}) {t}" for i, t in enumerate(items)) + "."
    first, *rest = items
    return f"Looking for {first}. " + " ".join(f"Also searching for {t}." for t in rest)


def voucher_rules(voucher: Voucher) -> str:
    """The voucher paragraph, word for word as the official task files write it."""
    scope = (
        "The voucher applies to all products."
        if voucher.voucher_type == "platform"
        else "The voucher only applies to the products from the same shop."
    )
    if voucher.discount_type == "fixed":
        benefit = f"It provides a fixed discount of `{_num(voucher.face_value)}`."
    else:
        benefit = (
            f"It provides a percentage discount of `{round((voucher.discount or 0) * 100)}%` "
            f"with a cap of `{_num(voucher.cap)}`."
        )
    return (
        f"\n\nMy budget is only `{_num(voucher.budget)}`, but I have a voucher with the following rules:\n"
        f"1. {scope}\n2. It is valid only when the total price of the products exceeds "
        f"`{_num(voucher.threshold)}`.\n3. {benefit}"
    )


def _num(value: float | None) -> str:
    value = float(value or 0)
    return str(int(value)) if value.is_integer() else str(value)
