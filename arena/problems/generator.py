"""Generate ShoppingBench-style problems from any catalog index, with no LLM.

ShoppingBench's recipe, step for step: sample gold product(s) from the
catalog; pick constraints from their own fields (title noun phrase,
attributes, one SKU option, services, a price range around the true price);
write the query; for vouchers derive threshold, discount and budget from the
gold total; for knowledge, state a fact in a document and ask for a product
only the fact identifies. Every candidate then passes the solvability check
(``arena.problems.solvability``) or is counted as rejected with its reason.

Determinism: candidate ``i`` of an intent draws from ``Random(f"{seed}:{intent}:{i}")``
and products are sampled from a *frame* that lists the catalog in product-id
order. tantivy places documents in segments in an order that changes between
builds of the same catalog, so sampling by document address would not repeat;
the frame makes the same seed give the same problems on any build. Candidates
are accepted in index order, so the output is byte-identical whatever the
number of worker processes.
"""

from __future__ import annotations

import math
import random
import time
from array import array
from collections import Counter, deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import NamedTuple

import orjson
import tantivy
from pydantic import BaseModel, Field

from arena.problems.model import Difficulty, Intent, KnowledgeReward, Problem, Voucher, content_id
from arena.problems.phrasing import (
    Constraint,
    Draft,
    Fact,
    ItemNeed,
    Style,
    fact_options,
    invent_name,
    pick_place,
    render_query,
    title_noun,
    usable_value,
)
from arena.problems.solvability import SearchProbe, Verdict, check_problem
from arena.problems.variants import make_variants
from arena.shop.index import CatalogIndex
from arena.shop.knowledge import KnowledgeDocument
from arena.shop.product import SERVICES, Product

ALL_INTENTS: tuple[Intent, ...] = (Intent.product, Intent.shop, Intent.voucher, Intent.knowledge)
_FIELDS = set(Product.model_fields)


class GenerationError(RuntimeError):
    pass


class GeneratorConfig(BaseModel):
    n: int = Field(ge=1, description="Source problems to generate (variants come on top).")
    seed: int = 0
    intents: list[Intent] = Field(default_factory=lambda: list(ALL_INTENTS))
    variants: int = Field(0, ge=0, le=8, description="Variants emitted per source problem.")
    workers: int = Field(1, ge=1, description="Processes checking candidates (output does not depend on it).")
    #: Give up on an intent after this many rejected candidates in a row: the catalog cannot make it.
    max_rejections_in_a_row: int = Field(400, ge=1)


class GenerationReport(BaseModel):
    requested: int
    seed: int
    counts: dict[str, dict[str, int]] = Field(default_factory=dict)  # intent -> difficulty -> sources
    variants: dict[str, int] = Field(default_factory=dict)  # variant kind -> n
    candidates: dict[str, int] = Field(default_factory=dict)  # intent -> candidates tried
    rejections: dict[str, dict[str, int]] = Field(default_factory=dict)  # intent -> reason -> n
    frame_seconds: float = 0.0
    seconds: float = 0.0

    @property
    def generated(self) -> int:
        return sum(sum(by.values()) for by in self.counts.values())

    def per_minute(self) -> float:
        return 60 * self.generated / self.seconds if self.seconds else 0.0


class GenerationResult(BaseModel):
    problems: list[Problem]  # sources, each followed by its variants
    documents: list[KnowledgeDocument] = Field(default_factory=list)
    report: GenerationReport


# ------------------------------------------------------------------ the recipe's numbers


class Profile(NamedTuple):
    """How many constraints of each kind an item gets (fitted to the official test files)."""

    attributes: tuple[int, ...]  # weights over 0, 1, 2, ... attribute constraints
    sku: float  # chance of naming one SKU option (1-2 of its pairs)
    service: float
    price: float


PRODUCT = Profile((28, 33, 17, 9, 5, 4, 4), sku=0.48, service=0.37, price=0.73)
ITEM = Profile((30, 30, 19, 11, 6, 4), sku=0.49, service=0.35, price=0.74)
VOUCHER_ITEM = Profile((30, 27, 19, 11, 7, 6), sku=0.46, service=0.35, price=0.0)  # the budget prices them
PRICE_MODES = {"between": 35, "greater than": 50, "less than": 15}


