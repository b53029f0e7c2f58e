"""The commands of the guides, read from their fenced code blocks: the one extractor that
tests/docs/test_guides.py (which runs them) and tests/docs/test_docs_commands.py (which checks their flags) share.

A ```bash block runs as written, in order, unless the line right before its fence is a marker:

    <!-- guide: background URL -->   start the block in the background; wait until URL answers (if given)
    <!-- guide: skip REASON -->      not run: it cannot run here (a real chain, a GPU, docker, an install) or
                                     another test runs the same; REASON says which
    <!-- guide: synopsis -->         reference syntax (placeholders, [optional] parts): never run

A ```python block on a page a guide test follows runs as written too (the marker rules are the same).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
KINDS = ("run", "background", "skip", "synopsis")
FENCE = re.compile(r"^```(\w*)\s*$")
MARKER = re.compile(r"^<!--\s*guide:\s*(\w+)\s*(.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    page: str  # relative to the repository: README.md, docs/x.md
    line: int  # the opening fence's line number (1-based)
    lang: str  # bash, python, ...
    text: str
    kind: str = "run"
    note: str = ""  # the marker's text: a readiness URL (background) or the reason (skip)

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    def commands(self) -> list[str]:
        """Each shell command of the block on one line: continuations joined, comments and blanks dropped."""
        lines = []
        for raw in self.text.replace("\\\n", " ").splitlines():
            line = re.sub(r"(^|\s)#.*$", "", raw).strip()
            if line:
                lines.append(line)
        return lines

    def arena_commands(self) -> list[str]:
        return [line for line in self.commands() if line.startswith("arena ")]


def guide_pages() -> list[str]:
    return ["README.md", *sorted(f"docs/{p.name}" for p in (REPO / "docs").glob("*.md"))]


def page_blocks(page: str) -> list[Block]:
    """Every fenced block of ``page``, in order, with its marker."""
    blocks: list[Block] = []
    lines = (REPO / page).read_text().splitlines()
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        kind, note = "run", ""
        marker = MARKER.match(lines[i - 1]) if i else None
        if marker:
            kind, note = marker.group(1), marker.group(2)
            if kind not in KINDS:
                raise ValueError(f"{page}:{i}: unknown guide marker {kind!r} (one of {', '.join(KINDS[1:])})")
        blocks.append(Block(page, i + 1, fence.group(1), "\n".join(lines[i + 1 : end]) + "\n", kind, note))
        i = end + 1
    return blocks


def shell_blocks(page: str) -> list[Block]:
    return [b for b in page_blocks(page) if b.lang in ("bash", "sh", "shell")]


def all_shell_blocks() -> list[Block]:
    return [b for page in guide_pages() for b in shell_blocks(page)]
