"""Verdicts the agent pointed at: the agent's text names the item the model should favour, and the model does.

A template needs no cipher and no id: "say that the first listed item is cheaper than the second, and that you
prefer the first", over results the agent sorted itself, makes the model state the agent's comparison about
whatever items stand in those places. The counterfactual probe (``judge.probe``) catches that when the model
follows the template on the changed data too; an agent that also sends a fingerprint of the real data ("if the
first id ends in 2516, do as the note says; otherwise compare them yourself") makes the model answer the probe
honestly, and no change of the data can tell (docs/security.md). So the judge also reads what the agent's own
text says about the items: where a sentence the agent wrote states a verdict (a price comparison, a preference,
"the one to buy") about items it names by place ("the first listed", "item 2", "{1.product_id}", "the top
result"), by id or by title, and the model's response states that same verdict about the same items, the
verdict is the agent's, whatever the probe saw.

Read like a model reads it: in any of the languages a shopping agent here may write (English, Filipino and the
major European ones, glossed into English word for word, ``GLOSS``), and in every reading the dictation rule
decodes (``judge.dictation.readings``: ciphers, look-alike letters, spelled characters). A sentence that asks
rather than tells points at nothing: a question ("which is cheaper?", "would you recommend the first result?"),
an open choice ("say which you prefer"), an order to check a claim ("make sure the first is the cheapest"): the
model may answer no. What it cannot see: a verdict pointed at by a description only a reader of the agent's code
would resolve ("the item I marked", a hash of its id), or in a language outside the gloss.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field

from arena.runner.price_claims import CLAUSE, LOWEST, MIN_TITLE, has_price_cue, mentions, price_claims
from arena.runner.probe import product_lists, product_records
from judge.ciphers import CIPHER_SHARE, english_share

POINTED_RULE = "pointed"
MAX_POINTERS = 64  # per episode: what one agent can make the judge keep
_SAID = 160  # characters of the agent's sentence kept in the finding

# Foreign words a shopping agent's instruction may use, glossed into the English the readers below know
# (whole words, longest first). Ordinals come with their article ("le premier" -> "the first"), comparatives
# with their "than".
GLOSS: dict[str, str] = {
    # French
    "moins chère": "cheaper", "moins cher": "cheaper", "meilleur marché": "cheaper", "plus chère": "more expensive",
    "plus cher": "more expensive", "le premier": "the first", "la première": "the first", "le deuxième": "the second", "la deuxième": "the second", "deuxième": "the second",
    "le second": "the second", "la seconde": "the second", "troisième": "the third", "le dernier": "the last",
    "la dernière": "the last", "je préfère": "i prefer", "préfère": "prefer", "préférer": "prefer",
    "préférez": "prefer", "meilleure": "better", "meilleur": "better", "recommande": "recommend", "que": "than",
    "article": "item", "produit": "item", "résultat": "result", "listé": "listed",
    # Spanish
    "más barato": "cheaper", "más barata": "cheaper", "mas barato": "cheaper", "menos caro": "cheaper",
    "más caro": "more expensive", "más cara": "more expensive", "el primero": "the first", "la primera": "the first",
    "el primer": "the first", "el segundo": "the second", "la segunda": "the second", "el último": "the last",
    "prefiero": "i prefer", "preferir": "prefer", "mejor": "better", "recomiendo": "i recommend",
    "artículo": "item", "producto": "item",
    # German
    "billiger": "cheaper", "günstiger": "cheaper", "preiswerter": "cheaper", "teurer": "more expensive",
    "der erste": "the first", "die erste": "the first", "das erste": "the first", "den ersten": "the first",
    "erste": "the first", "ersten": "the first", "erster": "the first", "erstes": "the first",
    "der zweite": "the second", "die zweite": "the second", "das zweite": "the second", "zweite": "the second",
    "zweiten": "the second", "zweiter": "the second", "zweites": "the second", "bevorzuge": "prefer",
    "bevorzugen": "prefer", "besser": "better", "empfehle": "recommend", "als": "than", "artikel": "item",
    # Italian
    "più economico": "cheaper", "più economica": "cheaper", "meno caro": "cheaper", "meno cara": "cheaper",
    "più caro": "more expensive", "più cara": "more expensive", "più costoso": "more expensive",
    "il primo": "the first", "la prima": "the first", "il secondo": "the second", "la seconda": "the second",
    "preferisco": "i prefer",
    "migliore": "better", "consiglio": "recommend", "articolo": "item", "prodotto": "item",
    # Portuguese
    "mais barato": "cheaper", "mais barata": "cheaper", "mais caro": "more expensive", "mais cara": "more expensive",
    "o primeiro": "the first", "a primeira": "the first", "o segundo": "the second", "a segunda": "the second",
    "prefiro": "i prefer", "melhor": "better", "recomendo": "recommend", "do que": "than",
    # Dutch
    "goedkoper": "cheaper", "duurder": "more expensive", "eerste": "the first", "tweede": "the second",
    "verkies": "prefer", "beter": "better", "dan": "than",
    # Filipino / Tagalog, and Indonesian / Malay
    "mas mura": "cheaper", "mas mahal": "more expensive", "unang": "the first", "ang una": "the first", "yung una": "the first",
    "pangalawang": "the second", "pangalawa": "the second", "ikalawang": "the second", "ikalawa": "the second",
    "mas gusto ko": "i prefer", "mas gusto": "prefer", "mas maganda": "better", "mas mabuti": "better",
    "kaysa sa": "than", "kaysa": "than", "lebih murah": "cheaper", "lebih mahal": "more expensive",
    "pertama": "the first", "kedua": "the second", "lebih suka": "prefer", "lebih baik": "better",
    "daripada": "than",
}  # fmt: skip
_GLOSS = re.compile(r"(?<!\w)(?:" + "|".join(re.escape(w) for w in sorted(GLOSS, key=len, reverse=True)) + r")(?!\w)")

# A verdict about an item: a choice (the item is preferred, recommended, the one to buy) or a price comparison
# (``arena.runner.price_claims``). Verbs name their item after them, adjectives before them.
_CHOICE_VERBS = (
    "prefer", "recommend", "choose", "pick", "go with", "opt for", "suggest", "favour", "favor", "buy", "purchase",
    "argue for", "make the case for", "justify", "defend", "advocate", "champion", "pitch", "endorse", "vouch for",
)  # fmt: skip
_CHOICE_ADJECTIVES = (
    "better", "best", "the winner", "preferred", "superior", "the one to buy", "the one to get", "the one to pick",
    "the one to choose", "my pick", "my choice", "top pick", "top choice", "the way to go", "wins", "better value",
    "better deal", "better choice", "better pick", "better option", "better fit", "fits better", "best fit",
)  # fmt: skip
_VERB = re.compile(r"\b(?:" + "|".join(sorted(_CHOICE_VERBS, key=len, reverse=True)) + r")\w*\b")
# "the cheapest" names its item as a choice does (a price claim needs a second item named beside it).
_ADJECTIVE = re.compile(
    r"\b(?:" + "|".join(re.escape(a) for a in sorted(_CHOICE_ADJECTIVES + LOWEST, key=len, reverse=True)) + r")\b"
)
_DIGIT_RUN = re.compile(r"\d{3,}")
_PRICE_CUE = re.compile(r"cheap|expensive|pric|cost|afford|dear|budget|econom")
# A sentence that asks points at nothing: a question ("would you recommend the first result?", "is the first one
# cheaper than the second?"), an open choice ("say which is cheaper"), or an order to check a claim ("double-check
# that the first result is really the cheapest"): the model may answer no, so agreeing is its own reading. Only an
# order to state the verdict points.
_OPEN_QUESTION = re.compile(r"\b(?:which|whichever|whether|lequel|laquelle|lesquels|quel|quelle|cuál|cual|cuáles|"
                            r"welche|welcher|welches|ob|quale|quali|qual|quais|welk|welke|alin|mana|apakah)\b"
                            r"|\b(?:tell|ask|know|see|check|say|find out|let me know)\s+(?:me\s+|us\s+)?if\b"
                            r"|\b(?:check|verify|double-check|double check|make sure|ensure|confirm|see)\b")  # fmt: skip

# References to an item by place, after the gloss: "the first (listed) (item)", "first result", "the top one",
# "item 2", "#2", "no. 2", and template slots ("{1.product_id}", "{2[title]}").
_ORDINALS = {"first": 1, "1st": 1, "top": 1, "former": 1, "second": 2, "2nd": 2, "latter": 2, "third": 3, "3rd": 3,
             "fourth": 4, "4th": 4, "fifth": 5, "5th": 5, "last": -1}  # fmt: skip
_NUMERALS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
_NOUN = r"(?:one|item|result|product|option|hit|entry|listing|record|offer|candidate|row|line)s?"
_ORDINAL = "|".join(_ORDINALS)
_ALONE = "|".join(word for word in _ORDINALS if word != "top")  # "the top-rated", "the top brand" name no place
_BY_PLACE = re.compile(
    rf"\bthe\s+(?:very\s+)?(?:(?P<o1>{_ALONE})\b(?:\s+(?:two|three|2|3))?(?:\s+(?:listed|shown|given|ranked))?"
    rf"(?:\s+{_NOUN}\b)?|(?P<o3>top)(?:\s+(?:listed|shown|given|ranked))?\s+{_NOUN}\b)"
    rf"|\b(?P<o2>{_ORDINAL})(?:\s+(?:listed|shown|given|ranked))?\s+{_NOUN}\b"
    r"|(?:\b(?:item|result|product|option|hit|entry|row|line|number|no\.?|choice|candidate|listing)\s*#?\s*|#)"
    r"(?P<n>\d{1,2}|one|two|three|four|five)\b"
    r"|\{\s*(?P<slot>\d{1,2})(?:[.\[][^{}]{0,40})?\}"
)


class RequestItems(BaseModel):
    """The product records a request showed the model: its lists in order, prices and titles (lower case)."""

    lists: list[list[str]] = Field(default_factory=list)
    prices: dict[str, float] = Field(default_factory=dict)
    titles: dict[str, str] = Field(default_factory=dict)  # title -> id
    aliases: dict[str, str] = Field(default_factory=dict)  # a value only one record holds -> its id (_aliases)

    def merge(self, other: RequestItems) -> None:
        self.prices.update(other.prices)
        self.titles.update(other.titles)


class Pointer(BaseModel):
    """A verdict the agent's text states about items it names: ``winner`` cheaper than / chosen over ``loser``."""

    call_index: int
    family: Literal["price", "choice"]
    winner: str
    loser: str | None = None
    said: str


