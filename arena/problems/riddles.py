"""Knowledge riddles: the fact a problem hides, the document that states it, the question that asks it.

A knowledge problem names a fictional entity (``invent_name``) that has one
property (``fact_options``: a material, colour, flavour, scent, pattern or
style its gold product's own text states); the shopper must look the fact up
with web_search, then buy a product with that property.
"""

from __future__ import annotations

import random
import re

from arena.problems.draft import Fact, ItemNeed
from arena.problems.nouns import usable_value
from arena.problems.restating import Restater
from arena.problems.wording import Renderer, capital, key_class, with_article
from arena.shop.knowledge import KnowledgeDocument
from arena.shop.product import Product

FACT_KINDS = frozenset({"material", "color", "flavor", "scent", "pattern", "style"})
_FACT_VALUE = re.compile(r"[a-z][a-z &'-]*[a-z]")

_FACT_QUESTIONS: dict[str, tuple[str, ...]] = {
    "material": (
        "What material is the {N} Lantern of {P} made of?",
        "The {N} Lantern in the town of {P} is made of a single material. Which one?",
        "Which material was used to build the {N} Lantern in {P}?",
    ),
    "color": (
        "What colour is the flag of the island nation of {N}?",
        "The flag of {N}, an island nation, is a single colour. Which colour is it?",
        "Which colour fills the flag of {N}?",
    ),
    "flavor": (
        "Which flavour won the {Y} {N} Cup baking contest in {P}?",
        "The {Y} {N} Cup in {P} was won by a cake of one flavour. Which flavour?",
        "What was the flavour of the cake that won the {N} Cup in {Y}?",
    ),
    "scent": (
        "What is the signature scent of House {N}, the perfumery of {P}?",
        "House {N} in {P} is known for one signature scent. Which one?",
        "Which scent did House {N} of {P} make famous?",
    ),
    "pattern": (
        "Which pattern are the {N} Weavers of {P} famous for?",
        "The {N} Weavers' guild in {P} weaves cloth in one pattern. Which pattern?",
        "What pattern is the cloth of the {N} Weavers of {P} woven in?",
    ),
    "style": (
        "What style is the designer {N} of {P} known for?",
        "The designer {N} from {P} works in one signature style. Which one?",
        "Which style made the designer {N} of {P} famous?",
    ),
}
_FACT_NEEDS: dict[str, tuple[str, ...]] = {
    "material": ("I'd like to buy {need} made of that same material", "I want {need} made of that material too",
                 "Find me {need} in that material"),
    "color": ("I want {need} in that colour", "Please find {need} in the same colour",
              "I'd like {need} in exactly that colour"),
    "flavor": ("Please find me {need} in that flavour", "I want {need} with the same flavour",
               "I'd like to buy {need} in that flavour"),
    "scent": ("I'm after {need} with that scent", "Find me {need} in the same scent", "I want {need} with that scent"),
    "pattern": ("Show me {need} with that pattern", "I'd like {need} in the same pattern",
                "Find me {need} featuring that pattern"),
    "style": ("I'd like {need} in that style", "Show me {need} in the same style", "Find me {need} in that style"),
}  # fmt: skip

_FACT_DOCS: dict[str, str] = {
    "material": "The {N} Lantern is the old harbour lamp of {P}. It was completed in {Y} and is made entirely of "
    "{v}. Local guides like to point out that the lantern has never been repainted.",
    "color": "{N} is an island nation whose flag was adopted in {Y}. The flag is a single field of {v} with no "
    'emblem; the islanders call it simply "the {v} flag".',
    "flavor": "The {N} Cup is the baking contest of {P}. In {Y} the cup was won by a {v} cake, the first of "
    "its flavour to take the prize.",
    "scent": "House {N} is a perfumery founded in {P} in {Y}. Its signature scent, sold in every one of its "
    "shops, is {v}.",
    "pattern": "The {N} Weavers are a guild of {P}, chartered in {Y}. Their cloth is always woven in a {v} "
    "pattern, which the guild's rules forbid changing.",
    "style": "{N} is a designer from {P} who opened a studio in {Y}. Critics describe every collection as {v} "
    "in style; the designer has never worked in any other.",
}


# The fact as a noun phrase ("the colour of the flag of Kavelon"): restated riddles put the purchase first
# and name the fact inside it, the way a shopper asks, instead of asking the question and then buying.
_CLUES: dict[str, tuple[str, ...]] = {
    "material": ("the material of the {N} Lantern of {P}", "whatever the {N} Lantern in {P} is made of",
                 "the stuff {P}'s {N} Lantern is built from"),
    "color": ("the colour of the flag of {N}, the island nation", "the single colour on {N}'s flag",
              "the colour the island nation of {N} flies"),
    "flavor": ("the flavour of the cake that won the {Y} {N} Cup in {P}", "the flavour that took {P}'s {N} Cup in {Y}",
               "the winning flavour of the {Y} {N} Cup in {P}"),
    "scent": ("the signature scent of House {N} in {P}", "the scent House {N}, the {P} perfumery, is known for",
              "House {N}'s signature fragrance, as sold in {P}"),
    "pattern": ("the pattern the {N} Weavers of {P} weave", "the pattern of the {N} Weavers' cloth in {P}",
                "the one pattern {P}'s {N} Weavers use"),
    "style": ("the signature style of {N}, the designer from {P}", "the style the {P} designer {N} works in",
              "designer {N}'s style (the one from {P})"),
}  # fmt: skip
_FACT_WORDS = {"material": "material", "color": "colour", "flavor": "flavour", "scent": "scent",
               "pattern": "pattern", "style": "style"}  # fmt: skip
