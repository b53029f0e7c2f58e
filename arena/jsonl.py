"""JSON values read and walked: numbered rows of a JSONL file (for readers that report a bad line by its
number), and the string values inside a parsed value."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """``(line number, parsed value)`` for every non-blank line; a line that is not JSON
    yields the ``ValueError`` instead of a value, so each caller decides whether that is
    fatal or a row to report and skip. Opening the file raises ``OSError`` as usual."""
    with path.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except ValueError as exc:
                yield number, exc


def string_values(value: Any) -> Iterator[str]:
    """The string values in a parsed JSON ``value`` (keys left out), lazily and without recursion, so a
    structure nested as deep as an agent likes cannot exhaust the stack."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack += list(item.values())
        elif isinstance(item, list):
            stack += item
