"""``arena catalog build``: stream products from a source into an index,
with a progress bar and a report of what was skipped.

Sources: the synthetic generator, an official documents file, or a task pack
(tasks files in the official row format, see ``arena.taskpack.pack``), whose
knowledge corpus and summary are written beside the index.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, Field
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)

from arena.shop.documents import DocumentError, LoadReport, iter_documents
from arena.shop.index import CatalogIndexError, build_index
from arena.shop.settings import CatalogSettings


class CatalogBuildError(RuntimeError):
    pass


class TaskPackBuildReport(BaseModel):
    """What a task-pack build put into the catalog, and the tasks it could not make solvable."""

    tasks: int
    gold: int
    distractors: int
    distractors_skipped: int
    background: int
    knowledge_documents: int
    conflicts: list[str] = Field(default_factory=list)


class CatalogBuildReport(BaseModel):
    products: int
    seconds: float
    skipped: int = 0
    duplicates: int = 0
    load_errors: list[str] = Field(default_factory=list)
    taskpack: TaskPackBuildReport | None = None


def build_catalog(
    out: str | Path,
    *,
    synthetic: int | None = None,
    seed: int = 0,
    documents: str | Path | None = None,
    strict: bool = False,
    settings: CatalogSettings | None = None,
    console: Console | None = None,
    tasks: Sequence[str | Path] | None = None,
    background: int = 0,
    distractors: int | None = None,
) -> CatalogBuildReport:
    """Build one catalog index from exactly one source: ``synthetic`` N products, a ``documents``
    file, or ``tasks`` files (a task pack, with ``background`` synthetic products and
    ``distractors`` near misses per gold product; ``strict`` then fails on a conflicting task)."""
    settings = settings or CatalogSettings()
    load = LoadReport(path=str(documents or "synthetic"))
    if sum(x is not None for x in (synthetic, documents, tasks)) != 1:
        raise CatalogBuildError("give exactly one source: a synthetic size, a documents file or tasks files")
    pack = None
    total: int | None = None
    if tasks is not None:
        from arena.problems.official import ProblemFileError
        from arena.taskpack.distractors import DEFAULT_DISTRACTORS
        from arena.taskpack.pack import TaskPackError, build_taskpack

        try:
            pack = build_taskpack(
                tasks,
                seed=seed,
                background=background,
                distractors=DEFAULT_DISTRACTORS if distractors is None else distractors,
                strict=strict,
            )
        except (TaskPackError, ProblemFileError) as exc:
            raise CatalogBuildError(str(exc)) from None
        products = pack.products()
        total = pack.size()
        source = pack.source()
    elif synthetic is not None:
        from arena.taskpack.synthetic import generate_products

        if synthetic < 1:
            raise CatalogBuildError("--synthetic needs a positive product count")
        products = generate_products(synthetic, seed)
        total = synthetic
        source = {"kind": "synthetic", "products": synthetic, "seed": seed}
    elif documents is not None:
        documents = Path(documents)
        if not documents.is_file():
            raise CatalogBuildError(f"documents file {documents} does not exist")
        products = iter_documents(documents, strict=strict, report=load)
        source = {"kind": "documents", "file": str(documents.resolve()), "sha256_head": _head_digest(documents)}
    else:  # unreachable: exactly one source was checked above
        raise CatalogBuildError("give a synthetic size, a documents file or tasks files")

    progress = Progress(
        TextColumn("indexing"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=console or Console(stderr=True), transient=True,
    )  # fmt: skip
    with progress:
        task = progress.add_task("index", total=total)
        try:
            stats = build_index(
                products,
                out,
                source=source,
                progress=lambda n: progress.update(task, completed=n),
            )
        except (CatalogIndexError, DocumentError) as exc:
            raise CatalogBuildError(str(exc)) from None
    report = CatalogBuildReport(
        products=stats.products,
        seconds=stats.seconds,
        skipped=load.skipped,
        duplicates=stats.duplicates,
        load_errors=load.errors,
    )
    if pack is not None:
        pack.write_sidecars(out)
        s = pack.summary
        report.taskpack = TaskPackBuildReport(
            tasks=s.tasks,
            gold=len(s.gold),
            distractors=len(s.distractors),
            distractors_skipped=s.distractors_skipped,
            background=s.background_indexed,
            knowledge_documents=s.knowledge_documents,
            conflicts=[str(c) for c in s.conflicts],
        )
    return report


def _head_digest(path: Path, size: int = 1 << 20) -> str:
    # Identifies the source file cheaply (first MiB); a 1.4 GB file is not hashed whole.
    with path.open("rb") as handle:
        return hashlib.sha256(handle.read(size)).hexdigest()