def pick_constraints(
    product: Product, rng: random.Random, profile: Profile, exclude: frozenset[str] = frozenset()
) -> list[Constraint]:
    """Constraints drawn from the product's own fields, so the gold satisfies them by construction.

    SKU pairs come from one option only: the scorer matches a product's single
    best option, never a mix of two ("red" from one, "XL" from another).
    """
    out: list[Constraint] = []
    keys = [k for k, vs in product.attributes.items() if k not in exclude and any(usable_value(v) for v in vs)]
    want = rng.choices(range(len(profile.attributes)), weights=profile.attributes)[0]
    for key in rng.sample(keys, min(want, len(keys))):
        values = [v for v in product.attributes[key] if usable_value(v)]
        out.append(Constraint(kind="attribute", key=key, value=values[rng.randrange(len(values))]))
    taken = exclude | {c.key for c in out}
    if product.sku_options and rng.random() < profile.sku:
        option = product.sku_options[sorted(product.sku_options)[rng.randrange(len(product.sku_options))]]
        pairs = [(k, v) for k, v in option.items() if k not in taken and usable_value(v)]
        if pairs:
            m = 2 if len(pairs) >= 2 and rng.random() < 0.4 else 1
            out += [Constraint(kind="sku", key=k, value=v) for k, v in rng.sample(pairs, m)]
    if product.service and rng.random() < profile.service:
        m = 2 if len(product.service) >= 2 and rng.random() < 0.2 else 1
        chosen = sorted(rng.sample(list(product.service), m), key=SERVICES.index)
        out += [Constraint(kind="service", value=s) for s in chosen]
    if product.price >= 2 and rng.random() < profile.price:
        out.append(price_constraint(product.price, rng))
    return out


def price_constraint(price: float, rng: random.Random) -> Constraint:
    """A whole-peso range around the true price, in one of the official shapes."""
    mode = rng.choices(list(PRICE_MODES), weights=list(PRICE_MODES.values()))[0]
    if mode == "greater than":
        return Constraint(kind="price", key=mode, low=max(1, math.floor(price * rng.uniform(0.3, 0.95))))
    if mode == "less than":
        return Constraint(kind="price", key=mode, high=math.ceil(price * rng.uniform(1.05, 2.0)))
    low = max(1, math.floor(price * rng.uniform(0.5, 0.95)))
    return Constraint(kind="price", key=mode, low=low, high=math.ceil(price * rng.uniform(1.05, 1.8)))


def make_voucher(total: float, voucher_type: str, rng: random.Random) -> Voucher | None:
    """ShoppingBench's voucher recipe around the gold basket's total.

    Threshold 10-90% of the total; a fixed face value of 10-50% of the
    threshold, or a 10-50% discount capped at 10-100% of the threshold; the
    budget is the price after the voucher rounded up plus up to 10%, kept
    below the total so the voucher is needed. None when it cannot be (a
    discount under one peso).
    """
    threshold = max(1, round(total * rng.uniform(0.1, 0.9)))
    if rng.random() < 0.5:
        face = max(1, round(threshold * rng.uniform(0.1, 0.5)))
        after = total - face
        fields: dict = {"discount_type": "fixed", "face_value": face}
    else:
        discount = rng.randint(10, 50) / 100
        cap = max(1, round(threshold * rng.uniform(0.1, 1.0)))
        after = max(total * (1 - discount), total - cap)
        fields = {"discount_type": "percentage", "discount": discount, "cap": cap}
    base = math.ceil(round(after, 2))
    budget = base + math.floor(base * rng.uniform(0.0, 0.10))
    if budget >= total:
        budget = max(base, math.ceil(total) - 1)
    if budget >= total:
        return None
    return Voucher(
        voucher_type=voucher_type, threshold=threshold, price_after_voucher=round(after, 2), budget=budget, **fields
    )


# ------------------------------------------------------------------ the catalog frame


FrameState = tuple[array, dict[str, array]]