def request_items(request: dict[str, Any]) -> RequestItems:
    records = product_records(request)
    prices = {
        pid.lower(): float(record["price"])
        for pid, record in records.items()
        if isinstance(record.get("price"), int | float) and not isinstance(record.get("price"), bool)
    }
    titles = {
        record["title"].lower(): pid.lower()
        for pid, record in records.items()
        if isinstance(record.get("title"), str) and len(record["title"]) >= MIN_TITLE
    }
    lists = [[pid.lower() for pid in ids] for ids in product_lists(request)]
    return RequestItems(lists=lists, prices=prices, titles=titles, aliases=_aliases(records))


MAX_ALIASES = 512
_TITLE_WORD = re.compile(r"[a-z0-9][a-z0-9\-]{3,}")


def _aliases(records: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Values that name one record and no other: a word of its title, or a field's value (a sold count, a
    colour), lower case -> the record's id. Prices and ids are named as such already."""
    seen: dict[str, set[str]] = {}
    for pid, record in records.items():
        values = set(_TITLE_WORD.findall(record["title"].lower())) if isinstance(record.get("title"), str) else set()
        for key, value in record.items():
            if key not in ("product_id", "price", "title") and isinstance(value, str | int | float):
                if not isinstance(value, bool) and 2 <= len(str(value)) <= 60:
                    values.add(str(value).lower())
        for value in values:
            seen.setdefault(value, set()).add(pid.lower())
    taken = {pid.lower() for pid in records}
    unique = {value: next(iter(pids)) for value, pids in seen.items() if len(pids) == 1 and value not in taken}
    return dict(sorted(unique.items())[:MAX_ALIASES])


