"""`arena problems cluster`: give every problem its leak cluster and report how the clusters formed."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import orjson
import typer

from arena.commands.common import err, fail
from arena.problems.model import Problem

if TYPE_CHECKING:  # the clustering modules pull in numpy: imported when the command runs, not at `arena` start
    from arena.problems.clusters import ClusterConfig, Clustering

_LARGEST_SHOWN = 10
_CROSS_INTENT_SHOWN = 50
# Option name -> ClusterConfig field. The options default to None ("the library default"), so
# ClusterConfig stays the one source of the defaults; the help texts quote them (a test checks).
_FLAGS = {
    "threshold": ("--threshold", "minhash_threshold"),
    "shingle_size": ("--shingle-size", "shingle_size"),
    "gold_overlap": ("--gold-overlap", "gold_overlap"),
    "num_perm": ("--num-perm", "num_perm"),
    "meaning_threshold": ("--meaning-threshold", "meaning_threshold"),
}


def cluster(
    files: Annotated[list[Path], typer.Argument(help="Task files (official or generated JSONL).")],
    out_path: Annotated[Path, typer.Option("--out", help="JSONL to write: every input row plus its cluster_id.")],
    report: Annotated[Path | None, typer.Option("--report", help="Markdown report of the clusters.")] = None,
    threshold: Annotated[
        float | None,
        typer.Option("--threshold", help="MinHash Jaccard estimate for near-duplicate queries (default 0.5)."),
    ] = None,
    shingle_size: Annotated[int | None, typer.Option("--shingle-size", help="Words per shingle (default 2).")] = None,
    gold_overlap: Annotated[
        float | None,
        typer.Option("--gold-overlap", help="Shared fraction of the smaller gold set that links (default 0.5)."),
    ] = None,
    num_perm: Annotated[int | None, typer.Option("--num-perm", help="MinHash permutations (default 128).")] = None,
    meaning_threshold: Annotated[
        float | None,
        typer.Option(
            "--meaning-threshold",
            help="Cosine of two requests' meaning vectors at which they may merge, unless a constraint conflict "
            "calls them twins (default 0.65).",
        ),
    ] = None,
) -> None:
    """Assign leak clusters: variants of one underlying problem share a cluster_id."""
    from pydantic import ValidationError

    from arena.problems.clusters import REASONS, ClusterConfig, cluster_problems
    from arena.problems.meaning import MeaningModelUnavailable
    from arena.problems.official import ProblemFileError, load_problems

    given = {
        "threshold": threshold,
        "shingle_size": shingle_size,
        "gold_overlap": gold_overlap,
        "num_perm": num_perm,
        "meaning_threshold": meaning_threshold,
    }
    try:
        config = ClusterConfig(**{_FLAGS[k][1]: v for k, v in given.items() if v is not None})
    except ValidationError as exc:
        first = exc.errors()[0]
        flag = next((f for f, field in _FLAGS.values() if field == first["loc"][0]), first["loc"][0])
        fail(f"invalid option {flag}: {first['msg']}")
    try:
        # Query-only rows (no reward, an ``intent``) are welcome: the guard reads their constraints from the text.
        problems = load_problems(*files, query_only=True)
    except (ProblemFileError, OSError) as exc:
        fail(str(exc))
    if not problems:
        fail(f"no problems in {', '.join(map(str, files))}")
    try:
        clustering = cluster_problems(problems, config)
    except (ValueError, MeaningModelUnavailable) as exc:
        fail(str(exc))
    rows = (p.to_row() | {"cluster_id": clustering.cluster_of[p.id]} for p in problems)
    _write_atomically(out_path, b"".join(orjson.dumps(row) + b"\n" for row in rows))
    if report is not None:
        _write_atomically(report, render_report(problems, clustering, config).encode())
    sizes = [len(m) for m in clustering.members().values()]
    by_reason = Counter(m.reason for m in clustering.merges)
    reasons = ", ".join(f"{r} {by_reason[r]}" for r in REASONS)
    err.print(
        f"{len(problems)} problems -> {len(sizes)} leak clusters (largest {max(sizes)}); merges: {reasons}; "
        f"cross-intent {len(_cross_intent(problems, clustering))}; wrote {out_path}",
        highlight=False,
        markup=False,
    )


def _write_atomically(path: Path, data: bytes) -> None:
    """Write beside the target, then rename: an interrupted run never leaves half a file."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        partial.write_bytes(data)
        os.replace(partial, path)
    except OSError as exc:
        fail(f"cannot write {path}: {exc.strerror or exc}")


