"""Look-alike twins: two requests that read alike but ask for different things.

The meaning signal (:mod:`arena.problems.meaning`) proposes pairs that mean about the
same thing; a pair merges unless this module finds a *confident* conflict between
what the two ask (:func:`conflict`). Confident means a substitution, never a gap:
one side states a value the other replaces by another value of the same role

- a number in the same role: a price bound (with its direction), a size or capacity
  (units normalised: 750 ml = 0.75 L), a count, any other number;
- a word of a closed class: colour, material, pattern, audience, size word;
- a service (free shipping against cash on delivery);
- a name (a brand or model: a word no English dictionary knows);
- a content word replaced in an otherwise aligned sentence (another product noun);
- a voucher term (threshold, discount, cap, budget, type, scope);
- the fact a knowledge riddle asks;
- where both sides carry gold constraints (price, attributes, options, services),
  a constraint value of the same key.

A value one side states and the other leaves out is not a conflict where the reader
may have missed it: then the text similarity decides. Where the text shows the other
side does not state it (no price word at all against a bound, no colour or material
against one, one more feature or item attached by "with" / "plus"), the side asking
less is another ask; and two riddles with one answer that buy two products are two.
Shop requests are compared item by item after aligning their items, whatever the order.
"""

from __future__ import annotations

import hashlib
import math
import re
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from difflib import SequenceMatcher
from functools import lru_cache
from typing import TypedDict

from arena.problems import cebuano, lexicon, regional, tagalog
from arena.problems.asks import (
    _BULLET,
    _SERVICE_PHRASES,
    _STOP,
    _TERM_WORDS,
    _VOUCHER_CUE,
    JOINED_TABLE,
    PRICE_TABLE,
    Split,
    _digits,
    _lemma,
    _normalised,
    mark_ranges,
    mark_services,
    split_problem,
)
from arena.problems.clues import HOME, LABELS, Clue, clue_conflict, read_clue, round_amount
from arena.problems.heads import heads_conflict, item_heads, phrase_heads
from arena.problems.model import Intent, Problem, ProductReward
from arena.problems.signature import price_interval
from arena.problems.synonyms import CANONICAL

# --- units -----------------------------------------------------------------------------------

_LETTER_RUNS = re.compile(r"[a-z]+")
# unit word -> (dimension, factor to the dimension's base unit)
_UNITS: dict[str, tuple[str, float]] = {}
for _dimension, _entries in {
    "volume": {
        1.0: "ml mls milliliter milliliters millilitre millilitres",
        10.0: "cl",
        1000.0: "l ltr ltrs liter liters litre litres litro litros",  # not "lt": the direction token
        3785.41: "gallon gallons gal",
        946.353: "qt qts quart quarts",
        28316.8: "cuft",  # "8 cu ft", "8 cubic feet" (the synonyms join them)
    },
    "mass": {
        0.001: "mg milligram milligrams",
        1.0: "g gr gram grams gramme grammes gm gms",
        1000.0: "kg kgs kilo kilos kilogram kilograms kilong",
        453.592: "lb lbs pound pounds",
        28.3495: "oz ounce ounces onsa",
    },
    "length": {
        1.0: "mm millimeter millimeters millimetre millimetres",
        10.0: "cm centimeter centimeters centimetre centimetres",
        1000.0: "m meter meters metre metres metro",
        25.4: "inch inches pulgada pulgadas",  # Tagalog says inches "pulgada", Chavacano "pulgadas"
        304.8: "ft feet foot talampakan",
    },
    "data": {0.001: "mb megabyte megabytes", 1.0: "gb gigabyte gigabytes gig gigs", 1000.0: "tb terabyte terabytes"},
    "power": {1.0: "w watt watts", 1000.0: "kw"},
    "voltage": {1.0: "v volt volts"},
    "charge": {1.0: "mah"},
    "pieces": {1.0: "pcs pc piece pieces pack packs sheets sheet count ct"},
    "pairs": {1.0: "pair pairs"},
    "seats": {1.0: "seater seaters"},
}.items():
    for _factor, _words in _entries.items():
        for _word in _words.split():
            _UNITS[_word] = (_dimension, _factor)
# "pack of 6", "set of 3", "box of 12": the count comes after the unit.
_COUNT_BEFORE = frozenset({"pack", "set", "box", "bundle", "kit", "pair", "pairs", "dozen", "case", "bag"})
_SEATS_BEFORE = frozenset({"seats", "seat", "seating", "sits"})
_DIGIT_LETTER = re.compile(r"(\d)(?!(?:st|nd|rd|th)\b)([a-z])")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)")
_CURRENCY = frozenset({"php", "peso", "pesos", "p"})
# Counts, which a number beside "set", "pack" or "box" may be misread as; sizes read as written.
_COUNTS = frozenset({"pieces", "pairs", "seats"})
_SIZE_TOKEN = re.compile(r"\d+(?:\.\d+)?(?!pieces$|pairs$|seats$)[a-z]+")
_CURRENCY_PREFIX = re.compile(r" (?:php|pesos?|p)(?= \d)")
# Words that may sit between a direction and its amount ("below just 300 pesos").
_FILLER = frozenset({"php", "peso", "pesos", "p", "just", "only", "about", "around", "roughly", "the", "a", "of"})
# "within a budget of", "budget is", "my budget": a bound from above.
_BUDGET = re.compile(r"\b(?:budget|afford|spend|spending|pay)\b")

# The Visayan words of the tables: no English lemma applies to them.
_VISAYAN = cebuano.FUNCTION | regional.HILIGAYNON | regional.ILOCANO | regional.KAPAMPANGAN

# Words a rewording adds or drops that state no constraint, beyond the guard's frame words:
# how a shopper says "price", "please", "I need" and "it should" in free text.
_FRAME = (
    _STOP
    | _CURRENCY
    | frozenset(
        """spend spent pay afford hold holds holding keep keeping nice fine okay ok must rather any anything
    something thats its dont do does im id ill ive pls plz please need needs needed want wants wanted
    total overall capacity layout around approximately roughly exactly least most more less plus also
    printed print on it lol haha hi hello morning evening thanks thank much so am get got buy bought
    which whats what would like love prefer preferred preferably ideally look looking shop store seller
    sell selling sells store stores one ones seller sellers same single all these those them that this
    someone somewhere where bring deliver delivered delivery ship shipping shipped cost costs worth budget
    max maximum min minimum capped limit up upto top tops till until priced price range peso pesos""".split()
    )
    # The lemmas simplemma gives the frame's constraint labels ("crafted" -> "crafte", "described"
    # -> "describe", "labelled" -> "labell"): the words are compared as lemmas, so the labels must be too.
    | frozenset("crafte describe labell mark call name preferr pl".split())  # "pls" -> "pl"
    | frozenset("thx tnx ty tysm".split())  # chat shorthand for thanks
    # How a request frames its list and its asks, not what it asks: "I need a few things", "I'm
    # planning to buy", "can one shop supply everything together", "it must allow COD", "I expect
    # to pay", "meant for", "built from", "produced by", "its colour should match", "first find out".
    | frozenset(
        """few plan planning together everything supply allow allows expect expecting mean meant intend
    intended build built construct constructed produce produced match matching out start select selected
    equip equipped suit suits accept accepts accepting nothing neither cart part whole wait instead actually""".split()
    )
    # A bound that holds: "the price must stay below", "has to remain under".
    | frozenset("stay stays remain remains".split())
    # How the payment is said beside the service that says it ("payable by COD", "paid on delivery").
    | frozenset("payable paid payment".split())
    # Getting it, said as a verb: "source it from a single shop".
    | frozenset("source sourced sourcing".split())
    # What is paid, said as a noun: "keep the final amount at two thousand or less".
    | frozenset("amount final".split())
    # A conditional's end and a thing pointed back at: "..., I'll take it", "the crib itself".
    | frozenset("take itself themselves once never put".split())
    # An ability said with its own words: "it must be able to mop".
    | frozenset("able per".split())
    # Adverbs that only say how strongly: "₱15k is already too much", "it won't go past ₱120 off, though".
    | frozenset("already though".split())
    # A size said roughly, a title asked for by name: "about 30 cm tall", "what is the title of ...".
    | frozenset("about title".split())
    # A list's label, what the things make together: "Coffee setup from one seller", "Gym restock!",
    # "Skincare haul:", "baby essentials"; and what a request reports: "the wallet says ₱3,500 max".
    | frozenset("setup haul restock essentials stuff say says".split())
    # Laughter in chat ("hehe patriotic"), a feature said as a technology ("inverter technology"), and
    # Tagalog's "exceeds" in a voucher's minimum ("dapat lumagpas ng ₱350 ang bill").
    | frozenset("hehe hihi huhu hahaha technology lumagpas lumampas lagpas lampas".split())
    # A dimension named before its value: "a hose whose length is fifteen metres", "whose wood is oak".
    | frozenset("length width depth diameter".split())
    # A support ticket's field labels ("Req: ...; Svc: COD").
    | LABELS
)

# How much of one request's token sequence (frame words included) the other keeps in order
# (difflib's ratio). At EDITED or more the two are one sentence edited, and any content a side
# adds, drops or replaces is a constraint changed (another noun, an item or a service added or
# dropped); from SUBSTITUTED a word replaced by another still is. Below, the request was
# reworded, and a word one side lacks is how it was reworded: the text similarity decides.
# Both chosen on the hand-written development pairs (docs/leak-clusters.md): every edited twin
# there is at 0.67 or more, every reworded variant that differs in a content word at 0.67 or less.
EDITED = 0.7
SUBSTITUTED = 0.6
# A phrase of plain words one side adds to a sentence otherwise kept ("sofa bed, seats three" /
# "3-seater sofa", "lunches at the construction site", "what is the title of"), below PHRASE_BINDS
# of the sentence kept, and a plain word of a product's or a voucher's sentence replaced below
# EDITED ("3-in-1 coffee mix" / "3-in-1 coffee", "remote control" / "remote"): a constraint changed,
# or what a rewording adds or says another way around the same ask. It keeps the two apart
# (PAIR_ONLY), but does not keep one of them out of a cluster the other joined through a third
# request read alike with neither: a rewording's words against one member are no evidence against
# the rest. At PHRASE_BINDS or more the sentence is one copy edited, and binds; so do a number, a
# unit, a service, a value of a closed class, a brand, a name, a shop list's item and a riddle's
# fact at any ratio. Chosen on the development pools (docs/leak-clusters.md, the fifteenth session).
PHRASE_BINDS = 0.85
PAIR_ONLY = "pair only"
# A unit named in a sentence ("in metres", "how many feet"), as the sequence has it: the unit asked.
_UNIT_NAMES = frozenset({*(_lemma(w) for w in _UNITS if w.isalpha()), "mile", "kilometer", "foot", "meter", "inch"})
# Two riddles with one answer: their clues may be worded nearly alike ("sank" / "went down");
# only a near copy with one word replaced (another product for the answer) is a twin.
SAME_ANSWER = 0.85

# --- closed classes --------------------------------------------------------------------------

_CLASSES: dict[str, frozenset[str]] = {
    "colour": frozenset(
        """black white blue pink green red yellow gray brown gold silver beige cream orange purple navy khaki
        multicolor multicolour maroon apricot violet magenta cyan teal turquoise lavender lilac mint olive tan
        nude coral peach burgundy charcoal ivory rose fuchsia indigo bronze copper champagne transparent clear
        dark light pastel neon emerald sky wine mustard rust camel taupe""".split()
    ),
    "material": frozenset(
        """cotton wool leather denim silk linen polyester nylon canvas plastic wood wooden metal steel stainless
        aluminum glass ceramic porcelain bamboo rubber silicone iron brass titanium carbon acrylic velvet suede
        fleece spandex rayon paper cardboard marble granite stone resin vinyl pvc latex foam cork jute rattan
        wicker crystal zinc chrome cashmere satin chiffon lace corduroy microfiber microfibre mesh knit
        neoprene polycarbonate abs tempered""".split()
    ),
    "pattern": frozenset(
        """floral striped stripe stripes plain solid checkered checked plaid polka dot dotted geometric camouflage
        camo leopard graphic abstract paisley gingham houndstooth tie-dye cartoon printed""".split()
    ),
    "audience": frozenset("man woman kid baby unisex boy girl teen adult senior".split()),
    "size": frozenset("small medium big xs xl xxl xxxl 2xl 3xl 4xl petite plus".split()),
    # The item's condition ("pre-owned" and "second-hand" are read as "used") and what the seller
    # adds besides shipping and paying: "free installation" / "a 5-year warranty" are two asks.
    "condition": frozenset("new used refurbished".split()),
    "extra": frozenset("installation warranty assembly".split()),
}
_CLASS_OF = {word: name for name, words in _CLASSES.items() for word in words}


def _deletions(word: str) -> set[str]:
    return {word[:k] + word[k + 1 :] for k in range(len(word))}


# Each colour and material (four letters or more) under itself and under each of its one-letter
# deletions: a token one letter away from a value shares one of these keys (SymSpell's index).
_VALUE_KEYS: dict[str, frozenset[str]] = {}
for _value, _class in _CLASS_OF.items():
    if _class in ("colour", "material") and _value.isalpha() and len(_value) >= 4:
        for _key in _deletions(_value) | {_value}:
            _VALUE_KEYS[_key] = _VALUE_KEYS.get(_key, frozenset()) | {_value}


@lru_cache(maxsize=65_536)
def _value_respelt(token: str) -> str:
    """A colour or material misspelt by a letter ("yelow", "whte", "leahter"): that value, where the
    token is no word of the shopper's languages (a brand or a word one letter from a colour stays)
    and one value alone is a letter away."""
    if (
        len(token) < 4
        or not token.isalpha()
        or token in _CLASS_OF
        or token in _VISAYAN
        or token in tagalog.GLOSSARY  # the glossaries' own words ("marron": brown)
        or not _near_a_value(token)
        or _a_word(token)
    ):
        return token
    from rapidfuzz.distance import OSA

    found = {v for key in _deletions(token) | {token} for v in _VALUE_KEYS.get(key, ()) if OSA.distance(v, token) <= 1}
    # A letter left out, doubled or two swapped ("whte", "whitte", "leahter"), its first letter kept: a
    # letter replaced is as often a word of another language (Chavacano "puede" is no "suede",
    # Tagalog "sakin" no "satin", Cebuano "naay" no "navy") or a short form ("mech" is no "mesh").
    found = {
        v
        for v in found
        if v[0] == token[0] and (len(v) != len(token) or sorted(v) == sorted(token)) and (len(token) > 4 or len(v) == 5)
    }
    return found.pop() if len(found) == 1 else token


def _near_a_value(token: str) -> bool:
    """Whether a token shares a key with a value: a set test before any dictionary is asked."""
    return token in _VALUE_KEYS or any(d in _VALUE_KEYS for d in _deletions(token))


# Brands that are also English words, which no dictionary test can tell from the word.
_BRAND_WORDS = frozenset(
    """apple canon dove puma shell tide jaguar corona gap mango guess oral oralb lego hp dell stanley philips
    sony milo nestle kodak fossil vans converse coach razer corsair anker baseus ugreen remington braun
    panasonic sharp toshiba hanabishi kyowa pigeon alaska""".split()
)


@lru_cache(maxsize=65_536)
def _known(word: str) -> bool:
    import simplemma

    # "tvs", "pcs": a plural the dictionary lists only as its singular is a word, not a name.
    return simplemma.is_known(word, lang="en") or (
        len(word) > 3 and word.endswith("s") and simplemma.is_known(word[:-1], lang="en")
    )


@lru_cache(maxsize=65_536)
def _a_word(word: str) -> bool:
    """A word of the shopper's languages, not a name: English, Tagalog, or a short form WordNet lists
    as a common word ("tv", "cod", "led", "pcs"; longer words WordNet knows include brands: "nike")."""
    return _known(word) or _tagalog(word) or (len(word) <= 3 and lexicon.known(word))


