"""Values every store backend can hold: the rules shared by whatever stores agent-influenced content.

SQLite keeps JSON and PostgreSQL JSONB and text, and some values that Python and JSON accept are refused
there: a U+0000 (PostgreSQL: 22P05, and "text fields cannot contain NUL") or a lone surrogate (not UTF-8
at all), structures deeper than the JSON encoders' recursion limit (255 levels, orjson and pydantic),
integers outside 64 bits (orjson), non-finite floats (JSONB), documents over JSONB's 255 MiB.

``storable_json`` rewrites a value so that it stores and reads back the same on every backend, and says
what it changed (``Changes``): the episode record (``arena.runner.storable``) and the judge's verdicts
(``arena.store.judgments``: an LLM judge's explanation is text an agent can steer) both go through it.

- U+0000 and lone surrogates (in strings and in keys) become U+FFFD;
- a container nested deeper than ``max_depth`` (counted from the value's root) is replaced by a short
  marker string;
- an integer outside the signed 64-bit range becomes its decimal string; a NaN or infinity, null;
- a value whose JSON is over ``max_bytes`` has its longest strings cut until it fits, then (many short
  strings) its largest lists and objects below ``content_depth``.
"""

from __future__ import annotations

import math
import re
from enum import Enum
from typing import Any

import orjson
from pydantic import BaseModel

REPLACEMENT = "\ufffd"
# What PostgreSQL's JSONB (and UTF-8 itself) cannot hold: the NUL character and lone surrogates.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_INT64 = (-(2**63), 2**63 - 1)
_CUT_MARK = " [... cut: the record keeps at most {keep} characters of one string]"
_SHORTEST_CUT = 256  # strings are never cut below this many characters
_FEWEST_ITEMS = 16  # nor lists and objects below this many entries (more than any record model's fields)


