"""The experiment's config file (YAML): every knob of every step, validated, unknown keys refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from arena.config_file import load_config_file

StageKind = Literal["sft", "teacher-sft", "rft", "kto", "grpo", "subtask-sft", "firehose-sft", "format-control"]
# firehose-sft: SFT on train.jsonl and the sub-task firehose (subtask.jsonl) together.
# format-control: SFT on the same arena run's agentic trajectories that failed or that the judge
# rejected (the same format, no success), cut to the training tokens of the stage it controls.


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CatalogPlan(_Strict):
    products: int = Field(2000, ge=50, description="Synthetic products (the seeded generator).")
    seed: int = 7


class SuitePlan(_Strict):
    problems: int = Field(120, ge=4, description="Source problems generated (variants come on top).")
    variants: int = Field(1, ge=0, le=8, description="Variants per source problem: leak-cluster mates.")
    seed: int = 7
    heldout_fraction: float = Field(0.35, gt=0.0, lt=1.0)
    train_fraction: float = Field(0.55, gt=0.0, lt=1.0)
    heldout_limit: int | None = Field(
        None, ge=1, description="The first N held-out problems, taken round-robin over intents."
    )
    train_limit: int | None = Field(None, ge=1, description="Only the first N train-pool problems are raced.")


class ArenaPlan(_Strict):
    agents: list[str] = Field(default_factory=lambda: ["tool_calling", "search_loop"])
    samples: int = Field(1, ge=1, description="Episodes per train problem and agent.")
    concurrency: int = Field(2, ge=1)
    wall_s: float = Field(300.0, gt=0)
    store: str | None = Field(
        None, description="Database URL the episodes and judgments go to (default: SQLite in the arena step's folder)."
    )


class ExportPlan(_Strict):
    min_coefficient: float = Field(0.7, ge=0.0, le=1.0)
    max_tokens: int = Field(4096, gt=0, description="Format gate: rows longer than this (student tokens) go.")
    max_agent_share: float = Field(1.0, gt=0.0, le=1.0)


class StudentPlan(_Strict):
    cache: Path | None = Field(None, description="Materialised checkpoint cache (default: the user cache).")
    max_new_tokens: int | None = Field(
        None,
        ge=8,
        description="Tokens one generated turn may take (default: the train split's longest assistant turn, in "
        "student tokens, plus 16: a budget below the turns it learned cuts the student off mid-turn).",
    )
    episode_tokens: int | None = Field(
        None,
        ge=8,
        description="Tokens one evaluated episode may generate, all its turns together (default: the train split's "
        "longest episode, in student tokens, plus 16). The proxy caps each call at what is left and refuses a call "
        "once nothing is: a student that never stops (one trained on failures writes every turn to the turn "
        "budget) costs at most this, the same bound for every row.",
    )
    turn_calls: int | None = Field(
        None,
        ge=1,
        description="Tool calls one generated turn may make: the completion stops right after that many "
        "well-formed calls (default: the most one assistant turn of the train split makes). A student that learned "
        "to loop (the same search again and again, to the turn's token budget) is served the turns it trained on, "
        "the same bound for every row.",
    )


class SampledPlan(_Strict):
    k: int = Field(4, ge=2)
    temperature: float = Field(0.7, gt=0.0, le=2.0)
    rows: list[str] | None = Field(
        None, description="The rows sampled (default: the base and the row with the best greedy ASR)."
    )
    problems: int | None = Field(
        None, ge=1, description="Only the first N held-out problems (round-robin over intents) are sampled."
    )


class EvalPlan(_Strict):
    mode: Literal["strict", "official"] = "strict"
    # 16, not 8: a decode step of the 270M student on 2 cores is bound by reading its weights, so the
    # server's continuous batch (max_batch = this) decodes 16 rows for little more than 8. Measured with
    # benchmarks/student_serving.py (--episodes 16 --modes before@8,greedy@8,greedy@16,...), one process,
    # 2 cores, load 3.1-3.5: the old server at 8 1.30 episodes/min, today's at 8 4.99, at 16 6.56 (5.06x
    # over the old server, 1.32x over 8; 1.42x over 8 in a second round), every greedy token identical at
    # 2, 8 and 16 (a quiet machine's 4x over the old server is not shown); docs/results/student-serving.md.
    concurrency: int = Field(
        16,
        ge=1,
        description="Episodes in flight at once; the in-process server decodes their turns in one continuous "
        "batch of up to this many rows (on CPU a decode step of 16 rows costs little more than one of 8).",
    )
    llm_calls: int = Field(8, ge=1, description="Turns an episode may take.")
    wall_s: float = Field(1800.0, gt=0, description="Generous: a loaded CPU must not turn into failures.")
    llm_call_timeout_s: float = Field(900.0, gt=0, description="One generation; generous for the same reason.")
    sampled: SampledPlan | None = Field(None, description="pass@1 / pass@k for the base and the best row.")
    backend: Literal["transformers", "llama.cpp"] = Field(
        "transformers",
        description="What serves every row: the fp32 checkpoint in transformers, or llama.cpp (optional "
        "llama-cpp-python) on that checkpoint exported as GGUF, the base's included.",
    )
    gguf_type: Literal["f32", "f16", "q8_0"] = Field(
        "f32", description="llama.cpp: the type every row's checkpoint is exported at (one for all rows)."
    )
    n_ctx: int = Field(8192, ge=512, description="llama.cpp: the context window (prompt plus new tokens).")


class LeakInflationPlan(_Strict):
    """The same checkpoint scored on leak-cluster mates of its own training problems: what a naive split
    (one that let a problem's variant train while the other is "held out") would report."""

    row: str = Field("sft", description="The trained row whose checkpoint is scored.")
    problems: int = Field(100, ge=1, description="At most this many mates, taken round-robin over intents.")


class OfficialTasksPlan(_Strict):
    """Official ShoppingBench test tasks (nobody here wrote them), through the task pack's catalog."""

    tasks: Path = Field(
        Path("../shared/data/shoppingbench"),
        description="The folder of the four synthesize_*_test.jsonl files (relative: to the working directory).",
    )
    per_intent: int = Field(25, ge=1, description="The first N usable tasks of each intent's file.")
    rows: list[str] = Field(default_factory=lambda: ["base", "sft"], description="The rows scored on them.")
    background: int = Field(2000, ge=0, description="Synthetic background products in the pack's catalog.")
    seed: int = 0


class StagePlan(_Strict):
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    kind: StageKind
    start: str = Field("base", description="The row whose checkpoint this stage starts from.")
    optional: bool = Field(False, description="Skipped when the budget is spent (Dr. GRPO).")
    controls: str | None = Field(
        None, description="format-control: the row whose training tokens it matches (default: the first sft stage)."
    )
    lora: dict[str, Any] | None = None
    rollout: dict[str, Any] | None = None
    settings: dict[str, Any] = Field(default_factory=dict, description="Our stage keys and trl's (StageConfig).")


class ExperimentConfig(_Strict):
    name: str
    model: Literal["gemma-3-270m"] = "gemma-3-270m"
    seed: int = 0
    catalog: CatalogPlan = Field(default_factory=CatalogPlan)
    suite: SuitePlan = Field(default_factory=SuitePlan)
    arena: ArenaPlan = Field(default_factory=ArenaPlan)
    export: ExportPlan = Field(default_factory=ExportPlan)
    student: StudentPlan = Field(default_factory=StudentPlan)
    eval: EvalPlan = Field(default_factory=EvalPlan)
    stages: list[StagePlan] = Field(min_length=1)
    budget_s: float | None = Field(None, gt=0, description="Optional stages start only while under this.")
    leak_inflation: LeakInflationPlan | None = None
    official_tasks: OfficialTasksPlan | None = None

    @model_validator(mode="after")
    def _stages_chain(self) -> ExperimentConfig:
        seen = {"base"}
        for stage in self.stages:
            if stage.name in seen:
                raise ValueError(f"stage name {stage.name!r} is used twice (or is 'base')")
            if stage.start not in seen:
                raise ValueError(f"stage {stage.name!r} starts from {stage.start!r}, which no earlier row makes")
            seen.add(stage.name)
        for stage in self.stages:
            if stage.kind == "format-control":
                target = self.controlled(stage)
                if target is None or target not in seen or target == stage.name:
                    raise ValueError(f"stage {stage.name!r}: a format control needs an sft stage to match")
        rows = [self.leak_inflation.row] if self.leak_inflation else []
        rows += self.official_tasks.rows if self.official_tasks else []
        rows += (self.eval.sampled.rows or []) if self.eval.sampled else []
        for row in rows:
            if row not in seen:
                raise ValueError(f"row {row!r} is scored again but no stage makes it")
        return self

    def controlled(self, stage: StagePlan) -> str | None:
        """The row a format-control stage matches in training tokens."""
        if stage.controls is not None:
            return stage.controls
        return next((s.name for s in self.stages if s.kind == "sft"), None)

    @property
    def format_control(self) -> str | None:
        """The format-control row every row's second gain is paired against (the first one configured)."""
        return next((s.name for s in self.stages if s.kind == "format-control"), None)


def load_config(path: Path) -> ExperimentConfig:
    return load_config_file(path, ExperimentConfig, "yaml", "experiment config")
