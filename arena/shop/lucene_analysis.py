"""The official search server's text analysis, reproduced from maintained libraries.

pyserini 1.0.0 (Anserini, Lucene 9.9) indexes and queries ``contents`` with its default
English analyzer: ``StandardTokenizer`` (Unicode UAX#29 word breaks), the English
possessive filter, lower-casing, Lucene's English stop set and the Porter stemmer. The
pieces here:

- word breaks: the ``regex`` module's UAX#29 boundaries (``WORD`` flag). A segment is
  a token when it holds a letter, a digit or an emoji, as StandardTokenizer emits only
  its ALPHANUM, NUM, ideographic, kana, hangul, South-East-Asian and emoji tokens. A run
  of South-East-Asian script (Thai, Lao, Khmer, Myanmar) is one token, as Lucene keeps
  it whole (it has no dictionary to split it). Tokens over 255 characters are cut into
  255-character pieces, as StandardTokenizer's maximum token length does.
- stemming: NLTK's Porter stemmer in Martin Porter's own mode, the variant Lucene's
  ``PorterStemmer`` implements (``-bli`` -> ``-ble``, ``-logi`` -> ``-log``; words of one or
  two letters are left alone). Snowball's "porter" follows the 1980 paper instead and
  disagrees on those words.

``tests/support/fixtures/lucene_english_tokens.json`` holds tokens produced by Lucene itself;
tests/arena/shop/test_lucene_analysis.py checks this module against them.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

import regex
from nltk.stem.porter import PorterStemmer

# Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET, which Anserini's default analyzer uses.
STOPWORDS = frozenset(
    [
        "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
        "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
        "they", "this", "to", "was", "will", "with",
    ]
)  # fmt: skip

MAX_TOKEN_LENGTH = 255  # StandardAnalyzer.DEFAULT_MAX_TOKEN_LENGTH

_BOUNDARY = regex.compile(r"\b", flags=regex.WORD | regex.V1)
# A segment StandardTokenizer emits: one holding a letter or a digit (Word_Break ALetter,
# Hebrew_Letter, Numeric, Katakana; so not "²" or "½"), an ideograph, a hiragana, an
# emoji or pictograph (including "©", "™"), a flag or a keycap...
_RULE = (
    r"\p{Word_Break=ALetter}\p{Word_Break=Hebrew_Letter}\p{Word_Break=Numeric}\p{Word_Break=Katakana}"
    r"\p{Ideographic}\p{Script=Hiragana}\p{Extended_Pictographic}\p{Regional_Indicator}\u20E3"
)
_unicode_rule = regex.compile(f"[{_RULE}]", flags=regex.V1)
# ...as Lucene's older Unicode data has it: the characters where Lucene and that rule
# disagree ("★" is a pictograph to Lucene; ideographs added since are not letters to it),
# found by asking Lucene (benchmarks/lucene_chars.py writes the table).
CHAR_TABLE = Path(__file__).with_name("lucene_chars.json")


def _char_class(pairs: list[list[int]]) -> str:
    return "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in pairs)


def _token_pattern() -> regex.Pattern:
    table = json.loads(CHAR_TABLE.read_text()) if CHAR_TABLE.is_file() else {"token": [], "not_token": []}
    chars = f"[{_RULE}{_char_class(table['token'])}]"
    if table["not_token"]:
        chars = f"[{chars}--[{_char_class(table['not_token'])}]]"
    return regex.compile(chars, flags=regex.V1)


_TOKEN = _token_pattern()
_ASCII_TOKEN = re.compile(r"[A-Za-z0-9]")
_COMPLEX_CONTEXT = regex.compile(r"\p{Line_Break=Complex_Context}+", flags=regex.V1)
_POSSESSIVE_QUOTES = ("'", "\u2019", "\uff07")

_PORTER = PorterStemmer(mode=PorterStemmer.MARTIN_EXTENSIONS)


def words(text: str) -> list[str]:
    """StandardTokenizer's tokens of ``text`` (case kept)."""
    if text.isascii():  # the common case, without the Unicode property tables
        found = [s for s in _BOUNDARY.split(text) if _ASCII_TOKEN.search(s)]
        if any(len(s) > MAX_TOKEN_LENGTH for s in found):
            return [piece for s in found for piece in _chunks(s)]
        return found
    out: list[str] = []
    pending_sea = ""  # a South-East-Asian run, which UAX#29 splits per letter and Lucene keeps whole
    for segment in _BOUNDARY.split(text):
        if segment.isascii():
            if pending_sea:
                out.extend(_chunks(pending_sea))
                pending_sea = ""
            if _ASCII_TOKEN.search(segment):
                out.extend(_chunks(segment))
            continue
        if _COMPLEX_CONTEXT.fullmatch(segment):
            pending_sea += segment
            continue
        if pending_sea:
            out.extend(_chunks(pending_sea))
            pending_sea = ""
        if _TOKEN.search(segment):
            out.extend(_chunks(segment))
    if pending_sea:
        out.extend(_chunks(pending_sea))
    return out


def _chunks(token: str) -> list[str]:
    if len(token) <= MAX_TOKEN_LENGTH:
        return [token]
    return [token[i : i + MAX_TOKEN_LENGTH] for i in range(0, len(token), MAX_TOKEN_LENGTH)]


def _lower(token: str) -> str:
    # Lucene's LowerCaseFilter maps each code point on its own (Character.toLowerCase),
    # so the dotted capital I becomes "i", not Python's two-character "i̇".
    if token.isascii():
        return token.lower()
    return "".join("i" if c == "\u0130" else c.lower() for c in token)


@lru_cache(maxsize=262_144)  # bounded: query text comes from agents
def _term(word: str) -> str | None:
    """One token through the possessive filter, lower-casing, the stop set and Porter."""
    if len(word) >= 2 and word[-2] in _POSSESSIVE_QUOTES and word[-1] in "sS":
        word = word[:-2]
    word = _lower(word)
    if not word or word in STOPWORDS:
        return None
    return _PORTER.stem(word, to_lowercase=False)


def analyze(text: str) -> list[str]:
    """The terms the official index stores for ``text``, in order (repeats kept)."""
    out = []
    for word in words(text or ""):
        term = _term(word)
        if term is not None:
            out.append(term)
    return out