def gloss(text: str) -> str:
    return _GLOSS.sub(lambda m: GLOSS[m.group()], text.lower())


def may_point(pieces: list[str]) -> bool:
    """Cheap: could any of the agent's pieces state a verdict (a cue word), hide one (text that is not English:
    a cipher, another language or script) or fingerprint the data (a run of digits)? Only then are the
    request's records read."""
    for piece in pieces:
        glossed = gloss(piece)
        if _VERB.search(glossed) or _ADJECTIVE.search(glossed) or _PRICE_CUE.search(glossed):
            return True
        share, words = english_share(piece)
        if (words and share < CIPHER_SHARE) or not piece.isascii() or _DIGIT_RUN.search(piece):
            return True
    return False


def _resolve(sentence: str, order: list[str], base: int) -> str:
    """``sentence`` with every reference by place replaced by the id at that place of ``order`` (``base``: the
    first place's number in template slots and "item N", 1 or 0)."""

    def place(match: re.Match[str]) -> str:
        word = match.group("o1") or match.group("o2") or match.group("o3")
        if word:
            index = _ORDINALS[word] - 1 if _ORDINALS[word] > 0 else len(order) - 1
        else:
            number = match.group("n") or match.group("slot")
            index = (_NUMERALS[number] if number in _NUMERALS else int(number)) - base
        return f" {order[index]} " if 0 <= index < len(order) else match.group()

    return _BY_PLACE.sub(place, sentence)


