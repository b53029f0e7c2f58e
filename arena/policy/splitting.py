"""Splitting a multi-item request into its items, in the user's order.

Shop and voucher queries list several products in a few templated shapes:
"(1) ...; (2) ...", "First, ... Second, ...", "For the vest: ...", "a X, a Y,
and a Z", or bare plural lists. A piece that only describes the previous
item ("..., and a price from 55 to 66 pesos", "a universal plug") stays with
it, and a later sentence that refers back ("The perfume should be
oil-based") is attached to the item it names.
"""

from __future__ import annotations

import re

from arena.policy.text import keywords, stem, words

_LEAD = re.compile(
    r"^\s*(?:hi|hello)?[,!\s]*(?:(?:i'?m|i am|we'?re|we are)\s+)?(?:looking for|searching for|search for|find(?: me)?|"
    r"show me|i need|i want|i'd like|i would like|can you find|please find|help me find|get me|seeking|look for|"
    r"interested in|i'?m interested in|i am interested in|searching|also searching for|also looking for)\s+",
    re.I,
)
_SHOP_LEAD = re.compile(
    r"^\s*(?:(?:i'?m|i am)\s+)?(?:looking for|searching for|find(?:ing)?|show me|i need|need|locate|seeking|want)?\s*"
    r"(?:a|an|any|some|the)?\s*(?:shops?|stores?|sellers?)\b[^:;]*?"
    r"(?:\b(?:offer|offers|offering|sell|sells|selling|carry|carries|carrying|has|having|have|stock|stocks|with|"
    r"provide|provides|providing|include|includes|including)\b)\s*(?:these items|these products|the following"
    r"(?: items| products)?|all of these|both)?\s*:?\s*",
    re.I,
)
_MARKERS = re.compile(
    r"\bfor the (?:first|second|third|fourth|fifth|last|other|next) (?:product|item|one)\s*,?|"
    r"(?=\bfor the [a-z][\w\s'-]{0,30}?[,:])|"  # "For the vest: ..." keeps "the vest" in its part
    r"\(\d+\)|(?:^|[\s;])\d+[.)]\s|"
    r"\b(?:first(?:ly)?|second(?:ly)?|third(?:ly)?|fourth(?:ly)?|fifth|lastly|finally|next|then|additionally|also|"
    r"besides|in addition)\s*,",
    re.I,
)
_ARTICLE_SPLIT = re.compile(
    r",\s*(?:and\s+|plus\s+|as well as\s+)?(?=(?:a|an|another|one|some)\s)|"
    r"\s+(?:and|plus|as well as)\s+(?=(?:a|an|another)\s)|"
    r",?\s+and also\s+(?:selling\s+|offering\s+)?",
    re.I,
)
_FILLER_SENTENCE = re.compile(
    r"\b(?:these (?:items|products)|focus on|categor(?:y|ies)\b|all (?:these|of these|three|four|two)|"
    r"the shop should|please show|respective categor|one shop|same shop|single shop|the same seller|all from)\b",
    re.I,
)
# A chunk starting with one of these after its article is a constraint of the previous item ("..., and a price
# from 55 to 66 pesos"), not a new item.
_CONSTRAINT_HEADS = frozenset(
    "price cost budget total maximum minimum discount voucher size color colour weight capacity length width "
    "height pattern design style finish shape scent flavor flavour model warranty".split()
)
# "..., a universal plug" / "a gathered blouse style": a short phrase ending in one of these describes the item
# before it.
_MODIFIER_TAILS = frozenset(
    "style design pattern plug collar fit finish feature features look theme print color colour size sleeves "
    "neckline variant type option material scent flavor flavour shape".split()
)
# A ";"-separated piece opening with one of these qualifies the item before it.
_MODIFIER_STARTS = frozenset(
    "with without in by from of made marked described preferably ideally on that which ships shipped payable "
    "priced costing available suitable compatible featuring having designed".split()
)
_GENERIC_HEADS = frozenset({"products", "items", "things", "stuff"})