@lru_cache(maxsize=65_536)
def _tagalog(word: str) -> bool:
    """A Tagalog word ("bundok", "kahoy", "pangalan"): a Taglish request's own words, not a brand's
    (a name written in lower case is a name only where no dictionary of the shopper's languages has it)."""
    import simplemma

    if simplemma.is_known(word, lang="tl"):
        return True
    # An inflected verb the list lacks ("tinatawag", "napapatong"): its root is there. Long words
    # only: a short English name ("mango", "makita") is not taken apart.
    return len(word) >= 7 and any(simplemma.is_known(root, lang="tl") for root in tagalog.roots(word))


# --- one request read ------------------------------------------------------------------------

Bound = tuple[str, float, float]  # (direction, value, second value): ("lt", 300, 0), ("btw", 5, 10)


@dataclass(frozen=True, slots=True)
class Reading:
    """What one request (or one shop item) states, in comparable form."""

    prices: tuple[Bound, ...] = ()
    measures: tuple[tuple[str, float], ...] = ()  # (dimension, value in the base unit)
    others: tuple[float, ...] = ()  # numbers in no recognised role
    classes: tuple[tuple[str, str], ...] = ()  # (class, word)
    services: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    words: tuple[str, ...] = ()  # content words in order (numbers kept), for alignment
    sequence: tuple[str, ...] = ()
    units: tuple[tuple[str, ...], ...] = ()  # the sequence cut at sentence ends
    ruled_out: tuple[str, ...] = ()  # words the request rules out ("not leather"), lemmatised
    capitals: tuple[str, ...] = ()  # words capitalised inside a sentence (a brand: "from Bose"), lower-cased
    heads: tuple[str, ...] = ()  # the head noun of each noun phrase: what is bought (heads.py)
    details: tuple[str, ...] = ()  # a list's items' other words, one string per head
    unread: int = 0  # a list's items that name their thing in no word read (heads.item_heads)


@dataclass(frozen=True, slots=True)
class Request:
    """A problem read for the veto: the whole request, its items, the voucher, the fact, the gold constraints."""

    whole: Reading
    items: tuple[Reading, ...] = ()  # shop tasks: one per sub-request sentence with content
    voucher: Voucher | None = None  # (scope, kind, benefit, amounts) from the text
    voucher_terms: tuple | None = None  # from the row's voucher object
    fact: str | None = None
    gold: bytes | None = None  # digests of the rewards' constraints by key (gold ids and titles left out)
    # The problem's own rewards (a reference, no copy): their values' words are read only when two
    # rewards constrain different keys (:func:`_unsaid_key`), rarely, so they are not held read.
    rewards: Sequence[ProductReward] = ()
    intent: str = ""
    text: str = ""  # the request sentences, for the embedding
    mentions_price: bool = False  # any word of price or money in the text, read or not
    purchase: tuple[str, ...] = ()  # a riddle's product: the words of the thing it buys (a tuple: 100k are held)
    clue: Clue | None = None  # a riddle's clue: the fact it asks, read from its words


def read_request(problem: Problem, split: Split | None = None) -> Request:
    query, request, voucher_units = split_problem(problem) if split is None else split
    units = _at_corrections(request)
    # A riddle's capitalised words name its clue's entities, which its clue compares (clues.py).
    cased = problem.intent is not Intent.knowledge
    per_unit = _corrected(
        [
            replace(
                _read_units([_prepare(unit)]),
                capitals=_capitals(unit) if cased else (),
                **_heads(unit, problem.intent),
            )
            for unit in units
        ],
        units,
    )
    whole = _merge(per_unit)
    if voucher_units and not whole.heads and problem.intent is not Intent.knowledge:
        # "use a ₱150 off voucher on a Philips air fryer": the only sentence naming the thing bought is
        # the voucher's; what it buys is read there (its terms are no heads).
        terms_said = " ".join(voucher_units)
        whole = replace(whole, **_heads(_NO_CAP.sub(" ", f" {terms_said.lower()} "), problem.intent))
    if voucher_units and not whole.words and problem.intent is not Intent.knowledge:
        # "Nivea skincare from the same shop with ₱100 off on min ₱1,000, budget ₱1,300": every word is
        # in the voucher's sentence, so what it buys (its brand, its kind) is compared there, less the
        # terms' vocabulary; its amounts stay the voucher's.
        in_terms = _read_units([_prepare(u) for u in voucher_units])
        # A size read there stays ("two 500 g bags": '500mass'); bare amounts are terms, and so may be a count
        # ("bath towel set ₱400 budget" reads as a set of 400).
        kept = tuple(
            w
            for w in in_terms.words
            if (not w[0].isdigit() or _SIZE_TOKEN.fullmatch(w)) and w not in _VOUCHER_VOCABULARY
        )
        names = tuple(n for n in in_terms.names if n not in _VOUCHER_VOCABULARY)  # "cashback" is no brand
        whole = replace(whole, words=kept, sequence=kept, classes=in_terms.classes, names=names)
    if voucher_units:
        # "LazMall stores only" said beside the voucher's terms is the request's service all the same;
        # free shipping there is what a free-shipping voucher gives, compared with the voucher.
        said = mark_services(_normalised(" \n ".join(voucher_units)))[1] - {"freeShipping"}
        if said - set(whole.services):
            whole = replace(whole, services=tuple(sorted(said | set(whole.services))))
    if voucher_units and not whole.measures and _UNITS.keys() & _LETTER_RUNS.findall(" ".join(voucher_units).lower()):
        # "uhm gloves isang box one hundred pieces twenty five pesos off voucher ...": one run-on sentence
        # holds the voucher and the sizes; a size is never a voucher's term (those are money and
        # percents), so when the rest states no size they are read there (only where a unit is written:
        # reading a sentence costs, and most vouchers' sentences hold none).
        sized = _read_units([_prepare(u) for u in voucher_units]).measures
        if sized:
            # As words too, as the request's own sentences say sizes ("500mass"), so the edit compares them.
            said_sizes = tuple(
                f"{v:g}{d}" for d, v in sorted(set(sized)) if d not in _COUNTS and f"{v:g}{d}" not in whole.words
            )
            whole = replace(
                whole,
                measures=tuple(sorted(set(sized))),
                words=whole.words + said_sizes,
                sequence=whole.sequence + said_sizes,
            )
    if cased and voucher_units:  # "buy LG appliances using a ₱500-off voucher": the name is in the voucher's sentence
        voucher_capitals = {c for unit in voucher_units for c in _capitals(unit)}
        if voucher_capitals - set(whole.capitals):
            whole = replace(whole, capitals=tuple(sorted(voucher_capitals | set(whole.capitals))))
    # Held for 100k problems at once: a product request buys its first head, and a list's details
    # matter only beside two heads or more; the item readings compare their words, not their heads.
    if problem.intent is Intent.product:
        whole = replace(whole, heads=whole.heads[:1])
    elif len(whole.heads) < 2:
        whole = replace(whole, details=())
    items: tuple[Reading, ...] = ()
    if problem.intent is Intent.shop and len(per_unit) > 1:
        items = tuple(replace(r, heads=(), details=(), capitals=()) for r in per_unit if r.words)
    fact = None
    if problem.knowledge is not None:
        fact = problem.knowledge.knowledge_attribute
    elif isinstance(problem.extra.get("Knowledge_Attribute"), str):
        fact = problem.extra["Knowledge_Attribute"]
    terms = None
    if problem.voucher is not None:
        v = problem.voucher
        terms = (v.voucher_type, v.threshold, v.discount_type, v.face_value, v.discount, v.cap, v.budget)
    clue = read_clue(request, _lemma, _a_word, _FRAME) if problem.intent is Intent.knowledge else None
    return Request(
        whole=whole,
        items=items,
        voucher=_read_voucher(voucher_units, request) if voucher_units else None,
        voucher_terms=terms,
        fact=" ".join(fact.lower().split()) if fact else None,
        gold=_gold(problem),
        rewards=problem.rewards,
        intent=problem.intent.value,
        text=_meaning_text(
            whole,
            request,
            query,
            voucher_units,
            riddle=problem.intent is Intent.knowledge,
            listed=problem.intent is Intent.shop,
        )
        + _home(clue),
        mentions_price="₱" in query or _PRICEY.search(query.lower()) is not None,
        purchase=tuple(sorted(_purchase(query))) if problem.intent is Intent.knowledge else (),
        clue=clue,
    )


def two_things_bought(a: Request, b: Request) -> bool:
    """Two product requests whose things bought WordNet knows as two ("bottle" / "tumbler"), or
    whose thing bought the reader did not find on one side: equal values do not make them one ask."""
    if a.intent != "product":
        return False
    if not a.whole.heads or not b.whole.heads:
        return True
    return lexicon.relation(a.whole.heads[0], b.whole.heads[0]) == "other"


def value_key(request: Request, least: int = 3) -> tuple[str, ...] | None:
    """Every value the request states (prices and measures in their roles, class values, services,
    names, the voucher's amounts), as one key; None below ``least`` values, which many requests share."""
    r = request.whole
    values = {
        *(f"p{d}{a:g}-{b:g}" for d, a, b in r.prices),
        *(f"m{d}{v:g}" for d, v in r.measures),
        *(f"c{c}:{w}" for c, w in r.classes if c != "scope"),
        *(f"s{s}" for s in r.services),
        *(f"n{n}" for n in r.names),
    }
    if request.voucher is not None:
        values.update(f"v{v:g}" for v in request.voucher[3])
    return tuple(sorted(values)) if len(values) >= least else None


def voucher_key(request: Request) -> tuple[str, ...] | None:
    """The voucher's amounts alone (its discount, threshold, cap) and the budget, when three or more:
    a rewording may say more or less about the product ("Furniture" / "furniture for our new condo")
    while the terms are copied number for number. The budget may be read as the request's price bound
    ("I won't go past 2,600 pesos"): in a voucher request both are the most the shopper pays. None
    below two of the voucher's own amounts."""
    if request.voucher is None or len(request.voucher[3]) < 2:
        return None
    amounts = {*request.voucher[3], *(value for direction, value, _ in request.whole.prices if direction != "gt")}
    return tuple(f"v{v:g}" for v in sorted(amounts)) if len(amounts) >= 3 else None


# A riddle's purchase: the noun phrase after a buying verb ("I want a vintage calendar from that
# year", "looking for a strap for the instrument ..."), else the phrase it opens with
# ("commemorative coin from the year ..."), up to the preposition that ties it to the answer.
_PHRASE_END = (
    r"(?=\s+(?:for|from|of|with|printed|that|which|featuring|showing|on|in|to|inspired|related|about|"
    r"celebrating|commemorating|representing|depicting|like|shaped|bearing|displaying|"
    # Taglish and Bisaya linkers: "keychain na hugis ...", "mug nga naay ...", "tote bag may print"
    r"na|nga|ng|may|naay|hugis|"
    # a relative clause or a participle that attaches a constraint: "a speaker having ...", "jeans
    # whose season is ...", "a caster sized 6 inch", "a tee listed as petite"
    r"having|whose|where|sized|listed|marked|labelled|labeled|described|sold|made|crafted|built|available|"
    # its price: "a canvas tote costing under ₱350"
    r"costing|priced|selling|worth|"
    # its size: "basketball shorts size L with ..."
    r"size)\b|"
    r"\s*[.,?!;:]|\s*$)"
)
_PHRASE = r"(?:a|an|the|some|one|my)?\s*(?:(?:set|pack|pair|box|bag|bundle|piece|bottle|jar|wheel|can|tube|bar) of\s+)?((?:[\w'-]+\s*?){1,4}?)"
_BUYING = re.compile(
    r"\b(?:pick out|pick|locate|wants?|buy|get|need|order|looking for|look for|searching for|search for|show me|"
    r"find|shopping for|(?:i'd|i would|id|would) like|send)"
    r"\s+(?:me\s+)?(?:to (?:buy|get|order|find|have|send)\s+)?(?!to\b)" + _PHRASE + _PHRASE_END
)
_OPENING = re.compile(r"^\s*" + _PHRASE + _PHRASE_END)
# The thing named first and wanted after: "...; a USB stick with that many gigabytes is what I need",
# "A mug bearing the year ... is what I'd like to buy" (the clue may come before it).
_WANTED_AFTER = re.compile(
    r"(?:^|[;:.!?]\s+)" + _PHRASE + _PHRASE_END + r"[^;:.!?]*?\s(?:is|are) (?:what|the one|the thing) (?:i|we)\b"
)
# The thing the answer is put on, where no buying verb names it: "its name should appear on a canvas
# tote", "should be the subject of a set of stickers", "printed on a mug".
_PUT_ON = re.compile(
    r"\b(?:appear|appears|appearing|printed|print it|go|goes|placed|shown|displayed|written|engraved|embroidered|"
    r"the subject|the design|the print)\s+(?:on|of)\s+"
    + _PHRASE
    + r"(?=\s+(?:under|below|within|for less|for no more|at most|not over)\b|"
    + _PHRASE_END[3:]
)
# A request opening with these is a question or a story, not the product's name.
_ASKING = frozenset(
    "what what's whats which who where when how in i i'd id i'm im i've ive i'll my we we're our can please".split()
)
_NOT_PRODUCT = frozenset({"one", "thing", "something", "item", "stuff", "gift", "product", "it", "him", "her", "them"})


def _purchase(query: str) -> frozenset[str]:
    text = " ".join(query.lower().split())
    found = _WANTED_AFTER.search(text) if " what " in text else None
    found = found or _BUYING.search(text)
    if found is None:
        put = _PUT_ON.search(text)
        found = put if put is not None and _words_of(put) else None
    for sentence in re.split(r"(?<=[?.!])\s+", text) if found is None else ():
        if sentence.split(" ", 1)[0] not in _ASKING:  # "... Mona Lisa? keychain souvenir from that city"
            found = _OPENING.match(sentence)
            break
    return _words_of(found) if found is not None else frozenset()


def _words_of(found: re.Match[str]) -> frozenset[str]:
    # A hyphenated word counts as its parts and as one word: "glow-in-the-dark" / "glow", "t-shirt" / "tshirt".
    tokens = re.findall(r"[a-z][a-z'-]*", found.group(1))
    words = {_lemma(w) for t in tokens for w in (*t.split("-"), t.replace("-", "")) if w}
    return frozenset(w for w in words if w not in _FRAME and w not in _NOT_PRODUCT and len(w) > 1)


_PRICEY = re.compile(  # one word boundary before the words that need one: five times faster than each its own
    r"₱|\$|budget|cheap|afford|expensive|thousand|"
    r"\b(?:php\b|pesos?\b|p ?\d|pric|spend|cost|pay\b|max\b|min\b|(?:under|below|above|over)\b(?!-)|less than\b|"
    r"more than\b|hundred)"
)


def _home(clue: Clue | None) -> str:
    """What a riddle's "our" names, for the meaning vector: "our country's longest river" reads like
    "the longest river in the Philippines" (the clue compares "our" itself, :func:`clues.clue_conflict`)."""
    if clue is None or not clue.ours or HOME & {w for run in clue.names for w in run} or HOME & set(clue.words):
        return ""
    return " philippines"


