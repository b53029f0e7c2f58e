"""The world the labelled cases run in: a seeded synthetic catalog (a real tantivy
index) and a small knowledge corpus, with a real ``ShopEnvironment`` per episode,
so every id, price and value a labelled response cites came out of a tool."""

from __future__ import annotations

from pathlib import Path

from arena.shop.index import CatalogIndex, build_index
from arena.shop.knowledge import KnowledgeDocument, LocalKnowledgeBase, build_knowledge_index
from arena.shop.tools import ShopEnvironment
from arena.taskpack.synthetic import generate_products
from judge.calibration.builder import EpisodeBuilder
from judge.tokens import tokens
from judge.tool_facts import STOPWORDS

CATALOG_SIZE, CATALOG_SEED = 3000, 11
PHANTOM = ("8800000001", "8800000002")  # ids no tool ever returns in this catalog

QUERIES = (
    "laptop charger",
    "sports watch leather strap",
    "fishing rod",
    "desk fan",
    "cooking pot",
    "shampoo for oily hair",
    "pendant necklace",
    "notebook journal",
)
NARRATION = (
    "I have looked over what came back and I want to be careful here. A sensible choice balances cost, "
    "durability and how well it suits the person asking, so I will weigh those factors thoughtfully and "
    "make sure I am confident before I commit to a final answer for this request."
)
KNOWLEDGE_DOCS = [
    KnowledgeDocument(
        doc_id="kb-zentek",
        url="https://example.invalid/zentek-history",
        title="The Cebu workshop behind Zentek",
        content="Zentek began in 2009 as a repair stall in Cebu run by Marisol Abad. Its laptop chargers, "
        "sold under the Zentek name since 2015, are known for braided cables.",
    ),
    KnowledgeDocument(
        doc_id="kb-tempora",
        url="https://example.invalid/tempora",
        title="Tempora watches",
        content="Tempora is a watch label from Davao founded by Ignacio Lim.",
    ),
]

Case = tuple[str, float, str, EpisodeBuilder]
# Listing filler that reads oddly as "what came back" in a hand-written sentence.
_FILLER = frozenset({"types", "ready", "stock", "sale", "durable", "trendy", "style", "universal", "generic"})


class Shop:
    """A real environment over the seeded catalog; a fresh one per episode."""

    def __init__(self, workdir: Path) -> None:
        # One writer thread: one segment layout, so BM25 ties (and the shipped file) come out the same every run.
        build_index(generate_products(CATALOG_SIZE, seed=CATALOG_SEED), workdir / "catalog")
        build_knowledge_index(KNOWLEDGE_DOCS, workdir / "knowledge")
        self.catalog = CatalogIndex(workdir / "catalog")
        self.knowledge = LocalKnowledgeBase(workdir / "knowledge")
        self.count = 0

    def episode(self, query: str, intent: str = "product") -> EpisodeBuilder:
        self.count += 1
        env = ShopEnvironment(self.catalog, knowledge=self.knowledge if intent == "knowledge" else None)
        # A reward row like the official one: the judge's evidence must never show it.
        reward = {"reward": {"product_id": "GOLD-ANSWER-KEY", "title": ["the answer key"]}}
        return EpisodeBuilder(f"lab-{self.count:03d}", query, intent=intent, environment=env, reward_row=reward)


def query_for(i: int) -> str:
    return QUERIES[i % len(QUERIES)]


def result_terms(hits: list[dict], query: str, n: int = 3) -> list[str]:
    """Title words of the hits that the request does not contain: what 'discussing results' looks like."""
    excluded = set(tokens(query)) | STOPWORDS | _FILLER
    seen: list[str] = []
    for hit in hits:
        for word in hit["title"].split():
            w = word.lower().strip("()[],.-")
            if len(w) >= 4 and w.isalpha() and w not in excluded and w not in seen:
                seen.append(w)
    return seen[:n]


def first_value(info: dict, query: str) -> tuple[str, str]:
    """An attribute (key, value) of a viewed product whose value the request does not name."""
    for key, values in info["attributes"].items():
        for value in values:
            if not set(tokens(value)) <= set(tokens(query)) and not value.replace(" ", "").isdigit():
                return key, value
    raise ValueError(f"product {info['product_id']} has no usable attribute value")
