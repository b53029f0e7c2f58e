"""Reading a shopper's request: items, prices, services, voucher terms, the knowledge question.

ShoppingBench queries are templated English written by an LLM, so a handful
of patterns cover most of them: price phrases ("under 500 pesos", "between
100 and 200", "above PHP 1,200"), service phrases (free shipping, cash on
delivery, LazMall, LazFlash), multi-item lists ("(1) ...; (2) ...", "First,
... Second, ...", "a X, a Y, and a Z") and the voucher paragraph after "My
budget is". What no pattern recognises stays in the item's words, which go
to BM25 and to candidate matching: nothing is dropped on the floor.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

IntentName = Literal["product", "shop", "voucher", "knowledge"]

# -- words ---------------------------------------------------------------------------

_WORD = re.compile(r"[a-z0-9]+(?:[:/.\-'][a-z0-9]+)*")

# Request boilerplate: words that say "I want to shop", never what to buy.
FILLER = frozenset(
    """
    a an and are as at be but by for if in into is it of on or such that the their then there these they this
    to was will with i i'm im me my we you your can could would should please show find looking look search
    searching need want like get buy purchase some any options option available item items product products
    offer offers offering offered sell sells selling shop shops store stores seller sellers also both
    all which who whose what where when how also either other another one ones priced price prices cost costs
    costing pesos peso php p budget thing things from up than more less over under above below between
    made comes come coming has have having include includes including category categories provides provide
    providing type types kind kinds sort each well plus just only am s its do does it's while should respective
    that's preferably ideally especially still around interested purchasing getting
    """.split()
)

# -- prices --------------------------------------------------------------------------

_UNITS = r"kg|g|grams?|ml|l|liters?|cm|mm|m|meters?|inch|inches|oz|lbs?|pcs|pieces|years?|yrs?|months?|days?|hours?|w|" \
    r"watts?|v|volts?|mah|gb|tb|mb|x|pack|packs|sets?|sheets?|pages?|colors?|shades?|servings?|capsules?|tablets?"
# A number, not part of a longer number, and not a quantity with a unit ("5kg", "3 months", "50%").
_NUM = rf"(?:₱|php)?\s?(\d[\d,]*(?:\.\d+)?)(?![\d.,]?\d)(?!\s?(?:{_UNITS})\b)(?![%+:/])"
_CURRENCY = r"(?:\s?(?:pesos?|php|₱))?"
_PRICE_WORDS = re.compile(r"(?:price|priced|cost|costs|costing|budget|pay|spend|php|pesos?|₱|cheap|affordable)")
_BETWEEN = re.compile(rf"(?:between|from|in the range of|ranging from)\s+{_NUM}{_CURRENCY}\s+(?:and|to|-)\s+{_NUM}")
_UPPER = re.compile(
    rf"(?:under|below|less than|lower than|cheaper than|up to|at most|no more than|not more than|maximum of|"
    rf"max(?:imum)?|within|not exceeding|not over|no higher than|or less than)\s+{_NUM}"
)
_LOWER = re.compile(
    rf"(?:above|over|more than|greater than|at least|minimum of|higher than|starting at|exceeding|upwards of|"
    rf"no less than|not less than)\s+{_NUM}"
)
_CURRENCY_AFTER = re.compile(r"^\s?(?:pesos?|php|₱)")


class PriceRange(BaseModel):
    """An inclusive price range; a missing side is open."""

    low: float | None = None
    high: float | None = None

    def contains(self, price: float) -> bool:
        return (self.low is None or price >= self.low - 1e-9) and (self.high is None or price <= self.high + 1e-9)

    def as_filter(self) -> str | None:
        """The ``find_product`` ``price`` argument ("lo-hi", "lo-", "-hi")."""
        if self.low is None and self.high is None:
            return None
        return f"{_fmt(self.low)}-{_fmt(self.high)}"

    def describe(self) -> str:
        if self.low is not None and self.high is not None:
            return f"{_fmt(self.low)}-{_fmt(self.high)}"
        return f">= {_fmt(self.low)}" if self.low is not None else f"<= {_fmt(self.high)}"


def _fmt(value: float | None) -> str:
    if value is None:
        return ""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _priced(text: str, match: re.Match) -> bool:
    """A number is a price only with a currency next to it or a price word shortly before it:
    "weighing up to 5kg" and "for 3 to 6 months" are not prices."""
    after = text[match.end() : match.end() + 8]
    before = text[max(0, match.start() - 30) : match.start()]
    return bool(_CURRENCY_AFTER.match(after) or _PRICE_WORDS.search(before) or _PRICE_WORDS.search(match.group(0)))


def extract_price(text: str) -> tuple[PriceRange | None, str]:
    """The price range an item text asks for, and the text with the price phrases cut out."""
    lowered = text.lower()
    low: float | None = None
    high: float | None = None
    spans: list[tuple[int, int]] = []
    for match in _BETWEEN.finditer(lowered):
        if _priced(lowered, match):
            a, b = sorted((_number(match.group(1)), _number(match.group(2))))
            low, high = _tighter_low(low, a), _tighter_high(high, b)
            spans.append(match.span())
    for pattern, side in ((_UPPER, "high"), (_LOWER, "low")):
        for match in pattern.finditer(lowered):
            if any(s <= match.start() < e for s, e in spans) or not _priced(lowered, match):
                continue
            value = _number(match.group(1))
            if side == "high":
                high = _tighter_high(high, value)
            else:
                low = _tighter_low(low, value)
            spans.append(match.span())
    rest = _cut(text, spans)
    return (PriceRange(low=low, high=high) if spans else None), rest


def _tighter_low(current: float | None, value: float) -> float:
    return value if current is None else max(current, value)


def _tighter_high(current: float | None, value: float) -> float:
    return value if current is None else min(current, value)


def _cut(text: str, spans: list[tuple[int, int]]) -> str:
    for start, end in sorted(spans, reverse=True):
        text = text[:start] + " " + text[end:]
    return text


# -- services -------------------------------------------------------------------------

SERVICE_PATTERNS: dict[str, re.Pattern] = {
    "freeShipping": re.compile(
        r"free[\s-]?shipping|free delivery|ships? (?:for )?free|complimentary (?:shipping|delivery)|"
        r"shipping (?:is )?free|no shipping fee|freeshipping|without shipping (?:fee|cost)s?"
    ),
    "COD": re.compile(r"cash[\s-]on[\s-]delivery|\bcod\b|pay(?:ment)? on delivery|pay upon delivery"),
    "official": re.compile(
        r"lazmall|laz mall|official (?:store|shop|seller)|authenticity guarantee|guaranteed authenticity|"
        r"100% authentic|authentic(?:ity)? guarantee"
    ),
    "flashsale": re.compile(r"lazflash|laz flash|flash[\s-]?sales?|flash deals?|limited[\s-]time (?:promo|deal|offer)"),
}


def extract_services(text: str) -> tuple[list[str], str]:
    lowered = text.lower()
    found: list[str] = []
    spans: list[tuple[int, int]] = []
    for name, pattern in SERVICE_PATTERNS.items():
        for match in pattern.finditer(lowered):
            if name not in found:
                found.append(name)
            spans.append(match.span())
    return found, _cut(text, spans)


# -- words ----------------------------------------------------------------------------


def words(text: str) -> list[str]:
    """Lower-cased word tokens, keeping ids like ``eu:30``, ``g1/2`` and ``cbr150-r`` whole."""
    return _WORD.findall(text.lower().replace("’", "'"))


def stem(word: str) -> str:
    """A light plural stemmer: enough to match "wheels" with "wheel" without a library."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def keywords(text: str) -> list[str]:
    """The words of a request worth searching for, in order, each once."""
    out: list[str] = []
    for word in words(text):
        word = word[:-2] if word.endswith("'s") else word
        if word in FILLER or len(word) < 2 and not word.isdigit():
            continue
        if word not in out:
            out.append(word)
    return out


