"""What a judge returns for one episode: a judgment, or an explicit "pending".

A judge failure (server down, timeouts, malformed replies on every model) is
never a silent level 0: it is a ``JudgmentPending`` naming why and how many
attempts were made, so the caller can retry it later and the race can wait for
or exclude the episode by a recorded rule.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from judge.rubric import Level

# How a pending judgment's reason starts when the judge could not judge a plain reference trajectory either
# (judge.stored_episodes): the judge is down, not the episode's doing. The race's halt rules read it.
JUDGE_OUTAGE = "judge unavailable (its canary failed too)"


class JudgeCost(BaseModel):
    """What judging one episode spent on the judge server (zero for the rules judge)."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, other: JudgeCost) -> None:
        self.requests += other.requests
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens


class Attempt(BaseModel):
    """One request to a judge model: its outcome, kept so nothing about a failure is lost."""

    model: str
    ok: bool
    error: str | None = None  # "timeout", "http 500: ...", "malformed JSON: ...", "schema: ..."
    latency_ms: float
    prompt_tokens: int = 0
    completion_tokens: int = 0


class PanelVote(BaseModel):
    model: str
    level: Level | None = None  # None: this member failed (its error is in ``error``)
    explanation: str | None = None
    error: str | None = None


class ReasoningJudgment(BaseModel):
    status: Literal["judged"] = "judged"
    episode_id: str
    level: Level
    coefficient: float
    explanation: str
    judge: str  # "rules", "openai:<model>" or "openai-panel:<m1>,<m2>,..."
    rubric_version: str
    proposed_level: Level | None = None  # the LLM's level before the rules cap
    cap: Level | None = None  # the rules judge's level: the most the record supports
    panel: list[PanelVote] | None = None
    disagreement: float | None = None  # max - min of the panel's levels
    attempts: list[Attempt] = Field(default_factory=list)
    cost: JudgeCost = Field(default_factory=JudgeCost)
    latency_ms: float = 0.0

    def line(self) -> dict[str, Any]:
        """The ``arena judge run`` contract (one JSON object per episode)."""
        row: dict[str, Any] = {
            "episode_id": self.episode_id,
            "level": self.level,
            "coefficient": self.coefficient,
            "explanation": self.explanation,
            "judge": self.judge,
            "rubric_version": self.rubric_version,
            "status": self.status,
        }
        if self.panel is not None:
            row["panel"] = [vote.model_dump(exclude_none=True) for vote in self.panel]
            row["disagreement"] = self.disagreement
        return row


class JudgmentPending(BaseModel):
    status: Literal["pending"] = "pending"
    episode_id: str
    reason: str
    attempts: int  # requests made over every round so far
    rounds: int = 1  # passes over this episode (a batch retries pending episodes)
    judge: str
    rubric_version: str
    errors: list[Attempt] = Field(default_factory=list)
    cost: JudgeCost = Field(default_factory=JudgeCost)
    latency_ms: float = 0.0

    def line(self) -> dict[str, Any]:
        return {
            "episode_id": self.episode_id,
            "level": None,
            "coefficient": None,
            "explanation": f"judgment pending: {self.reason}",
            "judge": self.judge,
            "rubric_version": self.rubric_version,
            "status": self.status,
            "attempts": self.attempts,
        }


JudgmentOutcome = Annotated[ReasoningJudgment | JudgmentPending, Field(discriminator="status")]
