"""The task-pack catalog: makes tasks in the official ShoppingBench row format solvable offline.

The real 2.5M-product catalog the official tasks were drawn from is not here, so
a task pack rebuilds what the tasks need from the tasks themselves:

1. gold products rebuilt from the rewards (``requirements`` merges what every task
   asks of an id, ``gold`` and ``pricing`` write the records); knowledge rewards
   are full records and are kept as they are;
2. near-miss distractors per gold product (``distractors``), each checked with
   the real scorer to fail its tasks;
3. background products from the synthetic generator, renamed with ids shaped like the gold
   ones (``ids``: no id tells gold from the rest);
4. a knowledge corpus: one document per knowledge riddle that states its answer,
   so ``web_search`` with the riddle finds it.

A catalog directory built from a pack holds the index (``catalog.json`` source
kind ``taskpack``), ``knowledge.jsonl`` and its index ``knowledge/``, and
``taskpack.json`` (which product imitates which gold product and how, and every
conflict). Everything is deterministic for a seed. See docs/taskpack.md.
"""

from __future__ import annotations

import copy
import hashlib
import random
import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import orjson
from pydantic import BaseModel, Field

from arena.problems.model import Intent
from arena.problems.official import ProblemFileError, parse_row
from arena.scoring.outcome import ScoreMode, rule_score, score_problem
from arena.scoring.similarity import TitleSimilarity, default_similarity
from arena.shop.catalog import InMemoryCatalog
from arena.shop.knowledge import KnowledgeDocument, build_knowledge_index
from arena.shop.product import SERVICES, Product
from arena.taskpack.distractors import DEFAULT_DISTRACTORS, DistractorContext, DistractorRecord, make_distractors
from arena.taskpack.gold import ValueVocabulary, build_gold_products
from arena.taskpack.ids import IdAllocator
from arena.taskpack.requirements import RequirementBook, TaskConflict, TaskRef

SUMMARY = "taskpack.json"
KNOWLEDGE_JSONL = "knowledge.jsonl"
KNOWLEDGE_DIR = "knowledge"
KNOWLEDGE_HOST = "https://knowledge.invalid/"

__all__ = [
    "DEFAULT_DISTRACTORS",
    "TaskPack",
    "TaskPackError",
    "TaskPackSummary",
    "build_taskpack",
    "knowledge_document",
    "load_tasks",
]


class TaskPackError(ValueError):
    """A task pack that cannot be built; the message names the file (and line) and the reason."""


class TaskFileDigest(BaseModel):
    path: str
    sha256: str
    tasks: int


class PlantedDocument(BaseModel):
    """Which knowledge task a planted page answers (validator-side: the page's id says nothing)."""

    task_id: str
    doc_id: str


class TaskPackSummary(BaseModel):
    """``taskpack.json``: what the pack holds and what it could not do."""

    files: list[TaskFileDigest]
    seed: int
    background: int
    distractors_per_gold: int
    tasks: int
    gold: list[str]
    distractors: list[DistractorRecord] = Field(default_factory=list)
    distractors_skipped: int = 0
    background_indexed: int = 0
    knowledge_documents: int = 0
    planted: list[PlantedDocument] = Field(default_factory=list)
    conflicts: list[TaskConflict] = Field(default_factory=list)


# ------------------------------------------------------------------ loading


