"""Reference agents (miner templates), one standalone file each.

Each file imports only ``arena.sdk`` and the standard library and defines
``agent_main(problem: dict) -> None``, as a submission must. They show the
three patterns the arena distinguishes (see docs/miner-guide-agents.md):

- ``tool_calling``: agentic, the LLM emits every tool call in one growing dialogue
  (the trajectories the corpus keeps);
- ``search_loop``: sub-task, code runs the search and the LLM only classifies;
- ``shortcut``: the first search hit, with minimal reasoning (a floor to beat).

This package file is not part of any agent; it only lets tests and tools locate them.
"""

from pathlib import Path

AGENTS_DIR = Path(__file__).resolve().parent
REFERENCE_AGENTS = ("tool_calling", "search_loop", "shortcut")


def agent_path(name: str) -> Path:
    """The source file of a reference agent, by name."""
    if name not in REFERENCE_AGENTS:
        raise ValueError(f"unknown reference agent {name!r}; choose one of {', '.join(REFERENCE_AGENTS)}")
    return AGENTS_DIR / f"{name}.py"