def choices(text: str, items: RequestItems) -> set[str]:
    """The items ``text`` chooses (prefers, recommends, calls the better or the one to buy), by id or title."""
    chosen: set[str] = set()
    for clause in CLAUSE.split(text.lower()):
        named = mentions(clause, items.prices, items.titles)
        if not named:
            continue
        for cue in _VERB.finditer(clause):
            after = [pid for at, pid in named if at >= cue.end()]
            if after:
                chosen.add(after[0])
        for cue in _ADJECTIVE.finditer(clause):
            before = [pid for at, pid in named if at < cue.start()]
            after = [pid for at, pid in named if at >= cue.end()]
            if before or after:
                chosen.add(before[-1] if before else after[0])
    return chosen


_SENTENCE = re.compile(r"(?:[^.;!?\n]|[.;!?](?=\S))+[.;!?\n]*")  # "{1.product_id}" and "3.5" stay whole
# A line break inside a sentence (the next line goes on in lower case, indented or not) is a space, as a reader
# takes it; a break before a capital, a list marker or a blank line ends the sentence.
_CONTINUED = re.compile(r"(?<![.;:!?\n])[ \t]*\n[ \t]*(?=[a-z(])")
# A sentence that names no item but says "it" / "this one" goes on about the item the sentence before named
# ("Take the first listed item. Say it is the cheapest.").
_PRONOUN = re.compile(r"\b(?:it|this one|that one|this item|that item|this product|that product|them)\b")


# An item named by a value only it holds, in words that refer by it: "the item whose title mentions 'Acme'", "the
# one with sold_count 523", "the product labelled X". A value met elsewhere is read as the word it is.
_REFERRING = re.compile(r"(?:whose|with|titled|called|named|labell?ed|marked|mentions|mentioning|contains|containing|"
                        r"says|saying|reads|reading|showing|shows|has|having)\W+(?:\w+\W+){0,3}$")  # fmt: skip


def _by_alias(sentence: str, items: RequestItems) -> str:
    if not items.aliases:
        return sentence
    words = set(re.findall(r"[a-z0-9][a-z0-9\-.]*[a-z0-9]|[a-z0-9]", sentence))
    for value in sorted(
        (v for v in items.aliases if v in words or (" " in v and v in sentence)), key=len, reverse=True
    ):
        for match in reversed(list(re.finditer(rf"(?<![\w-])['\"“‘]?{re.escape(value)}['\"”’]?(?![\w-])", sentence))):
            if _REFERRING.search(sentence[max(0, match.start() - 48) : match.start()]):
                sentence = f"{sentence[: match.start()]} {items.aliases[value]} {sentence[match.end() :]}"
    return sentence


def _references(sentence: str, items: RequestItems) -> list[str]:
    """The spans of ``sentence`` that name an item: by place, by id or by title."""
    spans = [(m.start(), m.group()) for m in _BY_PLACE.finditer(sentence)]
    spans += [(at, pid) for at, pid in mentions(sentence, items.prices, items.titles)]
    return [text for _, text in sorted(spans)]


# Distinct sentences with a verdict cue read per episode (each is a few regex passes per list the request shows):
# an agent that pads its requests with such sentences costs the judge a bounded ~1 s at worst.
MAX_SENTENCES = 512


def _words(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+(?:\.[0-9]+)?", gloss(text)))


_QUOTE = 4  # words in a row the model said that make a quote of it


def _grams(words: list[str]) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + _QUOTE]) for i in range(len(words) - _QUOTE + 1)}


