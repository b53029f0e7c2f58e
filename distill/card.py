"""The dataset card (``README.md``) and what the ``export`` extra adds: Parquet, a Hugging Face dataset, plots.

JSONL needs only the core install. Parquet (pyarrow), the Hugging Face
directory (datasets) and the PNG plots (matplotlib) come with the ``export``
extra; when it is missing the export still succeeds and the card and the
command say what was skipped and how to get it.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path

from distill.columnar import write_hf, write_parquet
from distill.export_model import FILES, ExportSummary

EXTRA_HINT = "pip install 'trajectory-arena[export]' (pyarrow, datasets, matplotlib)"


def _have(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def write_extras(out: Path, formats: list[str]) -> list[str]:
    """Parquet and/or the Hugging Face directory next to the JSONL files; one line per result."""
    notes = []
    nonempty = [
        name for name in FILES if (out / f"{name}.jsonl").is_file() and (out / f"{name}.jsonl").stat().st_size > 0
    ]
    if "parquet" in formats:
        if not _have("pyarrow"):
            notes.append(f"parquet skipped: pyarrow is missing ({EXTRA_HINT})")
        else:
            written = write_parquet(out, nonempty)
            notes.append(f"parquet: {', '.join(written) or 'nothing (all files empty)'}")
    if "hf" in formats:
        if not _have("datasets"):
            notes.append(f"hf skipped: datasets is missing ({EXTRA_HINT})")
        else:
            folders = write_hf(out, nonempty)
            parts = "; ".join(f"{folder}: {', '.join(splits)}" for folder, splits in folders.items()) or "nothing"
            notes.append(f"hf: {out / 'hf'} ({parts}; load with datasets.load_from_disk)")
    return notes


def _plots(out: Path, summary: ExportSummary) -> list[str]:
    if not _have("matplotlib"):
        return []
    import matplotlib

    matplotlib.use("Agg")  # files only: no display on a validator or in CI
    from matplotlib import pyplot as plt

    funnel = summary.funnel
    stages = {"episodes": funnel.episodes, "agentic": funnel.agentic, "gated": funnel.gated,
              "train": funnel.train, "eval": funnel.eval}  # fmt: skip
    figure, axis = plt.subplots(figsize=(6, 3))
    axis.barh(list(stages)[::-1], list(stages.values())[::-1], color="#4472c4")
    axis.set_xlabel("trajectories")
    axis.set_title("corpus funnel")
    figure.tight_layout()
    figure.savefig(out / "funnel.png", dpi=100)
    plt.close(figure)
    figure, axes = plt.subplots(1, 2, figsize=(8, 3))
    axes[0].hist(summary.rules or [0.0], bins=10, range=(0, 1), color="#70ad47")
    axes[0].set_title(f"outcome rule score (n={len(summary.rules)})")
    axes[1].hist(summary.coefficients or [0.0], bins=10, range=(0, 1), color="#ed7d31")
    axes[1].set_title(f"judge coefficient (n={len(summary.coefficients)})")
    figure.tight_layout()
    figure.savefig(out / "scores.png", dpi=100)
    plt.close(figure)
    return ["funnel.png", "scores.png"]


def _table(header: list[str], rows: Sequence[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]


def write_card(out: Path, summary: ExportSummary) -> None:
    funnel, config = summary.funnel, summary.config
    plots = _plots(out, summary)
    if not plots:
        summary.extras.append(f"plots skipped: matplotlib is missing ({EXTRA_HINT})")
    lines = [
        "# ShoppingBench agent-arena trajectory corpus",
        "",
        "Rows are OpenAI chat `messages` + `tools` (trl's SFT format) with `metadata`: the structural filter's",
        "verdict per stage (`metadata.filter`) and the gates' (`metadata.gates`), each with its reason.",
        "",
        *(["## Warnings", "", *(f"- {w}" for w in summary.warnings), ""] if summary.warnings else []),
        *([f"Not written (no rows): {', '.join(f'`{n}.jsonl`' for n in summary.empty)}.", ""] if summary.empty else []),
        f"`problems.jsonl`: the {summary.train_problems} problems of the train split, rewards included (what rft and "
        "grpo sample on; never an eval or held-out problem).",
        "",
        "## Funnel",
        "",
        *_table(
            ["stage", "trajectories"],
            [
                ["episodes read", funnel.episodes],
                ["unreadable (reported below)", funnel.unreadable],
                ["outside the selection", funnel.outside_selection],
                ["held-out partition (never exported)", funnel.heldout],
                ["agentic (passed all filter stages)", funnel.agentic],
                ["sub-task (`subtask.jsonl`)", funnel.subtask],
                ["gated (reasoning + format)", funnel.gated],
                ["duplicates removed", funnel.duplicates],
                ["cut by the agent-share cap", funnel.capped],
                ["**train** (`train.jsonl`)", funnel.train],
                ["**eval** (`eval.jsonl`, cluster-disjoint)", funnel.eval],
                ["rejected (`rejected.jsonl`)", funnel.rejected],
                ["KTO rows (`kto.jsonl`, one per assistant step)", funnel.kto_rows],
            ],
        ),
        "",
    ]
    lines += ["![funnel](funnel.png)", "", "![scores](scores.png)", ""] if plots else []
    intents = sorted({i for per in summary.intents.values() for i in per})
    lines += ["## Counts per intent", ""]
    lines += _table(["file", *intents], [[n, *(summary.intents.get(n, {}).get(i, 0) for i in intents)]
                                          for n in ("train", "eval", "subtask", "rejected")])  # fmt: skip
    total = sum(summary.agents.values())
    top = max(summary.agents.items(), key=lambda kv: kv[1], default=("none", 0))
    lines += [
        "",
        "## Agent diversity (train)",
        "",
        f"- distinct agents: {len(summary.agents)}",
        f"- top agent: {top[0]} with {top[1]} of {total} rows ({top[1] / total:.1%})" if total else "- top agent: none",
        f"- share cap: {config.max_agent_share:.0%} per agent version (`--max-agent-share`)",
        "",
        "## Why trajectories were not trained on",
        "",
        *_table(["first failing filter stage (sub-task)", "n"], sorted(summary.stage_failures.items())),
        "",
        *_table(["failing gate (rejected)", "n"], sorted(summary.gate_failures.items())),
        "",
        "## Settings",
        "",
        f"- seed {config.seed}; eval fraction of clusters {config.eval_fraction}",
        f"- minimum judge coefficient {config.gates.min_coefficient} (unjudged episodes fail unless it is 0)",
        f"- minimum attribution share {config.filter.min_attribution}",
        f"- maximum length {config.gates.max_tokens} tokens, counted with {summary.counter}",
        f"- selection: {config.selection.model_dump(mode='json', exclude_defaults=True) or 'everything'}",
        "",
    ]
    if summary.excluded:
        lines += ["Outside the selection: " + ", ".join(f"{k}: {v}" for k, v in summary.excluded.items()), ""]
    if summary.unreadable:
        lines += ["## Unreadable records", "", *(f"- {u}" for u in summary.unreadable[:200]), ""]
        if len(summary.unreadable) > 200:
            lines += [f"- ... and {len(summary.unreadable) - 200} more", ""]
    if summary.extras:
        lines += ["## Formats", "", *(f"- {e}" for e in summary.extras), ""]
    (out / "README.md").write_text("\n".join(lines), encoding="utf-8")
