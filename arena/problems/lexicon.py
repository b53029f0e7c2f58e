"""What two English words are to each other, read from WordNet 3.0 (Princeton, the Debian
``wordnet-base`` package): one meaning, one a kind of the other, or neither.

Why a lexicon and not the meaning vectors alone: a word vector cannot tell a rewording from a
replacement inside one field. "sneakers" / "shoes" (a sneaker is a shoe: the same ask said
another way) read further apart (0.37) than "mouse" / "keyboard" (0.47) or "basketball" /
"volleyball" (0.58), which are two products. WordNet states the relation itself: synonyms share a
synset, a hyponym reaches its hypernym ("sneaker" -> "gym shoe" -> "shoe"), a verb and its noun are
derivationally related ("born" / "birth"), and two kinds of one thing (co-hyponyms, "quilt" and
"sheet" under "bedclothes") are neither, so they stay two asks.

The database is read where Debian puts it (``$ARENA_WORDNET_DIR`` overrides): the index files are
sorted, so a word is found by binary search over a memory map, and a synset is read at its byte
offset with ``pread``, as WordNet's own library does. Nothing is loaded whole or mapped (only the
exception lists, ~6,000 lines, are read), so the clustering's memory budget is not spent on a
dictionary of 150,000 lemmas; what a clustering asks is cached per word (a few thousand words).
"""

from __future__ import annotations

import os
import sys
from functools import lru_cache
from pathlib import Path

from arena.problems.meaning import MeaningModelUnavailable

_POS = ("noun", "verb", "adj", "adv")
_DATA_POS = {"n": "noun", "v": "verb", "a": "adj", "s": "adj", "r": "adv"}
# How far up the hypernym chain "a kind of" reaches: "sneaker" -> "gym shoe" -> "shoe" is two;
# farther up the chain every artefact is a kind of "device" or "container", which says nothing.
HYPERNYM_DEPTH = 2
# How many of a lemma's senses (most frequent first) are read.
COMMON_SENSES = 2
# WordNet's detachment rules (morphy): a surface form's possible base forms.
_SUFFIXES = {
    "noun": (
        ("ses", "s"),
        ("xes", "x"),
        ("zes", "z"),
        ("ches", "ch"),
        ("shes", "sh"),
        ("men", "man"),
        ("ies", "y"),
        ("s", ""),
    ),
    "verb": (("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", ""), ("s", "")),
    "adj": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "adv": (),
}
INSTALL = "apt-get install wordnet-base  (Debian/Ubuntu: WordNet 3.0's database, read by arena.problems.lexicon)"


class LexiconMissing(MeaningModelUnavailable):
    """WordNet's database is not installed: the guard would be weaker without it, so it says so
    (a kind of the meaning model missing: every command that reports one reports this too)."""


def _root() -> Path:
    return Path(os.environ.get("ARENA_WORDNET_DIR", "/usr/share/wordnet"))


@lru_cache(maxsize=1)
def _files() -> dict[str, tuple[int, int, int]]:
    """Each part of speech's (index fd, index size, data fd): read with pread, so the database
    stays in the page cache and never in the process's resident memory."""
    root = _root()
    files = {}
    for pos in _POS:
        index, data = root / f"index.{pos}", root / f"data.{pos}"
        if not index.is_file() or not data.is_file():
            raise LexiconMissing(f"WordNet's database is missing ({index} not found); install it: {INSTALL}")
        files[pos] = (os.open(index, os.O_RDONLY), index.stat().st_size, os.open(data, os.O_RDONLY))
    return files


def _line_at(fd: int, start: int) -> bytes:
    """The line that starts at byte ``start`` (WordNet's lines are well under 16 KiB)."""
    chunk = os.pread(fd, 16_384, start)
    end = chunk.find(b"\n")
    return chunk if end < 0 else chunk[:end]


def available() -> None:
    """Raises LexiconMissing with the install line when WordNet's database is not installed."""
    _files()


