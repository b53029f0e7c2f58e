"""Generate ShoppingBench-style problems from any catalog index, with no LLM: the run.

ShoppingBench's recipe, step for step: sample gold product(s) from the
catalog; pick constraints from their own fields (title noun phrase,
attributes, one SKU option, services, a price range around the true price);
write the query; for vouchers derive threshold, discount and budget from the
gold total; for knowledge, state a fact in a document and ask for a product
only the fact identifies. Every candidate then passes the solvability check
(``arena.generator.solvability``) or is counted as rejected with its reason.

The parts: ``recipe`` (the numbers), ``catalog_frame`` (sampling that repeats
on any build), ``candidates`` (one seeded candidate per intent and index);
this module runs them: quotas per intent, worker processes, duplicates,
variants, the report and the files.

Determinism: a candidate is a pure function of (seed, intent, index), and
candidates are accepted in index order, so the output is byte-identical
whatever the number of worker processes.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import orjson
from pydantic import BaseModel, Field

from arena.generator.candidates import CandidateContext, Outcome, assemble, candidate, difficulty_of
from arena.generator.catalog_frame import CatalogFrame, FrameState, GenerationError
from arena.problems.draft import Draft
from arena.problems.model import Difficulty, Intent, Problem
from arena.problems.riddles import fact_document
from arena.problems.variants import KINDS, VariantKind, make_variants
from arena.shop.index import CatalogIndex
from arena.shop.knowledge import KnowledgeDocument

ALL_INTENTS: tuple[Intent, ...] = (Intent.product, Intent.shop, Intent.voucher, Intent.knowledge)


class GeneratorConfig(BaseModel):
    n: int = Field(ge=1, description="Source problems to generate (variants come on top).")
    seed: int = 0
    intents: list[Intent] = Field(default_factory=lambda: list(ALL_INTENTS))
    variants: int = Field(0, ge=0, le=8, description="Variants emitted per source problem.")
    variant_kinds: list[VariantKind] = Field(
        default_factory=lambda: list(KINDS), min_length=1, description="The kinds variants take, in turn."
    )
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


# ------------------------------------------------------------------ the run

_worker: CandidateContext | None = None


def _init_worker(path: str, state: FrameState, seed: int) -> None:
    global _worker
    _worker = CandidateContext(CatalogIndex(path), CatalogFrame(path, state), seed)


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
    ctx = CandidateContext(catalog, frame, config.seed)
    try:
        for intent in intents:
            _fill(intent, quotas[intent], ctx, pool, config, accepted[intent], seen, report, progress)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    problems, documents = _emit(intents, accepted, config, report, rewrite)
    report.seconds = time.perf_counter() - started
    return GenerationResult(problems=problems, documents=documents, report=report)


def _outcomes(
    intent: Intent, ctx: CandidateContext, pool: ProcessPoolExecutor | None, workers: int
) -> Iterator[Outcome]:
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
            family = [source]
            for variant_draft, variant_query, kind in make_variants(
                draft, outcome.query, config.variants, config.variant_kinds
            ):
                text, extra = _rewritten(rewrite, variant_query, variant_draft)
                extra |= {"variant_of": source.id, "variant_kind": kind}
                family.append(assemble(variant_draft, text, seed=config.seed, difficulty=difficulty, extra=extra))
                kinds[kind] += 1
            problems += family[1:]
            if draft.fact is not None:  # the fact's page answers the source and every variant asking it
                askers = [p.id for p in family if p.extra.get("knowledge_doc_id") == draft.fact.doc_id]
                documents.append(fact_document(draft.fact, askers))
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
        for problem_id in document.problems or [""]:  # as each problem's episode searches
            hits = base.for_problem(problem_id).search(name, 1)
            if not hits or hits[0]["url"] != document.url:
                raise GenerationError(
                    f"{corpus}: document {document.doc_id} is not the first web_search hit for {name!r}"
                    f" in problem {problem_id}'s episode"
                )
    return corpus