def split_items(body: str) -> list[str]:
    """The item phrases of a multi-item request, in the user's order."""
    text, shared = _list_body(body)
    first_marker = _MARKERS.search(text)
    unmarked_prefix = first_marker is not None and bool(text[: first_marker.start()].strip(" .;:,"))
    parts = [p for p in _MARKERS.split(text) if p and p.strip(" .;:,")]
    chunks: list[str] = []
    for number, part in enumerate(parts):
        if len(parts) > 1 and (number > 0 or not unmarked_prefix):
            _add_marked_part(chunks, part)
        else:
            _add_free_text(chunks, part, shared, several_parts=len(parts) > 1)
    items = [c for c in chunks if not _generic(c)]
    if len(items) == 1:
        items = _comma_list(items[0]) or items
    if shared:
        items = [f"{item}, {' '.join(shared)}" for item in items]
    return items or [body.strip()]


def _list_body(body: str) -> tuple[str, list[str]]:
    """The list itself, without its introduction, and context every item shares."""
    text = body.strip()
    colon = text.find(":")
    if colon > 0 and _INTRO.search(text[:colon]) and "\n" not in text[:colon] and not _MARKERS.search(text[:colon]):
        text = text[colon + 1 :]  # "... offers both of these: First, ..." -> the list itself
    text = _LEAD.sub("", _SHOP_LEAD.sub("", text, count=1), count=1)
    shared: list[str] = []
    markers = list(_MARKERS.finditer(text))
    if len(markers) < 2:
        return text, shared
    prefix = text[: markers[0].start()]
    opening = markers[0].group(0).lower().strip(" ;")
    if (
        prefix.strip(" .;:,")
        and re.search(r"[.:]\s*$", prefix)
        and re.match(r"\(1\)|1[.)]|first|for the first", opening)
        and (not re.search(r"\b(?:a|an)\s", _LEAD.sub("", prefix)) or _GENERIC_CONTEXT.search(prefix))
    ):
        # "Find dry dog food products. First, ... Next, ...": the opening sentence is every item's context.
        shared.append(re.sub(r"\b(?:products?|items?)\b", " ", _LEAD.sub("", prefix)).strip(" .:"))
        return text[markers[0].start() :], shared
    if re.match(r"for the ", text[markers[0].start() :], re.I):
        return text[markers[0].start() :], shared  # "both X and Y. For the X, ... For the Y, ...": a repeat
    return text, shared


def _add_marked_part(chunks: list[str], part: str) -> None:
    """After "(2)", "2.", "Second," everything up to the next marker is one item: its ";" and "a ..."
    pieces describe it ("1. A lip tint; by Velvet Muse; in brown")."""
    sentences = [x.strip(" .;:,") for x in re.split(r"(?<=[.!?])\s+", part)]
    kept = [x for x in sentences if x and not _filler(x)]
    if kept:
        chunks.append(_LEAD.sub("", ", ".join(kept), count=1))


def _add_free_text(chunks: list[str], part: str, shared: list[str], several_parts: bool) -> None:
    """Unmarked text: items separated by articles ("a X, a Y, and a Z"), modifiers kept with their item."""
    for position, sentence in enumerate(re.split(r"(?<=[.!?;])\s+", part)):
        sentence = sentence.strip(" .;:,")
        if not sentence or _filler(sentence):
            continue
        sentence = _LEAD.sub("", sentence, count=1)
        if chunks and words(sentence)[:1] and words(sentence)[0] in _MODIFIER_STARTS:
            chunks[-1] = f"{chunks[-1]}, {sentence}"  # "a tumbler; with a cartoon pattern; made by X"
            continue
        reference = _REFERENCE.match(sentence)
        # "Second, the same fan in brown" opens an item; a later "The perfume should be oil-based" refers back.
        if reference and chunks and not (position == 0 and several_parts):
            # "They." alone names no noun: the optional group is None.
            _attach(chunks, sentence, (reference.group(1) or "").lower(), shared)
            continue
        for piece in _ARTICLE_SPLIT.split(sentence):
            piece = re.sub(r"^(?:and|also|plus)\s+", "", piece.strip(" .;:,"), flags=re.I)
            if not piece:
                continue
            if chunks and _modifier(piece):
                chunks[-1] = f"{chunks[-1]}, {piece}"
            else:
                chunks.append(piece)


