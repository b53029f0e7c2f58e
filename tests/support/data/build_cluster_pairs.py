"""Build tests/support/data/cluster_pairs.jsonl: labelled problem pairs for the leak-cluster guard.

Every pair starts from one official ShoppingBench task and is written with rewriting
rules of this file's own (templates, synonym swaps, number and currency forms). Nothing
of the guard is imported (a test checks it): the labels come from how a pair was made,
never from what the guard thinks.

Twelve categories, each in both directions:

- variants that must merge: ``paraphrase`` (synonyms, question vs imperative, numbers
  as words and other forms, currency words), ``chitchat`` (a paragraph of life story
  added), ``reordered_price`` (constraints reordered, the price said another way),
  ``voucher_reworded``, ``knowledge_moved`` (the purchase sentence moved),
  ``shop_reordered`` (sub-requests reordered or bulleted). Their ``apart`` pairs are
  the same rewrite of the task with one constraint value changed.
- look-alikes that must stay apart: ``brand``, ``noun``, ``attribute``, ``price``,
  ``shop_value``, ``voucher_terms``: near-identical wording, one value changed. Their
  ``merge`` pairs are a light rewording of the same task.

Every ``b`` side is re-grounded on another product (a new id and another task's
title under the same constraints), and so is every ``a`` side, so that no pair can be
matched by gold ids. A third of the pairs are query-only on both sides (no reward:
the constraints can only be read from the text) and a sixth on the ``b`` side.

Run: ``python tests/support/data/build_cluster_pairs.py [--data DIR] [--out FILE]``
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import re
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE.parents[2].parent / "shared/data/shoppingbench"
DEFAULT_OUT = HERE / "cluster_pairs.jsonl"
PAIRS_PER_DIRECTION = 60
SEED = 16

# ------------------------------------------------------------------ rows


def intent_of(row: dict) -> str:
    if "Knowledge_Attribute" in row:
        return "knowledge"
    if "voucher" in row:
        return "voucher"
    return "shop" if isinstance(row["reward"], list) else "product"


def items_of(row: dict) -> list[dict]:
    reward = row.get("reward")
    if reward is None or intent_of(row) == "knowledge":
        return []
    return reward if isinstance(reward, list) else [reward]


def split_voucher(query: str) -> tuple[str, str]:
    """(request, voucher paragraph) of an official voucher query ("" when none)."""
    cut = query.find("\n\nMy budget is")
    return (query, "") if cut < 0 else (query[:cut], query[cut:])


class Ids:
    """New product ids: 10 digits, disjoint from the official ones (those start 1-5 or are 9 digits)."""

    def __init__(self) -> None:
        self.next = 0

    def __call__(self) -> str:
        self.next += 1
        return f"8{self.next:09d}"


def reground(row: dict, rng: random.Random, titles: list[str], new_id: Ids) -> dict:
    """The same constraints on another product: a new id and another task's title."""
    out = copy.deepcopy(row)
    if intent_of(row) == "knowledge":
        out["reward"] = {"product_id": new_id(), "title": rng.choice(titles), "shop_id": "s" + new_id()}
        return out
    for item in items_of(out):
        item["product_id"] = new_id()
        item["title"] = [rng.choice(titles)]
    return out


def query_only(row: dict) -> dict:
    out = {k: v for k, v in row.items() if k not in ("reward", "voucher", "Knowledge_Attribute")}
    out["intent"] = intent_of(row)
    return out


# ------------------------------------------------------------------ numbers and money

_ONES = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen \
seventeen eighteen nineteen".split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


