"""A seeded synthetic stand-in for ShoppingBench's 2.5M-product catalog.

Why: the official catalog is a 1.4 GB Git-LFS file that most machines here do
not have, yet the arena (search index, task synthesis, scoring) needs a
catalog of the same *shape*: multi-level categories, lower-cased SKU options
and attributes with the keys tasks filter on, log-normal prices in PHP,
heavy-tailed sold counts and shop sizes (so "one shop that sells all of
these" tasks exist), the four services, and the official Lucene
JsonCollection document format.

Design choices, and why:

* ``generate_products`` streams. It keeps only a fixed pool of "open" shops
  (each with a remaining quota) and interleaves their products, so memory is
  flat whatever ``n`` is and the file is not ordered shop by shop.
* Determinism comes from one ``random.Random(seed)`` instance consumed in a
  fixed order -- never the global ``random`` module nor ``hash()`` of a
  string (salted per process) -- so the same seed gives the same file byte
  for byte in any process.
* Ids never collide yet look random: a product's 0-based index (and a shop's)
  is xored with a seed-derived salt and pushed through a fixed bijection of
  the 33-bit (23-bit for shops) integers, then offset to 10 (7) digits.
* Speed (~2.5M products must stream in minutes on two cores): per-leaf tables
  (cased words, "Label: Value" strings, shuffled key orders) are precomputed
  once, choices use ``rng.random()`` indexing rather than
  ``rng.choice``/``rng.sample``/``rng.gauss``, and products skip validation
  (see ``_constructor``; values are valid by construction and the tests
  validate every field with the real model). ``write_documents`` gzips on a
  second thread.
* Cross-process determinism is exact; across platforms it relies on
  ``math.exp``/``math.log`` agreeing, which they do on the usual libms.
"""

from __future__ import annotations

import argparse
import gzip
import io
import math
import os
import queue
import random
import sys
import threading
import time
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist
from typing import Any

import orjson

from arena.shop.documents import document
from arena.shop.product import Product
from arena.shop.vocabulary import (
    BRAND_HEADS,
    BRAND_TAILS,
    CLOSERS,
    GENERAL_ADJECTIVES,
    GENERIC_BRANDS,
    LABELS,
    LEAVES,
    OPENERS,
    PACK_QTY,
    PROMO_TAGS,
    SPEC_EXTRAS,
    Leaf,
    check_vocabulary,
)

__all__ = ["generate_products", "write_documents", "document", "main"]

# ---------------------------------------------------------------- constants

#: Shops open at once; products are drawn among them so shops interleave.
OPEN_SHOPS = 64
#: Pareto tail index of shop sizes (products per shop); ~1 is Zipf-like.
SHOP_SIZE_ALPHA = 1.05
#: Service probabilities, drawn independently per product (official order).
SERVICE_RATES: tuple[tuple[str, float], ...] = (
    ("official", 0.10),
    ("freeShipping", 0.40),
    ("COD", 0.60),
    ("flashsale", 0.15),
)
#: How many SKU options a product has, as weights over 0..9 (the official
#: sample: many with none or one, and a bump at 9, the listing cap).
SKU_COUNT_WEIGHTS = (22, 16, 10, 5, 6, 5, 5, 4, 4, 23)
#: How many attribute keys a product has, weights over 2..6.
ATTR_COUNT_WEIGHTS = (30, 28, 20, 12, 10)

_PID_BITS = 33  # 2**33 < 9e9, so 1e9 + mix(i) always has 10 digits
_SID_BITS = 23  # 2**23 < 9e6, so 1e6 + mix(i) always has 7 digits
_OPTION_KEYS = tuple(str(i) for i in range(1, 10))
_FIELDS: tuple[str, ...] = tuple(Product.model_fields)
#: Lines per write: big enough that zlib/crc32 release the GIL, small
#: enough that the writer's queue stays a few MiB.
_CHUNK_LINES = 1024
_IMAGE_HOST = "https://example.invalid/p/"
_PRODUCT_HOST = "https://example.invalid/products/"
#: Attribute keys whose values read badly inside a title ("... No Warranty").
_NON_TITLE_KEYS = frozenset(
    {
        "warranty_type",
        "is_unisex",
        "units_hb",
        "travel_size",
        "brand_classification",
        "storage_type_gr",
        "pack_type",
        "country_origin_hb",
        "language",
        "publisher",
        "recommended_gender",
        "recommended_age",
        "occasion",
        "fa_season",
        "size_class",
    }
)