def _meaning_text(
    whole: Reading,
    request: Sequence[str],
    query: str,
    voucher_units: Sequence[str] = (),
    riddle: bool = False,
    listed: bool = False,
) -> str:
    """What the meaning vector reads: the request's content words (frame words, which every
    request shares, dropped: with mean pooling they pull any two requests together). A voucher
    request said in one sentence ("Buy a gaming headset ... using a ₱200 off platform voucher")
    has every word in its voucher part: then that part's content words, never the raw query,
    which reads unlike its own rewording's content words (cosine 0.33 for one split into sentences)."""
    # In a Taglish request, a Tagalog word no glossary turns into English ("kelan", "tungkol", "nilang") is
    # one the model reads as word pieces of nothing: left out, it reads as what it says in English. Not in
    # an English sentence, whose Filipino words name the thing ("a barong tagalog made of jusi"); not a
    # short word, as often a brand's letters ("LG"); not in a riddle, whose clue the veto reads loosely.
    taglish = not riddle and sum(t in tagalog.FUNCTION for t in " ".join(request).lower().split()) >= 2
    words = [
        w
        for w in whole.words
        if not w[0].isdigit()
        and w not in _VOUCHER_VOCABULARY
        and (not taglish or len(w) < 4 or w in whole.names or _known(w) or not _tagalog(w))
    ]
    if voucher_units:
        # The voucher's sentence often names what it buys ("Lucky Me noodles from one store, voucher
        # less thirty pesos ..."): its content words are the request's too. Its terms' vocabulary is
        # every voucher request's, so it is no part of what one means.
        said = set(words)
        words += [
            w
            for w in _read_units([_prepare(u) for u in voucher_units]).words
            if not w[0].isdigit() and w not in _VOUCHER_VOCABULARY and w not in said
        ]
    if not riddle and not listed and not any(lexicon.ware(w) for w in words):
        # What is bought is said only in the story beside the request ("Our rice cooker broke ... Please
        # find a 1.8 liter one below ₱2,000"): the story's content words are what the request means (a
        # list's items name themselves; a story beside one added words that merged two lists' vectors).
        said = set(words)
        told = [
            w
            for w in _read_units([_prepare(query)]).words
            if not w[0].isdigit() and w not in _VOUCHER_VOCABULARY and w not in said
        ]
        if any(lexicon.ware(w) for w in told):
            words += told
    if words:
        return " ".join(words)
    # Nothing but a voucher's terms: its words are all there is to compare.
    words = [w for w in whole.words if not w[0].isdigit()]
    if not words and voucher_units:
        words = [w for w in _read_units([_prepare(u) for u in voucher_units]).words if not w[0].isdigit()]
    return " ".join(words) if words else " ".join(request) or query


# The words of a voucher's terms, lemmatised as the readings hold them ("cap" is not one of them: a
# cap is also a thing bought).
_VOUCHER_VOCABULARY = frozenset(
    "voucher coupon off percent percentage discount min minimum spend max maximum use budget less cashback "
    "threshold order total valid promo code deduct apply exceed rule fixe fixed platform "
    # how a generator says a voucher works: "knocks ₱400 off", "kicks in once I spend", "cuts 20%"
    "knock kick cut slash shave waive subtract fee waiver newuser"
    # what the shopper saves: "can't save more than 150 pesos"
    " save saving".split()
)


_INCH_MARK = re.compile(r"(?<=\d)\s*(?:\"|”|''|-inch\b)")
_CLOSING_INCH = re.compile(r"(?<=\d) in(?=\s*(?:[,;.)]|$))")


def _inch(mark: re.Match[str]) -> str:
    """16" is 16 inch, unless the mark closes a quotation opened before it ('the "grade 2" variant')."""
    before = mark.string[: mark.start()]
    if mark.group(0).strip() == '"' and before.count('"') % 2 == 1:
        return mark.group(0)
    return " inch "


def _sequence(r: Reading) -> tuple[str, ...]:
    return r.sequence if r.sequence or len(r.units) < 2 else tuple(w for unit in r.units for w in unit)


def _merge(readings: Sequence[Reading]) -> Reading:
    """One reading of several sentences (each read once: a shop request's items are its sentences)."""
    if len(readings) == 1:
        return readings[0]
    return Reading(
        prices=tuple(sorted(b for r in readings for b in r.prices)),
        measures=tuple(sorted(m for r in readings for m in r.measures)),
        others=tuple(sorted(v for r in readings for v in r.others)),
        classes=tuple(sorted({c for r in readings for c in r.classes})),
        services=tuple(sorted({v for r in readings for v in r.services})),
        names=tuple(sorted({n for r in readings for n in r.names})),
        words=tuple(w for r in readings for w in r.words),
        units=tuple(r.sequence for r in readings),  # the whole sequence is their concatenation (_sequence)
        ruled_out=tuple(w for r in readings for w in r.ruled_out),
        capitals=tuple(sorted({w for r in readings for w in r.capitals})),
        heads=tuple(h for r in readings for h in r.heads),
        details=tuple(d for r in readings for d in r.details),
        unread=sum(r.unread for r in readings),
    )


_CASED = re.compile(r"[A-Za-z][A-Za-z0-9'’&-]*")


def _capitals(unit: str) -> tuple[str, ...]:
    """The words a sentence capitalises after its first ("Noise cancelling headphones from Bose",
    "Milo 1kg and Alaska powdered milk"): names, whatever the dictionary says of the word. None
    where the writer capitalises most words (a title-cased request marks no name)."""
    tokens = _CASED.findall(unit)
    upper = [k for k, t in enumerate(tokens) if k > 0 and t[0].isupper() and t.split("'")[0] not in ("I", "I’m")]
    if not upper or len(upper) * 2 > len(tokens) - 1:
        return ()
    found = set()
    for k in upper:
        if _shouted(tokens[k]) or tokens[k].lower() in regional.KIN:  # "for my Tatang", "SHIRT FOR MY TITO"
            continue
        for part in re.split(r"[-'’]", tokens[k].lower().replace("&", "and")):
            if (
                len(part) >= 2
                and part.isalpha()
                and part not in _FRAME
                and part not in _CLASS_OF
                and part not in _UNITS
            ):
                found.add(sys.intern(part))
    return tuple(sorted(found))


def _shouted(token: str) -> bool:
    """A common word or short form typed in capitals inside a sentence ("W/ FREE SF", "BT 5.3", "QTY 2",
    "COD"): said loudly, not a name. A brand that is also a word ("SHELL", "DOVE") stays one; a name no
    dictionary knows ("JBL") is read as a name by the words' reading anyway."""
    lower = token.lower()
    return (
        len(token) >= 2
        and token.isupper()
        and lower not in _BRAND_WORDS
        and (lower in _SHORT_FORMS or lower in CANONICAL or _a_word(lower))
    )


# Short forms shoppers type that no dictionary lists: shipping fee, quantity, currencies abroad.
_SHORT_FORMS = frozenset("sf qty ofw asap pls plz thx tnx ty approx sgd hkd usd aed sar qar kwd ntd myr".split())

_SPACED = re.compile(r"([,;:+()!?]|\.(?!\d))")


class _Bought(TypedDict, total=False):
    """What a sentence buys, as :class:`Reading` fields."""

    heads: tuple[str, ...]
    details: tuple[str, ...]
    unread: int


def _heads(unit: str, intent: Intent) -> _Bought:
    """What a sentence buys: a shop list's item heads and details, a product request's phrase heads;
    a riddle's purchase is read by :func:`_purchase`."""
    if intent is Intent.knowledge:
        return {}
    # Services are no things: "all with free shipping", "cash on delivery".
    text, _ = mark_services(_SPACED.sub(r" \1 ", f" {_digits(unit.lower())} "))
    if intent is not Intent.product:
        heads, details, unread = item_heads(text, _lemma, _not_a_head, _FRAME, _unread, intent is Intent.shop)
        return {"heads": heads, "details": details, "unread": unread}
    return {"heads": phrase_heads(text, _lemma, _not_a_head, first=True)}


def _unread(token: str) -> bool:
    """A word of four letters or more that is no frame word and that neither the dictionary nor a
    glossary reads: another language's name for a thing ("cubiertos"), or a brand's ("Skyflakes")."""
    word = token.strip("'’.-")
    if len(word) < 4 or not word.isalpha() or word in _FRAME:
        return False
    lemma = _lemma(word)
    return lemma not in _FRAME and not (_known(word) or _known(lemma))


def _not_a_head(word: str, lemma: str) -> bool:
    """A word that cannot be the thing bought: a frame word, a closed-class value, a unit, a name."""
    return (
        lemma in _FRAME
        or word in _FRAME
        or lemma in _CLASS_OF
        or word in _UNITS
        or word in _SIZE_LETTERS
        or word in _BRAND_WORDS
        or lemma in _VOUCHER_VOCABULARY  # "₱180 off": a voucher's term, whatever sentence holds it
        or not (_known(word) or _known(lemma))  # "kawali" reads as "pan" (the Tagalog glossary)
    )


_DIMENSIONS = re.compile(r"(\d)\s*x\s*(?=\d)")
_GLUED_INCH = re.compile(r"(?<=\d)in(?= )")
_TIMES_COUNT = re.compile(r"(?<![\w.]) ?x(\d+)(?= )(?! (?:packs?|boxe?s|sets?|bundles?|cases?|rolls?|dozens?) )")
_LENGTH_UNIT = "|".join(sorted((w for w, (d, _) in _UNITS.items() if d == "length"), key=len, reverse=True))
_SIDES = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)((?: (?:x|by) \d+(?:\.\d+)?){1,2}) (" + _LENGTH_UNIT + r"|in)(?= )")


def _each_side(found: re.Match[str]) -> str:
    unit = "inch" if found.group(3) == "in" else found.group(3)  # after sides, "in" is inches
    sides = [found.group(1), *re.findall(r"\d+(?:\.\d+)?", found.group(2))]
    return " x ".join(f"{side} {unit}" for side in sides)


_NO_CHARGE = re.compile(
    r" (?:(?:is |are )?(?:done )?at no (?:extra |additional )?|free of |without (?:any )?)charge(?= )"
)
_AMPERSAND = re.compile(r"(?<=\w)&(?=\w)")


# Words a typo must not hide: the closed classes' values, the services' words and the synonyms'
# words ("stainles" is "stainless", "offical store" the official store, "bluetoth" "bluetooth").
_SPELT = tuple(
    sorted(
        {w for w in _CLASS_OF if len(w) >= 5 and w.isalpha()}
        | {
            w
            for phrases in _SERVICE_PHRASES.values()
            for p in phrases
            for w in p.split()
            if len(w) >= 5 and w.isalpha()
        }
        | {w for w in CANONICAL if len(w) >= 5 and w.isalpha() and w not in tagalog.GLOSSARY}
    )
)


@lru_cache(maxsize=16_384)  # bounded: 100k requests hold many distinct long words
def _respelt(word: str) -> str:
    """``word`` (seven letters or more), or the one word of :data:`_SPELT` it is a typo of (one edit;
    two in a word of nine letters or more). A word that is a dictionary lemma itself, or the
    glossary's, is never respelt (an inflection WordNet's rules would accept, "shiping" from "ship",
    is)."""
    if len(word) < 7 or not word.isalpha() or word in _FRAME or word in tagalog.GLOSSARY:
        return word  # shorter words are one letter from too many others ("seater" / "sweater")
    from rapidfuzz import process
    from rapidfuzz.distance import OSA

    found = process.extractOne(word, _SPELT, scorer=OSA.distance, score_cutoff=1 if len(word) < 9 else 2)
    # The dictionary is asked last, for the few words a typo away from one of ours (it reads files).
    if found is None or found[0] == word or any(lemma == word for _, lemma in lexicon.base_forms(word)):
        return word
    return found[0]


# Not "volume", "size": the arena's own generator writes "a toner whose volume is 50 milliliters" beside
# "a 50ml volume", and the word is kept on both.
_WHOSE_IS = re.compile(
    r" (?:whose|with a|with an|and its|its) (?:colou?r|capacity|material|fabric|wood|length|width|height|weight|"
    r"shade|finish|storage|memory) (?:is|are|being)(?= )"
)
_PAYS_BACK = re.compile(r" (?:pays|pay|paid|paying|gives|give|gave|given|giving) (?:me )?back(?= )")
_RUNS_AT = re.compile(
    r" (?:running|runs|refreshing|refreshes|rated|clocked|spinning|spins|operating|operates|working|works) at(?= \d)"
)
_USE_IT = re.compile(r" (?:to )?use (?:it|them|this|that|the voucher|the coupon|the code)(?= )")
# A verb where the seed has an adjective or a bare noun: "works on induction" / "induction-ready" /
# "induction compatible", "rated for a 30 sqm room" / "for a 30 sqm room", "backed by a warranty" /
# "with a warranty", "measuring 28 cm" / "28 cm".
_DOES_IT = re.compile(
    r" (?:that |which )?(?:works?|working|usable) on(?= )| (?:rated|backed|covered)(?= (?:for|by|up to) )"
    r"| measuring(?= )| (?:compatible|ready)(?= )"
)
# The brand preferred said beside the one passed over: "Kyowa instead of Hanabishi", "Marshall over Bose any
# day", "QCY rather than Soundcore": what follows is ruled out, as after "not".
_PASSED_OVER = re.compile(r" (?:instead of|rather than|over(?= [a-z0-9]+ (?:any day|anytime|every time|always)\b))")
_DOES_IT_CUE = re.compile(r" (?:work|usable|rated|backed|covered|measuring|compatible|ready)")


def _prepare(unit: str) -> str:
    text = unit.replace("₱", " php ").replace("$", " php ")
    if "&" in text:
        text = _AMPERSAND.sub("and", text)  # "H&M" is one name, "handm"
    if '"' in text or "”" in text or "''" in text or "-inch" in text:
        text = _INCH_MARK.sub(_inch, text)  # 16" is 16 inch
    if " in" in text:  # "Samsung 4K smart TV 55 in; ...": a number's "in" closing its clause is its inches
        text = _CLOSING_INCH.sub(" inch", text)
    padded = " " + " ".join(_value_respelt(_respelt(w)) for w in _normalised(text).split()) + " "
    if "in " in padded:  # "16in stand fan" is 16 inch
        padded = _GLUED_INCH.sub(" inch ", padded)
    if "x" in padded:  # "140x230cm" is 140 by 230 cm; "bulb x4" is 4 pieces
        padded = _TIMES_COUNT.sub(r" \1 pieces ", _DIMENSIONS.sub(r"\1 x ", padded))
    padded = _DIGIT_LETTER.sub(r"\1 \2", padded)
    if " x " in padded or " by " in padded:  # "60 x 75 inches", "10 by 10 by 5 cm": each side is in the unit
        padded = _SIDES.sub(_each_side, padded)
    padded = JOINED_TABLE(padded)
    if " set to " in padded:  # "a car air freshener set to 2pcs": the option's label, not a set of items
        padded = padded.replace(" set to ", " to ")
    if " use " in padded:  # "I'd like to use it on a vacuum cleaner": the voucher applied, not a use asked
        padded = _USE_IT.sub(" ", padded)
    if " whose " in padded:  # "a table whose wood is oak", "whose capacity is 1.5 litres": the value
        padded = _WHOSE_IS.sub(" ", padded)
    if " back " in padded:  # "pays back five percent": a cashback
        padded = _PAYS_BACK.sub(" cashback ", padded)
    if " at " in padded:  # "refreshing at 144 Hz", "running at 165Hz": the value, however it is said to run
        padded = _RUNS_AT.sub(" at ", padded)
    if _DOES_IT_CUE.search(padded):
        padded = _DOES_IT.sub(" ", padded)
    if " instead " in padded or " rather " in padded or " over " in padded:
        padded = _PASSED_OVER.sub(" not ", padded)  # "Kyowa instead of Hanabishi": Hanabishi ruled out
    return padded


# What a price bound holds for: each item ("each under ₱1,000", "₱900 apiece") or the whole order ("all
# three together under ₱1,000", "for the pair"). Compared only where both sides say it.
_EACH = re.compile(r" (?:each|apiece|per (?:piece|item|unit|pc)|a piece|(?:every|single) (?:item|piece|one|product)) ")
_WHOLE = re.compile(
    r" (?:total|altogether|together|combined|in all|all in|whole order|for (?:all|everything|both|the lot)"
    r"|for the (?:pair|set|lot|\d+|whole))(?= )"
)


