"""Answer files and scoring a whole task set against them.

Answers are JSONL rows ``{"query": str, "product_ids": [str, ...]}`` matched
to problems by exact query text, as the official evaluator matches rollouts.
A problem without an answer is a failure and counts in ``n``; an answer for
an unknown query is listed in ``unmatched``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import orjson
from pydantic import BaseModel, Field

from arena.problems.model import Problem
from arena.scoring.metrics import AsrSummary, asr
from arena.scoring.outcome import OutcomeScore, ScoreMode, score_problem
from arena.scoring.similarity import TitleSimilarity
from arena.shop.catalog import ProductLookup


class AnswerFileError(ValueError):
    pass


def load_answers(path: str | Path) -> dict[str, list[str]]:
    """query -> recommended ids. A later row for the same query wins, as the
    official evaluator's dict does."""
    answers: dict[str, list[str]] = {}
    with Path(path).open("rb") as handle:
        for lineno, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                row = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                raise AnswerFileError(f"{path}:{lineno}: not valid JSON ({exc})") from None
            query = row.get("query") if isinstance(row, dict) else None
            ids = row.get("product_ids") if isinstance(row, dict) else None
            if not isinstance(query, str):
                raise AnswerFileError(f"{path}:{lineno}: missing string 'query'")
            if isinstance(ids, str):
                ids = [i for i in ids.split(",") if i]
            if not isinstance(ids, list) or not all(isinstance(i, str | int) for i in ids):
                raise AnswerFileError(f"{path}:{lineno}: 'product_ids' must be a list of ids")
            answers[query] = [str(i).strip() for i in ids]
    return answers


class ScoredProblem(BaseModel):
    id: str
    query: str
    intent: str
    success: bool
    rule: float


class ScoreReport(AsrSummary):
    problems: list[ScoredProblem] = Field(default_factory=list)
    unmatched: list[str] = Field(default_factory=list)


def score_answers(
    problems: Iterable[Problem],
    answers: dict[str, list[str]],
    catalog: ProductLookup,
    mode: ScoreMode = ScoreMode.official,
    similarity: TitleSimilarity | None = None,
) -> ScoreReport:
    problems = list(problems)
    scores: list[OutcomeScore] = [
        score_problem(p, answers.get(p.query), catalog, mode=mode, similarity=similarity) for p in problems
    ]
    known = {p.query for p in problems}
    summary = asr(scores)
    return ScoreReport(
        **summary.model_dump(),
        problems=[
            ScoredProblem(id=p.id, query=p.query, intent=p.intent.value, success=s.success, rule=s.rule)
            for p, s in zip(problems, scores, strict=True)
        ],
        unmatched=[q for q in answers if q not in known],
    )