def _table(weights: Iterable[int], base: int) -> tuple[int, ...]:
    """A 100-slot lookup table so a weighted draw is one ``random()`` call."""
    out: list[int] = []
    for value, w in enumerate(weights):
        out.extend([base + value] * w)
    assert len(out) == 100
    return tuple(out)


_SKU_COUNT = _table(SKU_COUNT_WEIGHTS, 0)
_ATTR_COUNT = _table(ATTR_COUNT_WEIGHTS, 2)

#: Standard-normal quantiles at the midpoints of 4096 equal slices: a normal
#: draw is one ``random()`` and an index (``rng.gauss`` costs ~1 us).
_NORMAL = tuple(NormalDist().inv_cdf((i + 0.5) / 4096) for i in range(4096))


def _constructor() -> Callable[[dict[str, Any]], Product]:
    """A ``Product`` builder from an already valid field dict.

    ``model_construct`` costs ~10 us per call (it walks every field looking
    for aliases); when the model is plain -- no aliases, no post-init, no
    extras kept -- setting the same four slots directly does what it does in
    ~2 us. Falls back to ``model_construct`` if the model ever grows those.
    """
    cls = Product
    plain = (
        not cls.__pydantic_post_init__
        and not cls.__pydantic_root_model__
        and cls.model_config.get("extra") != "allow"
        and all(f.alias is None and f.validation_alias is None for f in cls.__pydantic_fields__.values())
    )
    if not plain:  # pragma: no cover - depends on the model's definition
        return lambda values: cls.model_construct(**values)
    new = cls.__new__
    set_slot = object.__setattr__
    names = frozenset(_FIELDS)

    def build(values: dict[str, Any]) -> Product:
        product = new(cls)
        set_slot(product, "__dict__", values)
        set_slot(product, "__pydantic_fields_set__", set(names))
        set_slot(product, "__pydantic_extra__", None)
        set_slot(product, "__pydantic_private__", None)
        return product

    return build


def _mix(x: int, bits: int) -> int:
    """A fixed bijection on ``bits``-bit integers (xorshift-multiply rounds).

    Each step (xor with a right shift of itself, multiply by an odd constant
    modulo 2**bits) is invertible, so distinct inputs give distinct outputs.
    """
    mask = (1 << bits) - 1
    x &= mask
    x ^= x >> 11
    x = (x * 0x1B873593) & mask
    x ^= x >> 13
    x = (x * 0x2C9E2D51) & mask  # odd
    x ^= x >> 12
    return x


def _cap(word: str) -> str:
    """Capitalise each word's first letter only, for titles and descriptions
    (``str.title`` would also give "Men'S" and "Int:L")."""
    return " ".join(w[:1].upper() + w[1:] for w in word.split(" "))


def _label(key: str) -> str:
    return LABELS.get(key, key.replace("_", " "))


# ---------------------------------------------------- precomputed leaf tables


@dataclass(frozen=True, slots=True)
class _LeafTable:
    """Everything the hot loop needs about one leaf, pre-cased and tupled."""

    category: str
    top: str
    nouns: tuple[str, ...]  # title case, for titles
    slugs: tuple[str, ...]
    adjectives: tuple[str, ...]  # title case
    uses: tuple[str, ...]  # title case
    features: tuple[tuple[str, ...], ...]  # per noun, "{noun}" filled in
    packages: tuple[str, ...]  # per noun, "Package includes: 1 x ..."
    attr_keys: tuple[str, ...]
    key_orders: tuple[tuple[int, ...], ...]  # shuffled index orders of attr_keys
    attr_values: tuple[tuple[str, ...], ...]
    attr_display: tuple[tuple[str, ...], ...]  # capitalised, for descriptions
    attr_titles: tuple[tuple[str, ...], ...]  # as attr_display, "" where unfit for titles
    attr_pairs: tuple[tuple[str, ...], ...]  # "Material: Cotton", for descriptions
    attr_spec: tuple[tuple[str, ...], ...]  # "material:cotton", for the specification
    schemes: tuple[tuple[tuple[str, tuple[str, ...]], ...], ...]
    mu: float
    sigma: float
    brands: tuple[str, ...]