def _bound_scope(prices: Sequence[Bound], sequence: Sequence[str]) -> set[tuple[str, str]]:
    if not prices:
        return set()
    said = " " + " ".join(sequence) + " "
    each = _EACH.search(said) is not None
    whole = _WHOLE.search(said) is not None
    return {("scope", "each")} if each and not whole else {("scope", "whole")} if whole and not each else set()


def _read_units(units: Sequence[str]) -> Reading:
    prices: list[Bound] = []
    measures: list[tuple[str, float]] = []
    others: list[float] = []
    services: set[str] = set()
    words: list[str] = []
    sequence: list[str] = []  # every token in order, frame words too: how far the sentence was edited
    size_words: list[str] = []
    ruled_out: list[str] = []
    for padded in units:
        padded, stated = mark_services(padded, "svc")
        services |= stated
        if "charge " in padded:  # "installation done at no charge": what a service sentence left of it
            padded = _NO_CHARGE.sub(" ", padded)
        if " p" in padded:  # "from php 900 up to php 1500": the range reads its amounts side by side
            padded = _CURRENCY_PREFIX.sub(" ", padded)
        budget = _BUDGET.search(padded) is not None
        padded = mark_ranges(padded)
        padded = PRICE_TABLE(padded)
        tokens = padded.split()
        used = _excluded(tokens)  # "not leather", "I don't have a card": what the request rules out
        ruled_out.extend(tokens[k] for k in used if tokens[k].isalpha())
        for i, token in enumerate(tokens):
            if i in used:
                continue
            if token[0].isdigit() and i > 0 and _ORDINAL.fullmatch(token):
                # "the 16th track", "the ninth track" (text2num writes 9th): a number in a riddle;
                # a sentence opening with one ("First, a ...") is the list frame.
                others.append(float(token[:-2]))
                sequence.append(token)
                continue
            if before_is_size(tokens, i) and token in _SIZE_LETTERS:
                # "size L": a size, not litres; and the size "large" says ("large-size rash guard").
                token = _SIZE_WORDS.get(token, token)
                size_words.append(token)
                words.append(token)
                sequence.append(token)
                continue
            if not token[0].isdigit() or not _NUMBER.fullmatch(token):
                if token.startswith("svc"):
                    sequence.append(token)
                elif not token[0].isdigit() and token not in ("lt", "gt", "btw"):
                    words.append(token)
                    sequence.append(token)
                continue
            value = float(token)
            after = tokens[i + 1] if i + 1 < len(tokens) else ""
            before = tokens[i - 1] if i > 0 else ""
            if after in _LIST_NOUNS or before == "all":
                continue  # "I'd like to buy four things", "all three of these": the list's frame
            if after in _UNITS and not (after == "m" and i + 2 < len(tokens) and tokens[i + 2] == "php"):
                dimension, factor = _UNITS[after]
                measures.append((dimension, round(value * factor, 6)))
                words.append(f"{value * factor:g}{dimension}")  # "0.75 l" and "750 ml" read alike
                sequence.append(words[-1])
                used.add(i + 1)
                continue
            if before in _SEATS_BEFORE:  # "a sofa that seats two" is a 2-seater
                measures.append(("seats", value))
                words.append(f"{value:g}seats")
                sequence.append(words[-1])
                continue
            if before in _COUNT_BEFORE or (before == "of" and i > 1 and tokens[i - 2] in _COUNT_BEFORE):
                measures.append(("pieces" if before not in ("pair", "pairs") else "pairs", value))
                words.append(f"{value:g}pieces")
                sequence.append(words[-1])
                continue
            direction = _direction_before(tokens, i)
            if direction == "btw":
                second = _next_number(tokens, i)
                if second is not None:
                    used.add(second)
                    low, high = sorted((value, float(tokens[second])))
                    prices.append(("btw", low, high) if low > 0 else ("lt", high, 0.0))
                    # Amounts only: directions are compared above, and "3" is "3" in any role.
                    sequence.extend(f"{v:g}" for v in prices[-1][1:] if v)
                    continue
                direction = None
            if direction is None:
                direction = _direction_after(tokens, i)
            if direction in ("lt", "gt") and _negated(tokens, i):  # "not spend 300 or more": below 300
                direction = "gt" if direction == "lt" else "lt"
            currency = after in _CURRENCY or before in _CURRENCY
            if direction is None and currency:
                direction = "lt" if budget else "eq"
            if direction is None and _budget_before(tokens, i):  # "budget is 1200", "my limit is 1,200"
                direction = "lt"
            if direction is None:
                if value != 1:  # "one" is mostly "a"
                    others.append(value)
                words.append(token)
                sequence.append(token)
                continue
            prices.append((direction, value, 0.0))
            sequence.append(f"{value:g}")
    # Interned: 100k requests share a few thousand words, held once (a token is a pointer, not a string).
    # A frame word stays itself: its lemma may be another word ("og", Bisaya's "a", lemmatises to "oganesson").
    lemmas = [_lemma(w) if not w[0].isdigit() and w not in _FRAME else sys.intern(w) for w in words]
    # A Visayan word is no English word: "sang" is not "sing", "og" not "oganesson".
    lemmatised = [_lemma(w) if w.isalpha() and w not in _VISAYAN else sys.intern(w) for w in sequence]
    content = [w for w in lemmas if w[:1].isdigit() or (w not in _FRAME and len(w) > 1)]
    classes = sorted(
        {(_CLASS_OF[w], w) for k, w in enumerate(content) if w in _CLASS_OF and _a_value(content, k)}
        | {("size", w) for w in size_words}
        | _bound_scope(prices, sequence)
    )
    names = sorted(
        {
            w
            for w, lemma in zip(words, lemmas, strict=True)
            if w.isalpha()
            and len(w) >= 2
            and lemma not in _FRAME
            and lemma not in _CLASS_OF
            and w not in _UNITS
            and (w in _BRAND_WORDS or not _a_word(w))
            and w not in CANONICAL  # a short form the synonyms spell out ("bt", "blk") is that word, no name
            and w not in _VOUCHER_VOCABULARY  # "Cashback 10%." said in a sentence of its own
            and not _linked_gloss(w)
            and w not in _SHORT_FORMS
            and w not in regional.KIN
        }
    )
    return Reading(
        prices=tuple(sorted(prices)),
        measures=tuple(sorted(measures)),
        others=tuple(sorted(others)),
        classes=tuple(classes),
        services=tuple(sorted(services)),
        names=tuple(names),
        words=tuple(content),
        sequence=tuple(lemmatised),
        ruled_out=tuple(_lemma(w) for w in ruled_out if w not in _FRAME),
    )


# Colour words that only shade another colour ("light blue", "dark green"); alone they say weight or
# brightness ("a light, foldable stroller", "warm white light").
_SHADES = frozenset({"light", "dark"})


def _linked_gloss(word: str) -> bool:
    """A glossary word with Tagalog's linker glued on ("relong pilak", "sabong panligo"): a word, no name."""
    return word.endswith("ng") and (word[:-2] in tagalog.GLOSSARY or word[:-1] in tagalog.GLOSSARY)


# A value's word that opens a compound naming another thing: a "solid state" drive has no pattern.
_NOT_A_VALUE_BEFORE = frozenset({("solid", "state")})


def _a_value(content: Sequence[str], k: int) -> bool:
    if tuple(content[k : k + 2]) in _NOT_A_VALUE_BEFORE:
        return False
    if content[k] not in _SHADES:
        return True
    near = [*content[max(0, k - 1) : k], *content[k + 1 : k + 2]]
    return any(_CLASS_OF.get(w) == "colour" and w not in _SHADES for w in near)


# Words that rule out what follows them ("fabric, not leather", "I don't have a card", "without a
# lid"): the words ruled out are not asked for. Up to three words, to a number or a bound. Not "no":
# "no warranty" and "No Brand" are values a request asks for.
_EXCLUDING = frozenset("not dont doesnt without except excluding never".split())
# "no pink" and Tagalog's "not" ("basta hindi black", "wag pink") rule out the value right after it; before other
# words it says more ("hindi na kailangan ng COD": no longer needed), which the services read.
_EXCLUDING_VALUE = frozenset("no hindi wag huwag ayaw ayoko".split())
_ANY = frozenset("anything any everything kahit".split())  # "anything but pink"
_WHO_DOES_NOT = frozenset(
    "niya ko nila namin natin mo ni ng sa kay si yung ang po talaga misis mister asawa anak".split()
)


def _excluded(tokens: list[str]) -> set[int]:
    out: set[int] = set()
    for i, token in enumerate(tokens):
        if token in _EXCLUDING_VALUE:
            # Tagalog puts who does not want it between ("ayaw niya ng itim", "ayaw ni misis ng pink").
            k = i + 1
            while k < min(len(tokens), i + 5) and (tokens[k] in _WHO_DOES_NOT or tokens[k] in regional.KIN):
                k += 1
            if k < len(tokens) and CANONICAL.get(tokens[k], tokens[k]) in _CLASS_OF:
                out.add(k)
        elif token in _EXCLUDING or (token == "but" and i > 0 and tokens[i - 1] in _ANY):
            for k in range(i + 1, min(len(tokens), i + 4)):
                word = tokens[k]
                if word[0].isdigit() or word in ("lt", "gt", "btw", "but") or word.startswith("svc"):
                    break
                out.add(k)
                if CANONICAL.get(word, word) in _CLASS_OF:  # "don't want plastic, stainless ...": one value
                    break
                if word.isalpha() and (
                    word in _BRAND_WORDS or not _a_word(word)
                ):  # "not Romoss, Baseus lang": one name
                    break
    return out


# A request corrected as it is typed ("size M... no wait, get the H&M one", "Logitech combo...
# actually make it a Rapoo", "Logitech, ay mali, Rapoo pala", "Acer, este, Samsung"): what the correction states replaces what came before it.
_CORRECTION = re.compile(
    r"(?:^|(?<=[\s,.;:!?—–]))(?:no wait|wait|actually|scratch that|on second thought|or rather|correction|"
    r"i mean|make (?:it|that)|ay mali|mali pala|este(?=\s*,))\b",
    re.IGNORECASE,
)


def _at_corrections(request: Sequence[str]) -> list[str]:
    """The request's sentences, one cut where a correction begins."""
    out: list[str] = []
    for unit in request:
        found = _CORRECTION.search(unit)
        if found is None or found.start() == 0:
            out.append(unit)
        else:
            out.extend(part for part in (unit[: found.start()], unit[found.start() :]) if part.strip())
    return out


def _corrected(readings: list[Reading], units: Sequence[str]) -> list[Reading]:
    """Each correction's names, classes, sizes and bounds replace those of the units before it."""
    if not any(_CORRECTION.match(unit.strip()) for unit in units[1:]):
        return readings
    out = list(readings)
    for k, unit in enumerate(units):
        if k == 0 or not _CORRECTION.match(unit.strip()):
            continue
        fix = readings[k]
        stated = {c for c, _ in fix.classes}
        dimensions = {d for d, _ in fix.measures}
        for j in range(k):
            earlier = out[j]
            out[j] = replace(
                earlier,
                names=() if fix.names or fix.capitals else earlier.names,
                capitals=() if fix.names or fix.capitals else earlier.capitals,
                classes=tuple(c for c in earlier.classes if c[0] not in stated),
                measures=tuple(m for m in earlier.measures if m[0] not in dimensions),
                prices=() if fix.prices else earlier.prices,
                # the name corrected away is no word of the request either ("Nike, I mean Adidas, slides")
                words=tuple(
                    w
                    for w in earlier.words
                    if not ((fix.names or fix.capitals) and (w in earlier.names or w in earlier.capitals))
                ),
            )
    return out


_LIST_NOUNS = frozenset({"things", "items", "products", "parts"})
_SIZE_WORDS = {"s": "small", "m": "medium", "l": "big"}  # "large" reads as "big" (the synonym table)
_SIZE_LETTERS = frozenset("xxs xs s m l xl xxl xxxl 2xl 3xl 4xl 5xl".split())


def before_is_size(tokens: list[str], i: int) -> bool:
    return i > 0 and tokens[i - 1] in ("size", "sizes")


def _direction_before(tokens: list[str], i: int) -> str | None:
    j = i - 1
    while j >= 0 and i - j <= 4:
        if tokens[j] in ("lt", "gt", "btw"):
            return tokens[j]
        if tokens[j] not in _FILLER:
            return None
        j -= 1
    return None


# A bound turned around by a negation before it: "nothing cheaper than 44" is 44 or more, "don't
# show anything at 1000 or above" below 1000. The negation must govern the bound: right before
# its direction ("not under"), or with a verb of paying, costing or showing between ("won't go
# above", "neither should cost ... or more"); "no logo, under 1000" turns nothing around.
_NEGATIONS = frozenset(
    "not dont doesnt didnt wont cant cannot never nothing neither nor none no without shouldnt mustnt isnt "
    "skip avoid".split()  # "skip anything ₱500 and up": below 500
)
_GOVERNING = frozenset(
    """spend spending pay paying go going exceed exceeding cost costs costing show see want priced be is
    buy get anything something budget""".split()
)
_BETWEEN = frozenset(
    "to i we it me want wants would should will be at for a an the of item items option options one them these "
    "php peso pesos p just only really even ever more much single".split()
)
_DOUBLE_NEGATION = frozenset({"mind", "care", "matter"})  # "I don't mind paying over 500"


# A bound ruled out after it: "a price of ₱2,000 or more is not acceptable", "anything at or above 12k
# is ruled out", "₱1,500 or more is out of the question": the bound the buyer takes is the other side.
_RULED_OUT_AFTER = re.compile(
    r"(?:(?:is|are|would|will|be|being|simply|definitely|totally|completely|just|also|considered|strictly) )*"
    r"(?:not acceptable|unacceptable|ruled out|out of the question|excluded|off the table|not an option|"
    r"not okay|not ok|too much|too expensive|too pricey|a no go|no go|not allowed|rejected|a dealbreaker|"
    r"a deal breaker|(?:out of|over|beyond) (?:my|the|our) budget|(?:a )?no for me|a no|"
    r"(?:i|we|ill|i will|id|i would|we will|well) (?:pass|skip)|(?:im|i am) scrolling past|wont fly|a waste)(?: |$)"
)


def _ruled_out_after(tokens: list[str], i: int) -> bool:
    j = i + 1
    while j < len(tokens) and (tokens[j] in ("lt", "gt") or tokens[j] in _CURRENCY):
        j += 1
    return j < len(tokens) and _RULED_OUT_AFTER.match(" ".join(tokens[j : j + 8])) is not None


def _negated(tokens: list[str], i: int) -> bool:
    if _ruled_out_after(tokens, i):
        return True
    start = i - 1 if i > 0 and tokens[i - 1] in ("lt", "gt") else i
    for k in range(start - 1, max(-1, start - 7), -1):
        word = tokens[k]
        if word[0].isdigit() or word in ("lt", "gt", "btw") or word in _DOUBLE_NEGATION:
            return False
        if word in _NEGATIONS:
            # Only verbs and function words between: "not expandable, priced above 1303" negates
            # the adjective, not the bound.
            between = tokens[k + 1 : start]
            return not between or (
                any(w in _GOVERNING for w in between) and all(w in _GOVERNING or w in _BETWEEN for w in between)
            )
    return False


# A budget named without a currency: "budget is 1200", "spending limit 1.2k", "max spend 1500".
_BUDGET_WORDS = frozenset({"budget", "limit", "spend", "spending", "afford"})


def _budget_before(tokens: list[str], i: int) -> bool:
    for k in range(i - 1, max(-1, i - 4), -1):
        if tokens[k][0].isdigit():
            return False
        if tokens[k] in _BUDGET_WORDS:
            return True
    return False


