"""Reading the corpus export into the datasets the trainers take.

Rows come from the corpus export (issue 7): ``{"messages", "tools", "metadata"}``
for train/eval/teacher, ``{"prompt", "completion", "label"}`` (+ ``tools``) for KTO.
Every row is checked here, and a bad one is an error naming file and line:
a trainer that meets it later fails far from the cause, or worse, trains on it.

Messages are reshaped to one fixed key set (tool-call arguments as JSON text,
tools as JSON text) so Arrow can hold heterogeneous dialogues in one column;
trl decodes string ``tools`` itself and the Qwen3 template prints string
arguments as they are.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROLES = {"system", "user", "assistant", "tool"}


class CorpusError(ValueError):
    """A corpus file or row that cannot be trained on (names file, line and reason)."""


class StageSkipped(CorpusError):
    """A stage with nothing to learn from, for a reason that is a result, not a fault (rft: no rollout
    succeeded, as with any untrained model). A recipe records it and goes on from the previous checkpoint;
    the stage's own command still fails with it."""


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    if not path.is_file():
        raise CorpusError(f"{path}: no such corpus file")
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise CorpusError(f"{path}:{number}: not JSON: {exc}") from None
            if not isinstance(row, dict):
                raise CorpusError(f"{path}:{number}: a row must be a JSON object")
            yield number, row


def shape_message(message: Any, where: str) -> dict[str, Any]:
    if not isinstance(message, dict) or message.get("role") not in ROLES:
        raise CorpusError(f"{where}: each message needs a role among {sorted(ROLES)}")
    content = message.get("content")
    if isinstance(content, list):
        content = "\n".join(p.get("text") or "" for p in content if isinstance(p, dict) and p.get("type") == "text")
    calls = None
    if message.get("tool_calls"):
        if message["role"] != "assistant":
            raise CorpusError(f"{where}: only assistant messages carry tool_calls")
        calls = []
        for call in message["tool_calls"]:
            function = (call or {}).get("function") or {}
            if not isinstance(function.get("name"), str):
                raise CorpusError(f"{where}: a tool call without a function name")
            arguments = function.get("arguments", {})
            calls.append(
                {
                    "id": str(call.get("id") or ""),
                    "type": "function",
                    "function": {
                        "name": function["name"],
                        "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
                    },
                }
            )
    if message["role"] == "tool" and not message.get("tool_call_id"):
        raise CorpusError(f"{where}: a tool message needs tool_call_id")
    reasoning = message.get("reasoning_content")
    return {
        "role": message["role"],
        "content": content if isinstance(content, str) else "",
        "tool_calls": calls,
        "tool_call_id": message.get("tool_call_id"),
        "reasoning_content": reasoning if isinstance(reasoning, str) else None,
    }


def shape_dialogue(messages: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(messages, list) or not messages:
        raise CorpusError(f"{where}: 'messages' must be a non-empty list")
    shaped = [shape_message(m, f"{where}: message {i}") for i, m in enumerate(messages)]
    if not any(m["role"] == "assistant" for m in shaped):
        raise CorpusError(f"{where}: no assistant message: nothing to learn from")
    return shaped


def _tools(row: dict[str, Any], where: str) -> str:
    tools = row.get("tools") or []
    if not isinstance(tools, list):
        raise CorpusError(f"{where}: 'tools' must be a list of function schemas")
    return json.dumps(tools)


def dialogue_rows(path: Path, keep: Callable[[dict[str, Any]], bool] | None = None) -> list[dict[str, Any]]:
    """``{"messages", "tools"}`` rows for SFT (``keep`` filters on the row's metadata)."""
    rows = []
    for number, row in iter_jsonl(path):
        where = f"{path}:{number}"
        if keep is not None and not keep(row.get("metadata") or {}):
            continue
        rows.append({"messages": shape_dialogue(row.get("messages"), where), "tools": _tools(row, where)})
    return rows


def is_teacher(min_coefficient: float) -> Callable[[dict[str, Any]], bool]:
    """The teacher subset: successful trajectories the judge rated at least ``min_coefficient``."""

    def keep(metadata: dict[str, Any]) -> bool:
        judge = metadata.get("judge") or {}
        coefficient = judge.get("coefficient") if isinstance(judge, dict) else None
        return metadata.get("success") is True and coefficient is not None and coefficient >= min_coefficient

    return keep


def kto_rows(path: Path) -> list[dict[str, Any]]:
    """``{"prompt", "completion", "label", "tools"}`` rows; prompt and completion are message lists."""
    rows = []
    for number, row in iter_jsonl(path):
        where = f"{path}:{number}"
        if not isinstance(row.get("label"), bool):
            raise CorpusError(f"{where}: 'label' must be true (desirable) or false (undesirable)")
        prompt = row.get("prompt")
        completion = row.get("completion")
        if not isinstance(prompt, list) or not prompt:
            raise CorpusError(f"{where}: 'prompt' must be a non-empty list of messages")
        if not isinstance(completion, list) or not completion:
            raise CorpusError(f"{where}: 'completion' must be a non-empty list of messages")
        shaped_completion = [shape_message(m, f"{where}: completion") for m in completion]
        if shaped_completion[0]["role"] != "assistant":
            raise CorpusError(f"{where}: the completion must start with the assistant's step")
        rows.append(
            {
                "prompt": [shape_message(m, f"{where}: prompt") for m in prompt],
                "completion": shaped_completion,
                "label": row["label"],
                "tools": _tools(row, where),
            }
        )
    labels = {r["label"] for r in rows}
    if rows and len(labels) < 2:
        raise CorpusError(f"{path}: KTO needs both desirable and undesirable examples, found only label={labels.pop()}")
    return rows


def canonical_order(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows sorted by a digest of their content.

    The trainer's sampler permutes row *positions* with the seed, so the rows a step sees depended
    on the file's order, and that order followed whatever wrote the file: the arena's episodes and
    rft's rollouts arrive as they finish, which follows the machine's load. Two runs of one config
    then started from different first batches (first loss 1.50 in one, 1.58 in the other). Sorted by
    content, the order is a function of the row set and the seed alone."""
    return sorted(rows, key=lambda row: hashlib.sha256(json.dumps(row, sort_keys=True).encode()).hexdigest())


def to_dataset(rows: list[dict[str, Any]], what: str):
    from datasets import Dataset

    if not rows:
        raise CorpusError(f"no rows for {what}")
    return Dataset.from_list(canonical_order(rows))