@lru_cache(maxsize=4)
def _exceptions(pos: str) -> dict[str, tuple[str, ...]]:
    path = _root() / f"{pos}.exc"
    table: dict[str, tuple[str, ...]] = {}
    if path.is_file():
        for line in path.read_text(encoding="latin-1").splitlines():
            fields = line.split()
            if len(fields) >= 2:
                table[fields[0]] = tuple(fields[1:])
    return table


def _index_line(pos: str, lemma: str) -> bytes | None:
    """The index line of ``lemma``: binary search over byte offsets (the index is sorted by its first
    field; the licence header, each line opening with two spaces, sorts first)."""
    fd, size, _ = _files()[pos]
    key = lemma.encode("latin-1", "replace") + b" "
    lo, hi = 0, size
    while lo < hi:
        mid = (lo + hi) // 2
        if mid == 0:
            start = 0
        else:  # the first line that starts at or after ``mid``
            before = os.pread(fd, 16_384, mid - 1)
            newline = before.find(b"\n")
            if newline < 0:
                hi = mid
                continue
            start = mid + newline
        if start >= hi:
            hi = mid
            continue
        line = _line_at(fd, start)
        if line.startswith(key):
            return line
        if line.startswith(b"  ") or line < key:
            lo = start + len(line) + 1
        else:
            hi = mid
    return None


@lru_cache(maxsize=8_192)
def _offsets(pos: str, lemma: str) -> tuple[int, ...]:
    line = _index_line(pos, lemma)
    if line is None:
        return ()
    fields = line.split()
    pointers = int(fields[3])
    senses = int(fields[4 + pointers])
    return tuple(int(f) for f in fields[6 + pointers : 6 + pointers + senses])


@lru_cache(maxsize=8_192)
def _synset(pos: str, offset: int) -> tuple[frozenset[str], tuple[tuple[str, str, int], ...]]:
    """A synset's words and its pointers (symbol, pos, offset)."""
    fields = _line_at(_files()[pos][2], offset).split(b" | ")[0].split()
    count = int(fields[3], 16)
    words = frozenset(fields[4 + 2 * i].decode("latin-1").lower().split("(")[0] for i in range(count))
    at = 4 + 2 * count
    pointers = []
    for i in range(int(fields[at])):
        symbol, target, target_pos = fields[at + 1 + 4 * i : at + 4 + 4 * i]
        pointers.append((symbol.decode(), _DATA_POS[target_pos.decode()], int(target)))
    return words, tuple(pointers)


@lru_cache(maxsize=8_192)
def base_forms(word: str) -> tuple[tuple[str, str], ...]:
    """(pos, lemma) of every reading WordNet has of ``word`` ("sneakers" -> ("noun", "sneaker"))."""
    word = word.lower().replace(" ", "_").replace("-", "_")
    found: list[tuple[str, str]] = []
    for pos in _POS:
        candidates = [word, *_exceptions(pos).get(word, ())]
        candidates += [
            word[: -len(old)] + new for old, new in _SUFFIXES[pos] if word.endswith(old) and len(word) > len(old) + 1
        ]
        for lemma in dict.fromkeys(candidates):
            if _offsets(pos, lemma):  # every base form: "shoes" is a lemma of its own and the plural of "shoe"
                found.append((pos, lemma))
    return tuple(found)


def known(word: str) -> bool:
    return bool(base_forms(word))


def verb_form(word: str) -> bool:
    """An inflected verb ("landed", "fell", "crewed", "won") that is no inflected noun ("men",
    "stripes"): a word said as an action, whatever its lemma is first read as."""
    word = word.lower()
    forms = base_forms(word)
    return any(pos == "verb" and lemma != word for pos, lemma in forms) and not any(
        pos == "noun" and lemma != word for pos, lemma in forms
    )


@lru_cache(maxsize=8_192)
def closed_compound(word: str) -> bool:
    """Two nouns written as one ("birthstone", "keychain", "crewneck"), each of three letters or
    more: a word, not a name, where the dictionary lacks the joined form ("Armstrong" is no arm and
    strong thing)."""

    def noun(part: str) -> bool:  # a lemma as written: one look-up, not every inflection's
        return bool(_offsets("noun", part))

    return word.isalpha() and any(noun(word[:k]) and noun(word[k:]) for k in range(3, len(word) - 2))


