"""The ``web_search`` backend of the knowledge intent.

The official benchmark searched the live web; offline, a suite ships a local
knowledge corpus (JSONL documents ``{"doc_id", "url", "title", "content"}``)
indexed on its own, so knowledge riddles are solvable without the internet.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

import orjson
import tantivy
from pydantic import BaseModel

from arena.shop.readonly_index import open_index

KNOWLEDGE_MANIFEST = "knowledge.json"
# The same analysis as tantivy's built-in "en_stem" tokenizer the index uses.
_EN_STEM = (
    tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
    .filter(tantivy.Filter.remove_long(40))
    .filter(tantivy.Filter.lowercase())
    .filter(tantivy.Filter.stemmer("english"))
    .build()
)


class KnowledgeDocument(BaseModel):
    doc_id: str
    url: str = ""
    title: str
    content: str

    def search_view(self) -> dict:
        return {"url": self.url, "title": self.title, "content": self.content}


class KnowledgeBackend(Protocol):
    def search(self, q: str, max_results: int) -> list[dict]:
        """Up to ``max_results`` results ``{url, title, content}``, best first."""
        ...


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("text", stored=False, tokenizer_name="en_stem", index_option="freq")
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
        doc.add_bytes("record", orjson.dumps(document.model_dump()))
        writer.add_document(doc)
        count += 1
    writer.commit()
    writer.wait_merging_threads()
    (out / KNOWLEDGE_MANIFEST).write_text(json.dumps({"documents": count}))
    return count


class LocalKnowledgeBase:
    """BM25 over the local knowledge corpus."""

    def __init__(self, path: str | Path) -> None:
        path = Path(path)
        if not (path / KNOWLEDGE_MANIFEST).is_file():
            raise FileNotFoundError(f"{path} is not a knowledge index (no {KNOWLEDGE_MANIFEST})")
        self._index = open_index(path)
        self._searcher = self._index.searcher()

    def search(self, q: str, max_results: int) -> list[dict]:
        # A bag of terms, never tantivy's query language: in a riddle "Vellore - Ussoor"
        # must not turn into "must not contain ussoor".
        terms = sorted(set(_EN_STEM.analyze(q or "")))
        if not terms:
            return []
        query = tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, tantivy.Query.term_query(self._index.schema, "text", t)) for t in terms]
        )
        hits = self._searcher.search(query, limit=max_results, count=False).hits
        records = (orjson.loads(self._searcher.doc(addr)["record"][0]) for _, addr in hits)
        return [KnowledgeDocument.model_validate(r).search_view() for r in records]


def knowledge_for_catalog(catalog_dir: str | Path, explicit: str | Path | None = None) -> LocalKnowledgeBase | None:
    """The web_search backend of a catalog: ``explicit`` (must be an index), else ``CATALOG/knowledge`` when
    the catalog has one (a task pack or a generated suite writes it there), else None."""
    folder = Path(explicit) if explicit is not None else Path(catalog_dir) / "knowledge"
    if (folder / KNOWLEDGE_MANIFEST).is_file():
        return LocalKnowledgeBase(folder)
    if explicit is not None:
        raise FileNotFoundError(f"{explicit} is not a knowledge index (no {KNOWLEDGE_MANIFEST})")
    return None