def _cross_intent(problems: list[Problem], clustering: Clustering) -> list[tuple[Problem, Problem, str, str]]:
    by_id = {p.id: p for p in problems}
    found: list[tuple[Problem, Problem, str, str]] = []
    for merge in clustering.merges:
        a, b = by_id[merge.a], by_id[merge.b]
        if a.intent is not b.intent:
            found.append((a, b, merge.reason, merge.detail))
    return found


def _one_line(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split()).replace("|", "\\|")
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def render_report(problems: list[Problem], clustering: Clustering, config: ClusterConfig) -> str:
    """The Markdown report: counts, size histogram, merges by reason, cross-intent merges, largest clusters."""
    from arena.problems.clusters import REASONS

    by_id = {p.id: p for p in problems}
    members = clustering.members()
    sizes = Counter(len(m) for m in members.values())
    by_reason = Counter(m.reason for m in clustering.merges)
    lines = [
        "# Leak clusters",
        "",
        f"- problems: {len(problems)}",
        f"- clusters: {len(members)} ({sizes[1]} singletons)",
        f"- largest cluster: {max(sizes)} problems",
        f"- settings: minhash_threshold {config.minhash_threshold}, shingle_size {config.shingle_size}, "
        f"num_perm {config.num_perm}, gold_overlap {config.gold_overlap}, "
        f"meaning_threshold {config.meaning_threshold}",
        "",
        "## Cluster sizes",
        "",
        "| size | clusters | problems |",
        "|---:|---:|---:|",
        *(f"| {size} | {count} | {size * count} |" for size, count in sorted(sizes.items())),
        "",
        "## Merges by reason",
        "",
        "Each merge joined two clusters (a spanning forest: merges = problems - clusters).",
        "",
        "| reason | merges |",
        "|---|---:|",
        *(f"| {reason} | {by_reason[reason]} |" for reason in REASONS),
        "",
        "## Cross-intent merges",
        "",
    ]
    cross = _cross_intent(problems, clustering)
    if not cross:
        lines.append("None.")
    else:
        lines += ["| a | b | intents | reason | detail |", "|---|---|---|---|---|"]
        for a, b, reason, detail in cross[:_CROSS_INTENT_SHOWN]:
            lines.append(f"| {a.id} | {b.id} | {a.intent.value} / {b.intent.value} | {reason} | {_one_line(detail)} |")
        if len(cross) > _CROSS_INTENT_SHOWN:
            lines.append(f"\n... and {len(cross) - _CROSS_INTENT_SHOWN} more.")
    lines += ["", "## Merges by meaning", ""]
    # The meaning signal is the one a reader most wants to check: each such merge with both requests.
    meant = [m for m in clustering.merges if m.reason == "same_meaning"]
    if not meant:
        lines.append("None.")
    else:
        lines += ["| a | b | detail | query a | query b |", "|---|---|---|---|---|"]
        for merge in meant[:_CROSS_INTENT_SHOWN]:
            a, b = by_id[merge.a], by_id[merge.b]
            lines.append(
                f"| {a.id} | {b.id} | {merge.detail} | {_one_line(a.query, 100)} | {_one_line(b.query, 100)} |"
            )
        if len(meant) > _CROSS_INTENT_SHOWN:
            lines.append(f"\n... and {len(meant) - _CROSS_INTENT_SHOWN} more.")
    lines += ["", "## Largest clusters", ""]
    largest = sorted(members.items(), key=lambda item: (-len(item[1]), item[0]))[:_LARGEST_SHOWN]
    for cluster_id, ids in largest:
        if len(ids) < 2:
            break
        lines += [f"### {cluster_id} ({len(ids)} problems)", "", "| id | intent | query |", "|---|---|---|"]
        lines += [f"| {pid} | {by_id[pid].intent.value} | {_one_line(by_id[pid].query)} |" for pid in ids]
        lines.append("")
    if largest and len(largest[0][1]) < 2:
        lines.append("Every cluster is a single problem.")
    return "\n".join(lines).rstrip() + "\n"