def compound(first: str, second: str) -> bool:
    """Whether WordNet names a thing with the two words ``first second`` ("frying pan", "bath towel").
    Asked for every word pair a request's phrases end with (a million times at 100k requests), so it
    is a set lookup of WordNet's two-word nouns (~49k, held once: ~5 MB), not a search of the index
    file (a sorted array of their digests took a third of the time spent finding phrases' heads)."""
    return f"{first}_{second}" in _compounds()


@lru_cache(maxsize=1)
def _compounds() -> frozenset[str]:
    fd, size, _ = _files()["noun"]
    found = set()
    with os.fdopen(os.dup(fd), "rb") as handle:
        handle.seek(0)
        for line in handle:
            lemma = line.split(b" ", 1)[0]
            if lemma.count(b"_") == 1 and not line.startswith(b" "):
                first, second = lemma.split(b"_")
                if first.isalpha() and second.isalpha():
                    found.add(sys.intern(lemma.decode()))
    return frozenset(found)


@lru_cache(maxsize=16_384)
def _senses(word: str) -> frozenset[tuple[str, int]]:
    return frozenset((pos, offset) for pos, lemma in base_forms(word) for offset in _offsets(pos, lemma))


@lru_cache(maxsize=16_384)
def _common_senses(word: str) -> frozenset[tuple[str, int]]:
    return frozenset(
        (pos, offset) for pos, lemma in base_forms(word) for offset in _offsets(pos, lemma)[:COMMON_SENSES]
    )


def _up(senses: frozenset[tuple[str, int]], depth: int) -> set[tuple[str, int]]:
    """The senses and their hypernyms (instance hypernyms too) up to ``depth`` links."""
    reached, frontier = set(senses), set(senses)
    for _ in range(depth):
        frontier = {(pos, off) for s in frontier for sym, pos, off in _synset(*s)[1] if sym in ("@", "@i")} - reached
        reached |= frontier
    return reached


def _related(senses: frozenset[tuple[str, int]]) -> set[tuple[str, int]]:
    """The senses a word's derivational, participle and similarity links reach ("born" -> "birth")."""
    return {(pos, off) for s in senses for sym, pos, off in _synset(*s)[1] if sym in ("+", "<", "\\", "&", "^", "=")}


@lru_cache(maxsize=8_192)
def same_common_reading(a: str, b: str) -> bool:
    """One meaning in the words' common readings (each lemma's first senses, WordNet's most frequent):
    "sneakers" / "shoes", "finished" / "completed"; not "king" / "queen", which share a synset
    ("world-beater") and "leash" / "collar" (to restrain) only in readings no shopper means."""
    sa, sb = _common_senses(a), _common_senses(b)
    if not sa or not sb:
        return False
    return bool(
        sa & sb
        or _up(sa, HYPERNYM_DEPTH) & sb
        or _up(sb, HYPERNYM_DEPTH) & sa
        or _related(sa) & sb
        or _related(sb) & sa
    )


@lru_cache(maxsize=8_192)
def synonyms(a: str, b: str) -> bool:
    """One meaning in the words' common readings themselves ("country" / "nation"), not through a
    kind ("tooth" / "bone", which :func:`same_common_reading` joins)."""
    return bool(_common_senses(a) & _common_senses(b))


@lru_cache(maxsize=8_192)
def relation(a: str, b: str) -> str:
    """``same`` (a synonym, one a kind of the other, or one derived from the other), ``other``
    (both known, neither relation: two kinds of one thing or unrelated), or ``unknown`` (a word
    WordNet does not have: a brand, a compound it lacks, another language)."""
    sa, sb = _senses(a), _senses(b)
    if not sa or not sb:
        return "unknown"
    if sa & sb:
        return "same"
    if not _reach(a).isdisjoint(sb) or not _reach(b).isdisjoint(sa):
        return "same"
    if not _derived(a).isdisjoint(sb) or not _derived(b).isdisjoint(sa):
        return "same"
    return "other"