class Changes:
    """What the walk changed, per kind: how often, and where first."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.first: dict[str, str] = {}

    def note(self, kind: str, path: list[str | int], what: str) -> None:
        if kind not in self.counts:
            self.first[kind] = f"{what} at {_path_text(path)}"
        self.counts[kind] = self.counts.get(kind, 0) + 1


def _path_text(path: list[str | int]) -> str:
    text = "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in path)
    # The path quotes agent-written keys: cleaned like any other text of the record.
    return _UNSTORABLE.sub(REPLACEMENT, text[:200] or "the record")


class _Walk:
    def __init__(self, max_depth: int, changes: Changes) -> None:
        self.max_depth = max_depth
        self.changes = changes
        self.path: list[str | int] = []  # dict keys and list indices down to the value looked at

    def text(self, value: str) -> str:
        if _UNSTORABLE.search(value) is None:
            return value
        self.changes.note("record_text", self.path, "U+0000 or a lone surrogate replaced by U+FFFD")
        return _UNSTORABLE.sub(REPLACEMENT, value)

    def value(self, value: Any, depth: int) -> Any:
        # Recursive: the descent stops at max_depth, far below Python's own recursion limit.
        if isinstance(value, str):
            return self.text(value)
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, int):
            if _INT64[0] <= value <= _INT64[1]:
                return value
            self.changes.note("record_numbers", self.path, "an integer outside 64 bits kept as its digits")
            return str(value)
        if isinstance(value, float):
            if math.isfinite(value):
                return value
            self.changes.note("record_numbers", self.path, f"{value} stored as null")
            return None
        if isinstance(value, Enum):
            return self.value(value.value, depth)
        if isinstance(value, BaseModel):  # walked field by field: pydantic's own dump stops at its depth limit
            value = {name: getattr(value, name) for name in type(value).model_fields}
        if isinstance(value, dict | list | tuple):
            if depth >= self.max_depth:
                self.changes.note("record_depth", self.path, f"a structure nested past {self.max_depth} levels cut")
                return f"[cut: nested deeper than {self.max_depth} levels]"
            # The common leaves (clean strings, small numbers) are kept without a call: a record has many.
            search, path = _UNSTORABLE.search, self.path
            if isinstance(value, dict):
                out = {}
                for key, item in value.items():
                    key = str(key)
                    path.append(key)
                    if search(key) is not None:
                        key = self.text(key)
                    kind = type(item)
                    if not ((kind is str and search(item) is None) or kind is bool or item is None):
                        item = self.value(item, depth + 1)
                    out[key] = item
                    path.pop()
                return out
            items = []
            for index, item in enumerate(value):
                kind = type(item)
                if not ((kind is str and search(item) is None) or kind is bool or item is None):
                    path.append(index)
                    item = self.value(item, depth + 1)
                    path.pop()
                items.append(item)
            return items
        return self.text(str(value))  # nothing else is JSON: its text


def _longest_strings_cut(value: Any, keep: int, changes: Changes, path: list[str | int]) -> Any:
    if isinstance(value, str):
        if len(value) <= keep:
            return value
        changes.note("record_bytes", path, f"a string of {len(value)} characters cut to {keep}")
        return value[:keep] + _CUT_MARK.format(keep=keep)
    if isinstance(value, dict):
        return {k: _longest_strings_cut(v, keep, changes, [*path, k]) for k, v in value.items()}
    if isinstance(value, list):
        return [_longest_strings_cut(v, keep, changes, [*path, i]) for i, v in enumerate(value)]
    return value


def _largest_containers_cut(
    value: Any, keep: int, changes: Changes, path: list[str | int], content_depth: int, depth: int = 0
) -> Any:
    # Only below the value's own structure (a record's call lists, each call's fields): content starts there.
    if isinstance(value, dict):
        items = list(value.items())
        if depth >= content_depth and len(items) > keep:
            changes.note("record_bytes", path, f"an object of {len(items)} keys cut to {keep}")
            items = items[:keep]
        return {k: _largest_containers_cut(v, keep, changes, [*path, k], content_depth, depth + 1) for k, v in items}
    if isinstance(value, list):
        if depth >= content_depth and len(value) > keep:
            changes.note("record_bytes", path, f"a list of {len(value)} items cut to {keep}")
            value = value[:keep]
        return [
            _largest_containers_cut(v, keep, changes, [*path, i], content_depth, depth + 1) for i, v in enumerate(value)
        ]
    return value


def storable_json(
    data: Any, *, max_depth: int, max_bytes: int, content_depth: int = 0, changes: Changes | None = None
) -> Any:
    """``data`` (JSON values, pydantic models, enums) as plain JSON values storable on every backend; what
    changed goes to ``changes``. Lists and objects above ``content_depth`` are never shortened (a record's
    own structure)."""
    changes = changes if changes is not None else Changes()
    clean = _Walk(max_depth, changes).value(data, 0)
    size = len(orjson.dumps(clean))
    keep = max_bytes // 4
    while size > max_bytes and keep >= _SHORTEST_CUT:
        clean = _longest_strings_cut(clean, keep, changes, [])
        size = len(orjson.dumps(clean))
        keep //= 2
    items = 4096
    while size > max_bytes and items >= _FEWEST_ITEMS:  # many short strings: fewer of them
        clean = _largest_containers_cut(clean, items, changes, [], content_depth)
        size = len(orjson.dumps(clean))
        items //= 2
    return clean


def storable_text(text: str, changes: Changes | None = None, where: str = "the text") -> str:
    """``text`` with what no backend's text column holds (U+0000, lone surrogates) replaced by U+FFFD."""
    if _UNSTORABLE.search(text) is None:
        return text
    if changes is not None:
        changes.note("record_text", [where], "U+0000 or a lone surrogate replaced by U+FFFD")
    return _UNSTORABLE.sub(REPLACEMENT, text)


__all__ = ["REPLACEMENT", "Changes", "storable_json", "storable_text"]