class CatalogFrame:
    """Every product's document address in product-id order, and each shop's products.

    Built by one pass over the stored records (about 1 s per 100k products);
    after that sampling a product or listing a shop costs no search.
    """

    def __init__(self, path: str | Path, state: FrameState | None = None) -> None:
        self.path = Path(path)
        self._searcher = tantivy.Index.open(str(self.path)).searcher()
        self._order, self._shops = state if state is not None else self._scan()
        if not self._order:
            raise GenerationError(f"catalog {self.path} is empty")

    def _scan(self) -> FrameState:
        s = self._searcher
        hits = s.search(tantivy.Query.all_query(), limit=max(1, s.num_docs), count=False).hits
        ids: list[str] = []
        shops: list[str] = []
        interned: dict[str, str] = {}
        packed = array("q")
        for _, address in hits:
            product_id, shop_id = _record_keys(s.doc(address)["record"][0])
            ids.append(product_id)
            shops.append(interned.setdefault(shop_id, shop_id))
            packed.append((address.segment_ord << 32) | address.doc)
        order = sorted(range(len(ids)), key=ids.__getitem__)
        by_shop: dict[str, array] = {}
        for position, i in enumerate(order):
            by_shop.setdefault(shops[i], array("l")).append(position)
        return array("q", (packed[i] for i in order)), by_shop

    @property
    def state(self) -> FrameState:
        """Picklable, so worker processes reuse the scan instead of repeating it."""
        return self._order, self._shops

    def __len__(self) -> int:
        return len(self._order)

    def product(self, position: int) -> Product:
        packed = self._order[position]
        record = self._searcher.doc(tantivy.DocAddress(packed >> 32, packed & 0xFFFFFFFF))["record"][0]
        # Validated when the index was built (as CatalogIndex.get trusts it too).
        return Product.model_construct(**{k: v for k, v in orjson.loads(record).items() if k in _FIELDS})

    def sample(self, rng: random.Random) -> Product:
        return self.product(rng.randrange(len(self._order)))

    def shop_positions(self, shop_id: str) -> array:
        """Frame positions of every product of one shop, in product-id order."""
        return self._shops.get(shop_id, array("l"))


def _record_keys(record: bytes) -> tuple[str, str]:
    # Records are orjson dumps of Product: product_id then shop_id. Parse fully only if not.
    head = b'{"product_id":"'
    if record.startswith(head):
        end = record.find(b'"', len(head))
        rest = record[end : end + 13]
        if rest == b'","shop_id":"':
            stop = record.find(b'"', end + 13)
            return record[len(head) : end].decode(), record[end + 13 : stop].decode()
    fields = orjson.loads(record)
    return str(fields["product_id"]), str(fields.get("shop_id", ""))


# ------------------------------------------------------------------ candidates


class Outcome(BaseModel):
    """One candidate: a solvable draft and its text, or the reason it was rejected."""

    index: int
    draft: Draft | None = None
    query: str = ""
    verdict: Verdict | None = None
    reason: str | None = None


class _Context:
    def __init__(self, catalog: CatalogIndex, frame: CatalogFrame, seed: int) -> None:
        self.catalog, self.frame, self.seed = catalog, frame, seed
        self.probe = SearchProbe(catalog)


def _need(product: Product, rng: random.Random, profile: Profile) -> ItemNeed:
    noun, article = title_noun(product)
    return ItemNeed(product=product, noun=noun, article=article, constraints=pick_constraints(product, rng, profile))


def _usable(product: Product) -> bool:
    return bool(product.title.strip()) and product.price > 0


def _shop_basket(ctx: _Context, rng: random.Random, sizes: dict[int, int]) -> list[Product] | str:
    anchor = ctx.frame.sample(rng)
    positions = ctx.frame.shop_positions(anchor.shop_id) if anchor.shop_id else []
    if len(positions) < 2:
        return "shop_too_small"
    k = min(len(positions), rng.choices(list(sizes), weights=list(sizes.values()))[0])
    products = [ctx.frame.product(p) for p in rng.sample(list(positions), k)]
    return products if all(_usable(p) for p in products) else "unusable_product"


def _build_product(ctx: _Context, rng: random.Random, index: int, style: Style) -> Draft | str:
    product = ctx.frame.sample(rng)
    if not _usable(product):
        return "unusable_product"
    return Draft(intent=Intent.product, needs=[_need(product, rng, PRODUCT)], style=style)


def _build_shop(ctx: _Context, rng: random.Random, index: int, style: Style) -> Draft | str:
    basket = _shop_basket(ctx, rng, {2: 89, 3: 86, 4: 75})  # the official split of 2-4 item shop tasks
    if isinstance(basket, str):
        return basket
    needs = [_need(p, rng, ITEM) for p in basket]
    if len({(n.noun, tuple(n.constraints)) for n in needs}) < len(needs):
        return "indistinct_items"
    return Draft(intent=Intent.shop, needs=needs, style=style)