def normalized(text: str) -> str:
    """Words joined by single spaces, for phrase containment tests."""
    return " " + " ".join(words(text)) + " "


# -- vouchers -------------------------------------------------------------------------


class VoucherTerms(BaseModel):
    """The voucher paragraph: the budget, and when and how much the voucher takes off."""

    budget: float
    threshold: float = 0.0
    scope: Literal["platform", "shop"] = "platform"
    discount_type: Literal["fixed", "percentage"] = "fixed"
    value: float = 0.0  # face value (fixed) or fraction (percentage)
    cap: float | None = None

    def total_after(self, total: float, same_shop: bool) -> float:
        """What the basket costs with the voucher, when it applies."""
        if (self.scope == "shop" and not same_shop) or total < self.threshold - 1e-9:
            return total
        if self.discount_type == "fixed":
            return total - self.value
        off = total * self.value
        return total - (min(off, self.cap) if self.cap is not None else off)

    def fits(self, total: float, same_shop: bool) -> bool:
        return total <= self.budget + 1e-9 or self.total_after(total, same_shop) <= self.budget + 1e-9


_BUDGET = re.compile(r"my budget is\b", re.I)
_NUMBER = r"`?₱?\s?(\d[\d,]*(?:\.\d+)?)`?"


def parse_voucher(text: str) -> VoucherTerms | None:
    lowered = text.lower()
    budget = re.search(rf"budget (?:is|of)\s+(?:only\s+|just\s+)?(?:php\s*)?{_NUMBER}", lowered)
    if budget is None:
        return None
    terms = VoucherTerms(budget=_number(budget.group(1)))
    threshold = re.search(rf"(?:exceeds|over|above|at least|reaches|more than)\s+(?:php\s*)?{_NUMBER}", lowered)
    if threshold:
        terms.threshold = _number(threshold.group(1))
    if "same shop" in lowered or "same store" in lowered or "one shop" in lowered:
        terms.scope = "shop"
    percent = re.search(rf"percentage discount of\s+`?(\d+(?:\.\d+)?)\s?%`?", lowered)
    fixed = re.search(rf"(?:fixed discount|discount) of\s+(?:php\s*)?{_NUMBER}", lowered)
    if percent:
        terms.discount_type = "percentage"
        terms.value = float(percent.group(1)) / 100
        cap = re.search(rf"cap of\s+(?:php\s*)?{_NUMBER}", lowered)
        terms.cap = _number(cap.group(1)) if cap else None
    elif fixed:
        terms.value = _number(fixed.group(1))
    return terms


