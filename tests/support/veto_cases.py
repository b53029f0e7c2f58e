"""Hand-written veto cases: two query-only requests read as the guard reads them, and its verdict."""

from __future__ import annotations

from arena.problems.official import parse_row
from arena.problems.twins import Request, conflict, read_request


def read_query(query: str, intent: str = "product") -> Request:
    return read_request(parse_row({"id": "p", "query": query, "intent": intent}, query_only=True))


def veto(a: str, b: str, intent: str = "product") -> str | None:
    """Why the guard keeps ``a`` and ``b`` apart, or None when it would merge them."""
    read = [
        read_request(parse_row({"id": f"p{k}", "query": q, "intent": intent}, query_only=True))
        for k, q in enumerate((a, b))
    ]
    return conflict(read[0], read[1])