def _build_voucher(ctx: _Context, rng: random.Random, index: int, style: Style) -> Draft | str:
    if rng.random() < 0.5:
        kind = "platform"
        k = rng.choices((1, 2, 3, 4), weights=(22, 40, 41, 26))[0]
        basket = [ctx.frame.sample(rng) for _ in range(k)]
        if len({p.product_id for p in basket}) < k or not all(_usable(p) for p in basket):
            return "unusable_product"
    else:
        kind = "shop"
        basket = _shop_basket(ctx, rng, {2: 30, 3: 39, 4: 52})
        if isinstance(basket, str):
            return basket
    needs = [_need(p, rng, VOUCHER_ITEM) for p in basket]
    if len({(n.noun, tuple(n.constraints)) for n in needs}) < len(needs):
        return "indistinct_items"
    voucher = make_voucher(sum(p.price for p in basket), kind, rng)
    if voucher is None:
        return "voucher_not_needed"
    return Draft(intent=Intent.voucher, needs=needs, style=style, voucher=voucher)


def _build_knowledge(ctx: _Context, rng: random.Random, index: int, style: Style) -> Draft | str:
    product = ctx.frame.sample(rng)
    if not _usable(product):
        return "unusable_product"
    noun, article = title_noun(product)
    options = fact_options(product, noun)
    if not options:
        return "no_fact_in_product_text"
    kind, key, value = options[rng.randrange(len(options))]
    hints = [
        c
        for c in pick_constraints(product, rng, ITEM, exclude=frozenset({key}))
        if value not in c.value.lower() and c.value.lower() not in value
    ][:2]
    fact = Fact(
        kind=kind,
        value=value,
        name=invent_name(ctx.seed, index),
        place=pick_place(rng),
        year=rng.randint(1720, 2015),
        doc_id=f"kb-{ctx.seed}-{index}",
    )
    need = ItemNeed(product=product, noun=noun, article=article, constraints=hints)
    return Draft(intent=Intent.knowledge, needs=[need], style=style, fact=fact)


_BUILDERS: dict[Intent, Callable[[_Context, random.Random, int, Style], Draft | str]] = {
    Intent.product: _build_product,
    Intent.shop: _build_shop,
    Intent.voucher: _build_voucher,
    Intent.knowledge: _build_knowledge,
}


def candidate(ctx: _Context, intent: Intent, index: int) -> Outcome:
    """Build and check candidate ``index`` of ``intent`` (a pure function of the seed, intent and index)."""
    rng = random.Random(f"{ctx.seed}:{intent.value}:{index}")
    style = Style(wording=rng.getrandbits(32), order=rng.getrandbits(32), money=rng.getrandbits(32))
    draft = _BUILDERS[intent](ctx, rng, index, style)
    if isinstance(draft, str):
        return Outcome(index=index, reason=draft)
    query = render_query(draft)
    verdict = check_problem(draft, assemble(draft, query, seed=ctx.seed), ctx.probe)
    if not verdict.ok:
        return Outcome(index=index, reason=verdict.reason, verdict=verdict)
    return Outcome(index=index, draft=draft, query=query, verdict=verdict)


def assemble(
    draft: Draft, query: str, *, seed: int, difficulty: Difficulty | None = None, extra: dict | None = None
) -> Problem:
    """The Problem (official row shape) a draft and its text stand for; the id hashes the row's content."""
    problem = Problem(
        id="pending",
        intent=draft.intent,
        query=query,
        difficulty=difficulty or Difficulty.easy,
        rewards=[] if draft.fact else [n.reward() for n in draft.needs],
        voucher=draft.voucher,
        knowledge=(
            KnowledgeReward(knowledge_attribute=draft.fact.value, product=draft.needs[0].product)
            if draft.fact
            else None
        ),
        source="generated",
        extra={"seed": seed, **({"knowledge_doc_id": draft.fact.doc_id} if draft.fact else {}), **(extra or {})},
    )
    if difficulty is None:
        problem.difficulty = Difficulty.from_constraint_count(problem.constraint_count())
    problem.id = content_id(problem.to_row())
    return problem


