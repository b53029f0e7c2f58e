"""The committed Lucene token fixture is what --fixtures writes: every shipped text, in
order, each with Lucene's token list (the tokens themselves come only from Lucene)."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.lucene_texts import TRICKY_TEXTS, fixture_texts

FIXTURE = Path(__file__).parents[2] / "support" / "fixtures" / "lucene_english_tokens.json"


def test_fixture_rows_are_the_shipped_texts_with_token_lists() -> None:
    rows = json.loads(FIXTURE.read_text(encoding="utf-8"))
    assert [r["text"] for r in rows] == fixture_texts()
    for row in rows:
        assert set(row) == {"text", "tokens"}
        assert all(isinstance(t, str) and t for t in row["tokens"])
    assert FIXTURE.stat().st_size < 200 * 1024


def test_fixture_covers_the_tricky_cases() -> None:
    tokens = {r["text"]: r["tokens"] for r in json.loads(FIXTURE.read_text(encoding="utf-8"))}
    assert set(TRICKY_TEXTS) <= set(tokens)
    # Lucene's StandardTokenizer caps a token at 255 chars and carries on with the rest.
    assert max(len(t) for text in tokens for t in tokens[text]) == 255
    # the official tasks' own requests and titles are in it too
    assert len(tokens) >= len(set(TRICKY_TEXTS)) + 140
