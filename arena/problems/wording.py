"""How one item and its constraints are said: phrase tables, money formats, grammar.

``Renderer`` words one ``ItemNeed`` ("a gate roller made of cast iron, with free
shipping and priced above PHP 200") from the three seeds of a ``Style``:
``wording`` picks the phrases and joins, ``order`` shuffles the order the
constraints are mentioned in, ``money`` picks the number and currency format
and the price phrasing. Whole queries (openers, shop and voucher frames) are
``arena.problems.phrasing``'s; knowledge riddles are ``arena.problems.riddles``'.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence

from arena.problems.draft import Constraint, ItemNeed, Style
from arena.shop.vocabulary import LABELS

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

_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen"
).split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


def number_words(n: int) -> str:
    """ "1,250" -> "one thousand two hundred fifty": how a shopper spells a price out."""
    if n < 0:
        raise ValueError(f"number_words: {n} is negative")
    if n < 20:
        return _ONES[n]
    if n < 100:
        tens, ones = divmod(n, 10)
        return _TENS[tens] + (f"-{_ONES[ones]}" if ones else "")
    for size, name in ((10**9, "billion"), (10**6, "million"), (1000, "thousand"), (100, "hundred")):
        if n >= size:
            head, rest = divmod(n, size)
            return f"{number_words(head)} {name}" + (f" {number_words(rest)}" if rest else "")
    raise AssertionError("unreachable")


# A number and its unit ("750ml", "40 L", "1.5 m"): the unit written another way keeps the quantity.
# A bare "in" is left out: "2 in 1" is a product kind, not two inches.
_UNIT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s?(ml|l|ltrs?|liters?|litres?|g|kg|cm|mm|m|inch(?:es)?|oz|w|mah|gb|tb)\b",
                   re.IGNORECASE)  # fmt: skip
_UNIT_SPELLINGS: dict[str, tuple[str, ...]] = {
    "ml": ("{n} millilitres", "{n} milliliters", "{n}mL"),
    "l": ("{n} liters", "{n} litres", "{n}L"),
    "g": ("{n} grams", "{n}g"),
    "kg": ("{n} kilograms", "{n} kilos"),
    "cm": ("{n} centimeters", "{n} centimetres"),
    "mm": ("{n} millimeters", "{n} millimetres"),
    "m": ("{n} meters", "{n} metres"),
    "in": ('{n}"', "{n} inches"),
    "oz": ("{n} ounces", "{n} oz."),
    "w": ("{n} watts", "{n}W"),
    "mah": ("{n} milliamp-hours",),
    "gb": ("{n} gigabytes",),
    "tb": ("{n} terabytes",),
}


def respell_units(text: str, rng: random.Random) -> str:
    """Every "number unit" of ``text`` with its unit written another way ("750ml" -> "750 millilitres")."""

    def swap(m: re.Match) -> str:
        unit = m.group(2).lower()
        unit = "l" if unit.startswith("l") else "in" if unit.startswith("inch") else unit
        spellings = [s.format(n=m.group(1)) for s in _UNIT_SPELLINGS[unit]]
        others = [s for s in spellings if s.lower().replace(" ", "") != m.group(0).lower().replace(" ", "")]
        return others[rng.randrange(len(others))] if others else m.group(0)

    return _UNIT.sub(swap, text)


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


def capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def listing(parts: Sequence[str], oxford: bool, last: str = "and") -> str:
    if len(parts) <= 1:
        return "".join(parts)
    if len(parts) > 2 and any("," in p for p in parts):  # items that list their own constraints
        return "; ".join(parts[:-1]) + f"; {last} {parts[-1]}"
    if len(parts) == 2:
        return f"{parts[0]} {last} {parts[1]}"
    return ", ".join(parts[:-1]) + ("," if oxford else "") + f" {last} {parts[-1]}"


class Renderer:
    """Three seeded streams, one per ``Style`` seed, so a variant that changes one seed changes one thing."""

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
            return f"{head} {listing(phrases[:cut], False)}; preferably also {listing(phrases[cut:], False)}"
        if join == 3 and len(phrases) >= 2:
            return f"{head} {'; '.join(phrases)}"
        return f"{head} {listing(phrases, oxford=join == 1)}"