def difficulty_of(draft: Draft, verdict: Verdict) -> Difficulty:
    """By constraint count (as the official loader grades), one level up when search buries a gold product."""
    count = 2 if draft.fact else sum(n.reward().constraint_count() for n in draft.needs)
    base = Difficulty.from_constraint_count(count)
    return harder(base) if verdict.search_is_hard() else base


def harder(difficulty: Difficulty) -> Difficulty:
    order = [Difficulty.easy, Difficulty.medium, Difficulty.hard]
    return order[min(order.index(difficulty) + 1, 2)]


def fact_document(fact: Fact) -> KnowledgeDocument:
    from arena.problems.phrasing import fact_document_text

    title, content = fact_document_text(fact)
    return KnowledgeDocument(
        doc_id=fact.doc_id, url=f"https://knowledge.invalid/wiki/{fact.name}", title=title, content=content
    )


# ------------------------------------------------------------------ the run

_worker: _Context | None = None


def _init_worker(path: str, state: FrameState, seed: int) -> None:
    global _worker
    _worker = _Context(CatalogIndex(path), CatalogFrame(path, state), seed)


def _work(intent: Intent, start: int, stop: int) -> list[Outcome]:
    assert _worker is not None
    return [candidate(_worker, intent, i) for i in range(start, stop)]


