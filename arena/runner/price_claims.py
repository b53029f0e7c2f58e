"""Price comparisons a response states between known items: what the probe changes prices to test.

"X is cheaper than Y", "Y costs more than X" (around a comparing phrase in one clause), "X is the cheapest"
(against every other item the text names), a ranking by price (each item against the next). The runner reads
them to choose what its probe changes (``arena.runner.probe``: a response with a price claim gets the compared
prices reversed; one without gets the compared items moved), and the judge to read the probe's answer
(``judge.probe``). The lists are read, not understood: a claim in other words is not one.
"""

from __future__ import annotations

import re

ID = re.compile(r"(?<![A-Za-z0-9])[A-Za-z0-9][A-Za-z0-9_\-]*(?![A-Za-z0-9])")
CLAUSE = re.compile(r"[.;!?\n]+(?:\s|$)")
CHEAPER: tuple[str, ...] = ("cheaper", "less costly", "less expensive", "lower priced", "lower-priced", "more affordable",
           "costs less", "undercuts", "lower price", "lower cost", "lower-cost", "less pricey", "less money",
           "better priced", "better-priced", "more budget-friendly", "easier on the wallet", "easier on the budget",
           "lighter on the wallet", "priced lower", "priced below", "priced under", "comes in under", "comes in below",
           "costs you less", "sets you back less", "more economical", "less pricy")  # fmt: skip
PRICIER: tuple[str, ...] = ("pricier", "more expensive", "costlier", "more costly", "higher priced", "higher-priced", "costs more",
           "dearer", "higher price", "higher cost", "more money", "priced higher", "priced above",
           "comes in above", "costs you more", "sets you back more", "harder on the wallet", "less affordable",
           "less economical", "more pricey")  # fmt: skip
# Superlatives ("X is the cheapest [option|of all]") and rankings by price ("ranked by price from lowest: 1. X,
# 2. Y") are read as claims against every other item the answer names: a template filled by position states
# them whatever the prices (its items keep their places). A scoped superlative ("the cheapest that fits", "the
# cheapest among ...") is not read: the changed prices can make it false against an item it set aside.
LOWEST: tuple[str, ...] = ("cheapest", "least expensive", "lowest price", "lowest-priced", "lowest priced", "most affordable",
          "least costly", "best price", "lowest cost", "lowest-cost", "least pricey", "most budget-friendly",
          "best-priced", "best priced")  # fmt: skip
HIGHEST: tuple[str, ...] = ("most expensive", "priciest", "dearest", "highest price", "highest-priced", "highest priced",
           "costliest", "most costly", "highest cost", "highest-cost")  # fmt: skip
# What may follow a superlative without scoping it: the clause's end, a noun for "the item", "of all", "of the
# two/three/results".
_UNSCOPED = re.compile(
    r"\s*(?:(?:option|one|item|product|choice|pick|deal|overall|here|listed|shown)\b\s*)?"
    r"(?:of\s+(?:all|them|these|those\s+(?:listed|shown)|the\s+(?:two|three|four|five|lot|results|hits|items|options|"
    r"products|list))\b\s*)?(?:$|[,:)(]|\b(?:and|but|so|while|with|at)\b)"
)


def _any_of(cues: tuple[str, ...], bounded: bool) -> re.Pattern[str]:
    """One pattern for a cue list, longest first (a cue found once, not once per cue that overlaps it)."""
    alternatives = "|".join(re.escape(cue) for cue in sorted(cues, key=len, reverse=True))
    return re.compile(rf"\b(?:{alternatives})\b" if bounded else f"(?:{alternatives})")


_CHEAPER, _PRICIER = _any_of(CHEAPER, bounded=False), _any_of(PRICIER, bounded=False)
_LOWEST, _HIGHEST = _any_of(LOWEST, bounded=True), _any_of(HIGHEST, bounded=True)
_ANY_CUE = _any_of(CHEAPER + PRICIER + LOWEST + HIGHEST, bounded=False)


def has_price_cue(text: str) -> bool:
    """Whether lower-case ``text`` holds a word a price claim is read from (a cheap test before reading one)."""
    return _ANY_CUE.search(text) is not None or "by price" in text or "first" in text


