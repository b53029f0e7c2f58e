"""Dispatch a resolved stage config to its trainer (imports each lazily: GRPO pulls in more)."""

from __future__ import annotations

from distill.train.config import StageConfig
from distill.train.report import StageReport


def run_stage(config: StageConfig) -> StageReport:
    config.output.mkdir(parents=True, exist_ok=True)
    if config.cpu_threads is None:
        return _run(config)
    import torch

    # torch's thread count is process-wide: restore it, or every later stage and model in
    # this process (a recipe's next stage, an experiment after it) runs on one thread.
    before = torch.get_num_threads()
    torch.set_num_threads(config.cpu_threads)
    try:
        return _run(config)
    finally:
        torch.set_num_threads(before)


def _run(config: StageConfig) -> StageReport:
    if config.stage == "sft":
        from distill.train.sft import run_sft

        return run_sft(config)
    if config.stage == "teacher-sft":
        from distill.train.sft import run_teacher_sft

        return run_teacher_sft(config)
    if config.stage == "rft":
        from distill.train.rft import run_rft

        return run_rft(config)
    if config.stage == "kto":
        from distill.train.kto import run_kto

        return run_kto(config)
    from distill.train.grpo import run_grpo

    return run_grpo(config)
