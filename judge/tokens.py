"""Words as the rules judge reads them: lower-case alphanumeric tokens, padded phrases, numbers in prose.

Shared by the tool facts (what a model's text cites) and the dictation (what it was handed): both must cut
a text the same way, or a copied run would not be recognised as one.
"""

from __future__ import annotations

import re

COPY_NGRAM = 8  # a run of 8 tokens that also occurs in a tool result is copied, not written
TOKEN = re.compile(r"[a-z0-9]+")
NUMBER = re.compile(r"(?<![\w.,])([$€£¥₱₹]\s?)?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w])")
_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text.lower())


def normalize(text: str) -> str:
    """Lower-case words separated by single spaces, padded, for whole-phrase lookups."""
    return " " + _NON_ALNUM.sub(" ", text.lower()).strip() + " "