# -- items ----------------------------------------------------------------------------


class ItemRequest(BaseModel):
    """One thing the shopper wants, with the constraints found in its words."""

    text: str
    keywords: list[str]
    price: PriceRange | None = None
    services: list[str] = Field(default_factory=list)

    def label(self) -> str:
        return " ".join(self.keywords[:6]) or self.text[:40]

    def search_query(self) -> str:
        return " ".join(self.keywords)


def parse_item(text: str) -> ItemRequest:
    price, rest = extract_price(text)
    services, rest = extract_services(rest)
    return ItemRequest(text=text.strip(), keywords=keywords(rest), price=price, services=services)


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
    r"\bfor the (?:first|second|third|fourth|fifth|last|other|next) (?:product|item|one)\s*,?|\(\d+\)|(?:^|[\s;])\d+[.)]\s|\b(?:first(?:ly)?|second(?:ly)?|third(?:ly)?|fourth(?:ly)?|fifth|lastly|finally|"
    r"next|then|additionally|also|besides|in addition)\s*,",
    re.I,
)
_ARTICLE_SPLIT = re.compile(r",\s*(?:and\s+|plus\s+|as well as\s+)?(?=(?:a|an|another|one|some)\s)|"
                            r"\s+(?:and|plus|as well as)\s+(?=(?:a|an|another)\s)|,?\s+and also\s+(?:selling\s+|offering\s+)?", re.I)  # fmt: skip