def words(n: int) -> str:
    """English number words: 272 -> "two hundred seventy-two"."""
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else "-" + _ONES[n % 10])
    if n < 1000:
        rest = n % 100
        return _ONES[n // 100] + " hundred" + ("" if rest == 0 else " " + words(rest))
    if n < 1_000_000:
        rest = n % 1000
        return words(n // 1000) + " thousand" + ("" if rest == 0 else " " + words(rest))
    return str(n)


def number_form(n: int, rng: random.Random) -> str:
    """Another way to write n: words, "112.00", "1,500", "1.5k"."""
    forms = [str(n), f"{n}.00"]
    if n <= 999:
        forms += [words(n)] * 2
    if n >= 1000:
        forms += [f"{n:,}"]
        if n % 100 == 0:
            forms += [f"{n / 1000:g}k"]
    return rng.choice(forms)


_CURRENCY = re.compile(r"(?:(?:PHP|Php|₱)\s?(\d[\d,]*(?:\.\d+)?))|(?:(\d[\d,]*(?:\.\d+)?)\s?(?:PHP|Php|pesos?)\b)")
_MONEY_FORMS = ("{n} PHP", "{n} pesos", "₱{n}", "Php {n}", "PHP {n}", "{n} Philippine pesos", "{n} php")


def recurrency(text: str, rng: random.Random, spell: float = 0.5) -> str:
    """Every amount re-written with another currency word and, sometimes, another number form."""

    def one(m: re.Match) -> str:
        raw = (m.group(1) or m.group(2)).replace(",", "")
        n = float(raw)
        shown = number_form(int(n), rng) if n == int(n) and rng.random() < spell else raw
        return rng.choice(_MONEY_FORMS).format(n=shown)

    return _CURRENCY.sub(one, text)


# ------------------------------------------------------------------ price phrases

_ABOVE = re.compile(
    r"\b(?:priced above|priced over|costing more than|costs? more than|that costs? over|costing over|"
    r"with a price (?:higher|greater) than|priced higher than|costs? over|price over|are priced above|above)\s+"
)
_BELOW = re.compile(
    r"\b(?:priced below|priced under|costing less than|costs? less than|that costs? under|costing under|"
    r"with a price lower than|for less than|under|below)\s+"
)
_BETWEEN = re.compile(
    r"\b(?:priced between|costing between|with a price between|between)\s+(?P<lo>\S+(?: pesos| PHP)?) and "
    r"(?P<hi>\S+)|\b(?:a price from|priced from|from)\s+(?P<lo2>\S+(?: pesos| PHP)?) to (?P<hi2>\S+)"
)
ABOVE_FORMS = ("priced above ", "costing more than ", "within a price range starting at ", "with a price over ",
               "starting from ", "for more than ")  # fmt: skip
BELOW_FORMS = ("priced below ", "for no more than ", "at most ", "costing less than ", "not exceeding ",
               "with a maximum price of ")  # fmt: skip
BETWEEN_FORMS = ("between {lo} and {hi}", "from {lo} to {hi}", "in the {lo} to {hi} range",
                 "with a price between {lo} and {hi}", "priced from {lo} up to {hi}")  # fmt: skip


def reprice(text: str, rng: random.Random) -> str:
    """Each price phrase said another equivalent way ("priced above 114" -> "starting at 114")."""

    def between(m: re.Match) -> str:
        lo, hi = (m.group("lo"), m.group("hi")) if m.group("lo") else (m.group("lo2"), m.group("hi2"))
        return rng.choice(BETWEEN_FORMS).format(lo=lo, hi=hi)

    text = _BETWEEN.sub(between, text)
    text = _ABOVE.sub(lambda m: rng.choice(ABOVE_FORMS), text)
    return _BELOW.sub(lambda m: rng.choice(BELOW_FORMS), text)


# ------------------------------------------------------------------ wording

SYNONYMS = {
    "kids": "children", "children": "kids", "baby": "infant", "infant": "baby", "babies": "infants",
    "stickers": "decals", "sticker": "decal", "decals": "stickers", "decal": "sticker",
    "women's": "ladies'", "ladies": "women", "large": "big", "big": "large", "t-shirt": "tee", "t-shirts": "tees",
    "sofa": "couch", "couch": "sofa", "mug": "cup", "rug": "carpet", "television": "TV", "cheap": "affordable",
    "waterproof": "water-resistant", "wireless": "cordless", "original": "authentic", "authentic": "genuine",
    "colour": "color", "color": "colour", "grey": "gray", "gray": "grey", "durable": "sturdy", "cute": "adorable",
    "set": "kit", "sets": "kits", "kit": "set", "pieces": "pcs", "vintage": "retro", "retro": "vintage",
    "sealed": "unopened", "brand new": "unused", "small": "little", "mini": "tiny", "stylish": "classy",
    "smartphone": "cellphone", "phone case": "phone cover", "refrigerator": "fridge", "fridge": "refrigerator",
    "heavy-duty": "sturdy", "portable": "handheld", "photo": "picture", "glue": "adhesive", "scent": "fragrance",
    "fragrance": "scent", "flavor": "taste", "pouch": "bag", "sneakers": "trainers", "pants": "trousers",
}  # fmt: skip
SERVICE_SWAPS = (
    (r"\b(?:with |that (?:comes|come) with |offers? |and )?free shipping\b",
     ("with no-cost shipping", "with free delivery", "that ships for free", "with complimentary shipping")),
    (r"\b(?:with |and |that (?:supports|offers?) )?(?:cash on delivery|COD)(?: available| payment)?\b",
     ("with cash-on-delivery", "with COD", "payable on delivery", "with pay on delivery")),
    (r"\b(?:with |through |via )?LazMall(?: service| perks)?\b",
     ("from an official LazMall store", "with LazMall", "through LazMall", "sold on LazMall")),
    (r"\b(?:with |on )?(?:a )?LazFlash(?: deals?| promo)?\b", ("on a flash sale", "in a LazFlash deal", "with LazFlash")),
)  # fmt: skip


def swap_synonyms(text: str, rng: random.Random, at_most: int = 3) -> str:
    done = 0
    for word in sorted(SYNONYMS, key=lambda w: (-len(w), w)):
        if done >= at_most:
            break
        pattern = re.compile(r"(?<![\w-])" + re.escape(word) + r"(?![\w-])", re.IGNORECASE)
        if pattern.search(text) and rng.random() < 0.8:
            text, done = pattern.sub(SYNONYMS[word], text, count=1), done + 1
    for pattern, forms in SERVICE_SWAPS:
        text = re.sub(pattern, lambda m, f=forms: rng.choice(f), text, count=1, flags=re.IGNORECASE)
    return text


_OPENER = re.compile(
    r"^(?:I'm looking for|I am looking for|Looking for|Show me|Find me|Find|I need|I want|Search for|"
    r"I'm searching for|Can you (?:show|find) me|I would like)\s+",
    re.IGNORECASE,
)
IMPERATIVES = ("Show me {x}.", "Find me {x}.", "I need {x}.", "Please find {x}.", "Get me {x}.",
               "I'm searching for {x}.", "I want {x}.")  # fmt: skip
QUESTIONS = ("Can you show me {x}?", "Do you have {x}?", "Could you find {x} for me?", "Where can I buy {x}?",
             "Is there {x} available?", "Any chance you can find {x}?")  # fmt: skip


def reframe(sentence: str, rng: random.Random, question: bool | None = None) -> str:
    """A request sentence with another opener, as an imperative or a question."""
    m = _OPENER.match(sentence)
    if m is None:
        return sentence
    body = sentence[m.end() :].rstrip(" .?!")
    if question is None:
        question = rng.random() < 0.5
    return rng.choice(QUESTIONS if question else IMPERATIVES).format(x=body)


def first_sentence_split(text: str) -> tuple[str, str]:
    m = re.search(r"(?<=[.?!])\s+(?=[A-Z])", text)
    return (text, "") if m is None else (text[: m.start()], text[m.start() :])


def paraphrase(text: str, rng: random.Random, deep: bool = True) -> str:
    """Opener swapped (imperative <-> question), synonyms, number and currency forms, price words."""
    head, tail = first_sentence_split(text)
    text = reframe(head, rng) + tail
    if deep and rng.random() < 0.5:
        text = reprice(text, rng)
    if deep:
        text = swap_synonyms(text, rng)
        text = recurrency(text, rng)
        text = _BARE_NUMBER.sub(lambda m: number_form(int(m.group()), rng) if rng.random() < 0.4 else m.group(), text)
    else:
        text = recurrency(text, rng, spell=0.0)
    return text


# Small counts ("pack of 12", "size 6") as words.
_BARE_NUMBER = re.compile(r"(?<![\w.:/#(-])(?:[2-9]|1[0-9])(?![\w.:/%)-])")

# ------------------------------------------------------------------ chit-chat

STORIES = (
    "A bit of background: my {rel} and I moved to {city} about {n} years ago, and we have been slowly fixing "
    "up the old house ever since. Last weekend we finally cleared out the garage, so now the rest of the list "
    "is getting sorted.",
    "My {rel} turns {n} next month and we are throwing a small party at home. Money has been tight since I "
    "changed jobs in {city}, so I try to be careful these days.",
    "I have been working from home in {city} for {n} months now and honestly the routine gets to me sometimes. "
    "My {rel} says I spend too much time online, which is probably true.",
    "We just got back from a trip to {city} with my {rel}. It rained for {n} days straight, the hotel lost our "
    "booking, and somehow it was still the best holiday we've had in years.",
    "Quick story: my {rel} borrowed my old one {n} weeks ago and never gave it back. I have stopped asking. "
    "Life in {city} is too busy for that kind of argument.",
    "I grew up in {city} and my {rel} still lives there. Every year around this time we do a big clean-up "
    "together, and this year it is my turn to host about {n} relatives.",
    "Things have been hectic. My {rel} started school in {city}, the car broke down twice, and I have been "
    "juggling {n} different projects at work.",
    "My {rel} recommended this app to me after I complained for {n} days about the mall in {city}. Parking "
    "there is a nightmare on weekends.",
)  # fmt: skip
RELATIVES = ("sister", "brother", "mom", "dad", "partner", "cousin", "best friend", "daughter", "son", "neighbour")
CITIES = ("Cebu", "Davao", "Quezon City", "Iloilo", "Baguio", "Manila", "Cagayan de Oro", "Bacolod")


def story(rng: random.Random) -> str:
    return rng.choice(STORIES).format(rel=rng.choice(RELATIVES), city=rng.choice(CITIES), n=rng.randint(2, 12))


def add_chitchat(query: str, rng: random.Random) -> str:
    request, voucher = split_voucher(query)
    paragraph = story(rng)
    if rng.random() < 0.7:
        return f"{request}\n\n{paragraph}{voucher}"
    return f"{paragraph}\n\n{request}{voucher}"


# ------------------------------------------------------------------ reordered constraints


def reorder_clauses(query: str, rng: random.Random) -> str | None:
    request, voucher = split_voucher(query)
    head, tail = first_sentence_split(request)
    end = head[-1] if head[-1] in ".?!" else ""
    parts = re.split(
        r",\s+(?:and\s+)?|\s+and\s+(?=(?:priced|costing|with|made|in|from|that|is|are)\b)", head.rstrip(".?!")
    )
    if len(parts) < 3:
        return None
    rest = parts[1:]
    for _ in range(5):
        rng.shuffle(rest)
        if rest != parts[1:]:
            break
    text = parts[0] + ", " + ", ".join(rest[:-1]) + ", and " + rest[-1] + end
    return reprice(text, rng) + tail + voucher


# ------------------------------------------------------------------ voucher paragraph

BUDGET = ("My budget is only {b}.", "I can spend {b} pesos at most.", "I have {b} PHP to spend in total.",
          "The most I can pay is ₱{b}.", "My spending limit is {b} pesos.", "I can't go over {b} PHP overall.")  # fmt: skip
SCOPE = {
    "platform": ("The voucher works on every product.", "It is a platform voucher, good for any item.",
                 "The coupon applies to everything on the site."),
    "shop": ("The voucher only covers products from the same shop.", "It is a shop voucher, valid for items "
             "from one store only.", "The coupon applies only to products sold by a single shop."),
}  # fmt: skip
THRESHOLD = ("It only kicks in once the total goes over {t} pesos.", "The order total must exceed {t} PHP for "
             "the voucher to work.", "The voucher needs a minimum spend above ₱{t}.")  # fmt: skip
FIXED = ("It takes {f} pesos off.", "It gives a flat {f} PHP discount.", "The discount is a fixed ₱{f}.")
PERCENT = ("It gives {p}% off, capped at {c} pesos.", "It takes {p} percent off, up to a maximum discount of {c} "
           "PHP.", "The discount is {p}% with a cap of ₱{c}.")  # fmt: skip


def _amount(x: float, rng: random.Random) -> str:
    return number_form(int(x), rng) if x == int(x) else f"{x:g}"


def voucher_paragraph(v: dict, rng: random.Random) -> str:
    """The voucher's terms in free words, in shuffled order, some numbers spelled out."""
    terms = [
        rng.choice(SCOPE[v["voucher_type"]]),
        rng.choice(THRESHOLD).format(t=_amount(v["threshold"], rng)),
        rng.choice(FIXED).format(f=_amount(v["face_value"], rng))
        if v["discount_type"] == "fixed"
        else rng.choice(PERCENT).format(p=_amount(v["discount"] * 100 if v["discount"] < 1 else v["discount"], rng),
                                        c=_amount(v["cap"], rng)),
    ]  # fmt: skip
    rng.shuffle(terms)
    budget = rng.choice(BUDGET).format(b=_amount(v["budget"], rng))
    return "\n\n" + " ".join(
        [budget, "I also have a voucher." if rng.random() < 0.5 else "Here is my voucher:", *terms]
    )


def official_voucher_paragraph(v: dict) -> str:
    scope = "all products" if v["voucher_type"] == "platform" else "the products from the same shop"
    if v["discount_type"] == "fixed":
        discount = f"a fixed discount of `{_fmt(v['face_value'])}`"
    else:
        pct = v["discount"] * 100 if v["discount"] < 1 else v["discount"]
        discount = f"a percentage discount of `{_fmt(pct)}%` with a cap of `{_fmt(v['cap'])}`"
    return (
        f"\n\nMy budget is only `{_fmt(v['budget'])}`, but I have a voucher with the following rules:\n"
        f"1. The voucher applies to {scope}.\n"
        f"2. It is valid only when the total price of the products exceeds `{_fmt(v['threshold'])}`.\n"
        f"3. It provides {discount}."
    )


def _fmt(x: float) -> str:
    return str(int(x)) if x == int(x) else f"{x:g}"


def reword_voucher(row: dict, rng: random.Random) -> str:
    request, _ = split_voucher(row["query"])
    return request + voucher_paragraph(row["voucher"], rng)


# ------------------------------------------------------------------ knowledge


_PURCHASE = re.compile(r"(?<=[.?!\"])\s+(?=I(?: would|'d| want| wish)\b)")
PURCHASE_OPENERS = ("I want to buy", "I'd like to purchase", "Please help me buy", "My goal is to buy",
                    "I'm hoping to get", "Help me shop for")  # fmt: skip


def move_purchase(query: str, rng: random.Random) -> str | None:
    parts = _PURCHASE.split(query, maxsplit=1)
    if len(parts) != 2:
        return None
    riddle, purchase = parts
    purchase = re.sub(r"^I(?: would|'d) like to (?:buy|purchase|get|find)|^I want to (?:buy|purchase)",
                      rng.choice(PURCHASE_OPENERS), purchase)  # fmt: skip
    return f"{purchase} {riddle}" if rng.random() < 0.6 else f"{purchase}\n\n{riddle}"


# ------------------------------------------------------------------ shop items

_NUMBERED = re.compile(r"\(\d\)\s*|(?<=[:;.] )\d\)\s*")
_ORDINALS = re.compile(r"\b(?:First|Second|Third|Fourth|Fifth|Next|Then|Lastly|Finally|Also),\s+")
ORDINAL_WORDS = ("First", "Second", "Third", "Fourth", "Fifth")


def shop_items(query: str) -> tuple[str, list[str], str] | None:
    """(preamble, sub-requests, closing sentences) of a numbered or "First, ... Second, ..." shop query."""
    request, _ = split_voucher(query)
    if len(_NUMBERED.findall(request)) >= 2:
        parts = _NUMBERED.split(request)
    elif len(_ORDINALS.findall(request)) >= 2:
        parts = _ORDINALS.split(request)
    else:
        return None
    preamble, parts = parts[0].strip(), [p.strip() for p in parts[1:]]
    last, closing = first_sentence_split(parts[-1])
    parts[-1] = last
    parts = [re.sub(r"(?:[;,.]\s*|\s+)(?:and|also)?\s*$|[;,.]$", "", p).strip() for p in parts]
    return (preamble, parts, closing.strip()) if len(parts) >= 2 else None


def reorder_shop(query: str, rng: random.Random) -> str | None:
    """The sub-requests in another order, as bullets, a numbered list or an ordinal sequence."""
    found = shop_items(query)
    if found is None:
        return None
    preamble, parts, closing = found
    order = parts[:]
    for _ in range(5):
        rng.shuffle(order)
        if order != parts:
            break
    frame = rng.randrange(3)
    if frame == 0:
        body = "\n".join(f"- {p[:1].upper()}{p[1:]}" for p in order)
        text = f"{preamble}\n{body}"
    elif frame == 1:
        text = preamble + " " + "; ".join(f"({i}) {p}" for i, p in enumerate(order, start=1)) + "."
    else:
        said = [f"{ORDINAL_WORDS[i]}, {p}." for i, p in enumerate(order[:-1])]
        text = " ".join([preamble, *said, f"Finally, {order[-1]}."])
    return text + (f"\n{closing}" if closing else "") + split_voucher(query)[1]


# ------------------------------------------------------------------ value changes (negatives)


def _replace(text: str, old: str, new: str) -> str | None:
    pattern = re.compile(r"(?<![\w-])" + re.escape(old) + r"(?![\w-])", re.IGNORECASE)
    return pattern.sub(new, text, count=1) if pattern.search(text) else None


class Pools:
    """Values seen across the official tasks, to swap one in for another."""

    def __init__(self, rows: list[dict]) -> None:
        self.brands: set[str] = set()
        self.values: dict[str, set[str]] = {}
        self.nouns: set[str] = set()
        self.titles: list[str] = []
        for row in rows:
            for item in items_of(row):
                self.titles.extend(item.get("title") or [])
                for entry in item.get("attributes", []):
                    for key, vals in entry.items():
                        target = self.brands if key == "brand" else self.values.setdefault(key, set())
                        target.update(v.lower() for v in vals if len(v) > 1)
                for entry in item.get("sku_options", []):
                    for key, val in entry.items():
                        self.values.setdefault(key, set()).add(val.lower())
            self.nouns.update(w for w, _ in noun_candidates(row))
        self.sorted_values = {k: sorted(v) for k, v in self.values.items() if len(v) > 1}
        self.sorted_brands = sorted(self.brands)
        self.sorted_nouns = sorted(self.nouns)


_NOT_NOUNS = frozenset(
    """with from that this these those have some look looking find show shop shops store offer offers items item
    price priced pesos color colour size made design pattern style type brand black white blue green pink
    free shipping delivery cash available product products also both each sell sells selling model models
    category categories type types series version kind""".split()
)


def noun_candidates(row: dict) -> list[tuple[str, int]]:
    """Words of the request that the gold title also has (the product noun is one of them)."""
    items = items_of(row)
    if not items:
        return []
    values = {
        w
        for item in items
        for e in item.get("attributes", []) + item.get("sku_options", [])
        for vs in e.values()
        for v in (vs if isinstance(vs, list) else [vs])
        for w in v.lower().split()
    }
    title = " ".join(t for item in items for t in item.get("title", [])).lower()
    request, _ = split_voucher(row["query"])
    found = []
    for m in re.finditer(r"[A-Za-z]{4,}", request):
        word = m.group().lower()
        stem = word[:-1] if word.endswith("s") else word
        if word in _NOT_NOUNS or word in values or stem in values:
            continue
        if re.search(r"\b" + re.escape(stem), title):
            found.append((word, m.start()))
    return found


def change_brand(row: dict, pools: Pools, rng: random.Random) -> dict | None:
    out = copy.deepcopy(row)
    for item in items_of(out):
        for entry in item.get("attributes", []):
            if "brand" in entry:
                old = entry["brand"][0]
                new = rng.choice([b for b in pools.sorted_brands if b != old.lower() and b not in row["query"].lower()])
                query = _replace(out["query"], old, new)
                if query is not None:
                    entry["brand"] = [new]
                    out["query"] = query
                    return out
    return None


def change_noun(row: dict, pools: Pools, rng: random.Random) -> dict | None:
    found = noun_candidates(row)
    if not found:
        return None
    word, _ = max(found, key=lambda f: (len(f[0]), -f[1]))
    plural = word.endswith("s")
    choices = [
        n for n in pools.sorted_nouns if n.endswith("s") == plural and n != word and n not in row["query"].lower()
    ]
    out = copy.deepcopy(row)
    query = _replace(out["query"], word, rng.choice(choices))
    if query is None:
        return None
    out["query"] = query
    return out


def change_attribute(row: dict, pools: Pools, rng: random.Random) -> dict | None:
    out = copy.deepcopy(row)
    entries = [
        (item, kind, entry, key)
        for item in items_of(out)
        for kind in ("attributes", "sku_options")
        for entry in item.get(kind, [])
        for key in entry
        if key != "brand" and key in pools.sorted_values
    ]
    rng.shuffle(entries)
    for _item, kind, entry, key in entries:
        old = entry[key][0] if kind == "attributes" else entry[key]
        if not re.search(r"[a-z]", old.lower()):
            continue
        others = [v for v in pools.sorted_values[key] if v != old.lower() and v not in row["query"].lower()]
        if not others:
            continue
        new = rng.choice(others)
        query = _replace(out["query"], old, new)
        if query is None:
            continue
        entry[key] = [new] if kind == "attributes" else new
        out["query"] = query
        return out
    return None


def change_price(row: dict, pools: Pools, rng: random.Random) -> dict | None:
    out = copy.deepcopy(row)
    for item in items_of(out):
        for entry in item.get("price", []):
            for mode, bounds in entry.items():
                query = out["query"]
                new_bounds = []
                for bound in bounds:
                    if bound is None:
                        new_bounds.append(None)
                        continue
                    new = int(bound) + rng.choice((1, -1)) * rng.randint(max(1, int(bound) // 5), max(2, int(bound)))
                    new = max(2, new)
                    if new == int(bound):
                        new += 13
                    replaced = _replace(query, str(int(bound)), str(new))
                    if replaced is None:
                        return None
                    query = replaced
                    new_bounds.append(new)
                if new_bounds[0] is not None and len(new_bounds) > 1 and new_bounds[1] is not None:
                    if new_bounds[0] >= new_bounds[1]:
                        return None
                entry[mode] = new_bounds
                out["query"] = query
                return out
    return None


def change_shop_value(row: dict, pools: Pools, rng: random.Random) -> dict | None:
    changes = [change_attribute, change_price, change_brand, change_noun]
    rng.shuffle(changes)
    for change in changes:
        out = change(row, pools, rng)
        if out is not None:
            return out
    return None


def change_voucher(row: dict, pools: Pools, rng: random.Random) -> dict | None:
    """One voucher term changed; the item text stays word for word."""
    out = copy.deepcopy(row)
    v = out["voucher"]
    term = rng.choice(("budget", "threshold", "discount", "scope"))
    if term == "budget":
        v["budget"] = v["budget"] + rng.randint(7, 400)
    elif term == "threshold":
        v["threshold"] = max(5, v["threshold"] + rng.choice((1, -1)) * rng.randint(5, 200))
    elif term == "discount" and v["discount_type"] == "fixed":
        v["face_value"] = v["face_value"] + rng.randint(3, 40)
    elif term == "discount":
        v["discount"] = round(min(0.9, v["discount"] + rng.choice((0.05, 0.1, -0.05))), 2)
    else:
        v["voucher_type"] = "shop" if v["voucher_type"] == "platform" else "platform"
    request, _ = split_voucher(out["query"])
    out["query"] = request + official_voucher_paragraph(v)
    return out


def change_fact(row: dict, pools: Pools, rng: random.Random) -> dict | None:
    """A knowledge riddle about another year, count or name: another answer, another problem."""
    out = copy.deepcopy(row)
    numbers = re.findall(r"\b\d{2,4}\b", out["query"])
    if numbers:
        old = rng.choice(numbers)
        out["query"] = _replace(out["query"], old, str(int(old) + rng.randint(3, 30)))
    else:
        change = change_noun_in_text(out["query"], pools, rng)
        if change is None:
            return None
        out["query"] = change
    out["Knowledge_Attribute"] = str(out["Knowledge_Attribute"]) + " (other)"
    return out


def change_noun_in_text(text: str, pools: Pools, rng: random.Random) -> str | None:
    words = [m for m in re.finditer(r"\b[a-z]{5,}\b", text) if m.group() not in _NOT_NOUNS]
    if not words:
        return None
    m = max(words, key=lambda m: (len(m.group()), -m.start()))
    return text[: m.start()] + rng.choice([n for n in pools.sorted_nouns if n != m.group()]) + text[m.end() :]


def change_any(row: dict, pools: Pools, rng: random.Random) -> dict | None:
    intent = intent_of(row)
    if intent == "knowledge":
        return change_fact(row, pools, rng)
    changes = [change_attribute, change_price, change_brand, change_noun]
    if intent == "voucher":
        changes.append(change_voucher)
    rng.shuffle(changes)
    for change in changes:
        out = change(row, pools, rng)
        if out is not None:
            return out
    return None


# ------------------------------------------------------------------ the categories

Rewrite = Callable[[dict, random.Random], str | None]


def _with_query(row: dict, query: str | None) -> dict | None:
    return None if query is None else {**row, "query": query}


POSITIVE: dict[str, tuple[Callable[[dict], bool], Rewrite]] = {
    "paraphrase": (lambda r: intent_of(r) in ("product", "shop", "voucher"),
                   lambda r, g: paraphrase(split_voucher(r["query"])[0], g) + split_voucher(r["query"])[1]),
    "chitchat": (lambda r: True, lambda r, g: add_chitchat(r["query"], g)),
    "reordered_price": (lambda r: intent_of(r) in ("product", "voucher") and bool(re.search(r"\d", r["query"])),
                        lambda r, g: reorder_clauses(r["query"], g)),
    "voucher_reworded": (lambda r: intent_of(r) == "voucher", reword_voucher),
    "knowledge_moved": (lambda r: intent_of(r) == "knowledge", lambda r, g: move_purchase(r["query"], g)),
    "shop_reordered": (lambda r: intent_of(r) == "shop", lambda r, g: reorder_shop(r["query"], g)),
}  # fmt: skip
NEGATIVE: dict[str, tuple[Callable[[dict], bool], Callable[[dict, Pools, random.Random], dict | None]]] = {
    "brand": (lambda r: intent_of(r) != "knowledge", change_brand),
    "noun": (lambda r: intent_of(r) in ("product", "voucher", "shop"), change_noun),
    "attribute": (lambda r: intent_of(r) in ("product", "voucher"), change_attribute),
    "price": (lambda r: intent_of(r) == "product", change_price),
    "shop_value": (lambda r: intent_of(r) == "shop", change_shop_value),
    "voucher_terms": (lambda r: intent_of(r) == "voucher", change_voucher),
}


def light(row: dict, rng: random.Random) -> str:
    """A light rewording for the merge pairs of the look-alike categories."""
    request, voucher = split_voucher(row["query"])
    return paraphrase(request, rng, deep=rng.random() < 0.5) + voucher


def build(rows: list[dict], per_direction: int = PAIRS_PER_DIRECTION, seed: int = SEED) -> list[dict]:
    pools = Pools(rows)
    new_id = Ids()
    out: list[dict] = []

    def emit(category: str, direction: str, a: dict, b: dict, rng: random.Random) -> None:
        a = reground(a, rng, pools.titles, new_id)
        b = reground(b, rng, pools.titles, new_id)
        shape = rng.random()
        if shape < 1 / 3:
            a, b = query_only(a), query_only(b)
        elif shape < 0.5:
            b = query_only(b)
        k = sum(1 for p in out if p["category"] == category and p["direction"] == direction)
        a["id"], b["id"] = f"{category}-{direction}-{k:03d}-a", f"{category}-{direction}-{k:03d}-b"
        out.append({"category": category, "direction": direction, "a": a, "b": b})

    def fill(category: str, direction: str, make: Callable[[dict, random.Random], dict | None], eligible) -> None:
        rng = random.Random(f"{seed}:{category}:{direction}")
        sources = [r for r in rows if eligible(r)]
        rng.shuffle(sources)
        made = 0
        for source in sources * 3:  # a source may serve again with other random choices
            if made >= per_direction:
                break
            b = make(source, rng)
            if b is None or b["query"] == source["query"]:
                continue
            emit(category, direction, source, b, rng)
            made += 1
        if made < per_direction:
            raise SystemExit(f"{category}/{direction}: only {made} pairs")

    for category, (eligible, rewrite) in POSITIVE.items():
        fill(category, "merge", lambda r, g, w=rewrite: _with_query(r, w(r, g)), eligible)

        def changed_then_rewritten(r: dict, g: random.Random, w=rewrite, c=category) -> dict | None:
            if c == "voucher_reworded":
                changed = change_voucher(r, pools, g)
            else:
                changed = change_any(r, pools, g)
            return None if changed is None else _with_query(changed, w(changed, g))

        fill(category, "apart", changed_then_rewritten, eligible)
    for category, (eligible, change) in NEGATIVE.items():
        fill(category, "merge", lambda r, g: _with_query(r, light(r, g)), eligible)

        def changed(r: dict, g: random.Random, c=change) -> dict | None:
            out = c(r, pools, g)
            if out is not None and g.random() < 0.3:  # sometimes lightly reworded as well
                out = _with_query(out, light(out, g))
            return out

        fill(category, "apart", changed, eligible)
    return out


def load_official(data: Path) -> list[dict]:
    rows = []
    for path in sorted(data.glob("*.jsonl")):
        rows.extend(json.loads(line) for line in path.read_text().split("\n") if line.strip())
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    pairs = build(load_official(args.data))
    args.out.write_text("".join(json.dumps(p, ensure_ascii=False, sort_keys=True) + "\n" for p in pairs))
    print(f"{len(pairs)} pairs -> {args.out}")


if __name__ == "__main__":
    main()
