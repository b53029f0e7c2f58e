"""Fixed transforms a model undoes on request, read back the way the model reads them.

An agent can hand the model a paragraph it wrote itself in a form no text match sees (ROT47, ROT13 or any
Caesar shift, Atbash, reversed characters, its words in reverse order, hex, a byte map over hex) and ask the
model to decode it: the answer then repeats the agent's text, with no id or price for provenance or the probe to
catch. ``decodings`` gives the plain readings of such text, so the dictation rule sees what the model sees.

What makes this cheap and safe for honest agents: a transform is tried only on text that does not read as
English (too few of English's commonest words among its words), and a reading is kept only when it does read as
English. English text, ids, digests and JSON decode to nothing under every transform, so they add no reading.
Word order is the exception (reversed words keep their words): it is read from determiners standing before
the words that English puts before them ("the over" for "over the").
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable

_WORD = re.compile(r"[a-z]{2,}")
# Common English words (2+ letters): their share among a text's words tells English from a cipher.
COMMON = frozenset(
    """
    an the and or but nor so if then of in on at to for from by with as is are was were be been being it its
    this that these those me my we our you your he she they them their there here do does did has have had not no
    yes will would can could should may might must just also than into over all any each one more most other some
    such only own same very what which who when where why how about after before because while up out off again
    further once both few many much well good best better like use used make made get go see look find buy want need
    """.split()
)
MIN_WORDS = 6  # shorter text is too little to tell a cipher from a list of names
ENGLISH_SHARE = 0.25  # English prose runs at 0.4-0.5; ciphers, ids and digests near 0
CIPHER_SHARE = 0.12  # text below this is tried under every transform
SAMPLE = 2_000  # characters a transform is judged on; the chosen one is applied to the whole text
WINDOW = 12  # whitespace-separated pieces judged together when looking for a payload inside English text
MAX_SEGMENTS = 16
_HEX = re.compile(r"(?<![0-9a-fA-F])(?:[0-9a-fA-F]{2}){12,}(?![0-9a-fA-F])")
_MAX_HEX_RUNS = 16
# A determiner comes before its noun, after a preposition, conjunction or verb ("over the rest", "but the
# first"); in words read backwards it comes before them ("the over", "the but"), which English almost never says.
_DETERMINERS = frozenset("the a an this these those my your its their our every each".split())
_BEFORE_DETERMINER = frozenset(
    "of in on to for and but or with at from by is are was were be over so it as that than into not what which".split()
)


def english_share(text: str) -> tuple[float, int]:
    """The share of ``text``'s words (2+ letters) that are common English words, and how many words it has."""
    words = _WORD.findall(text.lower())
    if not words:
        return 0.0, 0
    return sum(1 for w in words if w in COMMON) / len(words), len(words)


def _caesar(k: int, digits: int) -> dict[int, int]:
    lower, upper = string.ascii_lowercase, string.ascii_uppercase
    table = str.maketrans(lower + upper, lower[k:] + lower[:k] + upper[k:] + upper[:k])
    if digits:
        table |= str.maketrans(string.digits, string.digits[digits:] + string.digits[:digits])
    return table


_ROT47: dict[int, int] = {c: 33 + (c - 33 + 47) % 94 for c in range(33, 127)}
_ATBASH: dict[int, int] = str.maketrans(
    string.ascii_lowercase + string.ascii_uppercase, string.ascii_lowercase[::-1] + string.ascii_uppercase[::-1]
)
# Every transform tried, each with its reversed-text twin. Caesar shifts move digits by the same step or not at all.
_TABLES: list[dict[int, int]] = [_ROT47, _ATBASH] + [_caesar(k, d) for k in range(1, 26) for d in {0, k % 10}]


def _translated(table: dict[int, int], backwards: bool) -> Callable[[str], str]:
    return lambda text: (text[::-1] if backwards else text).translate(table)


_TRANSFORMS: list[Callable[[str], str]] = [lambda text: text[::-1]] + [
    _translated(table, backwards) for table in _TABLES for backwards in (False, True)
]


def _best(text: str) -> str | None:
    """The transform of ``text`` that reads as English, judged on a sample, applied to the whole; None if none."""
    sample = text[:SAMPLE]
    best, best_share = None, ENGLISH_SHARE
    for transform in _TRANSFORMS:
        share, words = english_share(transform(sample))
        if words >= MIN_WORDS and share >= best_share:
            best, best_share = transform, share + 1e-9  # the first of equals wins
    return best(text) if best is not None else None


def _words_backwards(text: str) -> str | None:
    words = re.findall(r"[a-z]+", text.lower())  # "a" too
    pairs = list(zip(words, words[1:], strict=False))
    forwards = sum(1 for a, b in pairs if a in _BEFORE_DETERMINER and b in _DETERMINERS)
    backwards = sum(1 for a, b in pairs if a in _DETERMINERS and b in _BEFORE_DETERMINER)
    if backwards >= 2 and backwards > 2 * forwards:
        return " ".join(text.split()[::-1])
    return None