_INTRO = re.compile(r"\b(?:these|following|items|products|both|shops?|stores?|include|includes|including)\b", re.I)
_REFERENCE = re.compile(r"^(?:the|this|that|both|all|each|every|they|it)\b\s*(\w+)?", re.I)
_GENERIC_CONTEXT = re.compile(r"\b(?:products|items|supplies|variety|things|following)\b", re.I)
_PREPOSITIONS = frozenset(
    "in with without made from for of by at on priced costing costs available and all both each that which "
    "featuring having size color colour are is support supports has have can comes come features feature "
    "suitable compatible designed perfect ideal preferably ideally especially".split()
)


def _filler(sentence: str) -> bool:
    lowered = sentence.lower()
    if lowered.startswith(("please", "can you", "could you", "i want them", "i'd like them")) or "?" in lowered:
        return len(keywords(sentence)) < 8
    return bool(_FILLER_SENTENCE.search(sentence)) and len(keywords(sentence)) < 6


def _attach(chunks: list[str], sentence: str, noun: str, shared: list[str]) -> None:
    """A sentence that refers back ("The perfume should be oil-based") constrains the item it names."""
    if noun in ("both", "all", "each", "every", "they") or sentence.lower().startswith(("both", "all", "each")):
        shared.append(sentence)
        return
    target = len(chunks) - 1
    for i, chunk in enumerate(chunks):
        if noun and stem(noun) in {stem(w) for w in words(chunk)}:
            target = i
            break
    chunks[target] = f"{chunks[target]}, {sentence}"


def _comma_list(chunk: str) -> list[str] | None:
    """ "deodorants, denture adhesive creams, and toothpaste for teeth, all with LazMall": bare plural items
    without articles. Split only when every piece reads as an item, never as a constraint ("in red", "size M")."""
    pieces = [p.strip(" .;:,") for p in re.split(r",\s*(?:and\s+)?", chunk)]
    pieces = [p for p in pieces if p]
    items: list[str] = []
    tail: list[str] = []
    for piece in pieces:
        first = words(piece)[:1]
        if not first or first[0] in _PREPOSITIONS or len(keywords(piece)) < 2:
            if not items:
                return None
            tail.append(piece)  # a trailing constraint: kept on the item before it
            items[-1] = f"{items[-1]}, {piece}"
            continue
        items.append(piece)
    if len(items) < 2 or tail and len(tail) >= len(items):
        return None
    return items


def _modifier(piece: str) -> bool:
    """Whether a split-off piece only describes the item before it."""
    clause = words(piece.split(",")[0])
    if clause[1:2] and clause[0] in ("a", "an", "another", "one") and clause[1] in _CONSTRAINT_HEADS:
        return True
    return len(clause) <= 4 and (not _has_noun(piece) or clause[-1] in _MODIFIER_TAILS)


def _has_noun(piece: str) -> bool:
    kept = keywords(piece)
    return bool(kept) and not all(w in _CONSTRAINT_HEADS for w in kept)


def _generic(chunk: str) -> bool:
    # "products for all ages, especially those made in the USA" sets context, it is not an item.
    head = [w for w in words(chunk) if w not in ("a", "an", "some", "the")][:1]
    return bool(head) and head[0] in _GENERIC_HEADS


def strip_lead(text: str) -> str:
    """The request without its "I'm looking for" / "Show me" opening."""
    return _LEAD.sub("", text, count=1)
