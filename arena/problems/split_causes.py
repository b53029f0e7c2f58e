"""Why the guard split problems that ask one thing: each missed pair of a labelled pool, by cause.

Recall on a pool says how many pairs of one true group landed in two clusters, not why. For each
two predicted clusters that hold members of one true group, the pairs of that group across them are
put down to one cause, in this order:

- ``blocked by a member``: some pair across them is a candidate (one intent family, no conflict,
  meaning cosine at the threshold), so the direct link was proposed; it was refused because a member
  of one cluster conflicts with a member of the other (the chaining check). ``rule`` is that
  conflict's rule where the two members ask one thing (a wrong veto elsewhere), or ``a false merge``
  where every blocking pair is two asks (one of the clusters already holds a twin: a precision error
  costing recall);
- ``veto``: every pair across them that could link conflicts; ``rule`` is the first conflict's rule
  ("clue names", "bought more", ...);
- ``another intent``: no conflict, but the two sides are read as different intents (a shop list
  beside a one-product request), which the meaning signal never compares;
- ``no candidate``: no conflict, one intent, and no signal proposed them (meaning cosine under the
  threshold, texts and values unlike).

Diagnostic only (``benchmarks/cluster_pairs_eval.py --causes``): it re-reads the pool's requests
and conflicts pair by pair, so it costs seconds per hundred problems and is not meant for 100k.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from itertools import combinations

from pydantic import BaseModel

from arena.problems.clusters import ClusterConfig, Clustering, binds_clusters, intent_family, one_answer
from arena.problems.meaning import static_embedder
from arena.problems.model import Problem
from arena.problems.twins import PAIR_ONLY, conflict, read_request

# A conflict's rule is its words before the values it quotes: "bought more: ['beach']" -> "bought more",
# "clue names [('neil', 'armstrong')] / ['land']" -> "clue names", "edited (0.72): ..." -> "edited".
_RULE = re.compile(r"^[^\[('\"0-9:/]*")


class SplitCause(BaseModel):
    """Missed pairs (same true group, two clusters) put down to one cause and rule."""

    cause: str
    rule: str = ""
    pairs: int


def rule_of(reason: str) -> str:
    """The rule a conflict's reason names, without the values it quotes; a rule that binds the pair
    only keeps that mark ("pair only: each states what the other does not"; "pair only (0.67): ..." is
    the near copy's, "edited")."""
    if reason.startswith(PAIR_ONLY):
        rest = reason[len(PAIR_ONLY) :]
        inner = "edited" if rest.startswith(" (") else rule_of(rest.lstrip(": "))
        return f"{PAIR_ONLY}: {inner}"
    match = _RULE.match(reason)
    return (match.group(0) if match else "").strip() or reason.strip()


def split_causes(
    problems: Sequence[Problem], clustering: Clustering, truth: dict[str, str], config: ClusterConfig | None = None
) -> list[SplitCause]:
    """Every missed pair of ``truth`` (problem id -> its true group) under ``clustering``, by cause;
    the counts sum to the pool's false negatives. Largest first, ties by name."""
    config = config or ClusterConfig()
    by_id = {p.id: p for p in problems}
    ids = sorted(by_id)
    requests = {i: read_request(by_id[i]) for i in ids}
    vectors = dict(zip(ids, static_embedder(config.meaning_dims).embed([requests[i].text for i in ids]), strict=True))
    near = config.meaning_threshold - 1e-6
    members: dict[str, list[str]] = defaultdict(list)
    for i in ids:
        members[clustering.cluster_of[i]].append(i)
    clusters_of_group: dict[str, set[str]] = defaultdict(set)
    for i in ids:
        clusters_of_group[truth[i]].add(clustering.cluster_of[i])

    def alike(x: str, y: str) -> bool:
        return float(vectors[x] @ vectors[y]) >= near

    counts: Counter[tuple[str, str]] = Counter()
    done: set[tuple[str, str]] = set()
    for group in sorted(clusters_of_group):
        for left, right in combinations(sorted(clusters_of_group[group]), 2):
            if (left, right) in done:
                continue
            done.add((left, right))
            across = [(x, y) for x in members[left] for y in members[right]]
            vetoes = {(x, y): why for x, y in across if (why := conflict(requests[x], requests[y])) is not None}
            missed = [(x, y) for x, y in across if truth[x] == truth[y]]
            one_family = [(x, y) for x, y in missed if intent_family(by_id[x].intent) == intent_family(by_id[y].intent)]
            if any((x, y) not in vetoes and alike(x, y) for x, y in one_family):
                # Proposed and refused by the chaining check: which members' conflict refused it (as
                # clusters.soft_link checks them: pairs that read alike or share an answer).
                blockers = [
                    (x, y)
                    for (x, y), why in vetoes.items()
                    if binds_clusters(why) and (alike(x, y) or one_answer(requests[x], requests[y]))
                ]
                wrong = [(x, y) for x, y in blockers if truth[x] == truth[y]]
                if wrong:
                    key = ("blocked by a member", rule_of(vetoes[wrong[0]]))
                elif blockers:
                    key = ("blocked by a member", "a false merge")
                else:
                    key = ("not reached", "")  # a candidate no rule refused: the neighbours cap
            elif vetoed := [vetoes[x, y] for x, y in one_family if (x, y) in vetoes]:
                key = ("veto", rule_of(vetoed[0]))
            elif len(one_family) < len(missed):
                key = ("another intent", "")
            else:
                key = ("no candidate", "")
            counts[key] += len(missed)
    return tally(counts)


def tally(counts: Counter[tuple[str, str]]) -> list[SplitCause]:
    """Missed pairs counted by (cause, rule) as causes, largest first, ties by name."""
    return [
        SplitCause(cause=cause, rule=rule, pairs=n)
        for (cause, rule), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]


def render_causes(causes: list[SplitCause]) -> str:
    total = sum(c.pairs for c in causes) or 1
    lines = ["| cause | rule | missed pairs | share |", "|---|---|---:|---:|"]
    lines += [f"| {c.cause} | {c.rule} | {c.pairs} | {c.pairs / total:.1%} |" for c in causes]
    return "\n".join(lines)