def _key_orders(m: int, count: int = 512) -> tuple[tuple[int, ...], ...]:
    """``count`` shuffled orders of ``range(m)``, the same in every run (a
    fixed-seed ``Random``, independent of the catalog seed, which only picks
    among them). 512 orders of <= 9 keys cover the subsets well enough."""
    fixed = random.Random(0x5EED ^ m)
    orders = []
    for _ in range(count):
        order = list(range(m))
        fixed.shuffle(order)
        orders.append(tuple(order))
    return tuple(orders)


def _build_table(leaf: Leaf) -> _LeafTable:
    keys = tuple(leaf.attributes)
    schemes = leaf.schemes
    if not schemes:
        sku_keys = tuple(leaf.sku)
        schemes = tuple((k,) for k in sku_keys)
        if len(sku_keys) >= 2:
            schemes += ((sku_keys[0], sku_keys[1]), (sku_keys[1], sku_keys[0]))
    return _LeafTable(
        category=leaf.path,
        top=leaf.path.split(" > ")[0],
        nouns=tuple(_cap(n) for n in leaf.nouns),
        slugs=tuple("".join(c if c.isalnum() else "-" for c in n) for n in leaf.nouns),
        adjectives=tuple(_cap(a) for a in leaf.adjectives + GENERAL_ADJECTIVES[:6]),
        uses=tuple(_cap(u) for u in leaf.uses) or ("Home",),
        features=tuple(
            tuple(f.replace("{noun}", n) for f in leaf.features or ("Great quality at an affordable price.",))
            for n in leaf.nouns
        ),
        packages=tuple(f"Package includes: 1 x {n}." for n in leaf.nouns),
        attr_keys=keys,
        key_orders=_key_orders(len(keys)),
        attr_values=tuple(tuple(leaf.attributes[k]) for k in keys),
        attr_display=tuple(tuple(_cap(v) for v in leaf.attributes[k]) for k in keys),
        attr_titles=tuple(tuple("" if k in _NON_TITLE_KEYS else _cap(v) for v in leaf.attributes[k]) for k in keys),
        attr_pairs=tuple(tuple(f"{_cap(_label(k))}: {_cap(v)}" for v in leaf.attributes[k]) for k in keys),
        attr_spec=tuple(tuple(f"{_label(k)}:{v}" for v in leaf.attributes[k]) for k in keys),
        schemes=tuple(tuple((k, tuple(leaf.sku[k])) for k in s) for s in schemes),
        mu=math.log(leaf.price[0]),
        sigma=leaf.price[1],
        brands=leaf.brands,
    )


_TABLES: tuple[_LeafTable, ...] = ()
_CUM_WEIGHTS: tuple[float, ...] = ()
_BY_TOP: dict[str, tuple[int, ...]] = {}
_GENERAL_ADJ = tuple(_cap(a) for a in GENERAL_ADJECTIVES)
_PROMO = tuple(p.upper() for p in PROMO_TAGS)
_QTY = tuple(_cap(q) for q in PACK_QTY)


def _tables() -> tuple[_LeafTable, ...]:
    """Build (once) the per-leaf tables; refuse to run on a broken vocabulary."""
    global _TABLES, _CUM_WEIGHTS, _BY_TOP
    if not _TABLES:
        problems = check_vocabulary()
        if problems:
            raise ValueError("broken synthetic vocabulary: " + "; ".join(problems[:5]))
        tables = tuple(_build_table(leaf) for leaf in LEAVES)
        total, cum = 0.0, []
        for leaf in LEAVES:
            total += leaf.weight
            cum.append(total)
        _CUM_WEIGHTS = tuple(c / total for c in cum)
        by_top: dict[str, list[int]] = {}
        for i, t in enumerate(tables):
            by_top.setdefault(t.top, []).append(i)
        _BY_TOP = {k: tuple(v) for k, v in by_top.items()}
        _TABLES = tables
    return _TABLES


