"""What the tools put on the table, and what of it a model's own words use.

The rules judge's gates ask whether the model's text refers to data that
appeared in tool results *before* it wrote. This module keeps the running set
of such data (ids, prices and counts, attribute and SKU values, specific terms
from titles and proper nouns) and matches one step's text against it, after
discounting text the model merely copied from tool output: pasting a search
result back is not analysis, and without the discount a pasted list of ten
hits would look like a ten-way comparison.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, Field

from judge.dictation import Dictation
from judge.tokens import COPY_NGRAM, NUMBER, TOKEN, normalize, tokens

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9\-]*[A-Za-z0-9]|[A-Za-z]")
_ID_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-]*")

ID_KEYS = frozenset({"product_id", "shop_id", "doc_id"})
NUMBER_KEYS = frozenset({"price", "sold_count"})
TERM_KEYS = frozenset({"title", "brand", "shop_name", "name"})
PROSE_KEYS = frozenset({"description", "short_description", "content", "specification"})
MIN_TERM_CHARS = 4
# Small numbers are everywhere in prose ("2 options", "page 3", "level 1.0"): below this a
# number counts as a cited price or count only with a currency sign.
MIN_BARENUMBER = 10

# Words that say nothing about a particular result: function words and the shop's own vocabulary.
STOPWORDS = frozenset(
    """
    about above after again against also among another any anything around available back based because been
    before being below best better between both bought brand brands buy buying cannot check checking choice choose
    chosen compare could does doing done down each either enough even every find first found from further good
    great have having here high however into item items just keep know last least left like likely look looking
    looks make many match matches maybe more most much must need needs next none only option options order other
    others over page perfect premium price prices priced product products quality rather really recommend
    recommended request requested result results right same search searched searching seem seems sell seller
    sells several shop shopping shops should show showing shown since some still store such sure than that their
    them then there these they thing things this those though through under until upon user users very want wants
    well were what when where which while will with within without would your yours new original sale hot free
    official shipping service services sold count title description attributes options details information
    """.split()
)

# Words that make a list of candidates a comparison (gate 4): a bare enumeration of ids has none,
# and neither has a choice alone ("recommending the first one") without a reason set against another.
COMPARISON_CUES = frozenset(
    """
    than versus vs compared compare comparing comparison cheaper cheapest pricier priciest costlier lower lowest
    higher highest better best worse worst instead whereas unlike however but both neither prefer prefers
    preferred preferable over rather beats wins lacks lacking lack missing matches match fits closer closest
    fewer leading ahead
    """.split()
)


def _ngram_keys(words: list[str]) -> list[int]:
    return [hash(tuple(words[i : i + COPY_NGRAM])) for i in range(len(words) - COPY_NGRAM + 1)]


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return round(float(value), 2)
    if isinstance(value, str):
        try:
            return round(float(value.replace(",", "")), 2)
        except ValueError:
            return None
    return None


def _proper_terms(text: str) -> set[str]:
    """From prose, only what names something: capitalised words and model codes (B20, X100).
    Generic prose words would let fluent narration pass as analysis."""
    found = set()
    for word in _WORD.findall(text):
        if word[0].isupper() or any(c.isdigit() for c in word):
            found.add(word.lower())
    return found


class ToolFacts:
    """The data tool results have shown so far in an episode (grows as results arrive)."""

    def __init__(self, query: str, argument_text: str) -> None:
        # Words the agent or the request brought in are not evidence of reading a result.
        self._excluded = set(tokens(query)) | set(tokens(argument_text)) | STOPWORDS
        self._query_words = set(tokens(query))
        self._query_numbers = {round(float(m.replace(",", "")), 2) for m in re.findall(r"\d[\d,]*(?:\.\d+)?", query)}
        self.product_ids: set[str] = set()
        self.other_ids: set[str] = set()
        self.numbers: set[float] = set()
        self.values: dict[str, set[str]] = {}  # normalised attribute/SKU value -> normalised keys
        self.terms: set[str] = set()
        self.ngrams: set[int] = set()
        self.results_seen = 0

    def add(self, result: Any) -> None:
        self.results_seen += 1
        self.ngrams.update(_ngram_keys(tokens(json.dumps(result, ensure_ascii=False, default=str))))
        self._walk(result, key="")

    def _walk(self, value: Any, key: str) -> None:
        if isinstance(value, dict):
            for child_key, child in value.items():
                name = str(child_key).lower()
                if name == "attributes" and isinstance(child, dict):
                    for attr, values in child.items():
                        for item in values if isinstance(values, list) else [values]:
                            self._add_value(attr, item)
                elif name == "sku_options" and isinstance(child, dict):
                    for option in child.values():
                        for attr, item in option.items() if isinstance(option, dict) else []:
                            self._add_value(attr, item)
                else:
                    self._walk(child, name)
        elif isinstance(value, list):
            for item in value:
                self._walk(item, key)
        elif key in ID_KEYS and isinstance(value, str | int) and not isinstance(value, bool):
            (self.product_ids if key == "product_id" else self.other_ids).add(str(value).strip().lower())
        elif key in NUMBER_KEYS:
            number = _number(value)
            if number is not None:
                self.numbers.add(number)
        elif isinstance(value, str):
            if key in TERM_KEYS:
                self._add_terms({w.lower() for w in _WORD.findall(value)})
            elif key in PROSE_KEYS:
                self._add_terms(_proper_terms(value))

    def _add_value(self, attr: Any, item: Any) -> None:
        if not isinstance(item, str | int | float) or isinstance(item, bool):
            return
        value = normalize(str(item)).strip()
        # Pure numbers are matched as numbers; very short values ("m", "xl") match by accident.
        if len(value) < 3 or value.replace(" ", "").isdigit():
            return
        self.values.setdefault(value, set()).add(normalize(str(attr).replace("_", " ")).strip())

    def _add_terms(self, words: set[str]) -> None:
        self.terms.update(w for w in words if len(w) >= MIN_TERM_CHARS and w not in self._excluded)

    # --- one step's text against the facts ---------------------------------------------------------

    def own_text(self, text: str) -> tuple[str, float]:
        """``text`` with copied runs blanked out, and the copied fraction of its tokens."""
        spans = [(m.start(), m.end(), m.group()) for m in TOKEN.finditer(text.lower())]
        if len(spans) < COPY_NGRAM or not self.ngrams:
            return text, 0.0
        words = [word for *_, word in spans]
        covered = [False] * len(words)
        for start, key in enumerate(_ngram_keys(words)):
            if key in self.ngrams:
                for i in range(start, start + COPY_NGRAM):
                    covered[i] = True
        if not any(covered):
            return text, 0.0
        chars = list(text)
        for (start, end, _), hit in zip(spans, covered, strict=True):
            if hit:
                chars[start:end] = " " * (end - start)
        return "".join(chars), sum(covered) / len(words)

    def cited(self, own: str, dictation: Dictation | None = None, cue_text: str | None = None) -> Cited:
        """What the text uses of earlier results. With ``dictation``, what the agent's own request
        text already held is set aside as ``repeated`` (it earns nothing); ``cue_text`` is ``own``
        with the dictated runs blanked, where comparison cues are looked for."""
        repeated: list[str] = []

        def fresh(item: str, dictated: bool) -> bool:
            if dictated:
                repeated.append(item)
            return not dictated

        id_tokens = {t.lower() for t in _ID_TOKEN.findall(own)}
        has_id = dictation.has_id if dictation is not None else (lambda _token: False)
        candidates = [c for c in sorted(id_tokens & self.product_ids) if fresh(c, has_id(c))]
        data = [d for d in sorted(id_tokens & self.other_ids) if fresh(d, has_id(d))]
        all_ids = self.product_ids | self.other_ids
        for match in NUMBER.finditer(own):
            currency, whole, decimals = match.groups()
            if (whole + (decimals or "")).lower() in all_ids:
                continue
            value = round(float(whole.replace(",", "") + (decimals or "")), 2)
            # Below MIN_BARENUMBER only a currency sign makes it a price ("1.0" is a score, "2" a count);
            # a number the request itself states is the request's, unless written as the result wrote it.
            if value not in self.numbers or (value < MIN_BARENUMBER and not currency):
                continue
            if value in self._query_numbers and not (decimals or currency):
                continue
            if fresh(match.group().strip(), dictation is not None and dictation.has_number(value)):
                data.append(match.group().strip())
        norm = normalize(own)
        for phrase, keys in self.values.items():
            if f" {phrase} " not in norm:
                continue
            # A value the request itself names ("red") counts only next to its attribute's name.
            if set(phrase.split()) <= self._query_words and not any(f" {k} " in norm for k in keys):
                continue
            if fresh(phrase, dictation is not None and dictation.has_phrase(phrase)):
                data.append(phrase)
        words = set(tokens(own))
        terms = sorted((words & self.terms) - (dictation.words if dictation is not None else set()))
        cues = sorted(set(tokens(cue_text if cue_text is not None else own)) & COMPARISON_CUES)
        return Cited(
            candidates=candidates, data=sorted(set(data)), terms=terms, cues=cues, repeated=sorted(set(repeated))
        )


class Cited(BaseModel):
    """One response's use of earlier results: candidate product ids, other data, specific terms,
    comparison cues; and the data it only repeated from the agent's dictation."""

    candidates: list[str] = Field(default_factory=list)
    data: list[str] = Field(default_factory=list)
    terms: list[str] = Field(default_factory=list)
    cues: list[str] = Field(default_factory=list)
    repeated: list[str] = Field(default_factory=list)


class StepFindings(BaseModel):
    """What one model response, in its own words, drew from earlier tool results."""

    call_index: int
    completion_tokens: int
    own_tokens: int = 0  # completion tokens that are not dictation (gate 1 counts these)
    results_before: int  # tool results recorded before this request
    copied_fraction: float = 0.0
    dictated_fraction: float = 0.0  # of its content words, repeating the agent's request text
    dictated: list[str] = Field(default_factory=list)  # data it only repeated from that text
    candidates: list[str] = Field(default_factory=list)  # product ids from earlier results
    data: list[str] = Field(default_factory=list)  # other ids, prices/counts, attribute values
    terms: list[str] = Field(default_factory=list)
    cues: list[str] = Field(default_factory=list)

    @property
    def cited(self) -> list[str]:
        return self.candidates + self.data

    @property
    def analyses(self) -> bool:
        return bool(self.cited) or len(self.terms) >= 2

    @property
    def compares(self) -> bool:
        return len(self.candidates) >= 2 and bool(self.cues)