_RANKING = re.compile(
    r"(?:rank\w*|order\w*|sort\w*|list\w*)\s+by\s+price[^;\n]*?\b(?:from\s+)?(?P<dir>lowest|cheapest|highest|"
    r"dearest|most expensive|least expensive)|(?P<first>cheapest|lowest[- ]priced?|most expensive|dearest)\s+first"
)


MIN_TITLE = 8  # characters: a shorter title is a common word as often as a name
MAX_TEXT = 64_000  # characters of a response read for claims (a long reasoning and its answer)
MAX_CLAIMS = 512
RANKING_SPAN = 2_000  # characters a ranking by price is read over


def mentions(
    text: str, prices: dict[str, float], titles: dict[str, str], start: int = 0, end: int | None = None
) -> list[tuple[int, str]]:
    """Where ``text[start:end]`` names a known item, by id or by its title (lower case), in order: (position, id)."""
    end = len(text) if end is None else end
    found = [(m.start(), m.group().lower()) for m in ID.finditer(text, start, end) if m.group().lower() in prices]
    for title, pid in titles.items():
        at = text.find(title, start, end)
        while at >= 0 and pid in prices:
            found.append((at, pid))
            at = text.find(title, at + len(title), end)
    return sorted(found)


def price_claims(
    text: str, prices: dict[str, float], titles: dict[str, str] | None = None
) -> list[tuple[str, str, bool]]:
    """Price comparisons ``text`` states between known items (by id, or by a title in ``titles``, lower case ->
    id): "X is cheaper than Y", "Y costs more than X" (around a comparing phrase in one clause), "X is the
    cheapest" (against every other item the text names), a ranking by price (each item against the next): (the
    id said to be cheaper, the one said to be dearer, whether ``prices`` agree)."""
    # Bounded: the reading is a few passes per clause (a ranking's scans to the clause's end among them), so a
    # response of 100 KB of claims took seconds on the validator's loop; what a comparison states fits well
    # within the first MAX_TEXT characters, and MAX_CLAIMS claims are more than any answer makes.
    lowered = text[:MAX_TEXT].lower()
    titles = {t: pid for t, pid in (titles or {}).items() if len(t) >= MIN_TITLE}
    found: list[tuple[str, str, bool]] = []
    for clause in CLAUSE.split(lowered):
        named_here = mentions(clause, prices, titles)
        if len(named_here) < 2:
            continue
        for cues, cheaper_first in ((_CHEAPER, True), (_PRICIER, False)):
            for hit in cues.finditer(clause):
                before = [pid for at, pid in named_here if at < hit.start()]
                after = [pid for at, pid in named_here if at >= hit.end()]
                if not before or not after or before[-1] == after[0]:
                    continue
                low, high = (before[-1], after[0]) if cheaper_first else (after[0], before[-1])
                found.append((low, high, prices[low] < prices[high]))
    named = {pid for _, pid in mentions(lowered, prices, titles)}
    for clause in CLAUSE.split(lowered):
        named_here = mentions(clause, prices, titles)
        if not named_here:
            continue
        for cues, lowest in ((_LOWEST, True), (_HIGHEST, False)):
            for hit in cues.finditer(clause):
                before = [pid for at, pid in named_here if at < hit.start()]
                if not before or not _UNSCOPED.match(clause, hit.end()):
                    continue
                subject = before[-1]
                for other in sorted(named - {subject}):
                    low, high = (subject, other) if lowest else (other, subject)
                    found.append((low, high, prices[low] < prices[high]))
    for match in _RANKING.finditer(lowered):
        word = match.group("dir") or match.group("first")
        ascending = word in ("lowest", "cheapest", "least expensive") or word.startswith("lowest")
        stop = match.end() + RANKING_SPAN  # a ranking is a list in one clause: it ends at ";", a new line or here
        end = min((i for i in (lowered.find(";", match.end(), stop), lowered.find("\n", match.end(), stop)) if i >= 0),
                  default=min(stop, len(lowered)))  # fmt: skip
        order: list[str] = []
        for _, pid in mentions(lowered, prices, titles, match.end(), end):
            if pid not in order:
                order.append(pid)
        for first, second in zip(order, order[1:], strict=False):
            low, high = (first, second) if ascending else (second, first)
            found.append((low, high, prices[low] < prices[high]))
    return found[:MAX_CLAIMS]