def _direction_after(tokens: list[str], i: int) -> str | None:
    """A direction written after the amount: "300 pesos or more" (read as "300 pesos gt")."""
    for j in range(i + 1, min(len(tokens), i + 3)):
        if tokens[j] in ("lt", "gt"):
            return tokens[j]
        if tokens[j] not in _CURRENCY:
            return None
    return None


def _next_number(tokens: list[str], i: int) -> int | None:
    for j in range(i + 1, min(len(tokens), i + 4)):
        if tokens[j][0].isdigit() and _NUMBER.fullmatch(tokens[j]):
            return j
    return None


_SHOP_SCOPE = re.compile(
    r"\b(?:same|one|1|single|a|particular|specific|that|this) (?:shop|store|seller)\b|\bshop voucher\b|"
    r"\bshop specific\b|\bstore specific\b|\bfrom (?:that|this|the) (?:shop|store|seller)\b|"
    r"\b(?:iisang|isang) (?:shop|store|seller|tindahan)\b"
)
_ALL_SCOPE = re.compile(
    r"\b(?:all|every|any|each) (?:products?|items?|shops?|stores?|sellers?|purchases?|orders?)\b|"
    r"\bplatform\b|\bsitewide\b|\bstorewide\b|\banything\b|\beverything\b|"
    r"\b(?:different|multiple|several|various|separate|other) (?:shops|stores|sellers)\b|"
    r"\bkahit (?:anong|saang|saan|ano) (?:shop|store|tindahan|seller)\b"
)


def _scope(text: str) -> str | None:
    return "shop" if _SHOP_SCOPE.search(text) else "all" if _ALL_SCOPE.search(text) else None


_PERCENT = re.compile(r"\b(?:percent|per cent|percentage)\b")
_FIXED = re.compile(r"\b(?:fixed|flat|off)\b")


# What the voucher gives: coins or cash back after paying, free shipping, or money off the order.
_CASHBACK = re.compile(r" (?:cash ?back|coins?|(?:pays?|paid|gives?|given) (?:me )?back) ")
_SHIPPING_VOUCHER = re.compile(
    r" (?:free )?(?:shipping|delivery) (?:voucher|coupon|promo)s? | fsv | voucher for free (?:shipping|delivery) "
    r"| waives? the (?:shipping|delivery)| (?:shipping|delivery)(?: fee)? waiver "
)
# "costing less than 6k", "six hundred pesos or less" are bounds
_MONEY_OFF = re.compile(r" (?:off|discount|minus) |(?<! or) less (?!than )")
_FREE_SHIPPING_SAID = re.compile(r" free (?:ship|shipping|delivery|sf) ")
_OFF_SHIPPING = re.compile(r" off (?:the |on |on the |sa )?(?:shipping|delivery|sf) ")
# "no minimum", "walang minimum spend": a threshold of zero, against another's stated minimum.
_NO_CAP = re.compile(r" (?:no|walang|without a|without) (?:cap|max|maximum|limit)(?: on the discount)? | uncapped ")
_NO_MINIMUM = re.compile(
    r" (?:no|walang|without a|without) min(?:imum)?(?: spend| order| purchase)? "
    r"| (?:regardless of|no matter) (?:how much|what) (?:i|you|we) (?:spend|buy|order) | whatever (?:i|you|we) spend "
)

# scope, type, benefit, amounts, and the amounts whose role the text says: ("cap", 150.0), ("min", 500.0)
Voucher = tuple[str | None, str | None, str | None, tuple[float, ...], tuple[tuple[str, float], ...]]
# "capped at ₱150", "max discount ₱150"; "min spend ₱500", "minimum of ₱500" (normalised: "php 150"). A
# number's role is read only where a role word stands right before it ("up to ₱800" is as often the budget),
# and never a number the budget follows: punctuation gone, "(₱300 minimum), ₱500 budget" reads "minimum 500 budget".
_ROLES = (
    (
        "cap",
        re.compile(
            r" (?:capped at|cap(?: of| at)?|max(?:imum)? discount(?: of)?) (?:php )?(\d+(?:\.\d+)?) (?!(?:\w+ )?budget)"
        ),
    ),
    (
        "min",
        re.compile(
            r" (?:min(?:imum)?(?: spend| order| purchase)?(?: of)?) (?:php )?(\d+(?:\.\d+)?) (?!(?:\w+ )?budget)"
        ),
    ),
)


def _read_voucher(units: Sequence[str], request: Sequence[str] = ()) -> Voucher:
    # A numbered list of rules ("1. The voucher applies ...\n2. It is valid only ...") numbers its
    # lines, not the voucher's terms.
    text = _normalised(" \n ".join(_BULLET.sub("\n", u).replace("₱", " php ") for u in units))
    text = _DIGIT_LETTER.sub(r"\1 \2", text)
    scope = _scope(text)
    if scope is None and request:
        # Where the voucher's sentences say nothing of the shops, the request's may ("okay to combine
        # different shops, ₱60 off on ₱600 min"): the voucher must hold for the shops the request buys from.
        scope = _scope(_normalised(" \n ".join(request)))
    kind = "percent" if _PERCENT.search(text) else "fixed" if _FIXED.search(text) else None
    # Free shipping said among the voucher's terms is a voucher's benefit; beside money off ("₱150 off
    # min ₱999, stacked with free ship", "two vouchers: free shipping and ₱50 off") both are given,
    # unless the money off is the shipping's ("₱40 off shipping").
    # Money off the shipping fee ("₱50 off shipping") is a shipping voucher, whatever else it says.
    off_shipping = _OFF_SHIPPING.search(text) is not None
    shipping = (
        off_shipping or _SHIPPING_VOUCHER.search(text) is not None or _FREE_SHIPPING_SAID.search(text) is not None
    )
    off = _MONEY_OFF.search(text) is not None and not off_shipping
    benefit = (
        "cashback"
        if _CASHBACK.search(text)
        else "off and shipping"
        if shipping and off
        else "shipping"
        if shipping
        else "off"
        if off
        else None
    )
    words = text.split()
    # "a 5 kg sack of rice" said in the voucher's sentence is the product's size, no term of it.
    numbers = [
        float(w)
        for k, w in enumerate(words)
        if w[0].isdigit() and _NUMBER.fullmatch(w) and w != "1" and (k + 1 == len(words) or words[k + 1] not in _UNITS)
    ]
    if _NO_MINIMUM.search(text):
        numbers.append(0.0)
    if _NO_CAP.search(text):
        numbers.append(-1.0)  # "no cap" is a term: beside "capped at ₱150" it is another voucher
    roles = tuple(sorted({(role, float(m.group(1))) for role, found in _ROLES for m in found.finditer(text)}))
    return scope, kind, benefit, tuple(sorted(numbers)), roles


def _gold_values(rewards: Sequence[ProductReward]) -> dict[str, set[str]]:
    """The rewards' constraints by key (price interval, attributes, options, services), values normalised."""
    values: dict[str, set[str]] = {}
    for reward in rewards:
        interval = price_interval(reward.price)
        if interval is not None:
            values.setdefault("price", set()).add(f"{interval[0]:g}-{interval[1] if interval[1] is not None else ''}")
        for entry in reward.attributes:
            for key, vs in entry.items():
                values.setdefault(f"attr:{key.lower()}", set()).update(" ".join(v.lower().split()) for v in vs)
        for option in reward.sku_options:
            for key, value in option.items():
                values.setdefault(f"sku:{key.lower()}", set()).add(" ".join(str(value).lower().split()))
        if reward.service:
            values.setdefault("service", set()).update(reward.service)
    return values


def _gold(problem: Problem) -> bytes | None:
    if not problem.rewards:
        return None
    values = _gold_values(problem.rewards)
    # Per key a 4-byte digest of the key and an 8-byte digest of its values, concatenated in key
    # order: about 60 bytes a problem instead of a set a key, and comparable key by key.
    return b"".join(
        hashlib.blake2b(key.encode(), digest_size=4).digest()
        + hashlib.blake2b(repr(sorted(values[key])).encode(), digest_size=8).digest()
        for key in sorted(values)
    )


def _same_words(a: Reading, b: Reading) -> bool:
    wa, wb = Counter(a.words), Counter(b.words)
    only_a, only_b = _unspelt(sorted((wa - wb).elements()), sorted((wb - wa).elements()), a.words, b.words)
    return not (only_a and only_b) and len(only_a) + len(only_b) <= 1


_PRICE_KEY = hashlib.blake2b(b"price", digest_size=4).digest()
_SERVICE_KEY = hashlib.blake2b(b"service", digest_size=4).digest()
_VALUE_WORD = re.compile(r"[a-z]{3,}|\d+")


def _states(request: Request, key: bytes, values: str) -> bool:
    """Whether ``request``'s text states the gold constraint ``key`` (with these values' words)."""
    if key == _PRICE_KEY:
        return bool(request.whole.prices) or request.mentions_price
    if key == _SERVICE_KEY:
        return bool(request.whole.services)
    r = request.whole
    said = set(r.sequence) | set(r.words)
    # Numbers as the reading holds them: "12v" is said by "12 volt" (a measure), "50-piece" by a count.
    said |= {f"{v:g}" for v in (*r.others, *(v for _, v in r.measures), *(v for _, v, _ in r.prices))}
    said |= {w.rstrip("abcdefghijklmnopqrstuvwxyz") for w in r.words if w[:1].isdigit()}
    return any(w in said or _lemma(w) in said for w in _VALUE_WORD.findall(values) if w not in _FRAME)


def _unsaid_key(a: Request, b: Request) -> str | None:
    """A gold key ``a``'s reward constrains, ``b``'s does not: another ask when ``a``'s text states
    it and ``b``'s does not (the shorter asks less). Where ``b``'s text states it, ``b``'s reward
    just encodes less; where ``a``'s text does not, it is a detail of ``a``'s product: the text decides."""
    assert a.gold is not None and b.gold is not None
    theirs = _gold_keys(b.gold)
    missing = [key for key in _gold_keys(a.gold) if key not in theirs]
    if not missing:
        return None
    words = {
        hashlib.blake2b(key.encode(), digest_size=4).digest(): " ".join(sorted(values))
        for key, values in _gold_values(a.rewards).items()
        if key not in ("price", "service")
    }
    for key in missing:
        values = words.get(key, "")
        if _states(a, key, values) and not _states(b, key, values):
            return f"gold constraints differ (a key constrained and said on one side only: {values or 'price/service'})"
    return None


def _gold_keys(gold: bytes) -> dict[bytes, bytes]:
    return {gold[k : k + 4]: gold[k + 4 : k + 12] for k in range(0, len(gold), 12)}


# --- conflicts -------------------------------------------------------------------------------


def conflict(a: Request, b: Request) -> str | None:
    """Why ``a`` and ``b`` are two problems (a confident conflict), or None when nothing says so."""
    if a.fact is not None and b.fact is not None and a.fact != b.fact:
        return f"fact {a.fact!r} / {b.fact!r}"
    if a.voucher_terms is not None and b.voucher_terms is not None and a.voucher_terms != b.voucher_terms:
        return "voucher terms"
    if a.gold is not None and b.gold is not None and a.gold != b.gold:
        # Gold constraints the scorer checks: a key both rewards constrain with other values is
        # another ask. A key one reward lacks is too, unless the two texts say the same words (up to
        # order, spelling and one word one side adds): two rewards of one ask may encode it more or
        # less fully ("bifold" as a style attribute or only in the title).
        mine, theirs = _gold_keys(a.gold), _gold_keys(b.gold)
        if any(mine[key] != theirs[key] for key in mine.keys() & theirs.keys()):
            return "gold constraints differ"
        if not _same_words(a.whole, b.whole):
            found = _unsaid_key(a, b) or _unsaid_key(b, a)
            if found:
                return found
    if (a.voucher is None) != (b.voucher is None) and (a.voucher_terms is None) != (b.voucher_terms is None):
        return "voucher / none"
    if a.voucher is not None and b.voucher is not None:
        found = _voucher_conflict(a.voucher, b.voucher, (_amounts(a), _amounts(b)))
        if found:
            return found
    if a.intent == b.intent == "voucher":
        found = _amounts_conflict(a, b)
        if found:
            return found
    if a.clue is not None and b.clue is not None and not (a.fact is not None and a.fact == b.fact):
        # Answers not known to be one (a query-only riddle states none): the clue names the fact
        # and the purchase the product; either one changed is another ask.
        found = clue_conflict(a.clue, b.clue, frozenset((*a.purchase, *b.purchase)), _alike, _distinct_things)
        if found:
            return found
        # Two products: neither side's purchase is said anywhere in the other (a purchase read
        # wrongly, "shopping for my friends", is still said by the other side's words).
        said_a, said_b = {*a.whole.words, *a.clue.words}, {*b.whole.words, *b.clue.words}
        if (
            a.purchase
            and b.purchase
            and not _pairs_alike(a.purchase, b.purchase)
            and not _said(a.purchase, said_b)
            and not _said(b.purchase, said_a)
        ):
            return f"purchase {sorted(a.purchase)} / {sorted(b.purchase)}"
        found = _sibling_purchase(a.purchase, b.purchase, said_a, said_b)
        if found:
            return found
    if a.fact is not None and a.fact == b.fact:
        # The same answer: the riddle's clue may be worded any way; only the product asked still
        # separates them: an edited purchase, or two purchases that share no word ("a vintage
        # calendar" / "a commemorative coin"; "a plush toy" / "a stuffed toy" share one).
        # A purchase the other side's words say is one read wrongly ("shopping for my friends").
        if (
            a.purchase
            and b.purchase
            and not set(a.purchase) & set(b.purchase)
            and not set(a.purchase) & set(b.whole.words)
            and not set(b.purchase) & set(a.whole.words)
        ):
            return f"purchase {sorted(a.purchase)} / {sorted(b.purchase)}"
        # The clue's words are any words ("the town of" / "was used to build"): no bag of words.
        return _reading_conflict(a.whole, b.whole, gaps=False, substituted=SAME_ANSWER, bag=False)
    if (len(a.items) >= 2 and b.intent == "product") or (len(b.items) >= 2 and a.intent == "product"):
        return "several items / one product"
    if a.fact is None and b.fact is None:
        found = (
            _symmetric_gap(a.whole, b.whole, a.intent == b.intent == "shop")
            or _one_sided(a.whole, b.whole, _clue_only(a))
            or _one_sided(b.whole, a.whole, _clue_only(b))
        )
        if found:
            return found
        if a.voucher is None and b.voucher is None and a.voucher_terms is None and b.voucher_terms is None:
            found = _unpriced(a, b) or _unpriced(b, a)
            if found:
                return found
        # A riddle names its answer's thing twice ("the year ... a mug with that year on it"): no subset rule.
        found = (
            _subset_conflict(a.whole, b.whole, voucher="voucher" in (a.intent, b.intent))
            if "knowledge" not in (a.intent, b.intent)
            else None
        )
        if found:
            return found
    if a.intent == b.intent and a.intent in ("product", "shop", "voucher"):
        # What is bought: the head noun of a product request's first phrase ("denim jacket" / "denim
        # shorts"), the head of each item of a list ("running wheel" / "water bottle").
        listed = a.intent != "product" and len(a.whole.heads) >= 2 and len(b.whole.heads) >= 2
        details = (a.whole.details, b.whole.details) if listed else None
        found = heads_conflict(
            a.whole.heads,
            b.whole.heads,
            a.whole.words,
            b.whole.words,
            _alike,
            details,
            added=a.intent == "shop",
            unread=(a.whole.unread, b.whole.unread),
        )
        if found:
            return found
    if len(a.items) >= 2 and len(b.items) >= 2:
        found = _items_conflict(a.items, b.items)
        if found:
            return found
    # A shop list names its things once each: a thing replaced in a short list is as telling as a
    # word replaced in a long request.
    floor = BAG_COMMON_LIST if a.intent == b.intent == "shop" else BAG_COMMON
    if a.voucher is not None and b.voucher is not None:
        # The budget and the terms, compared above, are said in the request's sentence on one side and
        # in the voucher's on the other ("up to 6k, voucher 8% off" / "budget ₱6,000, voucher 8% off"):
        # as words they are no edit.
        amounts = {f"{v:g}" for v in (*_amounts(a), *_amounts(b))}  # each side's terms and bounds
        # A count said bare is read among the amounts ("two dri-fit shorts"); said with its unit ("2 pcs")
        # on the other side it is that count, no word added.
        amounts |= {f"{v:g}pieces" for v in (*a.whole.others, *b.whole.others)}
        read_a, read_b = _without(a.whole, amounts), _without(b.whole, amounts)
        bounded = ({v for b in read_a.prices for v in b[1:]}, {v for b in read_b.prices for v in b[1:]})
        if bounded[0] != bounded[1] and _unmatched(_amounts(a), _amounts(b)) == ([], []):
            # Every amount said on both sides, read into other sentences ("I'll spend 3.5k at most" among
            # the terms, "never more than four hundred" as a bound): the bounds are those amounts. (One
            # bound in two directions, "at least ₱1,200" / "up to ₱1,200", is still compared.)
            read_a, read_b = replace(read_a, prices=()), replace(read_b, prices=())
        return _reading_conflict(read_a, read_b, common=floor, loose=True)
    # A list's words replaced are its items swapped, a riddle's its fact: those bind at any ratio.
    return _reading_conflict(a.whole, b.whole, common=floor, loose=a.intent == b.intent == "product")


