"""What the commands that run a policy on problems share (`arena run-agent`, `arena eval`): the
upstream, scoring and sandbox flags, and turning them into a score mode, a knowledge base and a registry."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from arena.commands.common import fail
from arena.policy.chat_format import MODEL_ID as POLICY_MODEL

if TYPE_CHECKING:
    from arena.runner.proxy import UpstreamRegistry
    from arena.scoring.outcome import ScoreMode
    from arena.shop.knowledge import LocalKnowledgeBase

__all__ = ["POLICY_MODEL"]  # the default --model of the commands that import it from here

BaseUrlOption = Annotated[
    str | None,
    typer.Option("--base-url", help="OpenAI-compatible endpoint (else the built-in offline policy, heuristic-policy)."),
]
ApiKeyOption = Annotated[str | None, typer.Option("--api-key", envvar="ARENA_UPSTREAM_API_KEY")]
ModeOption = Annotated[str, typer.Option("--mode", help="strict | official")]
LimitOption = Annotated[int | None, typer.Option("--limit", help="Only the first N problems.")]
ConcurrencyOption = Annotated[int, typer.Option("--concurrency", min=1)]
KnowledgeOption = Annotated[
    Path | None,
    typer.Option("--knowledge", help="Knowledge index for web_search (default: CATALOG/knowledge if present)."),
]
UnsafeNoSandboxOption = Annotated[
    bool, typer.Option("--unsafe-no-sandbox", help="DEVELOPMENT ONLY: run the episodes unsandboxed.")
]


# Where problems come from, spelled the same in `run-agent` and `eval`: a JSONL file, or a suite's partition.
ProblemsOption = Annotated[
    Path | None, typer.Option("--problems", help="Problems JSONL (official or generated rows); or --suite.")
]
SuiteOption = Annotated[Path | None, typer.Option("--suite", help="Suite directory (with --partition); or --problems.")]
# One --samples everywhere: episodes per problem for pass@k (eval runs a greedy pass besides).
SamplesOption = Annotated[
    int, typer.Option("--samples", min=0, help="Sampled episodes per problem for pass@k (e.g. 8 for pass@8).")
]
SAMPLES = 1


def problems_or_fail(problems: Path | None, suite: Path | None, partition: str) -> list:
    """The problems of ``--problems FILE`` or of ``--suite DIR --partition NAME`` (exactly one of them)."""
    from arena.problems.official import ProblemFileError, load_problems
    from arena.problems.partitions import PartitionName
    from arena.problems.suites import Suite, SuiteError

    if (problems is None) == (suite is None):
        fail("give exactly one of --problems FILE or --suite DIR --partition NAME")
    try:
        if problems is not None:
            return load_problems(problems)
        try:
            part = PartitionName(partition)
        except ValueError:
            fail(f"--partition must be one of {', '.join(p.value for p in PartitionName)}, not {partition!r}")
        assert suite is not None  # exactly one of the two was given
        return Suite(suite).problems(part)
    except (ProblemFileError, SuiteError, OSError) as exc:
        fail(str(exc))


def score_mode_or_fail(mode: str) -> ScoreMode:
    from arena.scoring.outcome import ScoreMode

    try:
        return ScoreMode(mode)
    except ValueError:
        fail(f"--mode must be strict or official, not {mode!r}")


def upstream_or_fail(
    catalog: Path, knowledge: Path | None, model: str, base_url: str | None, api_key: str | None, seed: int
) -> tuple[LocalKnowledgeBase | None, UpstreamRegistry]:
    """The knowledge base web_search reads and the registry the proxy forwards to (the built-in
    policy unless ``base_url`` names an endpoint); a wrong choice fails with its reason."""
    from arena.policy.upstream import UpstreamChoiceError, registry_for
    from arena.shop.knowledge import KnowledgeIndexError, knowledge_for_catalog

    try:
        knowledge_base = knowledge_for_catalog(catalog, knowledge)
        if knowledge_base is not None:
            knowledge_base.for_problem("")  # an index that cannot be scoped to a problem fails here
    except (FileNotFoundError, KnowledgeIndexError) as exc:
        fail(str(exc))
    try:
        return knowledge_base, registry_for(model, base_url, api_key, seed)
    except UpstreamChoiceError as exc:
        fail(str(exc))