@lru_cache(maxsize=16_384)
def _reach(word: str) -> frozenset[tuple[str, int]]:
    """A word's senses and their hypernyms within ``HYPERNYM_DEPTH`` (per word: a clustering compares
    a few thousand words in hundreds of thousands of pairs)."""
    return frozenset(_up(_senses(word), HYPERNYM_DEPTH))


@lru_cache(maxsize=16_384)
def _derived(word: str) -> frozenset[tuple[str, int]]:
    return frozenset(_related(_senses(word)))


@lru_cache(maxsize=8_192)
def _tagged(pos: str, lemma: str) -> int:
    """How often WordNet's tagged corpus saw ``lemma`` as ``pos`` (its index line's tagsense_cnt)."""
    line = _index_line(pos, lemma)
    if line is None:
        return -1
    fields = line.split()
    return int(fields[5 + int(fields[3])])


@lru_cache(maxsize=8_192)
def thing(word: str) -> bool:
    """A word read first as a noun naming a thing, not a measure: "light", "sound", "apron"; not
    "found" (a verb first), "kilometer" (a unit: WordNet's noun.quantity file)."""
    noun = _noun_first(word)
    return noun is not None and _lexfile("noun", _offsets("noun", noun)[0]) != _NOUN_QUANTITY


def ware(word: str) -> bool:
    """A word read first as a noun, one of whose first two readings is a thing a shop sells:
    "teaspoon" (first a measure, then the spoon), "fork"; not "wear" or "lock" (verbs first)."""
    return _noun_first(word) is not None and goods(word)


def _noun_first(word: str) -> str | None:
    """The noun lemma of ``word`` when WordNet's tagged corpus reads it as a noun at least as often
    as anything else, else None."""
    forms = base_forms(word)
    nouns = [lemma for pos, lemma in forms if pos == "noun"]
    if not nouns:
        return None
    noun = max(_tagged("noun", lemma) for lemma in nouns)
    other = max((_tagged(pos, lemma) for pos, lemma in forms if pos != "noun"), default=-1)
    return None if other > noun else nouns[0]


_NOUN_QUANTITY = 23  # WordNet's lexicographer file noun.quantity (lexnames): units and amounts
_NOUN_PERSON = 18  # noun.person: "man", "person", "woman", "player"


@lru_cache(maxsize=8_192)
def person(word: str) -> bool:
    """A noun whose first reading names people ("man", "person", "athlete")."""
    noun = _noun_first(word)
    return noun is not None and _lexfile("noun", _offsets("noun", noun)[0]) == _NOUN_PERSON


_NOUN_LOCATION = 15  # noun.location: countries, cities, regions


@lru_cache(maxsize=8_192)
def place(word: str) -> bool:
    """A word whose first noun reading is a place ("indonesia", "vietnam", "japan")."""
    offsets = _offsets("noun", word)
    return bool(offsets) and _lexfile("noun", offsets[0]) == _NOUN_LOCATION


@lru_cache(maxsize=8_192)
def _lexfile(pos: str, offset: int) -> int:
    return int(_line_at(_files()[pos][2], offset).split(maxsplit=2)[1])


@lru_cache(maxsize=8_192)
def kinds_of_one(a: str, b: str) -> bool:
    """Two kinds of one thing (co-hyponyms within two links: "light" / "sound", "moon" / "sun"),
    neither a kind of the other: one replaced by the other is another thing asked about."""
    if relation(a, b) != "other":
        return False
    return not _reach(a).isdisjoint(_reach(b))


# WordNet's lexicographer files of things a shop sells (lexnames): artifacts, food, substances,
# natural objects, plants and animals; not acts, times, events or groups ("trip", "weekend",
# "business", "surprise"), which a story or a label beside a list names.
_GOODS = frozenset({5, 6, 13, 17, 20, 27})


@lru_cache(maxsize=16_384)
def goods(word: str) -> bool:
    """A noun whose first reading (or second) is a thing a shop sells."""
    for pos, lemma in base_forms(word):
        if pos == "noun":
            return any(_lexfile("noun", offset) in _GOODS for offset in _offsets("noun", lemma)[:2])
    return False
