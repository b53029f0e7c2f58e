"""Issue 30 class 4: one knowledge corpus serves every problem of every partition, so an episode's
web_search must read only its own problem's pages and the neutral ones. The filter sits inside the
search: pages planted for other problems take no top-k slot, and the allowed pages rank as before."""

from __future__ import annotations

import json

import pytest

from arena.shop.knowledge import KnowledgeDocument, KnowledgeIndexError, LocalKnowledgeBase, build_knowledge_index


def page(doc_id: str, content: str, problems: list[str] | None = None) -> KnowledgeDocument:
    return KnowledgeDocument(
        doc_id=doc_id, url=f"https://kb.invalid/{doc_id}", title=doc_id, content=content, problems=problems or []
    )


@pytest.fixture
def corpus(tmp_path) -> LocalKnowledgeBase:
    # 30 pages of other problems match "violin" far better than the own page or the neutral one.
    foreign = [page(f"other-{i}", "violin " * 20 + f"answer {i}", [f"p-other-{i}"]) for i in range(30)]
    documents = [
        *foreign,
        page("own", "Alec Aitken played the violin. Answer: violin.", ["p-own", "p-own-variant"]),
        page("neutral", "A violin has four strings."),
    ]
    build_knowledge_index(documents, tmp_path / "kb")
    return LocalKnowledgeBase(tmp_path / "kb")


def urls(hits: list[dict]) -> list[str]:
    return [h["url"] for h in hits]


def test_an_episode_reads_its_own_pages_and_neutral_ones_only(corpus):
    for problem in ("p-own", "p-own-variant"):  # a page planted for a source and its variant answers both
        view = corpus.for_problem(problem)
        assert set(urls(view.search("violin", 20))) == {"https://kb.invalid/own", "https://kb.invalid/neutral"}
        # Top-k is not starved by the 30 better-matching foreign pages: k=1 still answers.
        assert urls(view.search("violin", 1)) == ["https://kb.invalid/own"]
    stranger = corpus.for_problem("p-stranger")
    assert urls(stranger.search("violin answer Aitken other", 20)) == ["https://kb.invalid/neutral"]
    # Validator-side, the whole corpus is there (the generator's self-check reads it so).
    assert len(corpus.search("violin", 20)) == 20


def test_the_filter_does_not_change_the_ranking_of_what_an_episode_may_read(corpus):
    whole = [u for u in urls(corpus.search("violin strings Aitken", 32)) if "other" not in u]
    assert urls(corpus.for_problem("p-own").search("violin strings Aitken", 20)) == whole


@pytest.mark.parametrize("query", ["", " ", "*", "owner:neutral", "problem:p-other-1", "p-other-1", "neutral"])
def test_no_query_reaches_past_the_filter(corpus, query):
    assert all("other" not in u for u in urls(corpus.for_problem("p-own").search(query, 20)))


def test_owners_are_never_served(corpus):
    (hit,) = corpus.for_problem("p-own").search("Aitken", 1)
    assert set(hit) == {"url", "title", "content"}


def test_an_index_built_before_pages_named_their_problem_is_refused(tmp_path, corpus):
    build_knowledge_index([page("old", "violin")], tmp_path / "old")
    (tmp_path / "old" / "knowledge.json").write_text(json.dumps({"documents": 1}))  # the old manifest
    old = LocalKnowledgeBase(tmp_path / "old")
    with pytest.raises(KnowledgeIndexError, match="rebuild"):
        old.for_problem("p-own")
