"""Is a generated problem solvable by an honest agent? Checked before it is kept.

Two questions, each answered by the real parts an agent meets:

1. **Does the answer score?** Every gold product is copied under another id
   and the copies are scored with ``score_problem`` in official and strict
   mode. The copy matters: the scorer gives a recommended gold id full marks
   before looking at a single constraint, which would hide a price range that
   excludes the gold, an attribute it lacks, a basket over budget or a
   knowledge value the gold never mentions.
2. **Can the gold be found?** Each gold product must be among the first 50
   ``find_product`` survivors (the five pages an agent can read) for at least
   one *honest* query: the title noun phrase plus the constraint values the
   query states, with the price and service constraints as filters (and, for
   a shop's later items, the shop filter an agent uses once it knows the
   shop). The rank under the first honest query also grades difficulty.

3. **Is the strict answer unique?** (single-item product problems) No other
   listing on the first page of the first honest search that the query's noun
   fits as well as the gold (every word of it in the title) may meet every
   constraint the query states (official mode) yet fail strict mode's title
   check: a query of a noun and one constraint that several listings satisfy
   leaves strict success to luck (which of them the agent picks), and a race on
   luck measures nothing. Such a draft is rejected (``NOT_UNIQUE``); the
   generator tries the next one.

The ranks are computed on document addresses, not decoded records, which
makes a probe ~4x cheaper than ``CatalogIndex.bm25`` (most of whose time is
decoding the 50 records). The query is built exactly as ``bm25`` builds it;
``tests/arena/generator/test_generator.py`` checks the two agree hit for hit.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from pydantic import BaseModel, Field

from arena.problems.draft import Draft, ItemNeed
from arena.problems.model import Intent, Problem
from arena.scoring.outcome import OutcomeScore, ScoreMode, score_problem
from arena.shop.catalog import InMemoryCatalog
from arena.shop.index import CatalogIndex, SearchFilters
from arena.shop.tools import SURVIVORS

#: The rank under the first honest query above which a problem is one level harder.
EASY_RANK = 10

Address = int

# Rejection reasons (the generator's report counts them by these names).
GOLD_MISSING = "gold_not_in_catalog"
FACT_IN_QUERY = "fact_in_query"
UNREACHABLE = "gold_unreachable_by_search"
NOT_ONE_SHOP = "gold_not_one_shop"
BUDGET_UNMET = "gold_basket_over_budget"
VOUCHER_NOT_NEEDED = "voucher_not_needed"
FACT_NOT_IN_GOLD = "fact_not_in_gold_text"
NOT_UNIQUE = "strict_answer_not_unique"
#: Listings of the first honest search checked for a second answer: the first page an agent reads.
UNIQUE_DEPTH = 10
_FIELD_REASONS = {
    "title": "title_mismatch",
    "price": "price_excludes_gold",
    "service": "service_missing",
    "sku & attrs": "attribute_mismatch",
}


class SearchProbe:
    """Where a product ranks among ``find_product``'s first 50 survivors."""

    def __init__(self, catalog: CatalogIndex) -> None:
        self.catalog = catalog

    def address(self, product_id: str) -> Address | None:
        return self.catalog.address_of(product_id)

    def survivors(self, q: str, filters: SearchFilters) -> list[Address]:
        """The first 50 hits' addresses in BM25 order (``CatalogIndex.bm25``'s query, without decoding)."""
        return self.catalog.bm25_addresses(q, filters, SURVIVORS)

    def rank(self, q: str, filters: SearchFilters, target: Address) -> int | None:
        """1-based rank of ``target`` among the survivors, None when it is not among them."""
        for i, address in enumerate(self.survivors(q, filters), start=1):
            if address == target:
                return i
        return None


class HonestQuery(NamedTuple):
    q: str
    filters: SearchFilters


def honest_queries(need: ItemNeed, extra_words: tuple[str, ...] = (), shop_id: str | None = None) -> list[HonestQuery]:
    """What an agent that read the query would search, best guess first.

    ``extra_words`` are words the agent learns on the way (a knowledge fact);
    ``shop_id`` adds the shop-filtered searches an agent makes once it knows the shop.
    """
    low = high = None
    services: list[str] = []
    words = [need.noun, *extra_words]
    for c in need.constraints:
        if c.kind in ("attribute", "sku"):
            words.append(c.value)
        elif c.kind == "service":
            services.append(c.value)
        elif c.kind == "price":
            bounds = c.price_bounds()
            low, high = bounds[0], bounds[1]
    full = " ".join(dict.fromkeys(w for w in words if w))
    plain = " ".join(dict.fromkeys(w for w in (need.noun, *extra_words) if w))
    base = SearchFilters(price_low=low, price_high=high, services=tuple(services))
    queries = [HonestQuery(full, base), HonestQuery(plain, base)]
    if shop_id:
        scoped = SearchFilters(shop_id=shop_id, price_low=low, price_high=high, services=tuple(services))
        queries += [HonestQuery(full, scoped), HonestQuery(plain, scoped)]
    return list(dict.fromkeys(queries))