def _without(reading: Reading, tokens: set[str]) -> Reading:
    """``reading`` less the word-level tokens in ``tokens`` (its values by role stay)."""
    return replace(
        reading,
        words=tuple(w for w in reading.words if w not in tokens),
        sequence=tuple(w for w in reading.sequence if w not in tokens),
        units=tuple(tuple(w for w in unit if w not in tokens) for unit in reading.units),
    )


def _slots(r: Reading) -> set[str]:
    found = {f"size:{d}" for d, _ in r.measures} | {c for c, _ in r.classes if c != "scope"}
    if r.prices:
        found.add("price")
    if r.names:
        found.add("name")
    if r.services:
        found.add("service")
    return found


# A shop list states a count, a letter size or a material per item wherever its writer put it
# ("ballpen x10" / "10 ballpens", "A4 bond paper"): one list filling such a slot and the other not is
# how the items were written; its items are compared on their own. A size in another dimension
# ("a 16-inch kawali" / "a 20-liter stock pot") is still another thing.
_LIST_SLOTS = frozenset({"size:pieces", "size:pairs", "material", "size"})


def _symmetric_gap(a: Reading, b: Reading, listed: bool = False) -> str | None:
    """Each side states a kind of constraint the other states nothing of (a capacity here, a price
    there; a material here, a colour there): two different requests, not one reworded. A rewording
    may leave one constraint implicit, but not trade it for another (none of the hand-written or
    rule-built variants does)."""
    mine, theirs = _slots(a), _slots(b)
    if listed:
        mine, theirs = mine - _LIST_SLOTS, theirs - _LIST_SLOTS
    if mine - theirs and theirs - mine:
        # It keeps the pair apart and binds no cluster: a slot one side seems to lack is as often one
        # its reader missed ("tatlumpung onsa", a brand read as a word, a price said as "each under
        # 150") as one the writer traded away (across the pools it fired on 129 twins and on 109 pairs
        # of one ask; pair only, the development pools gained 9 true pairs and merged one twin fewer).
        return f"{PAIR_ONLY}: each states what the other does not: {sorted(mine - theirs)} / {sorted(theirs - mine)}"
    return None


# Closed classes read from a fixed vocabulary on both sides: a colour or a material one side
# names and the other names none of is a constraint the other request does not state, not one
# the reader missed (a rewording says "blue" as "blue"). Audience and size words are not here:
# "for my son" and "kids" say one audience in words the class does not list.
_STATED_CLASSES = ("colour", "material")


def _clue_only(request: Request) -> frozenset[str]:
    """A riddle's words that say its fact, not its purchase: "the small, white, fragrant one" of a
    national flower, "the metal whose symbol is Ag" (the clue rule compares them). None in a Taglish or
    Chavacano riddle, whose purchase is read less surely ("mug negro", "puting mug": the colour is the
    mug's, though the purchase read is "mug" alone)."""
    if request.clue is None or _in_another_language(request.whole.sequence):
        return frozenset()
    return frozenset(request.clue.words) - frozenset(request.purchase)


def _one_sided(a: Reading, b: Reading, clue_only: frozenset[str] = frozenset()) -> str | None:
    """``a`` names a colour or material where ``b`` names none: the labelled rule is that a
    request with fewer constraints is another ask, not a rewording. A value of a riddle's clue
    (``clue_only``), not of the thing it buys, is the fact's, which the clue rule compares."""
    # A brand one side rules out and the other asks for ("not Soundcore, QCY lang" / "not QCY, Soundcore").
    passed = sorted(n for n in set(a.ruled_out) & set(b.names) if len(n) >= 4)  # not "LTE", "USB"
    if passed:
        return f"rules out {passed} / names it"
    for name in _STATED_CLASSES:
        stated = [w for c, w in a.classes if c == name and w not in clue_only]
        if stated and not any(c == name for c, _ in b.classes):
            return f"{name} {[w for c, w in a.classes if c == name]} / none"
    # A colour ruled out ("any colour basta hindi black") is a constraint too: beside a request that
    # states no colour, another ask. Not a material: one ruled out goes with the one asked ("fabric,
    # not leather").
    ruled = {w for w in a.ruled_out if _CLASS_OF.get(w) == "colour"} - set(b.ruled_out)
    if ruled and not any(c == "colour" for c, _ in (*a.classes, *b.classes)):
        return f"rules out {sorted(ruled)} / none"
    # A brand named on one side only, in a request otherwise the other's words ("a Philips electric
    # kettle 1.7L" / "an electric kettle 1.7L"): the brand is a constraint added. Only then: an
    # unknown word in a reworded request is as often a compound or an abbreviation ("rainboots", "hp").
    # A long unknown word one letter from a dictionary word is a typo in a chatty request ("posible",
    # "advnce"), not a brand, unless it is capitalised or a known brand ("Philips" / "philip").
    added = _unpaired(set(a.names) - set(b.names), b.words)
    if added and _in_another_language(a.sequence):
        # A Taglish, Bisaya or Chavacano request: a word no English dictionary knows is mostly the
        # language's own ("cabe", "mio", "pampaligo"), a brand only when known as one or capitalised.
        added = {n for n in added if n in _BRAND_WORDS or n in a.capitals}
    # What ``b`` rules out counts as said: "no scent" is how "unscented" (an unknown word) is reworded.
    mine, theirs = set(a.words), set(b.words) | set(b.ruled_out)
    if added and len(theirs) >= 2 and theirs <= mine and mine - theirs <= added | {_lemma(n) for n in added}:
        # The typo test last: it looks up a few hundred spellings.
        if all(n in _BRAND_WORDS or n in a.capitals or not _misspelt(n) for n in sorted(added)):
            return f"name {sorted(added)} / none"
    return None


def _in_another_language(sequence: Sequence[str]) -> bool:
    """Two words or more of Tagalog's, Bisaya's or Chavacano's own function and frame vocabulary that
    English does not share ("nais", "kong", "bumili"; not "may", "order", "basin")."""
    return sum(w in tagalog.FRAME and not _known(w) for w in sequence) >= 2


@lru_cache(maxsize=4096)
def _misspelt(word: str) -> bool:
    """One letter dropped, added, replaced or two swapped from a dictionary word, in a word of five
    letters or more."""
    if len(word) < 5 or not word.isalpha():
        return False
    letters = "abcdefghijklmnopqrstuvwxyz"
    splits = [(word[:k], word[k:]) for k in range(len(word) + 1)]
    candidates = {left + right[1:] for left, right in splits if right}
    candidates |= {left + right[1] + right[0] + right[2:] for left, right in splits if len(right) > 1}
    candidates |= {left + c + right[1:] for left, right in splits if right for c in letters}
    candidates |= {left + c + right for left, right in splits for c in letters}
    candidates.discard(word)
    return any(_known(c) for c in sorted(candidates))


_COUNTS = frozenset({"kit", "set", "pair", "pack", "piece", "bundle"})
# Words that attach a feature or an item to a request: "with pockets", "plus a litter box".
_ADDS = frozenset({"with", "plus", "has", "have", "having", "and", "also", "including", "include", "includes"})


_ITEM_ADDED = frozenset({"plus", "also"})
_MEASURE = re.compile(r"\d[\d.]*[a-z]+")


# How a generator strings its sentences, no feature attached: "With that settled, locate ...", "finished
# in black" (kept out of the frame: a riddle's "the year the tower was finished" is its fact).
_LINKING = frozenset("settle finish".split())


def _subset_conflict(a: Reading, b: Reading, voucher: bool = False) -> str | None:
    """Every content word of one request in the other, which attaches one more feature or item
    ("with pockets", "plus a litter box"): the shorter asks less. A word that is only how the
    longer one was worded ("cleaner", "a pair of") attaches nothing and does not count; nor, in a
    voucher request, a word of its terms that a sentence kept as a request ("with ₱50 off")."""
    # As sets: a reworded request may name a shared word twice ("16 inch wheels ... training wheels").
    wa, wb = set(a.words), set(b.words)
    for small, large, seq, bought in ((wa, wb, _sequence(b), a.heads), (wb, wa, _sequence(a), b.heads)):
        extra = {
            w
            for w in large - small
            if w.isalpha()
            and w not in _FRAME
            and w not in _LINKING
            and len(w) > 2
            and not (voucher and (_TERM_WORDS.search(w) or _VOUCHER_CUE.search(w)))
        }
        # More than two words added is a life story told beside the request (chit-chat), not a feature.
        if not extra or len(extra) > 2 or small - large or len(small) < 2:
            continue
        for k, word in enumerate(seq):
            # "a pair of", "a set of" count, and "charging port" / "port" only qualifies a shared noun.
            modifier = k + 1 < len(seq) and seq[k + 1] in small
            # "256GB storage", "a 500-sheet ream", "a 1kg bag of": the noun of a measure both sides
            # state names what is measured, not a feature added.
            # "16 GB of storage", "2 liters of capacity": the same noun after "of".
            amount = seq[k - 2] if k > 1 and seq[k - 1] == "of" else seq[k - 1] if k > 0 else ""
            measured = amount in small and (
                _MEASURE.fullmatch(amount) is not None or (amount.isdigit() and len(amount) >= 3)
            )  # "a 4K panel" reads "4000 panel"
            # "with a Full HD screen", "with an ink tank system", "a steamer basket tray": a noun after a
            # feature both sides state names where the feature sits. After a value ("with a black case")
            # it is a thing added in that colour or material; after a thing the other side buys ("plus
            # a litter box", "and a projector screen"), a thing added.
            before = seq[k - 1] if k > 0 else ""
            adding = next((w for w in reversed(seq[max(0, k - 4) : k]) if w in _ADDS), None)
            named_part = (
                before in small
                and before.isalpha()
                and before not in _CLASS_OF
                and before not in bought
                and adding not in _ITEM_ADDED  # "plus a school bag": an item, whatever its first word
            )
            # "a few pads of sticky notes", "two rolls of tape": how the thing both sides buy comes.
            holds = k + 2 < len(seq) and seq[k + 1] == "of" and seq[k + 2] in small
            if (
                word in extra
                and word not in _COUNTS
                and not modifier
                and not holds
                and not measured
                and not named_part
                # "has to stay within 650" is a modal, not a feature attached
                and any(w in _ADDS and seq[i + 1] != "to" for i, w in enumerate(seq[:k]) if i >= k - 4)
            ):
                # What a "with" or "plus" adds is a feature or a thing only as often as it is how the
                # other side said it ("with a lid" / "lidded"): it keeps the pair apart, no cluster.
                pair_only = f"{PAIR_ONLY}: " if _plain([word]) else ""
                return f"{pair_only}asks more: {word!r} ({sorted(extra)})"
    return None


def _unpriced(a: Request, b: Request) -> str | None:
    """``a`` bounds the price and ``b`` says nothing of price: no bound read, no number in no role
    (a price written another way) and no word of price or money anywhere in its text (a bound the
    reader could not read). Only outside vouchers, whose budgets and thresholds read as amounts."""
    # A number ``a`` says too ("10 guitar picks" on both sides) is a count, not a price written another way.
    unpriced, _ = _unmatched(b.whole.others, [*a.whole.others, *(v for _, v in a.whole.measures)])
    if a.whole.prices and not b.whole.prices and not unpriced and not b.mentions_price:
        return f"price bound {a.whole.prices} / none"
    return None


def _amounts(request: Request) -> list[float]:
    """Every amount a voucher request states, whichever sentence the reader gave it to (the voucher's
    terms or the request's bounds): "Budget ₱1,000 with ₱80 off min ₱600" names no voucher and
    reads as bounds, "I can spend up to ₱1,200. Voucher: ₱80 less ..." as terms."""
    r = request.whole
    values = [*r.others, *(v for _, v, _ in r.prices), *(w for _, _, w in r.prices if w)]
    if request.voucher is not None:
        values += request.voucher[3]
    return sorted(values)


def _amounts_conflict(a: Request, b: Request) -> str | None:
    """Two voucher requests each stating an amount the other does not: a budget, a threshold or a
    discount replaced, however each sentence was read ("budget ₱3,200" as a term, "I've got ₱3.5k"
    as a bound)."""
    only_a, only_b = _unmatched(_amounts(a), _amounts(b))
    # Sizes and counts are amounts of the product, compared in their roles.
    sizes_a = [v for _, v in a.whole.measures]
    sizes_b = [v for _, v in b.whole.measures]
    only_a = [v for v in only_a if not any(math.isclose(v, w) for w in sizes_b)]
    only_b = [v for v in only_b if not any(math.isclose(v, w) for w in sizes_a)]
    if only_a and only_b:
        return f"amounts {only_a} / {only_b}"
    return None


def _voucher_conflict(a: Voucher, b: Voucher, amounts: tuple[list[float], list[float]] = ([], [])) -> str | None:
    """Two vouchers' terms apart. Terms that differ only as every amount each request states
    (``amounts``) is said on both sides, read into other sentences ("I'll spend 3.5k at most" read among
    the terms, "never more than four hundred" as a bound), are no other terms."""
    if a[0] and b[0] and a[0] != b[0]:
        return f"voucher scope {a[0]} / {b[0]}"
    if a[1] and b[1] and a[1] != b[1]:
        return f"voucher type {a[1]} / {b[1]}"
    if a[2] and b[2] and a[2] != b[2]:
        return f"voucher gives {a[2]} / {b[2]}"
    only_a, only_b = _unmatched(a[3], b[3])
    if only_a and only_b and (not amounts[0] or _unmatched(*amounts) != ([], [])):
        return f"voucher terms {only_a} / {only_b}"
    # The same numbers in other roles: "capped at ₱150, min ₱500" / "capped at ₱500, min ₱150".
    for role in ("cap", "min"):
        mine = {v for r, v in a[4] if r == role}
        theirs = {v for r, v in b[4] if r == role}
        if len(mine) == len(theirs) == 1 and mine != theirs:
            return f"voucher {role} {sorted(mine)} / {sorted(theirs)}"
    return None


