"""The ``web_search`` backend of the knowledge intent.

The official benchmark searched the live web; offline, a suite ships a local
knowledge corpus (JSONL documents ``{"doc_id", "url", "title", "content"}``)
indexed on its own, so knowledge riddles are solvable without the internet.

One corpus serves every problem of a suite, of every partition, so each page says
which problems planted it (``problems``: the page answers them) or is neutral (no
``problems``: background any episode may read). An episode searches through
``for_problem``: its own problem's pages and the neutral ones, filtered inside the
search so another problem's answer page neither comes back nor takes a top-k slot
(docs/security.md, "The knowledge corpus is partitioned by problem").
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

import orjson
import tantivy
from pydantic import BaseModel, Field

from arena.shop.readonly_index import open_index

KNOWLEDGE_MANIFEST = "knowledge.json"
# The manifest's format: 2 indexes each page's owners; an index without them cannot be scoped.
KNOWLEDGE_FORMAT = 2
NEUTRAL = "neutral"  # the owner term of a page planted for no problem; a problem's is "problem:<id>"
# The same analysis as tantivy's built-in "en_stem" tokenizer the index uses.
_EN_STEM = (
    tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
    .filter(tantivy.Filter.remove_long(40))
    .filter(tantivy.Filter.lowercase())
    .filter(tantivy.Filter.stemmer("english"))
    .build()
)


class KnowledgeIndexError(ValueError):
    """A knowledge index that cannot serve an episode; the message says why and what to do."""


class KnowledgeDocument(BaseModel):
    doc_id: str
    url: str = ""
    title: str
    content: str
    # Validator-side, never served: the ids of the problems whose answer this page is.
    problems: list[str] = Field(default_factory=list)

    def search_view(self) -> dict:
        return {"url": self.url, "title": self.title, "content": self.content}

    def owners(self) -> list[str]:
        return [owner_of(p) for p in self.problems] or [NEUTRAL]


def owner_of(problem_id: str) -> str:
    return f"problem:{problem_id}"


class KnowledgeBackend(Protocol):
    def search(self, q: str, max_results: int) -> list[dict]:
        """Up to ``max_results`` results ``{url, title, content}``, best first."""
        ...


class KnowledgeCorpus(Protocol):
    def for_problem(self, problem_id: str) -> KnowledgeBackend:
        """What one episode's web_search reads: this problem's pages and the neutral ones."""
        ...


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("text", stored=False, tokenizer_name="en_stem", index_option="freq")
    builder.add_text_field("owner", stored=False, tokenizer_name="raw", index_option="basic")
    builder.add_bytes_field("record", stored=True)
    return builder.build()


def build_knowledge_index(documents: Iterable[KnowledgeDocument], out: str | Path) -> int:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    index = tantivy.Index(_schema(), path=str(out), reuse=False)
    writer = index.writer(heap_size=64 * 1024 * 1024, num_threads=1)
    count = 0
    for document in documents:
        doc = tantivy.Document()
        doc.add_text("text", f"{document.title}\n{document.content}")
        for owner in document.owners():
            doc.add_text("owner", owner)
        doc.add_bytes("record", orjson.dumps(document.model_dump()))
        writer.add_document(doc)
        count += 1
    writer.commit()
    writer.wait_merging_threads()
    (out / KNOWLEDGE_MANIFEST).write_text(json.dumps({"documents": count, "format": KNOWLEDGE_FORMAT}))
    return count


class LocalKnowledgeBase:
    """BM25 over the local knowledge corpus. ``search`` reads every page (validator-side tools: the
    generator's self-check, tests); an episode reads ``for_problem(problem_id)``."""

    def __init__(self, path: str | Path) -> None:
        path = Path(path)
        if not (path / KNOWLEDGE_MANIFEST).is_file():
            raise FileNotFoundError(f"{path} is not a knowledge index (no {KNOWLEDGE_MANIFEST})")
        self.path = path
        self.scoped = json.loads((path / KNOWLEDGE_MANIFEST).read_text()).get("format") == KNOWLEDGE_FORMAT
        self._index = open_index(path)
        self._searcher = self._index.searcher()

    def search(self, q: str, max_results: int) -> list[dict]:
        return self._search(q, max_results, None)

    def for_problem(self, problem_id: str) -> ProblemKnowledge:
        if not self.scoped:
            # Fail closed: an index whose pages name no owner would hand every episode every answer page.
            raise KnowledgeIndexError(
                f"knowledge index {self.path} was built before pages named the problem they answer, so an episode "
                "could read every problem's answer pages; rebuild it (`arena catalog build` or `arena problems "
                "generate --knowledge-out`)"
            )
        return ProblemKnowledge(self, problem_id)

    def _search(self, q: str, max_results: int, owners: list[str] | None) -> list[dict]:
        # A bag of terms, never tantivy's query language: in a riddle "Vellore - Ussoor"
        # must not turn into "must not contain ussoor".
        terms = sorted(set(_EN_STEM.analyze(q or "")))
        if not terms:
            return []
        schema = self._index.schema
        query = tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, tantivy.Query.term_query(schema, "text", t)) for t in terms]
        )
        if owners is not None:
            # The filter is a clause of the query, scored 0: pages the episode may not read are never
            # candidates (so they take no top-k slot), and the others rank exactly as without it.
            allowed = tantivy.Query.const_score_query(tantivy.Query.term_set_query(schema, "owner", owners), 0.0)
            query = tantivy.Query.boolean_query([(tantivy.Occur.Must, query), (tantivy.Occur.Must, allowed)])
        hits = self._searcher.search(query, limit=max_results, count=False).hits
        records = (orjson.loads(self._searcher.doc(addr)["record"][0]) for _, addr in hits)
        return [KnowledgeDocument.model_validate(r).search_view() for r in records]


class ProblemKnowledge:
    """One episode's view of the corpus: its problem's pages and the neutral ones."""

    def __init__(self, base: LocalKnowledgeBase, problem_id: str) -> None:
        self._base, self._owners = base, [NEUTRAL, owner_of(problem_id)]

    def search(self, q: str, max_results: int) -> list[dict]:
        return self._base._search(q, max_results, self._owners)


def knowledge_for_catalog(catalog_dir: str | Path, explicit: str | Path | None = None) -> LocalKnowledgeBase | None:
    """The web_search backend of a catalog: ``explicit`` (must be an index), else ``CATALOG/knowledge`` when
    the catalog has one (a task pack or a generated suite writes it there), else None."""
    folder = Path(explicit) if explicit is not None else Path(catalog_dir) / "knowledge"
    if (folder / KNOWLEDGE_MANIFEST).is_file():
        return LocalKnowledgeBase(folder)
    if explicit is not None:
        raise FileNotFoundError(f"{explicit} is not a knowledge index (no {KNOWLEDGE_MANIFEST})")
    return None
