"""The canonical trajectory: one row of every corpus file, whatever the source.

A row is OpenAI chat ``messages`` plus the ``tools`` offered (exactly the two
columns trl's SFT trainer reads for tool-calling data) and ``metadata`` saying
where the trajectory came from and why it landed in its file: the verdict of
every structural-filter stage and every gate, with a reason. Other stages
(training, the API) read these names; change them only with them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

Provenance = Literal["validator-recorded", "agent-reported"]


class Verdict(BaseModel):
    passed: bool
    reason: str


class AgentInfo(BaseModel):
    name: str  # the agent file's stem
    sha256: str


class JudgeInfo(BaseModel):
    level: float
    coefficient: float
    judge: str
    rubric_version: str


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class TrajectoryMetadata(BaseModel):
    episode_id: str
    problem_id: str
    intent: str
    cluster_id: str | None = None
    partition: str | None = None
    agent: AgentInfo
    submission_id: int | None = None
    cycle: int | None = None
    started_at: str | None = None  # ISO-8601 UTC, for time-range slicing
    suite_id: str | None = None
    success: bool | None = None
    rule: float | None = None
    judge: JudgeInfo | None = None
    usage: Usage = Field(default_factory=Usage)
    provenance: Provenance = "validator-recorded"
    source: str  # "store", "records:<file>", "shoppingbench:<file>", "subnet:<file>"
    filter: dict[str, Verdict] = Field(default_factory=dict)  # stage name -> verdict, in stage order
    gates: dict[str, Verdict] = Field(default_factory=dict)  # gate name -> verdict


class Trajectory(BaseModel):
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = Field(default_factory=list)
    metadata: TrajectoryMetadata

    def row(self) -> dict[str, Any]:
        """The JSON row written to the corpus files (None values kept: a column must exist in every row)."""
        return self.model_dump(mode="json")

    @property
    def agentic(self) -> bool:
        return bool(self.metadata.filter) and all(v.passed for v in self.metadata.filter.values())

    @property
    def gated(self) -> bool:
        return bool(self.metadata.gates) and all(v.passed for v in self.metadata.gates.values())

    def failed(self, verdicts: dict[str, Verdict]) -> str | None:
        """The first failing stage or gate as ``name: reason`` (None when all passed)."""
        return next((f"{name}: {v.reason}" for name, v in verdicts.items() if not v.passed), None)
