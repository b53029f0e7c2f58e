"""What an export is given and what it reports: its config, the files it writes, one episode's verdict,
and the summary (the funnel) that the dataset card and the command print.

The run (``distill.export``), the card (``distill.card``) and the store recording
(``distill.store_export``) all read these; this module imports none of them.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from distill.schema import Verdict
from distill.split import Selection

FORMATS = ("jsonl", "parquet", "hf")
FILES = ("train", "eval", "subtask", "rejected", "kto")
PROBLEMS_FILE = "problems.jsonl"  # the train problems, rewards included: what rft and grpo sample on
DEFAULT_EVAL_FRACTION = 0.1
DEFAULT_MAX_AGENT_SHARE = 0.5
DEFAULT_MIN_ATTRIBUTION = 0.9
# Level 0.5 ("cites a datum from the tool results") and above: coefficient(0.5) = 0.7375.
DEFAULT_MIN_COEFFICIENT = 0.7
DEFAULT_MAX_TOKENS = 32_768  # Qwen3-4B's native context


class FilterConfig(BaseModel):
    """The structural filter's settings (``distill.structure``)."""

    min_attribution: float = Field(
        DEFAULT_MIN_ATTRIBUTION, ge=0.0, le=1.0, description="Share of executed calls that must match emitted ones."
    )


class GateConfig(BaseModel):
    """The gates' settings (``distill.gates``)."""

    min_coefficient: float = Field(
        DEFAULT_MIN_COEFFICIENT, ge=0.0, le=1.0, description="Reasoning gate (0: unjudged pass)."
    )
    max_tokens: int = Field(DEFAULT_MAX_TOKENS, gt=0, description="Format gate's length limit.")
    # A tokenizer.json (or a directory holding one); None: the approximation.
    tokenizer: Path | None = Field(None, description="tokenizer.json to count tokens (else ceil(chars/3)).")
    template: Path | None = Field(None, description="Template the format gate renders with (default: Qwen3's).")


class ExportConfig(BaseModel):
    """One export's settings; ``arena export`` makes a flag of every field (and of the nested models')."""

    out: Path = Field(description="Directory for train/eval/subtask/rejected/kto and README.md.")
    formats: list[str] = Field(default_factory=lambda: ["jsonl"], description="Comma list of jsonl, parquet, hf.")
    seed: int = Field(0, description="Seed of the eval-cluster draw, dedup and cap sampling.")
    eval_fraction: float = Field(
        DEFAULT_EVAL_FRACTION, ge=0.0, lt=1.0, description="Share of the gated leak clusters drawn for eval."
    )
    max_agent_share: float = Field(
        DEFAULT_MAX_AGENT_SHARE, gt=0.0, le=1.0, description="Cap on one agent's share of train."
    )
    filter: FilterConfig = Field(default_factory=FilterConfig)
    gates: GateConfig = Field(default_factory=GateConfig)
    selection: Selection = Field(default_factory=Selection)


class EpisodeVerdict(BaseModel):
    """Where one episode went and why: what a database export stores per episode for the API."""

    episode_id: str
    destination: str  # train | eval | subtask | rejected
    filter: dict[str, Verdict]
    gates: dict[str, Verdict]


class Funnel(BaseModel):
    episodes: int = 0  # read (unreadable ones excluded)
    unreadable: int = 0
    outside_selection: int = 0
    heldout: int = 0  # never exported
    agentic: int = 0
    subtask: int = 0
    gated: int = 0
    duplicates: int = 0
    capped: int = 0
    train: int = 0
    eval: int = 0
    rejected: int = 0
    kto_rows: int = 0


class ExportSummary(BaseModel):
    out: str
    config: ExportConfig
    funnel: Funnel
    counter: str
    unreadable: list[str] = Field(default_factory=list)  # "file:line: reason"
    excluded: dict[str, int] = Field(default_factory=dict)  # selection reason -> episodes
    stage_failures: dict[str, int] = Field(default_factory=dict)  # first failing stage of sub-task rows
    gate_failures: dict[str, int] = Field(default_factory=dict)
    intents: dict[str, dict[str, int]] = Field(default_factory=dict)  # file -> intent -> rows
    agents: dict[str, int] = Field(default_factory=dict)  # train rows per agent name@sha
    rules: list[float] = Field(default_factory=list)  # outcome rule scores of every read episode
    coefficients: list[float] = Field(default_factory=list)
    extras: list[str] = Field(default_factory=list)  # written beyond JSONL (parquet, hf, plots) or why not
    warnings: list[str] = Field(default_factory=list)  # what a user must know: a relaxed cap, an empty split
    empty: list[str] = Field(default_factory=list)  # files with no row: not written (an empty file loads as an error)
    train_problems: int = 0  # rows of problems.jsonl

    @property
    def usable(self) -> bool:
        """False when nothing reached train: the export's purpose failed (the CLI exits 1)."""
        return self.funnel.train > 0
