"""Restatements: a draft said in another sentence shape, for the hard variant kinds.

The official-style templates (``arena.problems.phrasing``) say every problem as
one sentence: an opener, the noun, its constraints as trailing phrases. A
shopper rewording a request changes more than that, and the leak-cluster guard
must still recognise it, so suites carry restatements too (``Style.shape``):

* ``deep``: another sentence shape with other words: values moved before the
  noun ("a green stainless steel water bottle"), constraints as relative
  clauses ("whose material is denim"), services and the price as a sentence of
  their own, prices in words or another format ("three hundred pesos",
  "₱1,200.00"), units written another way ("750ml" -> "750 millilitres");
* ``split``: the request as several short sentences, one per constraint
  ("I need a hiking backpack. It has to be waterproof. Green, please.").

Knowledge riddles restated (the purchase first, the clue reworded) are
``arena.problems.riddles``'; voucher rules stay word for word (phrasing).
Every phrase is inclusive where the scorer is (a "less than" bound admits the
bound itself), so no restatement asks for less than its reward accepts.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from arena.problems.draft import Constraint, Draft, ItemNeed, Style
from arena.problems.model import Intent
from arena.problems.wording import (
    Renderer,
    capital,
    fix_articles,
    key_class,
    key_label,
    listing,
    number_words,
    respell_units,
    with_article,
)

# ------------------------------------------------------------------ money


def _words(n: int) -> str:
    return f"{number_words(n)} pesos" if n < 100_000 else f"₱{n:,}.00"


# Other formats than the templates' (words, centavos, "P" for pesos): the restated price reads differently.
_MONEY: tuple[Callable[[int], str], ...] = (
    _words,
    _words,
    lambda n: f"₱{n:,}.00",
    lambda n: f"{n:,}.00 pesos",
    lambda n: f"P{n:,}",
    lambda n: f"PHP{n}",
)

# ------------------------------------------------------------------ phrases inside a sentence

_INLINE: dict[str, tuple[str, ...]] = {
    "brand": ("produced by {V}", "from the maker {V}", "branded {V}"),
    "material": ("whose material is {v}", "built from {v}", "constructed of {v}"),
    "color": ("coloured {v}", "available in {v}", "whose colour is {v}"),
    "size": ("sized {v}", "available in size {v}", "whose size is {v}"),
    "pattern": ("patterned {v}", "whose pattern is {v}", "with a {v} print"),
    "flavor": ("with a {v} taste", "whose flavour is {v}", "flavoured {v}"),
    "scent": ("scented {v}", "with a {v} smell", "whose fragrance is {v}"),
    "variant": ("set to {v}", "with {v} selected", "in its {v} version"),
    "style": ("styled {v}", "looking {v}", "whose style is {v}"),
    "bare": ("listed as {v}", "sold as {v}", "labelled {v}"),
    "feature": ("offering {v}", "equipped with {v}", "including {v}"),
    "for": ("meant for {v}", "intended for {v}", "designed for {v}"),
    "for_label": ("meant for {v} {l}", "intended for {v} {l}", "designed for {v} {l}"),
    "generic": ("whose {l} is {v}", "having {v} as its {l}", "where the {l} is {v}"),
}
_INLINE_SERVICES = {
    "official": ("carried by a LazMall store", "listed on LazMall", "from an official LazMall shop"),
    "freeShipping": ("delivered at no shipping cost", "with no shipping fee", "shipped free of charge"),
    "COD": ("accepting COD", "payable in cash on arrival", "with the option to pay cash on delivery"),
    "flashsale": ("currently in a LazFlash sale", "discounted in LazFlash", "part of a LazFlash offer"),
}
_INLINE_BELOW = ("that won't cost me more than {hi}", "for {hi} at the most", "within a {hi} limit")
_INLINE_ABOVE = ("for no less than {lo}", "costing {lo} or up", "not cheaper than {lo}")
_INLINE_BETWEEN = ("with a budget of {lo} to {hi}", "anywhere from {lo} up to {hi}", "for no less than {lo} and no more than {hi}")  # fmt: skip

# ------------------------------------------------------------------ one constraint, one sentence

_SENTENCES: dict[str, tuple[str, ...]] = {
    "brand": ("It has to be from {V}.", "Brand: {V}.", "I only want {V}."),
    "material": ("It has to be {v}.", "The material should be {v}.", "{Vc} material, please."),
    "color": ("{Vc}, please.", "The colour must be {v}.", "I want it in {v}."),
    "size": ("Size {v}.", "It should be size {v}.", "I need size {v}."),
    "pattern": ("The pattern should be {v}.", "It needs a {v} pattern.", "{Vc} pattern, please."),
    "flavor": ("The flavour should be {v}.", "{Vc} flavour, please.", "I want the {v} one."),
    "scent": ("The scent should be {v}.", "{Vc} scent, please.", "It should have a {v} scent."),
    "variant": ('Pick the "{v}" option.', "The option should be {v}.", "I want the {v} version."),
    "style": ("The style should be {v}.", "It should look {v}.", "{Vc} style, please."),
    "bare": ("It has to be {v}.", "It should be {v}.", "{Vc}, please."),
    "feature": ("It needs {v}.", "It must have {v}.", "{Vc} is a must."),
    "for": ("It is for {v}.", "It should suit {v}.", "It's meant for {v}."),
    "for_label": ("It is for {v} {l}.", "It should suit {v} {l}.", "It's meant for {v} {l}."),
    "generic": ("The {l} should be {v}.", "{Lc}: {v}.", "It needs a {l} of {v}."),
}
_SERVICE_SENTENCES = {
    "official": ("It should come from a LazMall store.", "Only LazMall sellers, please.", "I want it through LazMall."),
    "freeShipping": ("Shipping has to be free.", "I don't want to pay for delivery.", "It must ship free."),
    "COD": ("I'll pay cash on delivery.", "It must allow cash on delivery.", "COD has to be an option."),
    "flashsale": ("It should be on a LazFlash deal.", "Only LazFlash offers, please.", "I want a LazFlash discount on it."),
}  # fmt: skip
_BELOW_SENTENCES = ("Keep it at {hi} or below.", "I won't pay more than {hi}.", "My limit is {hi}.", "It can cost up to {hi}.")  # fmt: skip
_ABOVE_SENTENCES = ("It should cost at least {lo}.", "Nothing cheaper than {lo}.", "I expect to pay {lo} or more.")
_BETWEEN_SENTENCES = ("The price should be somewhere from {lo} to {hi}.", "I can spend between {lo} and {hi}.", "Budget: {lo} to {hi}.")  # fmt: skip

# Values that read well before the noun ("a green stainless steel bottle"), at most two words.
_PREMODIFIED = frozenset({"brand", "material", "color", "pattern", "style"})

# ------------------------------------------------------------------ whole requests

_DEEP_PRODUCT = ("Is there {need}?", "Do you carry {need}?", "I'm shopping for {need}.", "Could you point me to {need}?",
                 "I'd love to get {need}.", "Any chance of {need}?", "My search today: {need}.")  # fmt: skip
_SPLIT_OPENERS = ("I need {head}.", "I'm after {head}.", "Shopping for {head} today.", "I want to get {head}.",
                  "Here's what I want: {head}.")  # fmt: skip
_DEEP_SHOP = (
    "Which store carries all of these: {items}?",
    "I want one seller for the whole order: {items}.",
    "Please locate a shop stocking {items}; everything should come from that one shop.",
    "Can a single shop supply {items}? I'd rather get it all from the same place.",
)
_DEEP_BASKET = ("My cart: {items}.", "I'm planning to buy {items}.", "Here's what I want to order: {items}.")
_SHOP_LEADS = (
    "I'd like to buy {k} things, all from one shop.",
    "Please find a single shop that has every item below.",
    "One store has to sell me {all_k} of these.",
)
_BASKET_LEADS = ("I want to buy {k} things.", "There are {k} items on my list.", "My order has {k} parts.")
_ITEM_LEADS = (
    ("Item one is {head}.", "Item two is {head}.", "Item three is {head}.", "Item four is {head}."),
    ("First: {head}.", "Second: {head}.", "Third: {head}.", "Fourth: {head}."),
    ("To start, {head}.", "Then {head}.", "After that, {head}.", "And then {head}."),
)


class Restater:
    """One draft's restatement: the ``Renderer``'s seeded streams, other phrase tables."""

    def __init__(self, style: Style) -> None:
        self.r = Renderer(style)
        self.money = _MONEY[self.r.money_rng.randrange(len(_MONEY))]

    @property
    def rng(self) -> random.Random:
        return self.r.words

    def pick(self, options: tuple[str, ...]) -> str:
        return self.r.pick(options)

    def _fields(self, c: Constraint) -> dict[str, str]:
        value = respell_units(c.value, self.rng)
        label = key_label(c.key)
        brand = " ".join(w[:1].upper() + w[1:] for w in value.split(" "))
        return {"v": value, "V": brand, "Vc": capital(value), "l": label, "Lc": capital(label)}

    def _price(self, c: Constraint, tables: tuple[tuple[str, ...], ...]) -> str:
        below, above, between = tables
        table = {"less than": below, "greater than": above, "between": between}[c.key]
        lo, hi = self.money(int(c.low or 0)), self.money(int(c.high or 0))
        return table[self.r.money_rng.randrange(len(table))].format(lo=lo, hi=hi)

    def inline(self, c: Constraint) -> str:
        """The constraint as a phrase after the noun ("whose material is denim")."""
        if c.kind == "service":
            return self.pick(_INLINE_SERVICES.get(c.value, (f"with {c.value} service",)))
        if c.kind == "price":
            return self._price(c, (_INLINE_BELOW, _INLINE_ABOVE, _INLINE_BETWEEN))
        return fix_articles(self.pick(_INLINE[key_class(c.key)]).format(**self._fields(c)))

    def sentence(self, c: Constraint) -> str:
        """The constraint as a short sentence about "it" ("It has to be waterproof.")."""
        if c.kind == "service":
            return self.pick(_SERVICE_SENTENCES.get(c.value, (f"It needs {c.value} service.",)))
        if c.kind == "price":
            return capital(self._price(c, (_BELOW_SENTENCES, _ABOVE_SENTENCES, _BETWEEN_SENTENCES)))
        return fix_articles(self.pick(_SENTENCES[key_class(c.key)]).format(**self._fields(c)))

    def ordered(self, need: ItemNeed) -> list[Constraint]:
        order = list(range(len(need.constraints)))
        self.r.order.shuffle(order)
        return [need.constraints[i] for i in order]

    def head(self, need: ItemNeed, premodifiers: Sequence[Constraint] = ()) -> str:
        words = [self._fields(c)["V" if key_class(c.key) == "brand" else "v"] for c in premodifiers]
        return with_article(" ".join([*words, need.noun]), need.article)

    def deep(self, need: ItemNeed, *, trailing: bool) -> tuple[str, list[str]]:
        """ "a green stainless steel water bottle whose size is 750 millilitres" and, with
        ``trailing``, the services and the price as sentences of their own."""
        cs = self.ordered(need)
        fronts = [
            c for c in cs if c.kind in ("attribute", "sku") and key_class(c.key) in _PREMODIFIED
            and len(c.value.split()) <= 2 and c.value.replace(" ", "").isalnum()
        ][: self.rng.choice((1, 2))]  # fmt: skip
        rest = [c for c in cs if c not in fronts]
        after = [c for c in rest if trailing and c.kind in ("service", "price")]
        inline = [self.inline(c) for c in rest if c not in after]
        text = self.head(need, fronts) + (" " + listing(inline, oxford=True) if inline else "")
        return text, [self.sentence(c) for c in after]

    def split(self, need: ItemNeed) -> tuple[str, list[str]]:
        """The bare item ("a hiking backpack") and one sentence per constraint."""
        return self.head(need), [self.sentence(c) for c in self.ordered(need)]


def restated_request(draft: Draft) -> str:
    """A product, shop or voucher request (without the voucher rules) in the draft's shape."""
    s = Restater(draft.style)
    split = draft.style.shape == "split"
    if len(draft.needs) == 1:
        need = draft.needs[0]
        if split:
            head, sentences = s.split(need)
            return " ".join([s.pick(_SPLIT_OPENERS).format(head=head), *sentences])
        text, sentences = s.deep(need, trailing=True)
        return " ".join([capital(s.pick(_DEEP_PRODUCT).format(need=text)), *sentences])
    shop = draft.intent is Intent.shop
    k = number_words(len(draft.needs))
    if split:
        leads = _ITEM_LEADS[s.rng.randrange(len(_ITEM_LEADS))]
        all_k = "both" if len(draft.needs) == 2 else f"all {k}"
        parts = [s.pick(_SHOP_LEADS if shop else _BASKET_LEADS).format(k=k, all_k=all_k)]
        for lead, need in zip(leads, draft.needs, strict=False):
            head, sentences = s.split(need)
            parts += [capital(lead.format(head=head)), *sentences]
        return " ".join(parts)
    items = [s.deep(n, trailing=False)[0] for n in draft.needs]
    joined = "; ".join(items[:-1]) + f"; and {items[-1]}" if any("," in i for i in items) else listing(items, True)
    return capital(s.pick(_DEEP_SHOP if shop else _DEEP_BASKET).format(items=joined))
