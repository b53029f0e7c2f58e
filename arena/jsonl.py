"""Numbered rows of a JSONL file, for readers that report a bad line by its number."""

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
