"""What a generated problem asks for (the draft) and how it is said (query templates).

A ``Draft`` is the structured content of one problem: the gold products, the
constraints each must satisfy, the voucher or the knowledge fact. The reward
is derived from it, never from the text, so every wording of one draft has the
same answer. The text comes from ``render_query``, driven by a ``Style`` of
three independent seeds:

* ``wording`` picks the templates (openers, constraint phrases, joins),
* ``order`` shuffles the order constraints are mentioned in,
* ``money`` picks the number and currency format and the price phrasing.

Variants (``arena.problems.variants``) change one seed at a time, so a variant
differs from its source in one way that can be named. Seeds feed
``random.Random`` with strings (hashed with SHA-512, never Python's salted
``hash``), so a draft renders to the same text in every process.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from arena.problems.model import Intent, ProductReward, Voucher
from arena.shop.product import Product
from arena.shop.vocabulary import LABELS, LEAVES

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
            price=[{c.key: c.price_bounds()} for c in cs if c.kind == "price"],  # type: ignore[misc]
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


class Style(BaseModel):
    model_config = ConfigDict(frozen=True)

    wording: int
    order: int
    money: int


class Draft(BaseModel):
    intent: Intent
    needs: list[ItemNeed]
    style: Style
    voucher: Voucher | None = None
    fact: Fact | None = None


# ------------------------------------------------------------------ numbers and money

_MONEY: tuple[Callable[[int], str], ...] = (
    lambda n: f"PHP {n:,}",
    lambda n: f"{n} pesos",
    lambda n: f"₱{n}",
    lambda n: f"{n:,} PHP",
    lambda n: f"₱{n:,}",
    lambda n: f"{n:,} pesos",
    lambda n: f"{n}",  # "under 500": a bare number, as shoppers often write
)

_BETWEEN = (
    "priced between {lo} and {hi}",
    "costing {lo} to {hi}",
    "with a price from {lo} to {hi}",
    "between {lo} and {hi}",
    "in the {lo} to {hi} price range",
)
_ABOVE = (
    "priced above {lo}",
    "that costs over {lo}",
    "costing more than {lo}",
    "with a price higher than {lo}",
    "over {lo}",
    "at {lo} or more",
)
_BELOW = (
    "under {hi}",
    "for less than {hi}",
    "at most {hi}",
    "no more than {hi}",
    "priced below {hi}",
    "that costs under {hi}",
)

# ------------------------------------------------------------------ constraint phrases

_SERVICES = {
    "official": ("available through LazMall", "with LazMall service", "sold by an official LazMall store",
                 "with LazMall perks"),
    "freeShipping": ("with free shipping", "that ships for free", "with complimentary shipping",
                     "with free delivery"),
    "COD": ("with cash on delivery", "that supports cash on delivery", "with COD available",
            "payable on delivery"),
    "flashsale": ("on a LazFlash deal", "with LazFlash deals", "in a flash sale", "on a LazFlash promo"),
}  # fmt: skip

_BY_CLASS = {
    "brand": ("from {V}", "by {V}", "made by {V}", "of the {V} brand", "from the brand {V}"),
    "material": ("made of {v}", "made from {v}", "in {v}", "with {v} material", "crafted from {v}"),
    "color": ("in {v}", "in {v} color", "in the color {v}", "in a {v} colorway", "with color {v}"),
    "size": ("in size {v}", "size {v}", "in {v} size", "in the {v} size"),
    "pattern": ("with a {v} pattern", "in a {v} design", "with {v} pattern", "featuring a {v} pattern"),
    "flavor": ("in {v} flavor", "with {v} flavor", "in the {v} flavour"),
    "scent": ("with a {v} scent", "in {v} scent", "in the {v} fragrance"),
    "variant": ('in the "{v}" variant', 'with the option "{v}"', "variant: {v}", "({v} option)"),
    "style": ("in a {v} style", "with {v} style", "with a {v} look"),
    "bare": ("marked {v}", "({v})", "described as {v}"),
    "feature": ("with {v}", "featuring {v}", "that has {v}"),
    "for": ("for {v}", "suitable for {v}", "made for {v}"),
    "for_label": ("for {v} {l}", "suitable for {v} {l}", "made for {v} {l}"),
    "generic": ("with {l} {v}", "with a {l} of {v}", "with {l}: {v}", "with a {v} {l}"),
}
_SIZE_KEYS = frozenset({"size", "bed_size", "fan_size", "screen_size", "guitar_size", "paper_size", "watch_dial_size"})
# Keys whose values read on their own ("unisex", "waterproof") or after "with"/"for".
_SPECIAL = {
    **dict.fromkeys(("is_unisex", "travel_size", "units_hb", "size_class", "sleeves", "book_format", "dietary_needs",
                     "special_feature", "case_function", "body_benefits", "finish", "top_fit_types",
                     "jeans_fit_type"), "bare"),
    **dict.fromkeys(("headphone_features", "watch_features", "ingredient_preference", "main_stone", "closure_type",
                     "connectivity"), "feature"),
    **dict.fromkeys(("recommended_gender", "recommended_age", "pet_life_stage", "power_tool_material_uses",
                     "activity_type", "subject"), "for"),
    **dict.fromkeys(("skin_type", "hair_type", "pet_size"), "for_label"),
    "material_type": "material",
    "material_filter": "material",
}  # fmt: skip
_OWN_LABELS = {"skin_type": "skin", "hair_type": "hair", "pet_size": "pets"}


def key_class(key: str) -> str:
    """Which phrase family reads naturally for an attribute / SKU key."""
    k = key.lower()
    if k == "brand":
        return "brand"
    if k in _SPECIAL:
        return _SPECIAL[k]
    if k.endswith("material"):  # not "power_tool_material_uses": that is what a tool works on
        return "material"
    for cls, marks in (("color", ("color", "colour")), ("pattern", ("pattern",)), ("flavor", ("flavor", "flavour")),
                       ("scent", ("scent", "fragrance")), ("style", ("style",))):  # fmt: skip
        if any(m in k for m in marks):
            return cls
    if k in _SIZE_KEYS:
        return "size"
    if k in ("variation", "model") or k.endswith("_model"):
        return "variant"
    return "generic"


def key_label(key: str) -> str:
    """A readable name for a catalog key ("country_origin_hb" -> "country of origin")."""
    if key in _OWN_LABELS or key in LABELS:
        return _OWN_LABELS.get(key) or LABELS[key]
    label = key
    for prefix in ("fa_", "m_"):
        label = label.removeprefix(prefix)
    for suffix in ("_hb", "_gr"):
        label = label.removesuffix(suffix)
    return label.replace("_", " ")


def _title_case(text: str) -> str:
    return " ".join(w[:1].upper() + w[1:] for w in text.split(" "))


# "an" before a vowel sound; "u" words said "you" (unisex, usb, ukulele) and "eu" take "a".
_VOWEL_SOUND = re.compile(r"(?:[aio]|e(?!u)|u(?!ni|s[bea]|ku|ti|ra|re))", re.IGNORECASE)
_BAD_A = re.compile(r"\b([Aa]) (?=(?:[aio]|e(?!u)|u(?!ni|s[bea]|ku|ti|ra|re))\w)")


def with_article(noun: str, article: bool) -> str:
    if not article:
        return noun
    return ("an " if _VOWEL_SOUND.match(noun) else "a ") + noun


def fix_articles(text: str) -> str:
    """ "a elegant look" -> "an elegant look" (templates write "a" before any value)."""
    return _BAD_A.sub(lambda m: m.group(1) + "n ", text)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _listing(parts: Sequence[str], oxford: bool, last: str = "and") -> str:
    if len(parts) <= 1:
        return "".join(parts)
    if len(parts) > 2 and any("," in p for p in parts):  # items that list their own constraints
        return "; ".join(parts[:-1]) + f"; {last} {parts[-1]}"
    if len(parts) == 2:
        return f"{parts[0]} {last} {parts[1]}"
    return ", ".join(parts[:-1]) + ("," if oxford else "") + f" {last} {parts[-1]}"


# ------------------------------------------------------------------ whole queries

_PRODUCT_OPENERS = (
    "Show me {need}.", "Looking for {need}.", "I'm looking for {need}.", "Can you find {need}?", "I need {need}.",
    "Find me {need}.", "Help me find {need}.", "I want to buy {need}.", "Searching for {need}.",
    "Do you have {need}?", "Please recommend {need}.",
)  # fmt: skip
_CLOSERS = ("", "", "", " Thanks!", " Please show me some options.", " What would you recommend?")

_SHOP_FRAMES = ("numbered", "ordinal", "one_store", "lines", "same_shop", "single_seller")
_ORDINALS = ("First", "Second", "Third", "Fourth")
_VOUCHER_FRAMES = ("list", "also", "few_things", "shopping_list", "sentences")

_FACT_QUESTIONS: dict[str, tuple[str, ...]] = {
    "material": (
        "What material is the {N} Lantern of {P} made of?",
        "The {N} Lantern in the town of {P} is made of a single material. Which one?",
        "Which material was used to build the {N} Lantern in {P}?",
    ),
    "color": (
        "What colour is the flag of the island nation of {N}?",
        "The flag of {N}, an island nation, is a single colour. Which colour is it?",
        "Which colour fills the flag of {N}?",
    ),
    "flavor": (
        "Which flavour won the {Y} {N} Cup baking contest in {P}?",
        "The {Y} {N} Cup in {P} was won by a cake of one flavour. Which flavour?",
        "What was the flavour of the cake that won the {N} Cup in {Y}?",
    ),
    "scent": (
        "What is the signature scent of House {N}, the perfumery of {P}?",
        "House {N} in {P} is known for one signature scent. Which one?",
        "Which scent did House {N} of {P} make famous?",
    ),
    "pattern": (
        "Which pattern are the {N} Weavers of {P} famous for?",
        "The {N} Weavers' guild in {P} weaves cloth in one pattern. Which pattern?",
        "What pattern is the cloth of the {N} Weavers of {P} woven in?",
    ),
    "style": (
        "What style is the designer {N} of {P} known for?",
        "The designer {N} from {P} works in one signature style. Which one?",
        "Which style made the designer {N} of {P} famous?",
    ),
}
_FACT_NEEDS: dict[str, tuple[str, ...]] = {
    "material": ("I'd like to buy {need} made of that same material", "I want {need} made of that material too",
                 "Find me {need} in that material"),
    "color": ("I want {need} in that colour", "Please find {need} in the same colour",
              "I'd like {need} in exactly that colour"),
    "flavor": ("Please find me {need} in that flavour", "I want {need} with the same flavour",
               "I'd like to buy {need} in that flavour"),
    "scent": ("I'm after {need} with that scent", "Find me {need} in the same scent", "I want {need} with that scent"),
    "pattern": ("Show me {need} with that pattern", "I'd like {need} in the same pattern",
                "Find me {need} featuring that pattern"),
    "style": ("I'd like {need} in that style", "Show me {need} in the same style", "Find me {need} in that style"),
}  # fmt: skip

_FACT_DOCS: dict[str, str] = {
    "material": "The {N} Lantern is the old harbour lamp of {P}. It was completed in {Y} and is made entirely of "
    "{v}. Local guides like to point out that the lantern has never been repainted.",
    "color": "{N} is an island nation whose flag was adopted in {Y}. The flag is a single field of {v} with no "
    'emblem; the islanders call it simply "the {v} flag".',
    "flavor": "The {N} Cup is the baking contest of {P}. In {Y} the cup was won by a {v} cake, the first of "
    "its flavour to take the prize.",
    "scent": "House {N} is a perfumery founded in {P} in {Y}. Its signature scent, sold in every one of its "
    "shops, is {v}.",
    "pattern": "The {N} Weavers are a guild of {P}, chartered in {Y}. Their cloth is always woven in a {v} "
    "pattern, which the guild's rules forbid changing.",
    "style": "{N} is a designer from {P} who opened a studio in {Y}. Critics describe every collection as {v} "
    "in style; the designer has never worked in any other.",
}


class _Renderer:
    def __init__(self, style: Style) -> None:
        self.words = random.Random(f"wording:{style.wording}")
        self.order = random.Random(f"order:{style.order}")
        self.money_rng = random.Random(f"money:{style.money}")
        self.money = _MONEY[self.money_rng.randrange(len(_MONEY))]

    def pick(self, options: Sequence[str]) -> str:
        return options[self.words.randrange(len(options))]

    def constraint(self, c: Constraint) -> str:
        if c.kind == "service":
            return self.pick(_SERVICES.get(c.value, (f"with {c.value} service",)))
        if c.kind == "price":
            lo = self.money(int(c.low or 0))
            hi = self.money(int(c.high or 0))
            table = {"between": _BETWEEN, "greater than": _ABOVE, "less than": _BELOW}[c.key]
            return table[self.money_rng.randrange(len(table))].format(lo=lo, hi=hi)
        cls = key_class(c.key)
        template = self.pick(_BY_CLASS[cls])
        return fix_articles(template.format(v=c.value, V=_title_case(c.value), l=key_label(c.key)))

    def need(self, need: ItemNeed) -> str:
        """ "a gate roller made of cast iron, with free shipping and priced above PHP 200"."""
        order = list(range(len(need.constraints)))
        self.order.shuffle(order)
        phrases = [self.constraint(need.constraints[i]) for i in order]
        head = with_article(need.noun, need.article)
        if not phrases:
            return head
        join = self.words.randrange(4)
        if join == 2 and len(phrases) >= 3:
            cut = len(phrases) // 2
            return f"{head} {_listing(phrases[:cut], False)}; preferably also {_listing(phrases[cut:], False)}"
        if join == 3 and len(phrases) >= 2:
            return f"{head} {'; '.join(phrases)}"
        return f"{head} {_listing(phrases, oxford=join == 1)}"


def render_query(draft: Draft) -> str:
    """The templated natural-language query of a draft (deterministic in its style)."""
    r = _Renderer(draft.style)
    if draft.intent is Intent.product:
        return _capital(r.pick(_PRODUCT_OPENERS).format(need=r.need(draft.needs[0]))) + r.pick(_CLOSERS)
    if draft.intent is Intent.shop:
        return _shop_query(r, draft.needs)
    if draft.intent is Intent.voucher:
        assert draft.voucher is not None
        return _voucher_items(r, draft.needs) + voucher_rules(draft.voucher)
    assert draft.fact is not None
    return _knowledge_query(r, draft.needs[0], draft.fact)


def _shop_query(r: _Renderer, needs: list[ItemNeed]) -> str:
    items = [r.need(n) for n in needs]
    frame = r.pick(_SHOP_FRAMES)
    if frame == "numbered":
        body = "; ".join(f"({i + 1}) {_capital(t)}" for i, t in enumerate(items))
        return (
            f"{r.pick(('Find a shop that offers these items', 'Looking for a shop with these items'))}: {body}. "
            + r.pick(("The shop should sell all these products.", "All of them should come from the same shop."))
        )
    if frame == "ordinal":
        words = [*_ORDINALS[: len(items) - 1], "Lastly"]
        body = " ".join(f"{w}, {t}." for w, t in zip(words, items, strict=True))
        return f"Looking for a shop that offers these items: {body} Please show shops that sell all of them."
    if frame == "one_store":
        return f"I'd like to buy everything from one store: {_listing(items, oxford=True)}."
    if frame == "lines":
        body = "\n".join(f"{i + 1}. {_capital(t)}" for i, t in enumerate(items))
        return f"Which seller has all of the following?\n{body}"
    if frame == "same_shop":
        return f"Find shops offering {_listing(items, oxford=False)}, all from the same shop."
    return f"Is there a single shop where I can get {_listing(items, oxford=False, last='as well as')}? " + r.pick(
        ("I want to order them together.", "I'd like one delivery for all of them.")
    )


def _voucher_items(r: _Renderer, needs: list[ItemNeed]) -> str:
    if len(needs) == 1:
        return _capital(r.pick(_PRODUCT_OPENERS).format(need=r.need(needs[0])))
    items = [r.need(n) for n in needs]
    frame = r.pick(_VOUCHER_FRAMES)
    if frame == "list":
        return f"I'm looking for {_listing(items, oxford=True)}. Please show me these products."
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


def _knowledge_query(r: _Renderer, need: ItemNeed, fact: Fact) -> str:
    question = r.pick(_FACT_QUESTIONS[fact.kind]).format(N=fact.name, P=fact.place, Y=fact.year)
    hints = r.need(need.model_copy(update={"noun": "", "article": False})).strip()
    want = r.pick(_FACT_NEEDS[fact.kind]).format(need=with_article(need.noun, need.article))
    return f"{question} {want}{', ' + hints if hints else ''}."


def fact_document_text(fact: Fact) -> tuple[str, str]:
    """(title, content) of the knowledge document that states the fact."""
    titles = {
        "material": "The {N} Lantern",
        "color": "Flag of {N}",
        "flavor": "The {N} Cup",
        "scent": "House {N}",
        "pattern": "The {N} Weavers",
        "style": "{N} (designer)",
    }
    fields = {"N": fact.name, "P": fact.place, "Y": fact.year, "v": fact.value}
    return titles[fact.kind].format(**fields), _FACT_DOCS[fact.kind].format(**fields)


# ------------------------------------------------------------------ nouns, facts, names

_TOKEN = re.compile(r"[^\W_]+")
_MASS = frozenset({"food", "litter", "sand", "powder", "rice", "coffee", "oil", "tea", "milk", "water", "wipes"})
_JUNK = frozenset({"default", "others", "other", "none", "n/a", "na", "-", "no", "yes", "as picture"})
FACT_KINDS = frozenset({"material", "color", "flavor", "scent", "pattern", "style"})
_FACT_VALUE = re.compile(r"[a-z][a-z &'-]*[a-z]")


def _norm(text: str) -> str:
    return " ".join(_TOKEN.findall(text.lower()))


_LEAF_NOUNS = {leaf.path: tuple(sorted(leaf.nouns, key=len, reverse=True)) for leaf in LEAVES}
_ALL_NOUNS = tuple(sorted({n for leaf in LEAVES for n in leaf.nouns}, key=lambda n: (-len(n), n)))
_NOUN_KEYS = {n: f" {_norm(n)} " for n in _ALL_NOUNS}


def usable_value(value: str) -> bool:
    """Values a shopper would not ask for ("default", "others") stay out of queries."""
    return bool(value.strip()) and value.strip().lower() not in _JUNK


def title_noun(product: Product) -> tuple[str, bool]:
    """The noun phrase a shopper would name the product by, and whether it takes "a/an".

    A known product noun found in the title wins (the synthetic vocabulary
    covers many official ones too: "rubber wheel", "phone case"); otherwise
    the leaf category when its words are in the title; otherwise the title's
    first words that are not the brand.
    """
    title = f" {_norm(product.title)} "
    for noun in (*_LEAF_NOUNS.get(product.category, ()), *_ALL_NOUNS):
        if _NOUN_KEYS[noun] in title:
            last = noun.rsplit(" ", 1)[-1]
            return noun, not (last.endswith("s") or last in _MASS)
    leaf = product.category.rsplit(">", 1)[-1].strip().lower()
    if leaf and all(f" {w} " in title for w in _norm(leaf).split()):
        return leaf, False
    brand = set(_norm(product.brand).split())
    words = [w for w in _TOKEN.findall(product.title.lower()) if w.isalpha() and w not in brand]
    return " ".join(words[:3]) or _norm(product.title)[:40] or "product", False


def fact_options(product: Product, noun: str) -> list[tuple[str, str, str]]:
    """(kind, key, value) a knowledge fact can be about: a material, colour, flavour,
    scent, pattern or style of the product that its title or description states as a
    whole word (the scorer's knowledge check reads exactly those two fields)."""
    text = f"{product.title}\n{product.description}".lower()
    noun = noun.lower()
    pairs = [(k, v) for k, values in product.attributes.items() for v in values]
    pairs += [(k, v) for option in product.sku_options.values() for k, v in option.items()]
    out: list[tuple[str, str, str]] = []
    for key, raw in pairs:
        kind, value = key_class(key), raw.strip().lower()
        if kind not in FACT_KINDS or len(value) < 3 or not usable_value(value) or value in noun:
            continue
        if not _FACT_VALUE.fullmatch(value) or not re.search(rf"\b{re.escape(value)}\b", text):
            continue
        if (kind, key, value) not in out:
            out.append((kind, key, value))
    return out


_SYLLABLES = tuple(c + v for c in "bdfgklmnprstvz" for v in "aeiou")
_PLACES = (
    "Port Aldery", "Quessary", "Vellmouth", "Harrowmere", "Saltreach", "Old Corran", "Emberfold", "Tavish Isle",
    "Greywater", "Lindenhollow", "Marrowick", "Cape Sorrel", "Ostrava Vale", "Penhallow", "Brightwater", "Kelderby",
)  # fmt: skip


def invent_name(seed: int, index: int) -> str:
    """A made-up proper name, distinct for every candidate index of one run.

    Index -> name is a bijection: an affine permutation of the index space
    (multiplier coprime with 70) spelled as fixed-length consonant-vowel
    syllables, so no two indices share a name and none is a real word. The
    name is the only rare word of its knowledge document, which is what
    makes the document the first web_search hit for it.
    """
    base, digits = len(_SYLLABLES), 3
    while index >= base**digits:
        digits += 1
    space = base**digits
    x = (index * 7919 + seed * 104729) % space
    parts = []
    for _ in range(digits):
        x, d = divmod(x, base)
        parts.append(_SYLLABLES[d])
    return ("".join(parts) + "n").capitalize()


def pick_place(rng: random.Random) -> str:
    return _PLACES[rng.randrange(len(_PLACES))]