class Verdict(BaseModel):
    """The check's outcome: ``reason`` is None for a solvable problem."""

    reason: str | None = None
    #: Per gold product, its rank under the first honest query (None: not in the first 50).
    ranks: list[int | None] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.reason is None

    def search_is_hard(self) -> bool:
        return any(r is None or r > EASY_RANK for r in self.ranks)


def check_problem(draft: Draft, problem: Problem, probe: SearchProbe) -> Verdict:
    """Every check, cheapest first; the first failure names the reason."""
    targets: list[Address] = []
    for need in draft.needs:
        address = probe.address(need.product.product_id)
        if address is None:
            return Verdict(reason=GOLD_MISSING)
        targets.append(address)
    if draft.fact is not None and draft.fact.value.lower() in problem.query.lower():
        return Verdict(reason=FACT_IN_QUERY)
    if draft.voucher is not None and sum(n.product.price for n in draft.needs) <= draft.voucher.budget:
        return Verdict(reason=VOUCHER_NOT_NEEDED)
    reason = scoring_failure(draft, problem)
    if reason is not None:
        return Verdict(reason=reason)
    verdict = reachability(draft, probe, targets)
    if verdict.ok and not strict_answer_unique(draft, problem, probe, verdict.ranks[0]):
        return Verdict(reason=NOT_UNIQUE, ranks=verdict.ranks)
    return verdict


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def strict_answer_unique(draft: Draft, problem: Problem, probe: SearchProbe, gold_rank: int | None = None) -> bool:
    """No other listing on the first page of the first honest search that has every word of the query's noun
    passes official mode but fails strict."""
    if draft.intent is not Intent.product or len(draft.needs) != 1:
        return True
    # The listings an agent meets before the gold: with the gold first, the search order already answers.
    depth = UNIQUE_DEPTH if gold_rank is None else min(UNIQUE_DEPTH, gold_rank - 1)
    if depth <= 0:
        return True
    need = draft.needs[0]
    query = honest_queries(need)[0]
    gold = need.product.product_id
    named = _words(need.noun)
    for other in probe.catalog.records(probe.catalog.bm25_addresses(query.q, query.filters, depth)):
        # Only a listing the query's words fit as well as the gold's is a second answer the agent cannot rule out.
        if other.product_id == gold or not named <= _words(other.title):
            continue
        lookup = InMemoryCatalog([other])
        official = score_problem(problem, [other.product_id], lookup, mode=ScoreMode.official)
        if official.success and not score_problem(problem, [other.product_id], lookup, mode=ScoreMode.strict).success:
            return False
    return True


def scoring_failure(draft: Draft, problem: Problem) -> str | None:
    """Score copies of the gold products (new ids) in both modes; the reason they fail, if they do."""
    copies = [n.product.model_copy(update={"product_id": f"copy-of-{n.product.product_id}"}) for n in draft.needs]
    lookup = InMemoryCatalog(copies)
    ids = [c.product_id for c in copies]
    for mode in (ScoreMode.official, ScoreMode.strict):
        score = score_problem(problem, ids, lookup, mode=mode)
        if not score.success:
            return _failure_reason(score)
    return None


def _failure_reason(score: OutcomeScore) -> str:
    if score.intent is Intent.knowledge:
        return FACT_NOT_IN_GOLD if not score.knowledge_kw else _FIELD_REASONS["title"]
    for detail in score.details:
        for field, total in detail.totals.items():
            if detail.hits.get(field, 0) < total:
                return _FIELD_REASONS[field]
    if score.same_shop is False and score.intent is Intent.shop:
        return NOT_ONE_SHOP
    if score.budget_met is False:
        return BUDGET_UNMET
    return "scoring_failed"


def reachability(draft: Draft, probe: SearchProbe, targets: list[Address]) -> Verdict:
    """Each gold among the first 50 survivors of some honest query; ranks under the first one."""
    shop_scoped = draft.intent is Intent.shop or (draft.voucher is not None and draft.voucher.voucher_type == "shop")
    extra = (draft.fact.value,) if draft.fact is not None else ()
    ranks: list[int | None] = []
    for i, (need, target) in enumerate(zip(draft.needs, targets, strict=True)):
        # The first item is how the agent finds the shop; later ones may use its shop filter.
        shop_id = need.product.shop_id if shop_scoped and i > 0 else None
        queries = honest_queries(need, extra, shop_id)
        first = probe.rank(queries[0].q, queries[0].filters, target)
        ranks.append(first)
        if first is None and not any(probe.rank(q.q, q.filters, target) for q in queries[1:]):
            return Verdict(reason=UNREACHABLE, ranks=ranks)
    return Verdict(ranks=ranks)