# --------------------------------------------------------------------- shops


class _Shop:
    """An open shop: its id, how many products it still lists, and what it sells."""

    __slots__ = ("shop_id", "remaining", "main", "leaves", "house", "price_factor")

    def __init__(
        self,
        shop_id: str,
        remaining: int,
        main: int,
        leaves: tuple[int, ...],
        house: str,
        price_factor: float,
    ) -> None:
        self.shop_id = shop_id
        self.remaining = remaining
        self.main = main
        self.leaves = leaves
        self.house = house
        self.price_factor = price_factor


def _new_shop(rng: random.Random, index: int, salt: int, size_cap: int) -> _Shop:
    """Open shop number ``index``: a heavy-tailed size, a main leaf category
    plus a few others (mostly from the same top-level), maybe a house brand."""
    if index >> _SID_BITS:
        raise ValueError("too many shops for 7-digit shop ids")
    rand = rng.random
    size = min(size_cap, int((1.0 - rand()) ** (-1.0 / SHOP_SIZE_ALPHA)))
    main = bisect_right(_CUM_WEIGHTS, rand() * _CUM_WEIGHTS[-1])
    main = min(main, len(_TABLES) - 1)
    extra = 0 if size < 3 else min(6, 1 + int(rand() * (size**0.35)))
    leaves = [main]
    same_top = _BY_TOP[_TABLES[main].top]
    for _ in range(extra):
        if rand() < 0.5:
            pick = same_top[int(rand() * len(same_top))]
        else:
            pick = int(rand() * len(_TABLES))
        if pick not in leaves:
            leaves.append(pick)
    house = ""
    if rand() < 0.25:
        house = _cap(BRAND_HEADS[int(rand() * len(BRAND_HEADS))] + BRAND_TAILS[int(rand() * len(BRAND_TAILS))])
        if rand() < 0.2:
            house = house.upper()
    shop_id = str(1_000_000 + _mix(index ^ salt, _SID_BITS))
    return _Shop(shop_id, max(1, size), main, tuple(leaves), house, math.exp(0.15 * _NORMAL[int(rand() * 4096)]))


# ------------------------------------------------------------------ products


def _price(rng: random.Random, t: _LeafTable, factor: float) -> float:
    """Log-normal around the leaf median; rounded the way sellers price."""
    rand = rng.random
    raw = math.exp(t.mu + t.sigma * _NORMAL[int(rand() * 4096)]) * factor
    r = rand()
    if raw < 20:
        return max(1.0, round(raw, 2)) if r < 0.4 else float(max(1, round(raw)))
    if r < 0.45:  # whole pesos
        return float(round(raw))
    if r < 0.75:  # charm pricing: 199, 249, 1299
        return float(max(9, int(raw / 10) * 10 + 9))
    return round(raw, 2)


def _sold(rng: random.Random) -> int:
    """Heavy-tailed (Pareto ~1.1): about half never sold, a few in thousands."""
    return min(2_000_000, int((1.0 - rng.random()) ** (-1.0 / 1.1)) - 1)


