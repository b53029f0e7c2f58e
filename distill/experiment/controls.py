"""The controls and the extra evaluations of the experiment: what separates skill from format.

- **format control**: the base fine-tuned, with the same number of training tokens as the SFT row, on
  the same arena run's agentic trajectories that failed or that the judge rejected. They have the
  format (they passed the format gate: tool calls that parse, in the student's template) and no
  success. SFT beating this row is evidence that the judged trajectories teach more than the format.
- **leak inflation**: leak-cluster mates of the problems the checkpoint trained on (a variant of a
  trained problem, never itself a corpus row). Scored beside the guarded held-out, the difference is
  what a split that ignores clusters would have added.
- **official tasks**: the first N usable tasks of each intent of the official ShoppingBench test
  files, solved on the task pack's catalog.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from arena.problems.model import Problem


class ControlError(ValueError):
    """A control that cannot be built from this run (the message says why)."""


def failed_or_rejected(row: dict[str, Any]) -> bool:
    """A corpus row (train.jsonl or rejected.jsonl) the format control may train on: it passed the
    format gate, and it did not both succeed and pass the judge. A failed episode the judge rated
    above the threshold is a train row (the gates do not ask for success); a success rejected only as
    a duplicate or over the agent cap is not a control row."""
    meta = row.get("metadata") or {}
    gates = meta.get("gates") or {}
    if not (gates.get("format") or {}).get("passed"):
        return False
    judged_good = bool((gates.get("reasoning") or {}).get("passed"))
    return not (judged_good and meta.get("success") is True)


def _digest(seed: int, row: dict[str, Any]) -> str:
    return hashlib.sha256(f"{seed}|{json.dumps(row, sort_keys=True)}".encode()).hexdigest()


def read_rows(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def format_control_rows(
    candidates: Iterable[dict[str, Any]], tokens_of: Callable[[dict[str, Any]], int], target: int, seed: int
) -> tuple[list[dict[str, Any]], int]:
    """Rows of ``candidates`` (failed or judge-rejected) in a seeded order until their tokens reach
    ``target``, going round again when one pass is not enough (a run with few failures repeats them,
    as SFT's epochs repeat its rows). Returns the rows and their tokens (>= target, by less than a row)."""
    pool = sorted((r for r in candidates if failed_or_rejected(r)), key=lambda r: _digest(seed, r))
    if not pool:
        raise ControlError("no failed or judge-rejected trajectory passed the format gate: no format control")
    if target <= 0:
        raise ControlError("the controlled row trains on no tokens")
    sizes = [tokens_of(row) for row in pool]
    if not any(sizes):
        raise ControlError("every format-control candidate renders to 0 tokens")
    chosen: list[dict[str, Any]] = []
    total = 0
    while total < target:
        for row, size in zip(pool, sizes, strict=True):
            if total >= target:
                break
            chosen.append(row)
            total += size
    return chosen, total


def leak_mates(heldout: list[Problem], known: dict[str, Problem], trained: Iterable[str], limit: int) -> list[Problem]:
    """Problems that share a leak cluster with a trained-on problem and are neither trained on nor held
    out, in a stable order, round-robin over intents up to ``limit``."""
    trained_ids = set(trained)
    held_ids = {p.id for p in heldout}
    clusters = {known[i].cluster_id for i in trained_ids if i in known and known[i].cluster_id is not None}
    mates = sorted(
        (p for p in known.values() if p.cluster_id in clusters and p.id not in trained_ids and p.id not in held_ids),
        key=lambda p: p.id,
    )
    return round_robin(mates, limit)


def round_robin(problems: list[Problem], limit: int | None) -> list[Problem]:
    """The first ``limit`` problems taking one intent after the other, so a short list has every intent."""
    if limit is None or limit >= len(problems):
        return problems
    queues: dict[str, list[Problem]] = {}
    for problem in problems:
        queues.setdefault(problem.intent.value, []).append(problem)
    chosen: list[Problem] = []
    while len(chosen) < limit:
        for intent in sorted(queues):
            if queues[intent] and len(chosen) < limit:
                chosen.append(queues[intent].pop(0))
    return chosen


OFFICIAL_FILES = (
    "synthesize_product_test.jsonl",
    "synthesize_shop_test.jsonl",
    "synthesize_voucher_test.jsonl",
    "synthesize_web_simpleqa_test.jsonl",
)


def official_files(folder: Path) -> list[Path]:
    missing = [name for name in OFFICIAL_FILES if not (folder / name).is_file()]
    if missing:
        raise ControlError(f"official tasks: {folder} lacks {', '.join(missing)}")
    return [folder / name for name in OFFICIAL_FILES]


def official_problems(files: list[Path], per_intent: int, unusable: set[str]) -> list[Problem]:
    """The first ``per_intent`` tasks of each file that the task pack could build (``unusable``: the ids
    of conflicting tasks, whose requirements the pack did not apply), in file order."""
    from arena.problems.official import iter_problems

    chosen: list[Problem] = []
    for path in files:
        taken = 0
        for problem in iter_problems(path):
            if taken >= per_intent:
                break
            if problem.id in unusable:
                continue
            chosen.append(problem)
            taken += 1
    return chosen
