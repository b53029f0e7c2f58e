"""What an evaluation run leaves: per-problem results, the metrics contract (``metrics.json``), and
reading a finished run back (``arena eval compare``).

The run (``distill.evaluate``) writes these and the tables (``distill.eval_report``) read them; both
import this module, never each other's.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

METRICS_FILE, PROBLEMS_FILE = "metrics.json", "problems.jsonl"


class ProblemResult(BaseModel):
    """One problem's outcome: the greedy run and the sampled runs' successes."""

    id: str
    intent: str
    greedy: bool
    successes: list[bool] = Field(default_factory=list)


class IntentMetrics(BaseModel):
    n: int
    asr: float
    pass_at_1: float | None = None
    pass_at_k: dict[int, float] = Field(default_factory=dict)


class EvalMetrics(BaseModel):
    """`metrics.json`: the contract `arena eval` promises."""

    asr: float
    pass_at_1: float | None
    pass_at_k: dict[int, float]
    pass_hat_k: dict[int, float]
    n_problems: int
    samples: int
    by_intent: dict[str, IntentMetrics]
    model: str
    label: str
    temperature: float
    mode: str
    terminations: dict[str, int] = Field(default_factory=dict)
    # Episodes the infrastructure lost (a slow or failing model server, the sandbox) and that were run
    # again, never scored (distill.evaluate.infrastructure_loss); 0 in a metrics file written before.
    infra_reruns: int = 0


class EvalRunError(ValueError):
    """An evaluation directory that cannot be read back (names the file and the reason)."""


def load_run(run_dir: Path) -> tuple[EvalMetrics, list[ProblemResult]]:
    """Read back a finished run for `arena eval compare`."""
    metrics_path, problems_path = run_dir / METRICS_FILE, run_dir / PROBLEMS_FILE
    for path in (metrics_path, problems_path):
        if not path.is_file():
            raise EvalRunError(f"{path}: missing; is {run_dir} an `arena eval` output directory?")
    try:
        metrics = EvalMetrics.model_validate_json(metrics_path.read_text())
    except ValueError as exc:
        raise EvalRunError(f"{metrics_path}: not an evaluation metrics file: {exc}") from None
    results = []
    for number, line in enumerate(problems_path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            results.append(ProblemResult.model_validate_json(line))
        except ValueError as exc:
            raise EvalRunError(f"{problems_path}:{number}: not a problem result: {exc}") from None
    return metrics, results