def _sku_options(rng: random.Random, t: _LeafTable) -> dict[str, dict[str, str]]:
    rand = rng.random
    count = _SKU_COUNT[int(rand() * 100)]
    if count == 0 or not t.schemes:
        return {}
    scheme = t.schemes[int(rand() * len(t.schemes))]
    options: dict[str, dict[str, str]] = {}
    if len(scheme) == 1:
        key, values = scheme[0]
        m = len(values)
        start = int(rand() * m)
        step = 1 + int(rand() * 2) if m > 2 else 1
        seen: set[str] = set()
        for i in range(min(count, m)):
            v = values[(start + i * step) % m]
            if v in seen:  # step 2 on an even-sized list wraps onto itself
                break
            seen.add(v)
            options[_OPTION_KEYS[len(options)]] = {key: v}
        return options
    (k1, v1), (k2, v2) = scheme
    # a few values of the first key crossed with a few of the second
    n1 = min(len(v1), 1 + int(rand() * 3))
    n2 = min(len(v2), -(-count // n1))
    s1, s2 = int(rand() * len(v1)), int(rand() * len(v2))
    for i in range(n1):
        a = v1[(s1 + i) % len(v1)]
        for j in range(n2):
            if len(options) == count:
                return options
            options[_OPTION_KEYS[len(options)]] = {k1: a, k2: v2[(s2 + j) % len(v2)]}
    return options


def _pick_attributes(
    rng: random.Random, t: _LeafTable, want: int
) -> tuple[list[tuple[int, int, int]], dict[str, list[str]]]:
    """``want`` distinct attribute keys as (key index, value index, second
    value index or -1). The keys come from one of the leaf's precomputed
    key orders: one ``random()`` instead of a shuffle in the hot loop.
    Also returns the product's ``attributes`` dict built from them."""
    rand = rng.random
    orders = t.key_orders
    values = t.attr_values
    keys = t.attr_keys
    chosen: list[tuple[int, int, int]] = []
    attributes: dict[str, list[str]] = {}
    for k in orders[int(rand() * len(orders))][:want]:
        vals = values[k]
        nv = len(vals)
        v = int(rand() * nv)
        if nv > 2 and rand() < 0.15:
            v2 = (v + 1 + int(rand() * (nv - 1))) % nv
            chosen.append((k, v, v2))
            attributes[keys[k]] = [vals[v], vals[v2]]
        else:
            chosen.append((k, v, -1))
            attributes[keys[k]] = [vals[v]]
    return chosen, attributes


def _title(
    rng: random.Random,
    t: _LeafTable,
    brand: str,
    noun: str,
    picks: list[tuple[int, int, int]],
    sku: dict[str, dict[str, str]],
    use: str,
) -> str:
    """One of several title shapes seen on Lazada: brand first, keyword
    stuffing, "for ..." phrases, promo tags, pack quantities."""
    rand = rng.random
    adjs = t.adjectives
    a1 = adjs[int(rand() * len(adjs))]
    a2 = adjs[int(rand() * len(adjs))]
    if a2 == a1:
        a2 = ""
    v1 = v2 = ""
    for k, v, _ in picks:
        word = t.attr_titles[k][v]
        if word:
            if v1:
                v2 = word
                break
            v1 = word
    tmpl = int(rand() * 8)
    parts: tuple[str, ...]
    if tmpl == 0:
        parts = (brand, a1, noun, v1, v2)
    elif tmpl == 1:
        parts = (brand, noun, a1, a2, v1, "for", use)
    elif tmpl == 2:
        parts = (a1, a2, noun, "for", use, v1, brand)
    elif tmpl == 3:
        parts = (_PROMO[int(rand() * len(_PROMO))], brand, a1, noun, v1, _QTY[int(rand() * len(_QTY))])
    elif tmpl == 4:
        first = sku.get("1")
        sv = _cap(next(iter(first.values()))) if first else ""
        parts = (brand, a1, noun, v1, sv)
    elif tmpl == 5:
        parts = (a1, noun, v1, v2, _GENERAL_ADJ[int(rand() * len(_GENERAL_ADJ))], brand)
    elif tmpl == 6:
        parts = (brand, v1, noun, a1, a2, "-", _QTY[int(rand() * len(_QTY))])
    else:
        parts = (a1, brand, noun, "(" + v1 + ")" if v1 else "", "for", use)
    title = " ".join(p for p in parts if p)
    if rand() < 0.35:  # keyword stuffing, as sellers do: "... Rubber Wheel Caster Wheel"
        nouns = t.nouns
        extra = nouns[int(rand() * len(nouns))]
        if extra != noun:
            title = f"{title} {_GENERAL_ADJ[int(rand() * len(_GENERAL_ADJ))]} {extra}"
    return title


def _texts(
    rng: random.Random,
    t: _LeafTable,
    ni: int,
    picks: list[tuple[int, int, int]],
    sku: dict[str, dict[str, str]],
    brand_lower: str,
) -> tuple[str, str, str]:
    """short_description, description and specification built from the
    chosen attributes, in the official formats ("k:v;k:v" specification,
    ";"-separated short description) -- and often empty, as officially."""
    rand = rng.random
    feats = t.features[ni]
    feature = feats[int(rand() * len(feats))]
    want_short = rand() < 0.4
    want_long = rand() < 0.6
    pairs: list[str] = []
    if want_short or want_long:
        table, display = t.attr_pairs, t.attr_display
        pairs = [table[k][v] + (", " + display[k][v2] if v2 >= 0 else "") for k, v, v2 in picks]
    short = ""
    if want_short:
        short = ";".join([feature, *pairs]) + (";" if rand() < 0.5 else "")
    description = ""
    if want_long:
        parts = [OPENERS[int(rand() * len(OPENERS))], feature]
        other = feats[int(rand() * len(feats))]
        if other != feature:
            parts.append(other)
        if pairs:
            parts.append("Specifications: " + ", ".join(pairs) + ".")
        if sku:
            variants = []
            for opt in sku.values():
                variants.append(" / ".join(opt.values()))
                if len(variants) == 4:
                    break
            parts.append("Available variants: " + ", ".join(variants) + ".")
        parts.append(t.packages[ni])
        closer = CLOSERS[int(rand() * len(CLOSERS))]
        if closer:
            parts.append(closer)
        description = " ".join(parts)
    spec = t.attr_spec
    spec_items = [spec[k][v] for k, v, _ in picks]
    if brand_lower:
        spec_items.append("brand:" + brand_lower)
    specification = ";".join(spec_items)
    r = rand()
    if r < 0.5:
        extra = SPEC_EXTRAS[int(rand() * len(SPEC_EXTRAS))]
        if not (extra.startswith("warranty") and "warranty type:" in specification):
            specification = f"{specification};{extra}" if specification else extra
    elif r < 0.52:
        specification = ""
    return short, description, specification


def generate_products(n: int, seed: int) -> Iterator[Product]:
    """Yield ``n`` synthetic products, deterministically for ``seed``.

    Streams with constant memory: only ``OPEN_SHOPS`` shop records are held,
    never the products already yielded. Bad arguments fail here, not at the
    first ``next()``.
    """
    if n < 0:
        raise ValueError("n must be >= 0")
    if n >> _PID_BITS:
        raise ValueError(f"at most {1 << _PID_BITS} products")
    return _generate(n, seed, _tables())


def _generate(n: int, seed: int, tables: tuple[_LeafTable, ...]) -> Iterator[Product]:
    rng = random.Random(seed)
    rand = rng.random
    pid_salt = rng.getrandbits(_PID_BITS)
    sid_salt = rng.getrandbits(_SID_BITS)
    # Small catalogs still get many shops; big ones get shops of thousands.
    size_cap = max(30, min(5000, n // 20))
    open_shops = [_new_shop(rng, i, sid_salt, size_cap) for i in range(OPEN_SHOPS)]
    next_shop = OPEN_SHOPS
    construct = _constructor()
    rates = SERVICE_RATES
    brand_p = 0.8

    for i in range(n):
        slot = int(rand() * OPEN_SHOPS)
        shop = open_shops[slot]
        shop.remaining -= 1
        if shop.remaining <= 0:
            open_shops[slot] = _new_shop(rng, next_shop, sid_salt, size_cap)
            next_shop += 1

        leaves = shop.leaves
        t = tables[shop.main if rand() < 0.55 else leaves[int(rand() * len(leaves))]]
        ni = int(rand() * len(t.nouns))
        noun = t.nouns[ni]

        # brand: the shop's house brand, a category brand, generic, or none
        r = rand()
        if shop.house and r < brand_p:
            brand = shop.house
        elif r < 0.35:
            brand = ""
        elif r < 0.42:
            brand = GENERIC_BRANDS[int(rand() * len(GENERIC_BRANDS))]
        else:
            brand = t.brands[int(rand() * len(t.brands))]
        brand_lower = brand.lower()

        want = _ATTR_COUNT[int(rand() * 100)]
        if brand_lower:
            want -= 1
        picks, attributes = _pick_attributes(rng, t, want)
        if brand_lower:
            attributes["brand"] = [brand_lower]

        sku = _sku_options(rng, t)
        use = t.uses[int(rand() * len(t.uses))]
        title = _title(rng, t, brand, noun, picks, sku, use)
        short, description, specification = _texts(rng, t, ni, picks, sku, brand_lower)

        service = [name for name, p in rates if rand() < p]
        pid = str(1_000_000_000 + _mix(i ^ pid_salt, _PID_BITS))
        yield construct(
            {
                "product_id": pid,
                "shop_id": shop.shop_id,
                "brand": brand,
                "category": t.category,
                "title": title,
                "short_description": short,
                "description": description,
                "specification": specification,
                "price": _price(rng, t, shop.price_factor),
                "sold_count": _sold(rng),
                "sku_options": sku,
                "attributes": attributes,
                "service": service,
                "main_image_url": f"{_IMAGE_HOST}{rng.getrandbits(128):032x}.jpg",
                "product_url": f"{_PRODUCT_HOST}{t.slugs[ni]}-i{pid}.html",
            }
        )


# ------------------------------------------------------------------- writing


class _BackgroundWriter:
    """Hands byte chunks to a thread that writes (and gzips) them in order.

    Why: zlib and file writes release the GIL, so compressing on a second
    core overlaps with generating the next products; at level 6 gzip costs
    about as much CPU as generation itself. Order is kept (one FIFO queue,
    one consumer) and chunk boundaries are fixed, so the bytes are the same
    as a single-threaded write. The bounded queue keeps memory flat.
    """

    def __init__(self, sink: io.BufferedIOBase) -> None:
        self._sink = sink
        self._queue: queue.Queue[bytes | None] = queue.Queue(maxsize=4)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="catalog-writer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while (chunk := self._queue.get()) is not None:
            if self._error is None:
                try:
                    self._sink.write(chunk)
                except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
                    self._error = exc

    def write(self, chunk: bytes) -> None:
        if self._error is not None:
            raise self._error
        self._queue.put(chunk)

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join()
        if self._error is not None:
            raise self._error


def write_documents(products: Iterable[Product], path: str | os.PathLike[str]) -> int:
    """Write one JSON document per line to ``path`` (gzip if it ends in
    ``.gz``); return how many were written.

    Byte-reproducible: orjson keeps insertion order, and the gzip header
    carries mtime 0 and no file name. Written to a temporary sibling and
    renamed, so a reader never sees half a catalog (and a failure leaves
    nothing behind).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".partial")
    dumps = orjson.dumps
    opt = orjson.OPT_APPEND_NEWLINE
    count = 0
    try:
        with open(tmp, "wb") as raw:
            sink: io.BufferedIOBase = raw
            if path.name.endswith(".gz"):
                sink = gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=6)
            writer = _BackgroundWriter(sink)
            try:
                buffer: list[bytes] = []
                for product in products:
                    buffer.append(dumps(document(product), option=opt))
                    count += 1
                    if len(buffer) == _CHUNK_LINES:
                        writer.write(b"".join(buffer))
                        buffer.clear()
                if buffer:
                    writer.write(b"".join(buffer))
            finally:
                writer.close()
                if sink is not raw:
                    sink.close()
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return count


# ----------------------------------------------------------------------- CLI


def main(argv: list[str] | None = None) -> int:
    """``python -m arena.taskpack.synthetic --n 2500000 --seed 0 --out documents.jsonl.gz``;
    without ``--out`` it only generates (a throughput check)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    start, cpu_start = time.perf_counter(), time.process_time()
    if args.out is None:
        count = sum(1 for _ in generate_products(args.n, args.seed))
    else:
        count = write_documents(generate_products(args.n, args.seed), args.out)
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    try:
        import resource

        rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    except ImportError:  # pragma: no cover - non-POSIX
        rss_mib = float("nan")
    print(
        f"{count} products in {elapsed:.2f}s = {count / elapsed:,.0f}/s"
        f" (CPU {cpu:.2f}s, both threads when writing), peak RSS {rss_mib:.0f} MiB"
        + (f", wrote {args.out}" if args.out else ""),
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