def load_tasks(paths: Sequence[str | Path]) -> tuple[list[TaskRef], list[TaskFileDigest]]:
    """Every task of every file, with its file and line; a bad row raises ProblemFileError."""
    if not paths:
        raise TaskPackError("give at least one tasks file")
    tasks: list[TaskRef] = []
    digests: list[TaskFileDigest] = []
    for raw_path in paths:
        path = Path(raw_path)
        if not path.is_file():
            raise TaskPackError(f"tasks file {path} does not exist")
        data = path.read_bytes()
        count = 0
        for lineno, line in enumerate(data.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                problem = parse_row(orjson.loads(line), source=path.name)
            except (orjson.JSONDecodeError, ValueError) as exc:
                raise ProblemFileError(str(path), lineno, str(exc)) from None
            for reward in problem.rewards:
                if not reward.title or not reward.title[0].strip():
                    reason = (
                        f"the reward for product {reward.product_id} has no title (a task pack needs the gold title)"
                    )
                    raise ProblemFileError(str(path), lineno, reason)
                unknown = sorted(set(reward.service) - set(SERVICES))
                if unknown:
                    reason = f"product {reward.product_id}: unknown service(s) {unknown} (known: {list(SERVICES)})"
                    raise ProblemFileError(str(path), lineno, reason)
            tasks.append(TaskRef(file=str(path), line=lineno, problem=problem))
            count += 1
        if count == 0:
            raise TaskPackError(f"tasks file {path} holds no tasks")
        digests.append(TaskFileDigest(path=str(path.resolve()), sha256=hashlib.sha256(data).hexdigest(), tasks=count))
    return tasks, digests


# ---------------------------------------------------------------- knowledge

_WORD = re.compile(r"[\"'“”‘’(]*([^\s\"'“”‘’(),.;:?!]+)([\"'“”‘’),.;:?!]*)")
_JOINERS = frozenset({"of", "the", "de", "van", "von", "der", "la", "le", "du", "and", "&"})


def riddle(query: str) -> str:
    """The knowledge question of a query: up to its first '?', else its first sentence."""
    mark = query.find("?")
    if mark >= 0:
        return query[: mark + 1].strip()
    return re.split(r"(?<=[.!])\s", query.strip(), maxsplit=1)[0]


def subject(question: str) -> str:
    """Who or what the question is about: its longest run of capitalised words outside quotes
    (joined by "of", "de", ...), skipping the opening question word; else its first words."""
    runs: list[tuple[bool, list[str]]] = []
    current: list[str] = []
    quoted = False
    inside = False
    for index, match in enumerate(_WORD.finditer(question)):
        token = match.group(0)
        word = match.group(1)
        opens = token[:1] in '"“‘'
        inside = inside or opens
        capital = word[:1].isupper() or (bool(current) and word[:1].isdigit())
        if capital and index > 0:
            current.append(word)
            quoted = quoted or inside
        elif current and word.lower() in _JOINERS:
            current.append(word)
        elif current:
            runs.append((quoted, current))
            current, quoted = [], False
        if match.group(2) and any(c in '"”’' for c in match.group(2)):
            inside = False
            if current:
                runs.append((True, current))
                current, quoted = [], False
    if current:
        runs.append((quoted, current))
    cleaned = [(q, _trim_joiners(words)) for q, words in runs]
    cleaned = [(q, w) for q, w in cleaned if w]
    if not cleaned:
        return " ".join(question.split()[:6]).rstrip("?")
    best = max(cleaned, key=lambda qw: (not qw[0], len(qw[1])))  # first longest, unquoted preferred
    return " ".join(best[1])


def _trim_joiners(words: list[str]) -> list[str]:
    while words and words[-1].lower() in _JOINERS:
        words = words[:-1]
    return words


def knowledge_document(task: TaskRef, token: str) -> KnowledgeDocument:
    """The planted page for one knowledge task: the riddle's subject as title and a passage that
    restates the question's facts and names the answer, so a search for the riddle finds it.

    ``token`` (random for the pack's seed) names the page: an id or URL made from the problem's
    content id would hand web_search's caller a hash of the answer to test guesses against. The page
    names its task's id validator-side only (``problems``): web_search serves it to that task alone."""
    problem = task.problem
    assert problem.knowledge is not None
    question = riddle(problem.query)
    about = subject(question)
    answer = problem.knowledge.knowledge_attribute
    slug = "-".join(re.findall(r"[a-z0-9]+", about.lower())[:8]) or "page"
    content = (
        f"{about}. Reference note. Question: {question} Answer: {answer}. "
        f"The record on {about} gives {answer} as the answer to this question."
    )
    return KnowledgeDocument(
        doc_id=f"kb-{token}", url=f"{KNOWLEDGE_HOST}{slug}/{token}", title=about, content=content, problems=[problem.id]
    )


# ------------------------------------------------------------------ building


class TaskPack:
    """A built pack in memory: gold and distractor products, knowledge documents, the summary.
    ``products()`` streams them, then the background products, for the index."""

    def __init__(
        self,
        summary: TaskPackSummary,
        gold: list[Product],
        distractors: list[Product],
        knowledge: list[KnowledgeDocument],
        tasks: list[TaskRef],
        ids: IdAllocator,
    ) -> None:
        self.summary, self.gold, self.distractors, self.knowledge, self.tasks = (
            summary,
            gold,
            distractors,
            knowledge,
            tasks,
        )
        self._ids = ids  # as the build left it: background ids are drawn after every gold and distractor id

    @property
    def conflicts(self) -> list[TaskConflict]:
        return self.summary.conflicts

    def size(self) -> int:
        return len(self.gold) + len(self.distractors) + self.summary.background

    def source(self) -> dict:
        """The index manifest's ``source``."""
        s = self.summary
        return {
            "kind": "taskpack",
            "files": [f.model_dump() for f in s.files],
            "background": s.background,
            "seed": s.seed,
            "distractors_per_gold": s.distractors_per_gold,
            "tasks": s.tasks,
            "gold": len(s.gold),
            "distractors": len(s.distractors),
            "knowledge_documents": s.knowledge_documents,
            "conflicts": len(s.conflicts),
        }

    def products(self) -> Iterator[Product]:
        """Gold, distractors and background, in an order and under ids that say nothing of which is gold.

        Background products (and their shops) are renamed with fresh ids shaped like the gold
        ones (``ids``), so no id collides and none reveals its kind. The index breaks score
        ties by insertion order, so gold first would win every tie with its own look-alike
        distractors: the task products go in by id, at seeded random places in the background.
        """
        from arena.taskpack.synthetic import generate_products

        ids = copy.deepcopy(self._ids)  # the same renaming on every pass
        rng = random.Random(f"{self.summary.seed}:order")
        task_products = sorted([*self.gold, *self.distractors], key=lambda p: p.product_id)
        slots = sorted(rng.randrange(self.summary.background + 1) for _ in task_products)
        shops: dict[str, str] = {}
        placed = 0
        self.summary.background_indexed = 0
        for position, product in enumerate(generate_products(self.summary.background, self.summary.seed)):
            while placed < len(task_products) and slots[placed] == position:
                yield task_products[placed]
                placed += 1
            pid = ids.product()
            shop = shops.get(product.shop_id) or shops.setdefault(product.shop_id, ids.shop())
            url = product.product_url.replace(f"-i{product.product_id}.html", f"-i{pid}.html")
            self.summary.background_indexed += 1
            yield product.model_copy(update={"product_id": pid, "shop_id": shop, "product_url": url})
        yield from task_products[placed:]

    def write_sidecars(self, out: str | Path) -> None:
        """``knowledge.jsonl``, the ``knowledge/`` index and ``taskpack.json`` beside the catalog index."""
        out = Path(out)
        with (out / KNOWLEDGE_JSONL).open("wb") as handle:
            for document in self.knowledge:
                handle.write(orjson.dumps(document.model_dump()) + b"\n")
        build_knowledge_index(self.knowledge, out / KNOWLEDGE_DIR)
        (out / SUMMARY).write_bytes(orjson.dumps(self.summary.model_dump(mode="json"), option=orjson.OPT_INDENT_2))


def build_taskpack(
    paths: Sequence[str | Path],
    *,
    seed: int = 0,
    background: int = 0,
    distractors: int = DEFAULT_DISTRACTORS,
    strict: bool = False,
    similarity: TitleSimilarity | None = None,
) -> TaskPack:
    """Read the tasks and build the pack. A conflicting task is reported in ``conflicts`` with its
    file, line and reason (its requirements are not applied), or, with ``strict``, raises TaskPackError."""
    if background < 0 or distractors < 0:
        raise TaskPackError("background and distractor counts must be >= 0")
    sim = similarity or default_similarity()
    tasks, digests = load_tasks(paths)
    conflicts: list[TaskConflict] = []

    def conflict(found: TaskConflict) -> None:
        if strict:
            raise TaskPackError(f"conflicting task: {found}")
        conflicts.append(found)

    book = RequirementBook(sim)
    for task in tasks:
        if (found := book.add(task)) is not None:
            conflict(found)
    ids = IdAllocator(seed)
    vocab = ValueVocabulary(tasks)
    built = build_gold_products(book, seed, ids, vocab)
    for found in built.conflicts:
        conflict(found)
    priced_out = {c.where for c in built.conflicts}
    lookup = InMemoryCatalog(built.products.values())
    for task in book.accepted:
        if task.where not in priced_out and (why := _gold_fails(task, lookup, sim)) is not None:
            conflict(TaskConflict(where=task.where, task_id=task.problem.id, reason=why))

    ctx = DistractorContext(
        seed=seed,
        ids=ids,
        vocab=vocab,
        gold=built.products,
        similarity=sim,
        titles=[p.title for p in built.products.values()],
        titles_by_category=_titles_by_category(built.products.values()),
        answers=sorted({t.problem.knowledge.knowledge_attribute for t in tasks if t.problem.knowledge}),
    )
    distractor_products: list[Product] = []
    records: list[DistractorRecord] = []
    skipped = 0
    for spec in sorted(book.specs.values(), key=lambda s: s.order):
        made, made_records, missed = make_distractors(spec, ctx, distractors)
        distractor_products += made
        records += made_records
        skipped += missed
    tokens = random.Random(f"{seed}:knowledge")
    knowledge_tasks = [t for t in book.accepted if t.problem.intent is Intent.knowledge]
    knowledge = [knowledge_document(t, f"{tokens.getrandbits(64):016x}") for t in knowledge_tasks]
    summary = TaskPackSummary(
        files=digests,
        seed=seed,
        background=background,
        distractors_per_gold=distractors,
        tasks=len(tasks),
        gold=list(built.products),
        distractors=records,
        distractors_skipped=skipped,
        knowledge_documents=len(knowledge),
        planted=[
            PlantedDocument(task_id=t.problem.id, doc_id=d.doc_id)
            for t, d in zip(knowledge_tasks, knowledge, strict=True)
        ],
        conflicts=conflicts,
    )
    return TaskPack(summary, list(built.products.values()), distractor_products, knowledge, tasks, ids)


def _titles_by_category(products: Iterable[Product]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for product in products:
        out.setdefault(product.category, []).append(product.title)
    return out


def _gold_fails(task: TaskRef, gold: InMemoryCatalog, sim: TitleSimilarity) -> str | None:
    """Why the task's official answer would not pass on the rebuilt products, or None.

    Checked twice: the answer itself in both scoring modes, and every rebuilt product
    under a different id, so it passes through its constraints and not only through
    the scorer's gold-id shortcut."""
    problem = task.problem
    answer = problem.gold_product_ids()
    for mode in ScoreMode:
        if not score_problem(problem, answer, gold, mode=mode, similarity=sim).success:
            return f"the gold answer fails in {mode.value} mode on the rebuilt products"
    for reward in problem.rewards:
        product = gold.get(reward.product_id)
        assert product is not None  # the gold catalog holds every rewarded product
        probe = product.model_copy(update={"product_id": f"{reward.product_id}~probe"})
        for mode in ScoreMode:
            result = rule_score(probe, reward, mode=mode, similarity=sim)
            if result.rule < 1:
                return f"rebuilt product {reward.product_id} meets only {result.rule:.2f} of its reward ({mode.value})"
    return None
