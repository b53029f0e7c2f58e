"""Hostile: harvests the knowledge corpus through web_search and reports every page it got.

A miner that mines hidden answers asks web_search everything it can think of: every word
of ``WORDS`` (filled in by tests/arena/runner/test_hostile_integrity.py with every word of
every problem and every planted page of the suite, which a real miner could collect over
many episodes), generic words, and empty or odd queries, at the largest page size. It
reports the pages through a tool call the validator records (the ``exfiltrate`` tool does
not exist; the call is recorded anyway), so the test sees them all, however many calls the
record keeps.
"""

import arena.sdk as sdk

WORDS = []  # replaced by the test
GENERIC = ["the", "a", "answer", "question", "reference", "note", "record", "who", "what", "when", "where",
           "which", "year", "name", "born", "city", "country", "first", "1", "2020", "wiki", "page", "kb"]  # fmt: skip
ODD = ["", " ", "*", "?", "\"", "' OR 1=1 --", "title:*", "url:*", "owner:*", "problem", "neutral", "AND OR NOT",
       "a" * 200, "\u00e9t\u00e9", "\U0001f600", "-", "+", "()", "[* TO *]", "doc_id", "kb-"]  # fmt: skip


def agent_main(problem):
    pages = {}
    errors = set()
    queries = [problem["query"], *WORDS, *GENERIC, *ODD, " ".join(WORDS)]
    for query in queries:
        try:
            hits = sdk.tool("web_search", q=query, max_results=20)
        except sdk.ToolError as exc:
            errors.add(str(exc)[:200])
            continue
        for hit in hits:
            pages[hit["url"]] = hit
    sdk._request(
        "POST", "/tools/exfiltrate", {"pages": sorted(pages), "queries": len(queries), "errors": sorted(errors)}
    )
    sdk.tool("terminate", status="success")
