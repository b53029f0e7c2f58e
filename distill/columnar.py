"""Parquet and Hugging Face copies of the corpus, with one Arrow schema for every split.

JSON rows do not map onto Arrow on their own: a sub-task row's empty
``gates`` is a struct with no field (Parquet cannot store it), and splits
whose rows differ in optional keys get different inferred schemas, which
``datasets`` refuses to put side by side. So the columnar copies store the
same rows in a fixed shape: ``metadata.filter`` and ``metadata.gates`` become
ordered lists of ``{name, passed, reason}``, every message has the same keys
(absent ones null, non-text content as its JSON text), a tool call's
``arguments`` is always its JSON text, and a tool's ``parameters`` schema is
its JSON text (schemas differ per tool; trl re-parses tools from JSON). One
schema is inferred over every row of every split, so the splits load together.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

MESSAGE_KEYS = ("role", "content", "reasoning_content", "name", "tool_call_id", "tool_calls")
VERDICT_LISTS = ("filter", "gates")


def _text(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _tool_call(call: dict) -> dict:
    function = call.get("function") or {}
    return {
        "id": _text(call.get("id")),
        "type": _text(call.get("type")) or "function",
        "function": {"name": _text(function.get("name")), "arguments": _text(function.get("arguments"))},
    }


def _message(message: dict) -> dict:
    row: dict[str, Any] = {key: _text(message.get(key)) for key in MESSAGE_KEYS if key != "tool_calls"}
    calls = message.get("tool_calls")
    row["tool_calls"] = [_tool_call(c) for c in calls if isinstance(c, dict)] if isinstance(calls, list) else None
    return row


def _tool(tool: dict) -> dict:
    function = tool.get("function") or {}
    return {
        "type": _text(tool.get("type")) or "function",
        "function": {
            "name": _text(function.get("name")),
            "description": _text(function.get("description")),
            "parameters": _text(function.get("parameters")),
        },
    }


def _metadata(metadata: dict) -> dict:
    row = dict(metadata)
    for key in VERDICT_LISTS:
        verdicts = row.get(key) or {}
        row[key] = [{"name": name, "passed": bool(v.get("passed")), "reason": str(v.get("reason", ""))}
                    for name, v in verdicts.items()]  # fmt: skip
    return row


def columnar_row(row: dict) -> dict:
    """A corpus row (trajectory or KTO) in the fixed columnar shape."""
    if "metadata" in row:
        return {
            "messages": [_message(m) for m in row.get("messages", [])],
            "tools": [_tool(t) for t in row.get("tools", [])],
            "metadata": _metadata(row["metadata"]),
        }
    return {  # a KTO row: prompt (messages), completion (one assistant message), label
        "prompt": [_message(m) for m in row.get("prompt", [])],
        "completion": [_message(m) for m in row.get("completion", [])],
        "label": bool(row.get("label")),
    }


def _rows(path: Path) -> Iterator[dict]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield columnar_row(json.loads(line))


def arrow_tables(out: Path, names: Iterable[str]):
    """name -> pyarrow Table for each named JSONL file in ``out``, all under one unified schema."""
    import pyarrow as pa

    rows = {name: list(_rows(out / f"{name}.jsonl")) for name in names}
    everything = [r for part in rows.values() for r in part]
    if not everything:
        return {}
    schema = pa.Table.from_pylist(everything).schema
    return {name: pa.Table.from_pylist(part, schema=schema) for name, part in rows.items() if part}


def write_parquet(out: Path, names: list[str]) -> list[str]:
    from pyarrow import parquet

    written = []
    # Trajectory splits share one schema; KTO rows have their own columns.
    for group in ([n for n in names if n != "kto"], [n for n in names if n == "kto"]):
        for name, table in arrow_tables(out, group).items():
            parquet.write_table(table, out / f"{name}.parquet")
            written.append(f"{name}.parquet")
    return written


def write_hf(out: Path, names: list[str]) -> dict[str, list[str]]:
    """``out/hf/trajectories`` (the trajectory splits) and ``out/hf/kto``, via ``save_to_disk``."""
    from datasets import Dataset, DatasetDict
    from datasets.utils.logging import disable_progress_bar

    disable_progress_bar()  # the command's own lines say what was written
    written: dict[str, list[str]] = {}
    for folder, group in (
        ("trajectories", [n for n in names if n != "kto"]),
        ("kto", [n for n in names if n == "kto"]),
    ):
        tables = arrow_tables(out, group)
        if not tables:
            continue
        splits = {("train" if folder == "kto" else name): Dataset(table) for name, table in tables.items()}
        DatasetDict(splits).save_to_disk(str(out / "hf" / folder))
        written[folder] = sorted(splits)
    return written
