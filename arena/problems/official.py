"""Read task files in the official ShoppingBench row shape (and our generated rows)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
from pydantic import ValidationError

from arena.problems.model import (
    Difficulty,
    Intent,
    KnowledgeReward,
    Problem,
    ProductReward,
    Voucher,
    content_id,
)
from arena.shop.product import Product

# Keys a row of ours adds to the official shape; everything else unknown is kept in `extra`.
_OWN_KEYS = {"query", "reward", "voucher", "Knowledge_Attribute", "id", "intent", "difficulty", "cluster_id"}


class ProblemFileError(ValueError):
    """A task row that cannot be read; names the file and line."""

    def __init__(self, path: str, line: int, reason: str) -> None:
        super().__init__(f"{path}:{line}: {reason}")
        self.path, self.line, self.reason = path, line, reason


def infer_intent(row: dict) -> Intent:
    if "intent" in row:
        return Intent.parse(str(row["intent"]))
    if "Knowledge_Attribute" in row:
        return Intent.knowledge
    if "voucher" in row:
        return Intent.voucher
    if isinstance(row.get("reward"), list):
        return Intent.shop
    return Intent.product


def parse_row(row: dict, source: str = "", *, query_only: bool = False) -> Problem:
    """Turn one row into a Problem; raises ValueError with the reason.

    ``query_only`` accepts a row without a reward (a request as a shopper would type it,
    with its ``intent``): the leak-cluster guard then reads its constraints from the text.
    """
    if not isinstance(row, dict):
        raise ValueError("row is not a JSON object")
    query = row.get("query")
    if not isinstance(query, str) or not query.strip():
        raise ValueError("missing or empty 'query'")
    if "reward" not in row:
        if not query_only or "intent" not in row:
            raise ValueError("missing 'reward'")
        return Problem(
            id=str(row.get("id") or content_id(row)),
            intent=Intent.parse(str(row["intent"])),
            query=query,
            difficulty=Difficulty(row.get("difficulty") or Difficulty.easy),
            source=source,
            cluster_id=str(row["cluster_id"]) if row.get("cluster_id") is not None else None,
            extra={k: v for k, v in row.items() if k not in _OWN_KEYS},
        )
    intent = infer_intent(row)
    reward = row["reward"]
    rewards: list[ProductReward] = []
    knowledge = None
    voucher = None
    try:
        if intent is Intent.knowledge:
            knowledge = KnowledgeReward(
                knowledge_attribute=str(row["Knowledge_Attribute"]), product=Product.model_validate(reward)
            )
        elif intent is Intent.product:
            if not isinstance(reward, dict):
                raise ValueError("a product task's 'reward' must be an object")
            rewards = [ProductReward.model_validate(reward)]
        else:
            if not isinstance(reward, list) or not reward:
                raise ValueError(f"a {intent.value} task's 'reward' must be a non-empty list")
            rewards = [ProductReward.model_validate(r) for r in reward]
            if intent is Intent.voucher:
                voucher = Voucher.model_validate(row.get("voucher"))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ValueError(f"invalid {intent.value} task: {where}: {first['msg']}") from None
    except KeyError as exc:
        raise ValueError(f"missing {exc}") from None
    problem = Problem(
        id=str(row.get("id") or content_id(row)),
        intent=intent,
        query=query,
        difficulty=Difficulty.from_constraint_count(0),
        rewards=rewards,
        voucher=voucher,
        knowledge=knowledge,
        source=source,
        cluster_id=str(row["cluster_id"]) if row.get("cluster_id") is not None else None,
        extra={k: v for k, v in row.items() if k not in _OWN_KEYS},
    )
    given = row.get("difficulty")
    problem.difficulty = Difficulty(given) if given else Difficulty.from_constraint_count(problem.constraint_count())
    return problem


def iter_problems(path: str | Path, *, query_only: bool = False) -> Iterator[Problem]:
    """Stream problems from a JSONL file; a bad row raises ProblemFileError with its line.
    ``query_only`` accepts rows without a reward (see :func:`parse_row`)."""
    path = Path(path)
    with path.open("rb") as handle:
        for lineno, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                row = orjson.loads(raw)
                yield parse_row(row, source=path.name, query_only=query_only)
            except (orjson.JSONDecodeError, ValueError) as exc:
                raise ProblemFileError(str(path), lineno, str(exc)) from None


def load_problems(*paths: str | Path, query_only: bool = False) -> list[Problem]:
    problems: list[Problem] = []
    for path in paths:
        problems.extend(iter_problems(path, query_only=query_only))
    return problems
