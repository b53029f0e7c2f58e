"""The leak check of the report: held-out problems re-clustered together with every corpus row's problem.

The suite already drew its partitions by cluster; this checks what was actually trained on. The
problems behind every corpus row (found by the row's ``metadata.problem_id`` in the suite) are clustered
with the held-out problems by the same leak guard, and any cluster that mixes the two is a leak, as is
a corpus row naming a held-out problem or a problem the suite does not have (nothing could be checked).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from arena.problems.clusters import ClusterConfig, cluster_problems
from arena.problems.model import Problem


def corpus_problem_ids(files: Iterable[Path]) -> dict[str, str]:
    """problem id -> the first ``file:line`` that trained on it."""
    found: dict[str, str] = {}
    for path in files:
        if not path.is_file():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            metadata = json.loads(line).get("metadata") or {}
            problem_id = metadata.get("problem_id")
            found.setdefault(str(problem_id), f"{path.name}:{number}")
    return found


def leak_check(
    heldout: list[Problem], known: dict[str, Problem], used: dict[str, str], config: ClusterConfig | None = None
) -> str:
    """ "ok", or the first leak found, in words."""
    held_ids = {p.id for p in heldout}
    for problem_id, where in sorted(used.items(), key=lambda item: item[1]):
        if problem_id in held_ids:
            return f"{where}: trains on held-out problem {problem_id}"
        if problem_id not in known:
            return f"{where}: problem {problem_id} is not in the suite, so its leak cluster cannot be checked"
    trained = [known[i] for i in sorted(used)]
    clustering = cluster_problems([*heldout, *trained], config)
    members = clustering.members()
    for cluster_id, ids in members.items():
        held = [i for i in ids if i in held_ids]
        mixed = [i for i in ids if i not in held_ids]
        if held and mixed:
            return (
                f"cluster {cluster_id} mixes held-out {held[0]} with trained-on {mixed[0]} "
                f"({used[mixed[0]]}): the held-out figure would measure recall"
            )
    return "ok"
