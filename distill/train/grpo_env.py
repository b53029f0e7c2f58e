"""The shop environment as trl's ``environment_factory`` sees it, and GRPO's two rewards.

trl turns the public methods of the environment class into the tool schema the
model is shown (from type hints and Google-style docstrings) and calls them
with the model's parsed arguments; each method forwards to the real
``ShopEnvironment`` so a GRPO rollout runs exactly the tools an episode runs.

Rewards (both read the environment after the rollout):

- ``teacher_step_reward``: per step, how well the model's i-th tool call matches
  the teacher's i-th call: 0.4 for the name, 0.3 for the argument keys
  (Jaccard), 0.3 for the argument values (share of the teacher's values
  reproduced, compared as normalized text); averaged over max(len(model),
  len(teacher)) steps, so missing and extra steps cost.
- ``outcome_reward``: 1.0 when the scorer counts the final recommendation a
  success, else 0.0 (the same scorer and mode as the race).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from arena.problems.model import Problem
from arena.problems.official import parse_row
from arena.scoring.outcome import ScoreMode, score_problem
from arena.shop.index import CatalogIndex
from arena.shop.tools import SHOP_TOOLS, TOOL_SCHEMAS, ShopEnvironment

NAME_WEIGHT, KEYS_WEIGHT, VALUES_WEIGHT = 0.4, 0.3, 0.3


def _norm(value: Any) -> str:
    return " ".join(str(value).lower().split())


def step_match(call: dict[str, Any], teacher: dict[str, Any]) -> float:
    """Similarity in [0, 1] of one tool call ``{"name", "arguments"}`` to the teacher's."""
    if call["name"] != teacher["name"]:
        return 0.0
    score = NAME_WEIGHT
    mine, theirs = call.get("arguments") or {}, teacher.get("arguments") or {}
    keys = set(mine) | set(theirs)
    score += KEYS_WEIGHT * (len(set(mine) & set(theirs)) / len(keys) if keys else 1.0)
    if theirs:
        same = sum(1 for k, v in theirs.items() if k in mine and _norm(mine[k]) == _norm(v))
        score += VALUES_WEIGHT * same / len(theirs)
    else:
        score += VALUES_WEIGHT
    return score


def trajectory_match(calls: list[dict[str, Any]], teacher: list[dict[str, Any]]) -> float:
    steps = max(len(calls), len(teacher))
    if steps == 0:
        return 0.0
    return sum(step_match(c, t) for c, t in zip(calls, teacher, strict=False)) / steps


class ShopToolEnv:
    """One rollout's shop: reset with a problem row and the teacher's steps, then tool calls."""

    catalog: CatalogIndex  # set by ``environment_factory``

    def __init__(self) -> None:
        self.env: ShopEnvironment | None = None
        self.calls: list[dict[str, Any]] = []
        self.problem: Problem | None = None
        self.teacher: list[dict[str, Any]] = []

    def reset(self, problem: str = "", teacher_steps: str = "[]", **_: Any) -> None:
        self.problem = parse_row(json.loads(problem)) if problem else None
        self.teacher = json.loads(teacher_steps)
        self.env = ShopEnvironment(self.catalog)
        self.calls = []
        return None

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        arguments = {k: v for k, v in arguments.items() if v is not None}
        self.calls.append({"name": name, "arguments": arguments})
        assert self.env is not None  # trl resets the environment before a rollout's first call
        result = self.env.call(name, arguments)
        if not result.ok:
            return f"error: {result.error}"
        return json.dumps(result.result, ensure_ascii=False)

    def find_product(
        self,
        q: str,
        page: int,
        shop_id: str | None = None,
        price: str | None = None,
        sort: str | None = None,
        service: str | None = None,
    ) -> str:
        args = {"q": q, "page": page, "shop_id": shop_id, "price": price, "sort": sort, "service": service}
        return self._call("find_product", args)

    def view_product_information(self, product_ids: str) -> str:
        return self._call("view_product_information", {"product_ids": product_ids})

    def recommend_product(self, product_ids: str) -> str:
        return self._call("recommend_product", {"product_ids": product_ids})

    def terminate(self, status: str) -> str:
        return self._call("terminate", {"status": status})


def _docstring(name: str) -> str:
    """A tool method's docstring written from the arena's own schema (``TOOL_SCHEMAS``): trl shows the
    model the schema it parses from the docstring and the signature, so a GRPO prompt lists the tools
    exactly as the episodes the corpus was taken from did (a student template renders only the name,
    the arguments and the description, but a single drifted word is a prompt it never trained on)."""
    spec = TOOL_SCHEMAS[name]
    lines = [spec["description"], "", "Args:"]
    for arg, about in spec["parameters"]["properties"].items():
        text = " ".join(about["description"].split())  # one line: a docstring argument cannot span more
        if "enum" in about:
            text += f" (choices: {json.dumps(about['enum'])})"
        lines.append(f"    {arg}: {text}")
    return "\n".join([*lines, "", "Returns:", "    The tool's result as JSON.", ""])


for _name in SHOP_TOOLS:
    getattr(ShopToolEnv, _name).__doc__ = _docstring(_name)


def environment_factory(catalog: CatalogIndex) -> Callable[[], ShopToolEnv]:
    def make() -> ShopToolEnv:
        env = ShopToolEnv()
        env.catalog = catalog
        return env

    return make


class RewardLog:
    """Keeps every reward batch (for the stage report and for tests)."""

    def __init__(self) -> None:
        self.batches: list[list[float]] = []


def teacher_step_reward(log: RewardLog | None = None):
    def teacher_step_reward(environments: list[ShopToolEnv], **_: Any) -> list[float]:
        rewards = [trajectory_match(e.calls, e.teacher) for e in environments]
        if log is not None:
            log.batches.append(rewards)
        return rewards

    return teacher_step_reward


def outcome_reward(catalog: CatalogIndex, mode: ScoreMode = ScoreMode.strict, log: RewardLog | None = None):
    def outcome_reward(environments: list[ShopToolEnv], **_: Any) -> list[float]:
        rewards = []
        for e in environments:
            recommended = e.env.state.recommended if e.env is not None else None
            ok = e.problem is not None and score_problem(e.problem, recommended, catalog, mode=mode).success
            rewards.append(1.0 if ok else 0.0)
        if log is not None:
            log.batches.append(rewards)
        return rewards

    return outcome_reward
