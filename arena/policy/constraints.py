"""Hard constraints in a request's words: price ranges, services and the voucher paragraph.

Each extractor returns what it found and the text with those phrases cut
out, so the remaining words are the item itself.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel

_UNITS = (
    r"kg|g|grams?|ml|l|liters?|cm|mm|m|meters?|inch|inches|oz|lbs?|pcs|pieces|years?|yrs?|months?|days?|hours?|w|"
    r"watts?|v|volts?|mah|gb|tb|mb|x|pack|packs|sets?|sheets?|pages?|colors?|shades?|servings?|capsules?|tablets?"
)
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
# "in the ₱470 to ₱860 price range", "costing 704 PHP to 1,561 PHP": a range without "between".
_RANGE = re.compile(rf"{_NUM}{_CURRENCY}\s*(?:to|-)\s*{_NUM}")
_CURRENCY_NEAR = re.compile(r"₱|\bphp\b|\bpesos?\b")  # a bare "X to Y" is a price only with a currency
# "at ₱69 or more", "516 pesos and up", "300 php or less": the bound comes after the number.
_TRAILING = re.compile(
    rf"(?:at\s+|for\s+)?{_NUM}{_CURRENCY}\s+(?:or|and)\s+"
    r"(?P<side>more|above|up|higher|over|less|below|under|lower|cheaper)\b"
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
    after = (text[match.end(1) : match.end(1) + 8], text[match.end() : match.end() + 8])
    before = text[max(0, match.start() - 30) : match.start()]
    return bool(
        any(_CURRENCY_AFTER.match(a) for a in after)
        or _PRICE_WORDS.search(before)
        or _PRICE_WORDS.search(match.group(0))
    )


def extract_price(text: str) -> tuple[PriceRange | None, str]:
    """The price range an item text asks for, and the text with the price phrases cut out."""
    lowered = text.lower()
    low: float | None = None
    high: float | None = None
    spans: list[tuple[int, int]] = []
    ranges = [m for m in _RANGE.finditer(lowered) if _CURRENCY_NEAR.search(lowered[m.start() : m.end() + 8])]
    for match in [*_BETWEEN.finditer(lowered), *ranges]:
        if not any(s <= match.start() < e for s, e in spans) and _priced(lowered, match):
            a, b = sorted((_number(match.group(1)), _number(match.group(2))))
            low, high = _tighter_low(low, a), _tighter_high(high, b)
            spans.append(match.span())
    for match in _TRAILING.finditer(lowered):
        if any(s <= match.start() < e for s, e in spans) or not _priced(lowered, match):
            continue
        value = _number(match.group(1))
        if match.group("side") in ("more", "above", "up", "higher", "over"):
            low = _tighter_low(low, value)
        else:
            high = _tighter_high(high, value)
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
    "COD": re.compile(r"cash[\s-]on[\s-]delivery|\bcod\b|pay(?:ment|able)? (?:on|upon) delivery"),
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


BUDGET_SENTENCE = re.compile(r"my budget is\b", re.I)
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
    percent = re.search(r"percentage discount of\s+`?(\d+(?:\.\d+)?)\s?%`?", lowered)
    fixed = re.search(rf"(?:fixed discount|discount) of\s+(?:php\s*)?{_NUMBER}", lowered)
    if percent:
        terms.discount_type = "percentage"
        terms.value = float(percent.group(1)) / 100
        cap = re.search(rf"cap of\s+(?:php\s*)?{_NUMBER}", lowered)
        terms.cap = _number(cap.group(1)) if cap else None
    elif fixed:
        terms.value = _number(fixed.group(1))
    return terms
