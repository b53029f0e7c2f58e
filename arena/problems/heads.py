"""What a request buys: the head noun of each noun phrase, for the veto (:mod:`arena.problems.twins`).

Two requests that share every attribute but the thing bought ("Men's denim jacket size L" /
"Denim shorts for men, size L"; "memory foam pillow, queen size" / "queen size mattress
topper, memory foam") read alike to the meaning signal and differ in one word, which is
also how a rewording says "pouch" for "case". What tells them apart is where the word
stands: English puts the thing bought last in its noun phrase ("memory foam *pillow*",
"cotton bath *towel* set"), after its modifiers, before a preposition, a comma or a
clause. A request's phrases are cut at punctuation and at the words that end a noun
phrase; each phrase's head is its last word that names a thing: not a frame word, a
value of a closed class (colour, material, size), a unit, a count ("set", "pack") or a
name (a brand). A product request buys its first phrase's head; a shop list buys one head
per listed item.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Collection, Sequence
from functools import lru_cache

from arena.problems import lexicon
from arena.problems.lexicon import goods, kinds_of_one, thing
from arena.problems.synonyms import CANONICAL

# Words that end a noun phrase: prepositions, conjunctions, pronouns, price words.
_BREAKS = frozenset(
    """for with in of from on at to by under below above over within between about around than and or plus
    but that thats which who whose where when if so because while also then please pls priced costing
    cost costs is are was be has have having had should must can could would will w whats what is its it
    ideally preferably same
    itself himself herself themselves myself ourselves everyone everybody someone somebody anyone anybody
    everything something anything nothing""".split()
)
# "a pack of gel pens", "a box of 50 face masks": the count before "of" is not the thing bought.
_COUNTS = frozenset("pack set box pair bundle kit piece pieces bottle jar tube bag case roll sheet dozen pad".split())
# Only counts: never the thing bought ("a bag", "a case", "a bottle" may be).
_PURE_COUNTS = frozenset("pack set kit piece pieces pair bundle dozen sheet roll".split())
# Adjective endings: "USB rechargeable", "lightweight foldable" end a phrase with a quality, not a thing.
_ADJECTIVE = re.compile(r"(?:able|ible|ful|less|ous|ive)$")
_TOKEN = re.compile(r"[a-z0-9][a-z0-9'’.-]*|[,;:+()/!?—–]")


_PARTICIPLE_AFTER = frozenset("at on up to with".split())


def phrase_heads(
    text: str,
    lemma: Callable[[str], str],
    not_a_head: Callable[[str, str], bool],
    first: bool = False,
) -> tuple[str, ...]:
    """The head (a lemma) of each noun phrase of ``text``, in order; phrases without one left out
    (with ``first``, only the first: what a product request buys).

    ``text`` has its numbers as digits (``asks._digits``). ``not_a_head(word, lemma)`` says whether a word cannot be the thing bought (a frame word, a
    closed-class value, a unit, a name)."""
    tokens = _TOKEN.findall(text.lower().replace("w/", "with "))
    heads: list[str] = []
    head: str | None = None
    before: str | None = None  # the word before the current one in the phrase, for compounds
    for k, token in enumerate(tokens):
        word = token.strip("'’.-").replace("’", "'").removesuffix("'s")
        ends = not word or not word[0].isalnum() or word in _BREAKS
        if word == "of" and head in _COUNTS:  # "a pack of gel pens": the phrase goes on
            head = None
            continue
        # A phrase ends at a break, or at a number after its thing ("water fountain 2.5L"), or at a
        # participle after its thing that says how it works ("a monitor refreshing at 144 Hz", "a fan
        # running on batteries").
        participle = (
            head is not None and word.endswith("ing") and k + 1 < len(tokens) and tokens[k + 1] in _PARTICIPLE_AFTER
        )
        if ends or participle or (word[0].isdigit() and head is not None):
            if head is not None and head not in _PURE_COUNTS:
                heads.append(head)
                if first:
                    return tuple(heads)
            head = before = None
            continue
        if word[0].isdigit() or len(word) < 3 or not word.replace("-", "").isalpha():
            before = None
            continue
        base = lemma(word.replace("-", "")) if "-" in word else lemma(word)
        # An adjective's ending ("rechargeable", "wireless"), but "-able" ends things too: "cable",
        # "table", "vegetable" (WordNet reads them first as things).
        ending = _ADJECTIVE.search(base)
        adjective = ending is not None and not (ending.group(0) in ("able", "ible") and thing(base))
        if not not_a_head(word, base) and not adjective and base not in _PURE_COUNTS:
            # A thing WordNet names with two words is that thing ("frying pan", "bath towel"): a
            # "wok" is another pan, but not another "pan" said one word shorter.
            head = _compound(before, base)
        elif head is not None and base in _COUNTS and k + 1 < len(tokens) and tokens[k + 1] == "of":
            head = base  # kept only to be dropped by the "of" above
        before = word
    if head is not None:
        heads.append(head)
    return tuple(h for h in heads if h not in _PURE_COUNTS)


def _in_compound(word: str, head: str) -> bool:
    """``word`` is one of the words of a compound head (as read: "fry" of "frying_pan")."""
    return "_" in head and any(part.startswith(word) for part in head.split("_"))


def _compound(before: str | None, base: str) -> str:
    if before is None or not before.isalpha():
        return base
    # A thing the synonym table names with two words is its one word ("power bank", "portable charger").
    joined = CANONICAL.get(f"{before} {base}")
    if joined is not None:
        return joined
    return sys.intern(f"{before}_{base}") if lexicon.compound(before, base) else base


# What holds or counts a thing bought ("bread flour, a 1 kilo bag"), never one more thing.
_CONTAINERS = frozenset("bag bottle box pack packet jar can sack ream roll tub carton pouch bundle".split())
_LABEL = re.compile(r"^\s*[^:,;.!?]{1,40}:\s+(?=\S)")
# Where a list separates its items: punctuation and the words that join items.
_ITEM_BREAK = re.compile(
    # Taglish joins items with "at" (and), "tsaka", "saka", "pati", "tapos"; English "at" opens a bound or a place.
    r"[,;+&•\n]|\s/\s|\b(?:and|plus|also|then|finally|lastly|tsaka|saka|pati|tapos)\b|"
    r"\bat\b(?!\s+(?:least|most|the|a|an|home|night|work|school|all|once|\d))"
)


# Whom or what a list is for, said as an item of its own ("For my Lolo in Orion, all from one shop: ...",
# "para sa salon", "pang milk tea shop"): no thing bought. Only a short one: "for my daughter a pink
# backpack with ..." names a thing after its purpose.
_FOR_WHOM = re.compile(r"\s*(?:for (?:my|our|his|her|their|your)|para sa|pang)\b")
_FOR_WHOM_WORDS = 7
# A word or two naming the shop's kind or the list's label: "a single pet store", "milk tea shop",
# "camping stuff", "baking supplies", "baby needs" (numbers stay: "3 shops").
_NAMED_BY = re.compile(
    r"\b(?:[a-z][a-z-]* )?[a-z][a-z-]* (?=(?:shop|store|seller|supplier|stall|stuff|supplies|gear|needs|"
    r"essentials|things|items|haul|restock)\b)"
)
_INTERJECTION = re.compile(r"\b(?:hay|ay),? nak[ou]\b")


def item_heads(
    text: str,
    lemma: Callable[[str], str],
    not_a_head: Callable[[str, str], bool],
    frame: Collection[str],
    unread: Callable[[str], bool] = lambda word: False,
    shop: bool = True,
) -> tuple[tuple[str, ...], tuple[str, ...], int]:
    """A shop list's things: the first head of each item (the text cut where a list separates its
    items: "a hamster cage, hamster bedding 1kg, and a running wheel"), and each item's other
    words, its details ("plant" and "tier" of "a 3-tier plant stand", "bamboo" of "bamboo utensils"),
    as lemmas less ``frame`` words and counts; and how many items name their thing only in words
    ``unread`` says are not read ("un set de cubiertos", "a pack of Skyflakes"): things all the same.
    In a ``shop`` list, an item that says only whom the list is for is none (a voucher's request names
    its one thing after it: "For our restaurant, a commercial ice maker")."""
    heads: list[str] = []
    details: list[str] = []
    unread_items = 0
    # A label before the list names its purpose or its shop, not a thing bought ("grocery: 5kg rice,
    # ...", "bedroom set one shop: ...", "baby needs, same shop: ...").
    text = _LABEL.sub("", text, count=1)
    # The shop's kind ("a single pet store", "from one bike shop") and a list's label ("camping
    # stuff", "school supplies") name no item; nor does an interjection ("hay naku").
    text = _INTERJECTION.sub(" ", _NAMED_BY.sub(" ", text))
    for item in _ITEM_BREAK.split(text):
        if shop and _FOR_WHOM.match(item) and len(item.split()) <= _FOR_WHOM_WORDS:
            continue  # "For my Tita in Batangas", "para sa salon", "pang milk tea shop"
        found = phrase_heads(item, lemma, not_a_head)
        if found:
            heads.append(found[0])
            words = {_detail(w, lemma) for w in _TOKEN.findall(item)}
            # One string an item (100k problems are held at once), split when two lists are compared.
            details.append(
                sys.intern(
                    " ".join(
                        sorted(w for w in words if w and w != found[0] and w not in frame and w not in _PURE_COUNTS)
                    )
                )
            )
        elif any(unread(token) for token in _TOKEN.findall(item)):
            unread_items += 1
    return tuple(heads), tuple(details), unread_items


@lru_cache(maxsize=16_384)  # a list's words repeat across 100k requests; each is read once
def _detail(token: str, lemma: Callable[[str], str]) -> str:
    word = token.strip("'’.-").replace("’", "'").removesuffix("'s")
    if not word or word in _BREAKS:
        return ""
    # Numbers are compared in their roles (a size, a count); "3-tier" is "tier".
    word = word.lstrip("0123456789.-")
    if not word.replace("-", "").isalpha() or len(word) < 3:
        return ""
    return lemma(word.replace("-", ""))


def heads_conflict(
    a: tuple[str, ...],
    b: tuple[str, ...],
    words_a: Collection[str],
    words_b: Collection[str],
    alike: Callable[[str, str], bool],
    details: tuple[Sequence[str], Sequence[str]] | None = None,
    added: bool = False,
    unread: tuple[int, int] = (0, 0),
) -> str | None:
    """Why two requests buy different things, or None.

    A product request buys its first head: two heads that are not one word said another way
    (equal, respelt, a compound of the other "mousepad" / "pad", or reading alike) and neither
    said anywhere in the other request ("trail runners" / "trail running shoes") are two
    products. A shop list (with its items' ``details``) buys every head: a head on each side the
    other does not buy, whose items share no detail, is an item replaced ("a running wheel" / "a
    hamster water bottle"); a rewording renames a thing but keeps what it says of it ("a 3-tier
    plant stand" / "a plant rack with 3 tiers"). (An item added is not read from heads: a story or a detail split into
    its own clause reads as one more head as often as an item does.)"""
    if not a or not b:
        return None
    if details is None:
        accessory = _accessory(a[0], b[0], words_a, words_b) or _accessory(b[0], a[0], words_b, words_a)
        if accessory is not None:
            return accessory
        a, b = a[:1], b[:1]
        # Only a swap beside shared attributes: besides the heads, at most one word on each side the
        # other lacks ("queen size mattress topper" / "... pillow"). A request reworded more freely
        # names its product more freely too ("running sneakers" / "running shoes").
        # A compound head's words are the head, not words beside it ("frying pan").
        words_a = [w for w in words_a if not _in_compound(w, a[0])]
        words_b = [w for w in words_b if not _in_compound(w, b[0])]
        rest_a = set(words_a) - set(words_b) - set(a) - _PURE_COUNTS
        rest_b = set(words_b) - set(words_a) - set(b) - _PURE_COUNTS
        if len(rest_a) > 1 or len(rest_b) > 1:
            # Reworded freely: only two kinds of one thing that WordNet knows ("mug" / "bowl",
            # "mouse" / "keyboard", both a kind of the same thing, neither a kind of the other),
            # neither said on the other side, are two products.
            if (
                a[0] != b[0]
                and a[0] not in words_b
                and b[0] not in words_a
                and kinds_of_one(a[0], b[0])
                and not any(alike(a[0], w) for w in words_b if w.isalpha())
                and not any(alike(b[0], w) for w in words_a if w.isalpha())
            ):
                return f"bought {a[0]!r} / {b[0]!r}"
            return None
    if added and details is not None and len(a) != len(b):
        # A list that buys every thing of the other and one thing more ("a laptop stand and a USB
        # hub" / "a 1m HDMI cable, a USB hub and a laptop stand"): another ask, whatever the wording.
        # Only goods count as the thing more (a noun WordNet reads first as a thing a shop sells: not
        # "save" of "would save me on shipping" or "trip" of "Camping trip:"), and only where the other
        # list buys nothing the first does not.
        left_a = [h for h in a if not _said(h, b, words_b) and not _alike_any(h, b, words_b, alike)]
        left_b = [h for h in b if not _said(h, a, words_a) and not _alike_any(h, a, words_a, alike)]
        more = left_a if not left_b else left_b if not left_a else []
        if more:
            # An item named by another head with the other side's thing as its detail ("an armband for
            # my phone" / "an armband phone holder"): that thing renamed, where the other side buys it
            # by no head of this side.
            from_a = more is left_a
            longer, shorter, said_of = (a, b, details[0]) if from_a else (b, a, details[1])
            renamed = {h for h in shorter if h not in longer}
            more = [h for h in more if not renamed & set(said_of[longer.index(h)].split())]
            # The other side's items named in words not read ("un set de cubiertos") may be these.
            if (unread[1] - unread[0] if from_a else unread[0] - unread[1]) >= len(more):
                more = []
        goods_more = [
            h for h in more if h not in _CONTAINERS and ((thing(h) and goods(h)) or not lexicon.known(h))
        ]  # "frother": unlisted; "a 1 kilo bag" holds the flour named before it
        if goods_more:
            return f"bought more: {sorted(goods_more)}"
    # The cheap tests on both sides first: most pairs buy the same things word for word.
    only_a = [k for k, h in enumerate(a) if not _said(h, b, words_b)]
    only_b = [k for k, h in enumerate(b) if not _said(h, a, words_a)] if only_a else []
    own_a, own_b = _own(words_a, words_b), _own(words_b, words_a)
    only_a = [k for k in only_a if not _alike_any(a[k], b, own_b, alike)] if only_b else []
    only_b = [k for k in only_b if not _alike_any(b[k], a, own_a, alike)] if only_a else []
    if not only_a or not only_b:
        return None
    if details is not None:
        mine, theirs = details
        # A word said of several items is the list's ("baby wipes, baby powder"), not one item's.
        listwide = _list_wide(mine) | _list_wide(theirs)
        if any((set(mine[i].split()) & set(theirs[j].split())) - listwide for i in only_a for j in only_b):
            return None
    return f"bought {sorted(a[k] for k in only_a)} / {sorted(b[k] for k in only_b)}"


def _list_wide(details: Sequence[str]) -> set[str]:
    """The detail words said of two items or more of one list."""
    seen: set[str] = set()
    twice: set[str] = set()
    for item in details:
        for word in set(item.split()):
            (twice if word in seen else seen).add(word)
    return twice


# What is made for another thing and named after it: "a mattress topper", "a phone case", "a laptop stand".
_ACCESSORIES = frozenset(
    """topper case cover protector stand holder mount strap sleeve pad refill filter skin lid rack organizer
    charger cable adapter dock bracket tray liner""".split()
)


def _accessory(head: str, other: str, words: Collection[str], other_words: Collection[str]) -> str | None:
    """The other side buys a thing made for this side's: its head an accessory named right after this
    side's head ("a foam mattress" / "a foam mattress topper", "a yoga mat" / "a yoga mat strap"), and
    the accessory nowhere on this side: another product, however alike the two read."""
    last = other.rsplit("_", 1)[-1]
    if last not in _ACCESSORIES or last in words or head == other:
        return None
    if "_" in other:
        before = other.rsplit("_", 1)[0]
    else:
        order = list(other_words)
        at = order.index(other) if other in order else 0
        before = order[at - 1] if at > 0 else ""
    return f"bought {head!r} / {other!r}" if before == head else None


def _own(mine: Collection[str], theirs: Collection[str]) -> list[str]:
    """The words only ``mine`` says. A word both sides say is a modifier they share ("bluetooth speaker"
    / "bluetooth earphones", "HDMI cable, USB hub" / "USB hub"), never the other side's name for a
    thing: only a side's own words can rename what the other buys."""
    shared = set(theirs)
    return [w for w in mine if w not in shared]


def _said(head: str, heads: tuple[str, ...], words: Collection[str]) -> bool:
    """Bought by the other side as is: the same head, a compound of it ("mousepad" / "pad"), or the
    word said in another role ("trail runners" / "trail running shoes" is the next test's)."""
    for other in heads:
        short, long = sorted((head, other), key=len)
        if head == other or (len(short) >= 3 and short in long):
            return True
    return head in words


def _alike_any(head: str, heads: tuple[str, ...], words: Collection[str], alike: Callable[[str, str], bool]) -> bool:
    """Bought by the other side in other words: a head or a word reading alike ("runner" / "running")."""
    return any(alike(head, other) for other in heads) or any(alike(head, w) for w in words if w.isalpha())