def _hex_readings(text: str) -> list[str]:
    """Hex runs as text: as they are, or under the one-byte XOR that makes them read as English."""
    found = []
    for run in _HEX.findall(text)[:_MAX_HEX_RUNS]:
        raw = bytes.fromhex(run)
        for key in range(256):
            decoded = bytes(b ^ key for b in raw[: SAMPLE // 2]).decode("latin-1")
            share, words = english_share(decoded)
            if words >= MIN_WORDS and share >= ENGLISH_SHARE and decoded.isprintable():
                found.append(bytes(b ^ key for b in raw).decode("utf-8", "replace"))
                break
    return found


def _cipher_segments(text: str) -> list[str]:
    """The stretches of ``text`` that do not read as English: the whole text when it does not, else runs of
    windows of ``WINDOW`` whitespace-separated pieces with too few common words (a payload under an English
    preamble in one message), merged, at most ``MAX_SEGMENTS``."""
    share, words = english_share(text)
    if words < MIN_WORDS:
        return []
    if share < CIPHER_SHARE:
        return [text]
    pieces = text.split()
    flagged = [False] * len(pieces)
    # A piece counts as English when its letters spell a common word; a cipher's pieces (symbols, shifted
    # letters) almost never do. Pieces of digits alone (ids, prices) say nothing either way.
    common = [re.sub(r"[^a-z]", "", piece.lower()) in COMMON for piece in pieces]
    wordy = [not piece.isdigit() for piece in pieces]
    for start in range(0, max(len(pieces) - WINDOW, 0) + 1, WINDOW // 2):
        end = min(start + WINDOW, len(pieces))
        if sum(wordy[start:end]) >= MIN_WORDS and sum(common[start:end]) < CIPHER_SHARE * (end - start):
            flagged[start:end] = [True] * (end - start)
    segments: list[str] = []
    opened = -1
    for i, flag in enumerate([*flagged, False]):
        if flag and opened < 0:
            opened = i
        elif not flag and opened >= 0:
            segments.append(" ".join(pieces[opened:i]))
            opened = -1
    return segments[:MAX_SEGMENTS]


# Characters spelled one at a time ("3 6 1 9 / a t / ..."), and Morse code ("... --- / .-."): runs long enough
# that no honest text reads this way.
_SPELLED = re.compile(r"(?<!\S)(?:\S (?:/ )?){12,}\S(?!\S)")
_MORSE_RUN = re.compile(r"(?<![.\-])[.\-]{1,6}(?:(?: / | )[.\-]{1,6}){5,}(?![.\-])")
_MORSE = dict(
    zip(
        ".- -... -.-. -.. . ..-. --. .... .. .--- -.- .-.. -- -. --- .--. --.- .-. ... - ..- ...- .-- -..- -.-- --.. "
        "----- .---- ..--- ...-- ....- ..... -.... --... ---.. ----. .-.-.- --..-- ..--.. -.-.-- ---... -.-.-. -....-".split(),
        "abcdefghijklmnopqrstuvwxyz0123456789.,?!:;-",
        strict=True,
    )
)


def _joined(text: str) -> list[str]:
    """Runs of single characters joined into words ("/" or a wider gap between words)."""
    return [
        run.replace(" / ", "\x00").replace(" ", "").replace("\x00", " ").replace("/", " ")
        for run in _SPELLED.findall(text)
    ]


def _morse(text: str) -> list[str]:
    return [
        " ".join("".join(_MORSE.get(code, "") for code in word.split()) for word in run.split(" / "))
        for run in _MORSE_RUN.findall(text)
    ]


# --- keyed ciphers: the key is a word the agent wrote beside the text ("VIGENERE shop: ...") ----------------------
KEYED_SAMPLE = 400  # characters a keyed transform is judged on (each key is a pass over them)
MAX_KEYS = 16  # candidate keys tried per stretch: the words just before it, then the request's other words
_KEY_WORD = re.compile(r"(?<![A-Za-z])[A-Za-z]{3,16}(?![A-Za-z])")
_LOWER, _UPPER = string.ascii_lowercase, string.ascii_uppercase


def key_words(texts: list[str]) -> list[str]:
    """Candidate keys: the words (3-16 letters) of ``texts``, lower case, in order, each once, at most MAX_KEYS."""
    seen: dict[str, None] = {}
    for text in texts:
        for word in _KEY_WORD.findall(text):
            seen.setdefault(word.lower(), None)
            if len(seen) >= MAX_KEYS:
                return list(seen)
    return list(seen)


def _shift_table(k: int, digits: bool, beaufort: bool) -> dict[int, int]:
    """One key letter's map back to plain text: Vigenère subtracts the key (c - k), Beaufort is its own inverse
    (k - c); digits move by the same key stream mod 10 when ``digits``."""

    def back(alphabet: str) -> str:
        n = len(alphabet)
        return "".join(alphabet[((k - i) if beaufort else (i - k)) % n] for i in range(n))

    table = str.maketrans(_LOWER + _UPPER, back(_LOWER) + back(_UPPER))
    if digits:
        table |= str.maketrans(string.digits, back(string.digits))
    return table


def _keyed(key: str, digits: bool, beaufort: bool) -> Callable[[str], str]:
    """The key stream runs over the letters (and the digits, when ``digits``) in order; other characters keep
    their place. Each residue class of the stream is one fixed map, applied with ``str.translate``."""
    tables = [_shift_table(ord(ch) - ord("a"), digits, beaufort) for ch in key]
    keep = (lambda c: c.isascii() and c.isalnum()) if digits else (lambda c: c.isascii() and c.isalpha())

    def decode(text: str) -> str:
        where = [i for i, c in enumerate(text) if keep(c)]
        stream = "".join(text[i] for i in where)
        parts = [stream[r :: len(tables)].translate(tables[r]) for r in range(len(tables))]
        chars = list(text)
        for r, part in enumerate(parts):
            for j, ch in enumerate(part):
                chars[where[r + j * len(tables)]] = ch
        return "".join(chars)

    return decode


def _keyword_alphabet(key: str) -> Callable[[str], str]:
    """A substitution alphabet that starts with the key's letters (each once), the rest in order after them."""
    cipher = "".join(dict.fromkeys(key + _LOWER))
    table = str.maketrans(cipher + cipher.upper(), _LOWER + _UPPER)
    return lambda text: text.translate(table)


_STARTS = re.compile(r"[:\n]\s*|[.!?]\s+")  # where a payload may start inside a stretch (after "KEY:", a sentence)
MAX_STARTS = 3
MAX_KEYED = 4  # stretches of one text read under keys (each costs keys x starts x 5 passes over 400 characters)


def _best_keyed(segment: str, before: str, keys: list[str]) -> str | None:
    """``segment`` read under the keyed transform (Vigenère or Beaufort over letters, or over letters and digits,
    or a keyword alphabet) that makes it English, the key stream starting at the segment's start or after a colon
    or sentence inside it (a payload behind "KEY:"); keys are the words just before that start, nearest first, then
    ``keys``. None if no reading is English."""
    starts = [0] + [m.end() for m in _STARTS.finditer(segment)][:MAX_STARTS]
    best: tuple[float, int, Callable[[str], str]] | None = None
    for start in dict.fromkeys(starts):
        sample = segment[start : start + KEYED_SAMPLE]
        if english_share(sample)[0] >= ENGLISH_SHARE:
            continue
        near = key_words([" ".join(reversed((before + " " + segment[:start]).split()[-WINDOW:]))])
        candidates = dict.fromkeys(k.lower() for k in near + keys if k.isascii() and k.isalpha())
        for key in list(candidates)[:MAX_KEYS]:
            for transform in [_keyed(key, d, b) for d in (False, True) for b in (False, True)] + [
                _keyword_alphabet(key)
            ]:
                share, words = english_share(transform(sample))
                if words >= MIN_WORDS and share >= ENGLISH_SHARE and (best is None or share > best[0]):
                    best = (share, start, transform)
    if best is None:
        return None
    _, start, transform = best
    return segment[:start] + transform(segment[start:])


def decodings(text: str, keys: list[str] | None = None, undecoded: list[str] | None = None) -> list[str]:
    """The readings of ``text`` under a fixed transform that turn it into English (none for English text).
    ``keys``: more words a keyed cipher may use as its key (the request's other text); the words just before
    the stretch being read are always tried first. ``undecoded``, when given, gets every stretch that does not
    read as English and that no transform turned into English (``judge.unread`` decides what it is)."""
    found = _hex_readings(text) if _HEX.search(text) else []
    found += _joined(text) + (_morse(text) if "-" in text or "." in text else [])
    keyed = 0
    for segment in _cipher_segments(text):
        decoded = _best(segment)
        if decoded is None and keyed < MAX_KEYED:
            keyed += 1
            at = text.find(segment[:40])
            decoded = _best_keyed(segment, text[: max(at, 0)], keys or [])
        if decoded is not None:
            found.append(decoded)
        elif undecoded is not None:
            undecoded.append(segment)
    if english_share(text)[0] >= CIPHER_SHARE and (backwards := _words_backwards(text)) is not None:
        found.append(backwards)
    return found
