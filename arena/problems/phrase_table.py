"""Phrases replaced in a space-padded text, longest first, trying only the phrases the text can hold.

The readers rewrite a lower-cased, space-padded sentence with tables of a hundred phrases or more
("no more than" -> "lt", "power bank" -> "powerbank"), in a fixed order. Tried one by one, each
table costs a Python loop of its length for every sentence, a tenth of the time spent reading
100k requests, though a sentence holds one or two of its phrases at most. A :class:`PhraseTable`
gives exactly the loop's result: a phrase is tried only where the text has its first word as a
word of its own (a phrase padded with spaces can occur nowhere else), or where an earlier
replacement wrote that word.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Callable, Iterable


class PhraseTable:
    """``(phrase, value)`` pairs applied in order, as the loop
    ``for phrase, new in pairs: if phrase in text: text = text.replace(phrase, new)`` would
    (with ``repeat``: ``while phrase in text``, for replacements that leave another match behind)."""

    def __init__(self, pairs: Iterable[tuple[str, str]], repeat: bool = False) -> None:
        self.pairs = tuple(pairs)
        self.repeat = repeat
        by_first: dict[str, list[int]] = defaultdict(list)
        always: list[int] = []
        for k, (phrase, _) in enumerate(self.pairs):
            words = phrase.split()
            if words and phrase == f" {' '.join(words)} ":
                by_first[words[0]].append(k)
            else:  # not a padded run of words: no first word says where it may be, so always tried
                always.append(k)
        self._by_first = {word: tuple(ks) for word, ks in by_first.items()}
        self._always = tuple(always)

    def __call__(self, padded: str) -> str:
        return self.replace(padded)[0]

    def replace(self, padded: str, new: Callable[[str], str] | None = None) -> tuple[str, tuple[int, ...]]:
        """The text with each phrase present replaced by its value (or by ``new(value)``), and the
        indices of the phrases replaced, in order."""
        by_first = self._by_first
        pending = [k for word in set(padded.split()) if word in by_first for k in by_first[word]]
        pending.extend(self._always)
        if not pending:
            return padded, ()
        heapq.heapify(pending)
        tried, applied = -1, []
        while pending:
            k = heapq.heappop(pending)
            if k <= tried:  # the same phrase reached by two words
                continue
            tried = k
            phrase, value = self.pairs[k]
            if phrase not in padded:
                continue
            written = value if new is None else new(value)
            padded = padded.replace(phrase, written)
            while self.repeat and phrase in padded:
                padded = padded.replace(phrase, written)
            applied.append(k)
            # A word the replacement wrote may open a later phrase ("bank" of " bank power ").
            for word in set(written.split()):
                for later in by_first.get(word, ()):
                    if later > k:
                        heapq.heappush(pending, later)
        return padded, tuple(applied)