def _unmatched(
    a: Iterable[float], b: Iterable[float], imperial: Sequence[float] = ()
) -> tuple[list[float], list[float]]:
    """The values of each side the other does not state; with the dimension's ``imperial`` factors, a
    size converted and rounded ("15.6-inch" / "39.6 cm") is the size it was converted from."""
    rest = list(b)
    left = []
    for value in a:
        match = next((k for k, other in enumerate(rest) if _same_size(value, other, imperial)), None)
        if match is None:
            left.append(value)
        else:
            rest.pop(match)
    return left, rest


# A size in inches, feet, pounds, ounces or gallons said again in metric is rounded ("8 in" / "20 cm",
# 1.6% apart; "60 x 75 in" / "152 x 190 cm"): within this of each other, with exactly one side a whole
# tenth of an imperial unit, the two are one size. Two metric sizes, or two imperial ones, still
# differ by any amount (a twin's 14-inch beside 15.6-inch is 10% apart).
CONVERTED = 0.025
_IMPERIAL = {
    dimension: tuple(sorted({f for d, f in _UNITS.values() if d == dimension and not math.log10(f).is_integer()}))
    for dimension in ("length", "mass", "volume")
}


def _same_size(value: float, other: float, imperial: Sequence[float]) -> bool:
    if math.isclose(other, value, rel_tol=1e-6):
        return True
    if not imperial or not math.isclose(other, value, rel_tol=CONVERTED):
        return False
    return _in_tenths(value, imperial) != _in_tenths(other, imperial)


def _in_tenths(value: float, factors: Sequence[float]) -> bool:
    """Whether ``value`` (in the base unit) is a whole tenth of one of ``factors``' units."""
    return any(abs(value / f * 10 - round(value / f * 10)) < 1e-6 for f in factors)


def _halves(bounds: Sequence[Bound]) -> list[Bound]:
    """A range as its two bounds: "between 35 and 86" is "at least 35 and at most 86", however written."""
    out: list[Bound] = []
    for bound in bounds:
        if bound[0] == "btw":
            out += [("gt", bound[1], 0.0), ("lt", bound[2], 0.0)]
        else:
            out.append(bound)
    return out


def _prices_conflict(a: Sequence[Bound], b: Sequence[Bound]) -> bool:
    rest = _halves(b)
    left = []
    for bound in _halves(a):
        match = next((k for k, other in enumerate(rest) if _same_bound(bound, other)), None)
        if match is None:
            left.append(bound)
        else:
            rest.pop(match)
    return bool(left) and bool(rest)


def _same_bound(a: Bound, b: Bound) -> bool:
    if "eq" in (a[0], b[0]):  # a direction one side does not say: the amounts decide
        values_a = {a[1], a[2]} - {0.0}
        return a[1] in ({b[1], b[2]} - {0.0}) or b[1] in values_a
    # A price a centavo or a peso under a round one is that bound: "no more than ₱2,999.99" and "not more
    # than 499 pesos" are below ₱3,000 and ₱500 (a direction does not say whether the bound is in it).
    return a == b or (a[0] == b[0] and _peso_apart(a[1], b[1]) and _peso_apart(a[2], b[2]))


def _peso_apart(x: float, y: float) -> bool:
    return abs(x - y) <= 0.011 or round_amount(x) == round_amount(y)


def _reading_conflict(
    a: Reading,
    b: Reading,
    gaps: bool = True,
    substituted: float = SUBSTITUTED,
    bag: bool = True,
    common: int | None = None,
    loose: bool = False,
) -> str | None:
    if a.prices and b.prices and _prices_conflict(a.prices, b.prices):
        return f"price {a.prices} / {b.prices}"
    dimensions = {d for d, _ in a.measures} & {d for d, _ in b.measures}
    for dimension in sorted(dimensions):
        only_a, only_b = _unmatched(
            [v for d, v in a.measures if d == dimension],
            [v for d, v in b.measures if d == dimension],
            _IMPERIAL.get(dimension, ()),
        )
        if only_a and only_b:
            return f"{dimension} {only_a} / {only_b}"
    # A number in no role on one side may be the other side's price or size written another way.
    elsewhere_a = [v for _, v, _ in a.prices] + [v for _, v in a.measures]
    elsewhere_b = [v for _, v, _ in b.prices] + [v for _, v in b.measures]
    only_a, only_b = _unmatched(a.others, b.others)
    only_a = [v for v in only_a if not any(math.isclose(v, w) for w in elsewhere_b)]
    only_b = [v for v in only_b if not any(math.isclose(v, w) for w in elsewhere_a)]
    if only_a and only_b:
        return f"number {only_a} / {only_b}"
    # Services are read from fixed phrases, reliably, and no rewording drops one (none of the
    # hand-written or rule-built variants does): one side asking a service the other does not is a twin.
    if gaps and set(a.services) != set(b.services):
        return f"service {a.services} / {b.services}"
    for name in _CLASSES:
        mine = {w for c, w in a.classes if c == name}
        theirs = {w for c, w in b.classes if c == name}
        if mine - theirs and theirs - mine:
            return f"{name} {sorted(mine)} / {sorted(theirs)}"
    scope_a = {w for c, w in a.classes if c == "scope"}
    scope_b = {w for c, w in b.classes if c == "scope"}
    if scope_a and scope_b and scope_a != scope_b:
        return f"price scope {sorted(scope_a)} / {sorted(scope_b)}"
    # A capitalised word is a name too, but only where replaced: one side alone capitalising a
    # word ("USB", "LED") is how it was written.
    all_a, all_b = set(a.names) | set(a.capitals), set(b.names) | set(b.capitals)
    names_a = _unpaired(all_a - all_b, b.words)
    names_b = _unpaired(all_b - all_a, a.words)
    if names_a and names_b:
        return f"name {sorted(names_a)} / {sorted(names_b)}"
    found = _name_for_word(a.sequence, b.sequence, names_b, b.words) or _name_for_word(
        b.sequence, a.sequence, names_a, a.words
    )
    if found:
        return found
    converted = _converted_tokens(a.measures, b.measures)
    sequence_b, words_b = _sequence(b), b.words
    if converted:  # the other side's token for a size it states in other units
        sequence_b = tuple(converted.get(w, w) for w in sequence_b)
        words_b = tuple(converted.get(w, w) for w in words_b)
    found = _edit_conflict(_sequence(a), sequence_b, gaps, substituted, loose) or (
        _bag_conflict(a.words, words_b, common or BAG_COMMON) if bag else None
    )
    if found or len(a.units) < 2 and len(b.units) < 2:
        return found
    return _units_conflict(a.units, b.units, substituted)


def _converted_tokens(a: Sequence[tuple[str, float]], b: Sequence[tuple[str, float]]) -> dict[str, str]:
    """``b``'s size tokens ("2300mass") that are ``a``'s sizes converted and rounded, each mapped to
    ``a``'s token ("2267.96mass"), so the word-level rules see one size."""
    out: dict[str, str] = {}
    for dimension, value in b:
        imperial = _IMPERIAL.get(dimension, ())
        if not imperial or (dimension, value) in a:
            continue
        mine = next((v for d, v in a if d == dimension and _same_size(v, value, imperial)), None)
        if mine is not None:
            out[f"{value:g}{dimension}"] = f"{mine:g}{dimension}"
    return out


# A long request whose content words are all the same but one replaced, in any order: clauses
# reordered and one value swapped ("sprocket sets" -> "camera sets"). The floor keeps out short
# rewordings, where one replaced word is how it was reworded ("new" for "set").
BAG_COMMON = 8
BAG_COMMON_LIST = 6  # between two shop lists
BAG_SHARE = 0.85


def _bag_conflict(a: Sequence[str], b: Sequence[str], floor: int = BAG_COMMON) -> str | None:
    wa, wb = Counter(a), Counter(b)  # a multiset: "luggage" named twice, then once beside "winch"
    common = sum((wa & wb).values())
    if common < floor or common < BAG_SHARE * max(len(a), len(b)):
        return None
    only_a, only_b = _unspelt(sorted((wa - wb).elements()), sorted((wb - wa).elements()), a, b)
    if only_a and only_b and _replaced_value(only_a, only_b):
        if _plain(only_a + only_b):
            # A plain word replaced in a request said in another order is as often how it was reworded
            # ("bike" / "bicycle" beside a word said once more) as another ask: it keeps the pair apart
            # and binds no cluster (binding, it split 45 true pairs across the pools for 8 twins kept
            # apart). A value replaced (a number, a brand, a closed class's word) still binds.
            return f"{PAIR_ONLY}: replaced in a reordered request: {only_a} / {only_b}"
        return f"replaced in a reordered request: {only_a} / {only_b}"
    return None


def _replaced_value(only_a: Sequence[str], only_b: Sequence[str]) -> bool:
    """One word for one word, and the two are two values: names or things ("bosch" / "makita", "chair" /
    "ikea"), two things WordNet knows as two ("spoon" / "fork"). What a reordered rewording leaves over is mostly neither: a
    count written with its unit ("4" / "x4", "10" / "10pieces"), a word said once more or once less
    ("bag" of food, "uniform"), an adjective or verb ("new", "clean", "fry"), a Tagalog word."""
    if len(only_a) != 1 or len(only_b) != 1 or _synonymous(only_a, only_b):
        return False
    a, b = only_a[0], only_b[0]
    if not a.isalpha() or not b.isalpha():
        return False
    if not all(_a_name(w) or lexicon.thing(w) or lexicon.ware(w) for w in (a, b)):
        return False
    return _a_name(a) or _a_name(b) or lexicon.relation(a, b) == "other"


def _a_name(word: str) -> bool:
    return not lexicon.known(word) and word not in tagalog.GLOSSARY and word not in tagalog.FRAME


# Two words whose meaning vectors (the meaning signal's table, one word each) are this close are
# one word said another way ("chop" / "cutting" 0.53, "bag" / "backpack" 0.61); a substituted
# value or noun reads further apart ("mouse" / "keyboard" 0.47, "mug" / "teapot" 0.43). Chosen on
# the development pairs; used only where one word replaces one word in an otherwise equal request.
SYNONYMOUS = 0.5


def _synonymous(only_a: Sequence[str], only_b: Sequence[str]) -> bool:
    if len(only_a) != 1 or len(only_b) != 1 or not only_a[0].isalpha() or not only_b[0].isalpha():
        return False
    if only_a[0] in _CLASS_OF or only_b[0] in _CLASS_OF:
        return False  # "red" / "blue": a value of a closed class replaced, however close they read
    return _read_alike(only_a[0], only_b[0])


@lru_cache(maxsize=1 << 14)  # a shop list's heads meet the same words pair after pair (~4 MB full)
def _alike(a: str, b: str) -> bool:
    """One word said another way: respelt, or reading alike (never two values of a closed class)."""
    if a == b or _near(a, [b]):
        return True
    # Words, or WordNet's compounds of words ("hair_dryer", heads.py)
    if not a.replace("_", "").isalpha() or not b.replace("_", "").isalpha() or a in _CLASS_OF or b in _CLASS_OF:
        return False
    return _read_alike(a, b)


def _distinct_things(a: str, b: str) -> bool:
    """Two things, not one said another way: nouns naming things first, with no common reading
    shared (a synonym) and meaning vectors apart. One may be a kind of the other: a riddle's "guitar"
    and "ukulele" have their own number of strings (clues.py, the swap)."""
    if a == b or _near(a, [b]) or not (lexicon.thing(a) and lexicon.thing(b)) or lexicon.synonyms(a, b):
        return False
    # People said more or less precisely are one: "the first man" / "the first person" on the moon.
    if (lexicon.person(a) or lexicon.person(b)) and lexicon.relation(a, b) == "same":
        return False
    return _word_cosine(a, b) < SYNONYMOUS


# Words of how goods come packed, not of what they are: "a case of 24" is "a pack of 24".
_PACKING = frozenset("pack package packet bundle case casing container kit set piece pc pcs unit sack".split())


def _wares(a: str, b: str) -> bool:
    return a not in _PACKING and b not in _PACKING and lexicon.goods(a) and lexicon.goods(b)


def _read_alike(a: str, b: str) -> bool:
    # The shopping synonyms' groups first: two words it puts in two groups are two products where
    # WordNet calls them one synset ("earphone" / "headphone": a shopper buys one or the other). One a
    # kind of the other ("backpack" / "bag") is still WordNet's to read: a rewording says it more loosely.
    if a in CANONICAL and b in CANONICAL and _wares(a, b):
        return CANONICAL[a] == CANONICAL[b]
    # What the lexicon knows of two words decides ("sneakers" / "shoes" one, "basketball" /
    # "volleyball" two, however their vectors read); the vectors only where it lacks one of them
    # (a brand, a compound, Taglish).
    relation = lexicon.relation(a, b)
    if relation != "unknown":
        return relation == "same"
    return _word_cosine(a, b) >= SYNONYMOUS


def _sibling_purchase(a: Sequence[str], b: Sequence[str], said_a: set[str], said_b: set[str]) -> str | None:
    """Two kinds of one thing bought, each unsaid by the other side ("a canvas tote" / "a canvas
    pouch": both bags, neither the other), whatever words the two purchases share ("canvas")."""
    for x in a:
        if x in said_b or x in _CLASS_OF:  # "rubber shoes": a material, not a kind of shoe
            continue
        for y in b:
            if y not in said_a and y not in _CLASS_OF and lexicon.kinds_of_one(x, y):
                return f"purchase {x!r} / {y!r}"
    return None


def _said(purchase: Iterable[str], words: set[str]) -> bool:
    """Whether a word of a riddle's purchase is among ``words``, as written, respelt or as its synonym.
    Only the two purchases are compared through WordNet: against every word of a request its other
    senses say too much ("throw", of a throw pillow, is a verb of "shape")."""
    return any(w in words or _near(w, list(words)) or CANONICAL.get(w, w) in words for w in purchase)


def _pairs_alike(a: Iterable[str], b: Iterable[str]) -> bool:
    """Whether some word of ``a`` is some word of ``b``, said the same or another way."""
    mine, theirs = sorted(a), sorted(b)
    if set(mine) & set(theirs):  # the cheap test first
        return True
    return any(_alike(x, y) for x in mine for y in theirs)


@lru_cache(maxsize=4096)
def _word_cosine(a: str, b: str) -> float:
    return float(_word_vector(a) @ _word_vector(b))


@lru_cache(maxsize=4096)
def _word_vector(word: str):
    """One word's meaning vector (512 bytes; a word is embedded once, not once per pair it is in)."""
    from arena.problems.meaning import static_embedder

    # The clustering's default dims: the same cached embedder, not a second copy of the table.
    return static_embedder(128).embed([word])[0]


def _units_conflict(a: Sequence[Sequence[str]], b: Sequence[Sequence[str]], substituted: float) -> str | None:
    """Sentences aligned whatever their order (a riddle's clue moved after the purchase), then a
    word replaced within an aligned sentence is a changed constraint. A word one sentence adds
    is not: a split request spreads its constraints over other sentences."""
    scored = sorted(
        (-SequenceMatcher(None, x, y, autojunk=False).ratio(), i, j)
        for i, x in enumerate(a)
        for j, y in enumerate(b)
        if x and y
    )
    taken_a: set[int] = set()
    taken_b: set[int] = set()
    whole_a = {w for unit in a for w in unit}
    whole_b = {w for unit in b for w in unit}
    for negative, i, j in scored:
        if -negative < substituted:
            break
        if i in taken_a or j in taken_b:
            continue
        taken_a.add(i)
        taken_b.add(j)
        # Words moved to another sentence are not replaced: only words the other side lacks count.
        x = [w for w in a[i] if w not in whole_b or w in b[j]]
        y = [w for w in b[j] if w not in whole_a or w in a[i]]
        found = _edit_conflict(x, y, gaps=False, substituted=substituted)
        if found:
            return f"sentence {i + 1}/{j + 1}: {found}"
    return None


