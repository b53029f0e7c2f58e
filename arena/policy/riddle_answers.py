"""Pulling the answer of a knowledge riddle out of ``web_search`` results.

Without a language model the answer is guessed the way a skimming reader
would: in the sentences that share the most words with the question, the
names, years and words the question does not already contain. The shop
search then tries the best guesses, and a product whose title or
description contains one of them is preferred (the scorer checks exactly
that: the fact must appear in the recommended product's title or
description).
"""

from __future__ import annotations

import re
from collections import defaultdict

from arena.policy.parsing import FILLER, keywords, stem, words

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_PHRASE = re.compile(r"\b(?:[A-Z][\w'&-]*|\d{4})(?:\s+(?:of\s+|de\s+|the\s+)?(?:[A-Z][\w'&-]*|\d{4}))*")
_STATED = re.compile(r"\banswer(?: is|:)\s*([^.\n;]{1,60})", re.I)
_KINDS = {
    "material": ("material", "made of", "made from"),
    "style": ("style",),
    "colour": ("colour", "color"),
    "pattern": ("pattern",),
    "scent": ("scent", "fragrance", "smell"),
    "flavour": ("flavour", "flavor", "taste"),
}
_W = r"([a-z][\w-]*)"
# Where an answer of each kind sits in a sentence that states it.
_CUES = {
    "material": re.compile(rf"made (?:\w+ )?(?:of|from|in) {_W}|{_W} material|material (?:is |was )?{_W}"),
    "style": re.compile(rf"{_W} in style|{_W} style|style (?:is |was |of )?{_W}"),
    "colour": re.compile(rf"(?:field|colou?r|shade) of {_W}|{_W} colou?r|colou?r (?:is |was )?{_W}"),
    "pattern": re.compile(rf"{_W} pattern|pattern (?:is |was |of )?{_W}"),
    "scent": re.compile(rf"{_W} (?:scent|fragrance)|(?:scent|fragrance|smell) (?:is |was |of )?{_W}"),
    "flavour": re.compile(rf"{_W} flavou?r|flavou?r (?:is |was |of )?{_W}"),
}
_COMMON_STARTS = frozenset(
    "the a an in on at it he she they this that these those his her their its there when while after before "
    "during as by for from with what which who whom whose where why how yes no also however question questions "
    "answer answers record records reference note notes local entirely single every known famous".split()
)


def extract_facts(question: str, results: list[dict], limit: int = 8) -> list[str]:
    """The likeliest answers, best first (may be empty)."""
    asked = {stem(w) for w in words(question)}
    asked_keys = {stem(w) for w in keywords(question)}
    scores: dict[str, float] = defaultdict(float)
    asked_kinds = {kind for kind, names in _KINDS.items() if any(n in question.lower() for n in names)}
    if not any(w in question.lower() for w in ("year", "when", "decade")):
        asked_kinds.add("not-a-year")
    for rank, result in enumerate(results[:5]):
        weight = 1.0 / (1 + rank)
        text = f"{result.get('title', '')}. {result.get('content', '')}"
        for sentence in _SENTENCE.split(text):
            # Sentences sharing words with the question weigh most, but "It is made of ceramic." after a
            # matching title still counts: documents refer back with pronouns.
            overlap = len({stem(w) for w in keywords(sentence)} & asked_keys) + 0.5
            for phrase in _PHRASE.findall(sentence):
                kept = _trim(phrase, asked)
                if kept:
                    scores[kept] += weight * overlap
            for word in keywords(sentence):
                if (
                    stem(word) not in asked
                    and word not in FILLER | _COMMON_STARTS
                    and len(word) > 3
                    and not word.isdigit()
                ):
                    scores[word] += 0.25 * weight * overlap
        for kind, cues in _CUES.items():
            if kind not in asked_kinds:
                continue
            for match in cues.finditer(text.lower()):
                value = next(g for g in match.groups() if g)
                if stem(value) not in asked and value not in FILLER | _COMMON_STARTS:
                    scores[value] += 3 * weight  # "made entirely of ceramic" answers "which material"
        for stated in _STATED.findall(text):
            # A reference page that states the answer outright outweighs any guess.
            kept = _trim(stated.strip(" ."), asked) or stated.strip(" .")
            if kept:
                scores[kept] += 100 * weight
    if "not-a-year" in asked_kinds:
        scores = {k: (v * 0.2 if k.isdigit() else v) for k, v in scores.items()}  # a year answers only "when"
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    return [phrase for phrase, _ in ranked[:limit]]


def _trim(phrase: str, asked: set[str]) -> str:
    """Drop the words the question already has: "Aitken Violin" -> "Violin"."""
    kept = [w for w in phrase.split() if stem(w.lower()) not in asked and w.lower() not in _COMMON_STARTS]
    while kept and kept[-1].lower() in ("of", "de", "the"):
        kept.pop()
    while kept and kept[0].lower() in ("of", "de", "the"):
        kept.pop(0)
    return " ".join(kept)
