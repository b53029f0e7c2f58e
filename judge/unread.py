"""Agent text the judge cannot read, beside a verdict the model states: what the judge cannot read, the agent
cannot use for credit.

Every defence against dictation reads the agent's text: the dictation rule for repeats, the pointed-verdict rule
for verdicts named by place, the cipher readings for encoded ones. Text in a language the judge does not read
(Russian, Japanese), or under a cipher no reading undoes (a key the agent never wrote, a transposition, a code
book), can carry the verdict past all of them, and a fingerprint of the real data keeps the probe from seeing it.
So where the agent's request holds a stretch that reads as no language the judge reads, and the model's response
to it (or to a later request, which still holds it) states a verdict about the results, the verdict is not
credited: the episode is forfeit, as for any dictation found.

A stretch reads as a language when enough of its words are common words of English or of a glossed language
(``judge.pointed.GLOSS``: Filipino, Indonesian and the major European ones), or words the results, the query or
the model brought in (titles, brands, codes re-typed from the data). Stretches come from the cipher readings
(``judge.ciphers``: text that does not read as English, which no transform turned into English) and runs of
letters of another script (after look-alike letters are folded to Latin). Ids, digests and numbers are not words
and read as nothing either way.
"""

from __future__ import annotations

import re

from judge.ciphers import CIPHER_SHARE, COMMON
from judge.dictation import fold

UNREAD_RULE = "unread"
MIN_WORDS = 6  # a stretch of fewer words is too little to call a language or not
NON_LATIN_RUN = 12  # letters of another script, with only spaces and punctuation between them
_SHOWN = 60  # characters of a stretch kept in the finding
_WORD = re.compile(r"[^\W\d_]{2,}")
# Letters past Latin Extended-B (U+024F), with spaces, punctuation and digits between them: another script.
_OTHER_SCRIPT = re.compile(rf"[^\W\d_\u0000-\u024f](?:[\W\d_]*[^\W\d_\u0000-\u024f]){{{NON_LATIN_RUN - 1},}}")

# The commonest function words of the languages the pointed-verdict rule glosses, so an honest agent writing
# in them is read as writing a language.
OTHER_COMMON = frozenset(
    """
    le la les un une des de du et est en que qui pour pas par sur dans avec ce cette il elle nous vous ils plus
    moins au aux ou mais si ne se son sa ses leur
    el los las unos unas del al es son por para con sin sobre entre su sus lo como pero más muy este esta eso
    der die das den dem des ein eine einen und ist nicht mit für auf von zu im ich du wir sie es oder aber wie
    il lo gli una di da per con non che sono questo questa più anche come ma
    os um uma uns umas do da dos das em no na nos nas com não mais muito mas seu sua
    het een van en ik je niet met voor op zijn dat wat er maar ook
    ang ng mga sa na at ay ako ka siya kami tayo kayo sila ito iyan iyon hindi oo po mo ko niya namin natin
    yung lang din rin ba ni kay para kung may wala
    yang dan di ke dari untuk dengan ini itu tidak ada saya kamu kami kita mereka akan atau juga sudah bisa
    """.split()
)


def other_script(text: str) -> list[str]:
    """Runs of ``NON_LATIN_RUN`` or more letters of scripts other than Latin."""
    return [match.group() for match in _OTHER_SCRIPT.finditer(text)]


_BREAK = re.compile(r"[:\n]\s*|[.!?;]\s+")
MAX_STARTS = 8


def _starts(stretch: str) -> list[int]:
    return [0] + [match.end() for match in _BREAK.finditer(stretch)][:MAX_STARTS]


def _non_latin(text: str) -> int:
    return sum(1 for ch in text if ch.isalpha() and ord(ch) > 0x24F)


def reads_as_language(stretch: str, vocabulary: set[str]) -> bool:
    """Whether enough of ``stretch``'s words are common words of a language the judge reads, or words the
    episode's data brought in (``vocabulary``, lower case)."""
    words = _WORD.findall(stretch.lower())
    if len(words) < MIN_WORDS:
        return True  # too short to tell: a few names or codes
    known = sum(1 for word in words if word in COMMON or word in OTHER_COMMON or word in vocabulary)
    return known >= CIPHER_SHARE * len(words)


def unread(pieces: list[str], undecoded: list[str], vocabulary: set[str]) -> list[str]:
    """The stretches of one request's agent text (``pieces``, as written) the judge cannot read: what the cipher
    readings left (``undecoded``, ``judge.dictation.Dictation.undecoded``) that reads as no language, and runs of
    another script once look-alike letters are folded to Latin."""
    # A stretch may begin with the end of the agent's English ("... in turn: <cipher>"): each part of it after a
    # colon or a sentence's end is judged too, as a payload behind "KEY:" would be.
    found = [
        stretch
        for stretch in undecoded
        if any(not reads_as_language(stretch[start:], vocabulary) for start in _starts(stretch))
    ]
    # Look-alike letters (Cyrillic "а" for Latin "a") fold to Latin and read; a script a reader does not take for
    # Latin keeps most of its letters once folded.
    found += [
        run
        for piece in pieces
        if not piece.isascii()
        for run in other_script(piece)
        if _non_latin(fold(run)) * 3 >= _non_latin(run)
    ]
    return [" ".join(stretch.split())[:_SHOWN] for stretch in found]