def _quotas(n: int, intents: list[Intent]) -> dict[Intent, int]:
    return {intent: n // len(intents) + (1 if i < n % len(intents) else 0) for i, intent in enumerate(intents)}


def generate(
    catalog: CatalogIndex,
    config: GeneratorConfig,
    *,
    rewrite: Callable[[str, Draft], str] | None = None,
    progress: Callable[[int], None] | None = None,
) -> GenerationResult:
    """Generate ``config.n`` solvable problems (plus variants) from ``catalog``.

    ``rewrite`` (optional) turns a templated query into a paraphrase (the LLM
    rewriter); it runs here, in order, so ids and ``variant_of`` follow the final text.
    """
    intents = list(dict.fromkeys(config.intents))
    if not intents:
        raise GenerationError("no intents to generate")
    started = time.perf_counter()
    frame = CatalogFrame(catalog.path)
    report = GenerationReport(requested=config.n, seed=config.seed, frame_seconds=time.perf_counter() - started)
    quotas = _quotas(config.n, intents)
    accepted: dict[Intent, list[Outcome]] = {i: [] for i in intents}
    seen: set[bytes] = set()
    pool = None
    if config.workers > 1:
        pool = ProcessPoolExecutor(
            config.workers,
            mp_context=get_context("spawn"),
            initializer=_init_worker,
            initargs=(str(catalog.path), frame.state, config.seed),
        )
    ctx = _Context(catalog, frame, config.seed)
    try:
        for intent in intents:
            _fill(intent, quotas[intent], ctx, pool, config, accepted[intent], seen, report, progress)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    problems, documents = _emit(intents, accepted, config, report, rewrite)
    report.seconds = time.perf_counter() - started
    return GenerationResult(problems=problems, documents=documents, report=report)


def _outcomes(intent: Intent, ctx: _Context, pool: ProcessPoolExecutor | None, workers: int) -> Iterator[Outcome]:
    """Candidates of one intent in index order; with a pool, a window of chunks is computed ahead."""
    if pool is None:
        index = 0
        while True:
            yield candidate(ctx, intent, index)
            index += 1
    chunk, start = 16, 0
    pending: deque[Future] = deque()
    try:
        while True:
            while len(pending) < 2 * workers:
                pending.append(pool.submit(_work, intent, start, start + chunk))
                start += chunk
            yield from pending.popleft().result()
    finally:
        for future in pending:
            future.cancel()


def _fill(intent, quota, ctx, pool, config, accepted, seen, report, progress) -> None:
    tried = in_a_row = 0
    reasons: Counter[str] = Counter()
    if quota:
        for outcome in _outcomes(intent, ctx, pool, config.workers):
            tried += 1
            reason = outcome.reason
            if reason is None:
                assert outcome.draft is not None
                key = _content_key(outcome.draft)
                reason = "duplicate" if key in seen else None
                seen.add(key)
            if reason is not None:
                reasons[reason] += 1
                in_a_row += 1
                if in_a_row >= config.max_rejections_in_a_row:
                    top = ", ".join(f"{r} x{n}" for r, n in reasons.most_common(4))
                    raise GenerationError(
                        f"{intent.value}: {in_a_row} candidates in a row were rejected ({top}); "
                        f"the catalog {ctx.catalog.path} cannot yield {intent.value} problems"
                    )
                continue
            in_a_row = 0
            accepted.append(outcome)
            if progress is not None:
                progress(1)
            if len(accepted) == quota:
                break
    report.candidates[intent.value] = tried
    report.rejections[intent.value] = dict(sorted(reasons.items()))


def _content_key(draft: Draft) -> bytes:
    # Same gold, constraints, voucher and fact = the same problem, however worded.
    return orjson.dumps(
        [draft.intent, [n.reward().model_dump() for n in draft.needs], draft.voucher and draft.voucher.model_dump(),
         draft.fact and draft.fact.value],
        option=orjson.OPT_SORT_KEYS,
    )  # fmt: skip


def _emit(intents, accepted, config, report, rewrite) -> tuple[list[Problem], list[KnowledgeDocument]]:
    """Sources round-robin over intents, each followed by its variants; counts for the report."""
    problems: list[Problem] = []
    documents: list[KnowledgeDocument] = []
    counts = {i.value: dict.fromkeys((d.value for d in Difficulty), 0) for i in intents}
    kinds: Counter[str] = Counter()
    for position in range(max(len(v) for v in accepted.values())):
        for intent in intents:
            if position >= len(accepted[intent]):
                continue
            outcome = accepted[intent][position]
            draft, verdict = outcome.draft, outcome.verdict
            assert draft is not None and verdict is not None
            query, extra = _rewritten(rewrite, outcome.query, draft)
            difficulty = difficulty_of(draft, verdict)
            source = assemble(draft, query, seed=config.seed, difficulty=difficulty, extra=extra)
            problems.append(source)
            counts[intent.value][difficulty.value] += 1
            if draft.fact is not None:
                documents.append(fact_document(draft.fact))
            for variant_draft, variant_query, kind in make_variants(draft, outcome.query, config.variants):
                text, extra = _rewritten(rewrite, variant_query, variant_draft)
                extra |= {"variant_of": source.id, "variant_kind": kind}
                problems.append(assemble(variant_draft, text, seed=config.seed, difficulty=difficulty, extra=extra))
                kinds[kind] += 1
    report.counts = counts
    report.variants = dict(sorted(kinds.items()))
    return problems, documents


def _rewritten(rewrite: Callable[[str, Draft], str] | None, query: str, draft: Draft) -> tuple[str, dict]:
    if rewrite is None:
        return query, {}
    text = rewrite(query, draft)
    return text, ({"query_template": query} if text != query else {})


def write_problems(problems: list[Problem], out: str | Path) -> None:
    """JSONL rows in the official shape; written beside and renamed, so a reader never sees half a file."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".partial")
    with tmp.open("wb") as handle:
        for problem in problems:
            handle.write(orjson.dumps(problem.to_row(), option=orjson.OPT_APPEND_NEWLINE))
    tmp.replace(out)


def write_knowledge(documents: list[KnowledgeDocument], out_dir: str | Path) -> Path:
    """``out_dir/knowledge.jsonl`` plus its web_search index in ``out_dir``; each fact must be findable."""
    from arena.shop.knowledge import LocalKnowledgeBase, build_knowledge_index

    out_dir = Path(out_dir)
    if out_dir.exists() and any(out_dir.iterdir()):
        raise GenerationError(f"--knowledge-out {out_dir} is not empty; remove it or choose another directory")
    out_dir.mkdir(parents=True, exist_ok=True)
    corpus = out_dir / "knowledge.jsonl"
    corpus.write_bytes(b"".join(orjson.dumps(d.model_dump(), option=orjson.OPT_APPEND_NEWLINE) for d in documents))
    build_knowledge_index(documents, out_dir)
    base = LocalKnowledgeBase(out_dir)
    for document in documents:
        name = document.url.rsplit("/", 1)[-1]
        hits = base.search(name, 1)
        if not hits or hits[0]["url"] != document.url:
            raise GenerationError(f"{corpus}: document {document.doc_id} is not the first web_search hit for {name!r}")
    return corpus