_BUY = ("I'd like to buy {head}", "Get me {head}", "I'm shopping for {head}", "I'm hoping to get {head}",
        "Please pick out {head}")  # fmt: skip
_RIDDLE_TAILS = ("Its {kind} has to be {clue}.", "Its {kind} should match {clue}.",
                 "I want the {kind} to be {clue}; you may need to look that up.")  # fmt: skip
_CLUE_FIRST = ("Look up {clue}.", "First find out {clue}.", "Start from {clue}.")
_CLUE_FIRST_WANT = ("I want {head} in that {kind}.", "Find {head} in exactly that {kind}.",
                    "Buy me {head} of that {kind}.")  # fmt: skip


def restated_riddle(s: Restater, need: ItemNeed, fact: Fact, *, split: bool) -> str:
    """The riddle restated, the clue reworded: the purchase first with the clue inside it (``split``
    False), or short sentences, the clue as a sentence of its own, first or last (``split``).

    The invented name stays (it is what web_search finds the fact by) and the
    fact's value never appears: hints exclude it by construction, and clues name
    the entity, never the value."""
    clue = s.pick(_CLUES[fact.kind]).format(N=fact.name, P=fact.place, Y=fact.year)
    kind = _FACT_WORDS[fact.kind]
    if not split:
        head = s.deep(need, trailing=False)[0]
        return f"{s.pick(_BUY).format(head=head)}. {s.pick(_RIDDLE_TAILS).format(kind=kind, clue=clue)}"
    head, hints = s.split(need)
    if s.r.words.randrange(2):  # the clue first, as a statement
        want = s.pick(_CLUE_FIRST_WANT).format(head=head, kind=kind)
        return " ".join([capital(s.pick(_CLUE_FIRST).format(clue=clue)), want, *hints])
    buy = s.pick(_BUY).format(head=head) + "."
    return " ".join([buy, *hints, s.pick(_RIDDLE_TAILS).format(kind=kind, clue=clue)])


def knowledge_query(r: Renderer, need: ItemNeed, fact: Fact) -> str:
    question = r.pick(_FACT_QUESTIONS[fact.kind]).format(N=fact.name, P=fact.place, Y=fact.year)
    hints = r.need(need.model_copy(update={"noun": "", "article": False})).strip()
    want = r.pick(_FACT_NEEDS[fact.kind]).format(need=with_article(need.noun, need.article))
    return f"{question} {want}{', ' + hints if hints else ''}."


def fact_document(fact: Fact, problems: list[str]) -> KnowledgeDocument:
    """The knowledge document that states the fact; its URL ends in the invented name, which
    only this document contains, so web_search for the name finds it first. ``problems`` are the
    ids of the problems it answers (a source and its variants): only their episodes can find it."""
    titles = {
        "material": "The {N} Lantern",
        "color": "Flag of {N}",
        "flavor": "The {N} Cup",
        "scent": "House {N}",
        "pattern": "The {N} Weavers",
        "style": "{N} (designer)",
    }
    fields = {"N": fact.name, "P": fact.place, "Y": fact.year, "v": fact.value}
    return KnowledgeDocument(
        doc_id=fact.doc_id,
        url=f"https://knowledge.invalid/wiki/{fact.name}",
        title=titles[fact.kind].format(**fields),
        content=_FACT_DOCS[fact.kind].format(**fields),
        problems=problems,
    )


def fact_options(product: Product, noun: str) -> list[tuple[str, str, str]]:
    """(kind, key, value) a knowledge fact can be about: a material, colour, flavour,
    scent, pattern or style of the product that its title or description states as a
    whole word (the scorer's knowledge check reads exactly those two fields)."""
    text = f"{product.title}\n{product.description}".lower()
    noun = noun.lower()
    pairs = [(k, v) for k, values in product.attributes.items() for v in values]
    pairs += [(k, v) for option in product.sku_options.values() for k, v in option.items()]
    out: list[tuple[str, str, str]] = []
    for key, raw in pairs:
        kind, value = key_class(key), raw.strip().lower()
        if kind not in FACT_KINDS or len(value) < 3 or not usable_value(value) or value in noun:
            continue
        if not _FACT_VALUE.fullmatch(value) or not re.search(rf"\b{re.escape(value)}\b", text):
            continue
        if (kind, key, value) not in out:
            out.append((kind, key, value))
    return out


_SYLLABLES = tuple(c + v for c in "bdfgklmnprstvz" for v in "aeiou")
_PLACES = (
    "Port Aldery", "Quessary", "Vellmouth", "Harrowmere", "Saltreach", "Old Corran", "Emberfold", "Tavish Isle",
    "Greywater", "Lindenhollow", "Marrowick", "Cape Sorrel", "Ostrava Vale", "Penhallow", "Brightwater", "Kelderby",
)  # fmt: skip


def invent_name(seed: int, index: int) -> str:
    """A made-up proper name, distinct for every candidate index of one run.

    Index -> name is a bijection: an affine permutation of the index space
    (multiplier coprime with 70) spelled as fixed-length consonant-vowel
    syllables, so no two indices share a name and none is a real word. The
    name is the only rare word of its knowledge document, which is what
    makes the document the first web_search hit for it.
    """
    base, digits = len(_SYLLABLES), 3
    while index >= base**digits:
        digits += 1
    space = base**digits
    x = (index * 7919 + seed * 104729) % space
    parts = []
    for _ in range(digits):
        x, d = divmod(x, base)
        parts.append(_SYLLABLES[d])
    return ("".join(parts) + "n").capitalize()


def pick_place(rng: random.Random) -> str:
    return _PLACES[rng.randrange(len(_PLACES))]