_FILLER_SENTENCE = re.compile(
    r"\b(?:these (?:items|products)|focus on|categor(?:y|ies)\b|all (?:these|of these|three|four|two)|the shop should|please show|"
    r"respective categor|one shop|same shop|single shop|the same seller|all from)\b",
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
_GENERIC_HEADS = frozenset({"products", "items", "things", "stuff"})


def split_items(body: str) -> list[str]:
    """The item phrases of a multi-item request, in the user's order."""
    text = _SHOP_LEAD.sub("", body.strip(), count=1)
    colon = text.find(":")
    if colon > 0 and _INTRO.search(text[:colon]):
        text = text[colon + 1 :]  # "... offers both of these: First, ..." -> the list itself
    text = _LEAD.sub("", text, count=1)
    shared: list[str] = []  # "Both should be soft": a constraint of every item
    markers = list(_MARKERS.finditer(text))
    prefix = text[: markers[0].start()] if markers else ""
    opening = markers[0].group(0).lower().strip(" ;") if markers else ""
    if (
        len(markers) >= 2
        and prefix.strip(" .;:,")
        and re.search(r"[.:]\s*$", prefix)
        and re.match(r"\(1\)|1[.)]|first|for the first", opening)
        and not re.search(r"\b(?:a|an)\s", _LEAD.sub("", prefix))
    ):
        # "Find dry dog food products. First, ... Next, ...": the opening sentence is every item's context.
        shared.append(re.sub(r"\b(?:products?|items?)\b", " ", _LEAD.sub("", prefix)).strip(" .:"))
        text = text[markers[0].start() :]
    parts = [p for p in _MARKERS.split(text) if p and p.strip(" .;:,")]
    chunks: list[str] = []
    for part in parts:
        for position, sentence in enumerate(re.split(r"(?<=[.!?;])\s+", part)):
            sentence = sentence.strip(" .;:,")
            if not sentence or _filler(sentence):
                continue
            sentence = _LEAD.sub("", sentence, count=1)
            reference = _REFERENCE.match(sentence)
            # "Second, the same fan in brown" opens an item; a later "The perfume should be oil-based" refers back.
            if reference and chunks and not (position == 0 and len(parts) > 1):
                _attach(chunks, sentence, reference.group(1).lower(), shared)
                continue
            for piece in _ARTICLE_SPLIT.split(sentence):
                piece = piece.strip(" .;:,")
                if not piece:
                    continue
                piece = re.sub(r"^(?:and|also|plus)\s+", "", piece, flags=re.I)
                if chunks and _modifier(piece):
                    chunks[-1] = f"{chunks[-1]}, {piece}"
                else:
                    chunks.append(piece)
    items = [c for c in chunks if not _generic(c)]
    if len(items) == 1:
        items = _comma_list(items[0]) or items
    if shared:
        items = [f"{item}, {' '.join(shared)}" for item in items]
    return items or [body.strip()]


_INTRO = re.compile(r"\b(?:these|following|items|products|both|shops?|stores?|include|includes|including)\b", re.I)
_REFERENCE = re.compile(r"^(?:the|this|that|both|all|each|every|they|it|one|another)\b\s*(\w+)?", re.I)
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
    if clause[1:2] and clause[1] in _CONSTRAINT_HEADS:
        return True
    return len(clause) <= 4 and (not _has_noun(piece) or clause[-1] in _MODIFIER_TAILS)


def _has_noun(piece: str) -> bool:
    kept = keywords(piece)
    return bool(kept) and not all(w in _CONSTRAINT_HEADS for w in kept)


def _generic(chunk: str) -> bool:
    # "products for all ages, especially those made in the USA" sets context, it is not an item.
    head = [w for w in words(chunk) if w not in ("a", "an", "some", "the")][:1]
    return bool(head) and head[0] in _GENERIC_HEADS


# -- the whole request -----------------------------------------------------------------


class ShoppingRequest(BaseModel):
    """A parsed query: what the policy searches for and the constraints it checks."""

    text: str
    intent: IntentName
    items: list[ItemRequest]
    voucher: VoucherTerms | None = None
    question: str | None = None  # the knowledge question, answered with web_search first

    @property
    def same_shop(self) -> bool:
        """Whether every item must come from one shop (shop tasks; shop-scoped vouchers prefer it)."""
        return self.intent == "shop"


_QUESTION = re.compile(r"^(?P<question>.*\?)\s*(?P<purchase>[^?]*\b(?:buy|purchase|purchasing|get|order|find|interested)\b[^?]*)$", re.S)
_SHOP_WORDS = re.compile(r"\b(?:shops?|stores?|sellers?)\b", re.I)


def parse_request(text: str) -> ShoppingRequest:
    """Parse a ShoppingBench query of any intent."""
    text = text.strip()
    budget = _BUDGET.search(text)
    if budget is not None:
        body = text[: budget.start()].strip()
        voucher = parse_voucher(text[budget.start() :])
        items = [parse_item(p) for p in split_items(body)]
        return ShoppingRequest(text=text, intent="voucher", items=items, voucher=voucher)
    question = _QUESTION.match(text)
    if question is not None:
        purchase = question.group("purchase")
        item = parse_item(_LEAD.sub("", purchase))
        item.keywords = [w for w in item.keywords if w not in _KNOWLEDGE_FILLER]
        return ShoppingRequest(text=text, intent="knowledge", items=[item], question=question.group("question"))
    if _SHOP_WORDS.search(text):
        items = [parse_item(p) for p in split_items(text)]
        if len(items) > 1 or re.search(r"\b(?:shops|stores|sellers)\b", text, re.I):
            return ShoppingRequest(text=text, intent="shop", items=items)
    return ShoppingRequest(text=text, intent="product", items=[parse_item(_LEAD.sub("", text))])


# The purchase sentence of a knowledge riddle refers back to the answer; these words name it, not the product.
_KNOWLEDGE_FILLER = frozenset(
    "corresponding corresponds related relating according name named called this that year country animal "
    "person brand city major instrument same whose used use uses using".split()
)