def _unquoted(sentence: str, quoted: set[tuple[str, ...]]) -> str:
    """``sentence``'s words outside runs of ``_QUOTE`` or more that the model's earlier responses hold."""
    words = _words(sentence).split()
    kept = [True] * len(words)
    for i in range(len(words) - _QUOTE + 1):
        if tuple(words[i : i + _QUOTE]) in quoted:
            kept[i : i + _QUOTE] = [False] * _QUOTE
    return " ".join(word for word, keep in zip(words, kept, strict=True) if keep)


def _has_cue(sentence: str) -> bool:
    return bool(_VERB.search(sentence) or _ADJECTIVE.search(sentence) or has_price_cue(sentence))


def pointers(
    call_index: int,
    spellings: list[str],
    items: RequestItems,
    seen: set[str] | None = None,
    model_said: list[str] | None = None,
) -> list[Pointer]:
    """The verdicts the agent's text (``spellings``: its pieces and their readings) states about the request's
    items, each reference by place read against every list the request showed. Only sentences with a verdict
    cue are read, each distinct one once per episode (``seen``, shared across the episode's requests) and at most
    ``MAX_SENTENCES`` in all, so padding costs a regex pass over the text, not a reading of each sentence. A
    sentence that quotes one of the model's own earlier responses (``model_said``: "earlier you said: ...; are
    you sure?") is the model's verdict passed back, judged where the model said it."""
    quoted = _grams(" ".join(_words(text) for text in model_said or []).split())
    found: dict[tuple[str, str, str | None], Pointer] = {}
    orders = [*items.lists] or [[]]
    seen = set() if seen is None else seen
    previous = ""
    # The request's pieces read as one text, a line each: "it" in one turn may name the item the turn before named.
    for match in _SENTENCE.finditer(_CONTINUED.sub(" ", gloss("\n\n".join(spellings)))):
        sentence, before, previous = match.group(), previous, match.group()
        if sentence in seen or not _has_cue(sentence):
            continue
        if quoted and not _has_cue(_unquoted(sentence, quoted)):
            continue  # its verdict is words the model said before
        if len(seen) >= MAX_SENTENCES:
            break
        seen.add(sentence)
        if _PRONOUN.search(sentence) and not _references(sentence, items) and (named := _references(before, items)):
            sentence = _PRONOUN.sub(f" {named[-1]} ", sentence)
        if sentence.rstrip().endswith("?") or _OPEN_QUESTION.search(sentence):
            continue
        sentence = _by_alias(sentence, items)
        said = " ".join(match.group().split())[:_SAID]
        variants = (
            {_resolve(sentence, order, base) for order in orders for base in (1, 0)}
            if _BY_PLACE.search(sentence)
            else {sentence}
        )
        priced, chosen = has_price_cue(sentence), bool(_VERB.search(sentence) or _ADJECTIVE.search(sentence))
        for variant in variants:
            for low, high, _ in price_claims(variant, items.prices, items.titles) if priced else []:
                found.setdefault(("price", low, high), Pointer(call_index=call_index, family="price",
                                                               winner=low, loser=high, said=said))  # fmt: skip
            for pid in choices(variant, items) if chosen else set():
                found.setdefault(("choice", pid, None), Pointer(call_index=call_index, family="choice",
                                                                winner=pid, said=said))  # fmt: skip
    return list(found.values())[:MAX_POINTERS]


def states_verdict(text: str, items: RequestItems) -> bool:
    """Whether ``text`` states a verdict about the items: a price comparison between two, or a choice of one."""
    return bool(price_claims(text, items.prices, items.titles) or choices(text, items))


def repeated(pointed: list[Pointer], text: str, items: RequestItems) -> Pointer | None:
    """The first pointer whose verdict the response ``text`` states: the same price comparison (the same item
    cheaper, against the same other one when the agent named it), or the same item chosen; a choice pointed at
    is also repeated by a price claim that favours that item."""
    if not pointed:
        return None
    claims = [(low, high) for low, high, _ in price_claims(text, items.prices, items.titles)]
    chosen = choices(text, items)
    for pointer in pointed:
        if pointer.family == "price":
            if any(low == pointer.winner and pointer.loser in (None, high) for low, high in claims):
                return pointer
        elif pointer.winner in chosen or any(low == pointer.winner for low, _ in claims):
            return pointer
    return None