def _name_for_word(
    mine: Sequence[str], theirs: Sequence[str], names: set[str], their_words: Sequence[str]
) -> str | None:
    """``theirs`` is ``mine`` with one word replaced by a name ("Quick na gulong" / "Michelin na
    gulong": a brand that is also an English word reads as a word, not a name): another brand, or a
    brand where the other side asked a quality. Either way another ask; only a request otherwise word
    for word the other's, so a rewording (which moves more than one word) never reaches it."""
    if not names or len(mine) < 2 or len(mine) != len(theirs):
        return None
    changed = [(m, t) for m, t in zip(mine, theirs, strict=True) if m != t]
    if len(changed) != 1:
        return None
    word, name = changed[0]
    if name in names and word.isalpha() and word not in _FRAME and word not in their_words:
        return f"name {name!r} for the word {word!r}"
    return None


def _unpaired(names: set[str], other_words: Sequence[str]) -> set[str]:
    """Names the other side does not write another way (split, joined or misspelt by a letter)."""
    from rapidfuzz.distance import Levenshtein

    joined = "".join(other_words)
    return {
        n
        for n in names
        if n not in joined and not any(len(w) >= 5 and Levenshtein.distance(n, w) <= 1 for w in other_words)
    }


def _edit_conflict(
    a: Sequence[str], b: Sequence[str], gaps: bool = True, substituted: float = SUBSTITUTED, loose: bool = False
) -> str | None:
    """Whether ``b`` is ``a`` edited into another ask. ``loose`` (a product's or a voucher's sentence):
    a plain word replaced below EDITED keeps only this pair apart (:data:`PAIR_ONLY`)."""
    if not a or not b:
        return None
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    ratio = matcher.ratio()
    if ratio < substituted:
        # A short reading (a voucher's thing once its terms are compared: "robot vacuum" / "stick
        # vacuum") with one word replaced: one edit there costs more than the ratio allows.
        return _short_edit(a, b, matcher) if gaps and len(a) == len(b) <= 3 else None
    removed: Counter[str] = Counter()
    added: Counter[str] = Counter()
    purpose_a: set[str] = set()
    purpose_b: set[str] = set()
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            removed.update(w for w in a[i1:i2] if w not in _FRAME)
            added.update(w for w in b[j1:j2] if w not in _FRAME)
            purpose_a |= _purpose(a[i1:i2])
            purpose_b |= _purpose(b[j1:j2])
    # What one side says the thing is for is no constraint it adds; a word the other side says
    # elsewhere ("a car dash cam" / "a dash cam for my car") is still paired first.
    only_a = sorted(w for w in (removed - added).elements() if w not in purpose_a and not _counted(w, a))
    only_b = sorted(w for w in (added - removed).elements() if w not in purpose_b and not _counted(w, b))
    # Words one side only says once more ("Canon ... from Canon's official store" / "Canon ... from the
    # official store") are words repeated, not added: a side that adds nothing else adds nothing. Not
    # beside a word the other side has instead ("Yonex racket and Yonex shuttlecocks" / "Li-Ning racket
    # and Yonex shuttlecocks"); and what is added beside them is weighed with them ("and a brush set").
    if not only_b and all(w in b for w in only_a):
        only_a = []
    elif not only_a and all(w in a for w in only_b):
        only_b = []
    if ratio < EDITED:  # numbers and services are compared by role above; here only words
        only_a = [w for w in only_a if w.isalpha() and not w.startswith("svc")]
        only_b = [w for w in only_b if w.isalpha() and not w.startswith("svc")]
    only_a, only_b = _unspelt(only_a, only_b, a, b)
    # One is "a": "shuttlecocks (1 tube)" / "a tube of shuttlecocks".
    only_a, only_b = [w for w in only_a if w != "1"], [w for w in only_b if w != "1"]
    only_a, only_b = _peso_apart_amounts(only_a, only_b)
    only_a, only_b = _one_number(only_a, only_b)
    only_a, only_b = _measure_labels(only_a, only_b, a, b)
    only_a, only_b = _one_meaning_dropped(only_a, only_b)
    if _said_out(only_a, only_b, b) or _said_out(only_b, only_a, a):
        only_a, only_b = [], []
    if only_a and only_b and ratio >= substituted:
        if loose and ratio < EDITED and _plain(only_a + only_b):
            return f"{PAIR_ONLY} ({ratio:.2f}): {only_a} / {only_b}"
        return f"edited ({ratio:.2f}): {only_a} / {only_b}"
    if gaps and ratio >= EDITED and (_weighty(only_a) or _weighty(only_b)):
        if ratio < PHRASE_BINDS and _plain(only_a or only_b):
            return f"{PAIR_ONLY} ({ratio:.2f}): {only_a} / {only_b}"
        return f"edited ({ratio:.2f}): {only_a} / {only_b}"
    return None


def _plain(words: Sequence[str]) -> bool:
    """Words none of which states a value by itself (a number, a service, a closed class's value, a
    unit, a brand, a name)."""
    return all(
        w.isalpha()
        and not w.startswith("svc")
        and w not in _CLASS_OF
        and w not in _UNITS
        and w not in _UNIT_NAMES
        and w not in _BRAND_WORDS
        and _a_word(w)
        for w in words
    )


_POSSESSIVE = frozenset("my our his her their your".split())


def _counted(word: str, sequence: Sequence[str]) -> bool:
    """``word`` holds a count beside it ("a pack of 60 diapers", "60 diapers in a pack", "a pair of
    slippers" said with its count): how many, which the numbers compare, not another thing."""
    if word not in _COUNT_BEFORE:
        return False

    def number(k: int) -> bool:
        return 0 <= k < len(sequence) and sequence[k][:1].isdigit()

    for k, w in enumerate(sequence):
        if w != word:
            continue
        after = number(k + 2) and sequence[k + 1] == "of"  # "a pack of 60"
        before = number(k - 1)  # "a 3 pack"
        said_after = sequence[k - 2 : k] == ("in", "a") and number(k - 4)  # "60 diapers in a pack"
        if after or before or said_after:
            return True
    return False


def _purpose(span: Sequence[str]) -> set[str]:
    """The words of a span one side adds that say what the thing is for ("for our sari-sari store",
    "for my home bakery business"): who or what it serves, not what is bought. Only a phrase the span
    opens with "for my": in "a replacement filter for my air purifier" the filter is bought. Numbers,
    brands, names and closed-class values in it are not among them ("for my iPhone 15", "for my
    KitchenAid mixer")."""
    for k in range(len(span) - 1):
        if span[k] == "for" and span[k + 1] in _POSSESSIVE and all(w in _FRAME for w in span[:k]):
            return {
                w for w in span[k + 2 :] if w.isalpha() and w not in _CLASS_OF and w not in _BRAND_WORDS and _a_word(w)
            }
    return set()


def _peso_apart_amounts(only_a: list[str], only_b: list[str]) -> tuple[list[str], list[str]]:
    """Less each pair of amounts a peso apart ("₱1,999 max" / "under ₱2,000"): one bound, compared above."""
    numbers_b = [w for w in only_b if _NUMBER.fullmatch(w)]
    if not numbers_b:
        return only_a, only_b
    left_b = list(only_b)
    left_a = []
    for word in only_a:
        match = (
            next((w for w in numbers_b if w in left_b and _peso_apart(float(word), float(w))), None)
            if _NUMBER.fullmatch(word)
            else None
        )
        if match is None:
            left_a.append(word)
        else:
            left_b.remove(match)
    return left_a, left_b


def _short_edit(a: Sequence[str], b: Sequence[str], matcher: SequenceMatcher) -> str | None:
    changed = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    if len(changed) != 1 or changed[0][0] != "replace" or changed[0][2] - changed[0][1] != 1:
        return None
    mine, theirs = a[changed[0][1]], b[changed[0][3]]
    if changed[0][4] - changed[0][3] != 1 or not (mine.isalpha() and theirs.isalpha()):
        return None
    if mine in _FRAME or theirs in _FRAME or _alike(mine, theirs) or lexicon.same_common_reading(mine, theirs):
        return None
    return f"edited (short): {[mine]} / {[theirs]}"


_UNIT_TOKEN = re.compile(r"(\d+(?:\.\d+)?)[a-z]+")


def _one_number(only_a: list[str], only_b: list[str]) -> tuple[list[str], list[str]]:
    """Less each number one side reads with its unit and the other bare ("6 pcs" / "a set of 6",
    "8GB RAM" / "RAM: 8"): the numbers were compared in their roles before; here it is one token
    read two ways, not a word replaced."""
    if not only_a or not only_b:
        return only_a, only_b
    left_a, left_b = list(only_a), list(only_b)
    for mine, theirs in ((left_a, left_b), (left_b, left_a)):
        for token in list(mine):
            found = _UNIT_TOKEN.fullmatch(token)
            if found is not None and found.group(1) in theirs:
                mine.remove(token)
                theirs.remove(found.group(1))
    return left_a, left_b


# What a size says it measures ("4GB RAM, 64GB storage", "20000mAh capacity", "22.5W output"): the
# measure itself names it.
_MEASURE_LABELS = frozenset("storage ram memory capacity output power wattage volume weight".split())


def _measure_labels(
    only_a: list[str], only_b: list[str], a: Sequence[str], b: Sequence[str]
) -> tuple[list[str], list[str]]:
    """Less the labels one side puts after a measure the other side states bare ("4GB RAM, 64GB storage"
    / "4GB/64GB"); labels on both sides ("64GB RAM" / "64GB storage") stay: another role."""

    def labels(words: list[str], sequence: Sequence[str]) -> list[str]:
        after = {sequence[k] for k in range(1, len(sequence)) if _UNIT_TOKEN.fullmatch(sequence[k - 1])}
        return [w for w in words if w in _MEASURE_LABELS and w in after]

    labels_a, labels_b = labels(only_a, a), labels(only_b, b)
    if labels_a and labels_b:
        return only_a, only_b
    return [w for w in only_a if w not in labels_a], [w for w in only_b if w not in labels_b]


def _said_out(short: Sequence[str], words: Sequence[str], sequence: Sequence[str]) -> bool:
    """Whether ``short`` is one acronym and ``words`` its words said out ("sea" / "Southeast Asian",
    "ofw" / "overseas Filipino workers"): its letters in order through the words as said, from the
    first word's first letter, every word's first letter among them."""
    if len(short) != 1 or len(words) < 2 or not 2 <= len(short[0]) <= 6:
        return False
    acronym = short[0]
    said = _said_order(words, sequence)
    joined = "".join(said)
    if joined[:1] != acronym[:1] or any(w[:1] not in acronym for w in said):
        return False
    letters = iter(joined)
    return all(letter in letters for letter in acronym)


def _one_meaning_dropped(only_a: list[str], only_b: list[str]) -> tuple[list[str], list[str]]:
    """Less each pair of words, one a side, that WordNet reads as one meaning in their common readings
    ("sneakers" / "shoes", "finished" / "completed"): a rewording, not a replacement. Never a closed
    class's values."""
    if not only_a or not only_b:
        return only_a, only_b
    left_b = list(only_b)
    left_a = []
    for word in only_a:
        match = next(
            (
                other
                for other in left_b
                if word.isalpha()
                and other.isalpha()
                and word not in _CLASS_OF
                and other not in _CLASS_OF
                # Two groups of the shopping synonyms are two things ("bicycle" / "motorcycle": "bike"
                # is both to WordNet)
                and not (word in CANONICAL and other in CANONICAL and CANONICAL[word] != CANONICAL[other])
                and lexicon.same_common_reading(word, other)
            ),
            None,
        )
        if match is None:
            left_a.append(word)
        else:
            left_b.remove(match)
    return left_a, left_b


def _weighty(words: Sequence[str]) -> bool:
    """A part one side adds that states a constraint: a number, a value of a closed class, or a
    phrase (an item: "a baby bathtub"), not one loose word a rewording drops ("cake", "set")."""
    plain = [w for w in words if w.isalpha() and not w.startswith("svc")]
    return (
        len(plain) >= 2
        or len(plain) < len(words)
        or any(
            (w in _CLASS_OF and w not in _SHADES) or w in _BRAND_WORDS or (len(w) >= 3 and not _a_word(w))
            for w in plain
        )
    )


def _unspelt(only_a: list[str], only_b: list[str], wa: Sequence[str], wb: Sequence[str]) -> tuple[list[str], list[str]]:
    """Drop words the other side writes another way: joined ("rain boots" / "rainboots") or misspelt."""
    joined_a, joined_b = "".join(only_a), "".join(only_b)
    if joined_a == joined_b:  # "spf 50" / "spf50"
        return [], []
    if _in_order(only_a, wa).replace("-", "") == _in_order(only_b, wb).replace("-", ""):  # "wifi" / "Wi-Fi"
        return [], []

    def respelt(word: str, joined: str, others: list[str]) -> bool:
        compound = len(word) >= 4 and joined and (word in joined or (len(joined) >= 4 and joined in word))
        return bool(compound) or _near(word, others)

    keep_a = [w for w in only_a if not respelt(w, joined_b, only_b) and not _joined_to_a_neighbour(w, wa, wb)]
    keep_b = [w for w in only_b if not respelt(w, joined_a, only_a) and not _joined_to_a_neighbour(w, wb, wa)]
    return keep_a, keep_b


def _said_order(words: Sequence[str], sequence: Sequence[str]) -> list[str]:
    """``words`` in the order the sentence says them (a word it does not say, last)."""
    return sorted(words, key=lambda w: sequence.index(w) if w in sequence else len(sequence))


def _in_order(words: list[str], sequence: Sequence[str]) -> str:
    """``words`` joined in the order the sentence says them."""
    return "".join(_said_order(words, sequence))


def _joined_to_a_neighbour(word: str, mine: Sequence[str], theirs: Sequence[str]) -> bool:
    """``word`` written with its neighbour as one word on the other side: "spf 50" / "spf50"."""
    other = set(theirs)
    for k, w in enumerate(mine):
        if w == word and (
            (k > 0 and mine[k - 1] + word in other) or (k + 1 < len(mine) and word + mine[k + 1] in other)
        ):
            return True
    return False


def _near(word: str, others: Sequence[str]) -> bool:
    """Another spelling of ``word`` among ``others``: one letter apart, or one a short form of the
    other ("cam" / "camera", "spf" / "spf50")."""
    # Asked two million times at 100k problems (every pair of words two requests' heads meet): one
    # distance a pair, cut off past one edit.
    from rapidfuzz.distance import OSA

    for other in others:
        short, long = (word, other) if len(word) <= len(other) else (other, word)
        # One edit, a swap of two letters included: "centimetre" / "centimeter", "colour" / "color".
        # Four letters one apart only where one of them is no word ("frsh" / "fresh"; "hard" / "card"
        # are two words).
        if (
            len(short) >= 4
            and OSA.distance(word, other, score_cutoff=1) <= 1
            and (len(short) >= 5 or not (_a_word(word) and _a_word(other)))
        ):
            return True
        if long.startswith(short) and (len(short) == 3 or long[len(short) :].isdigit()):
            return True
    return False


def _items_conflict(a: Sequence[Reading], b: Sequence[Reading]) -> str | None:
    """Items aligned by their content words (greedy, best overlap first), then compared pair by pair."""
    scored = []
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            wx, wy = set(x.words), set(y.words)
            overlap = len(wx & wy) / max(1, len(wx | wy))
            scored.append((-overlap, i, j))
    scored.sort()
    taken_a: set[int] = set()
    taken_b: set[int] = set()
    for negative, i, j in scored:
        if i in taken_a or j in taken_b or negative == 0:
            continue
        taken_a.add(i)
        taken_b.add(j)
        # An item sentence may carry the request's opening ("Find shops offering: First, a ..."),
        # which its partner has on a line of its own: within items only replaced words count.
        found = _reading_conflict(a[i], b[j], gaps=False)
        if found:
            return f"item {i + 1}/{j + 1}: {found}"
    return None
