"""Typed response models of the validator API: the OpenAPI schema is built from these."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from arena.api.redaction import Level
from arena.problems.model import Difficulty, Intent
from arena.problems.partitions import PartitionName
from arena.store.models import SubmissionStatus
from arena.store.models_race import CycleStage, EpisodeStage, EpisodeStatus, JudgmentStatus


class ErrorBody(BaseModel):
    """Every error the API answers: a stable code for programs, a sentence for people."""

    error: str = Field(description="Machine-readable code, e.g. bad_signature, rate_limited, near_copy, embargoed.")
    detail: str = Field(description="What was wrong, naming the offending value.")
    retry_after: int | None = Field(None, description="Seconds to wait (also in the Retry-After header).")
    line: int | None = Field(None, description="Line of the agent file at fault (syntax, UTF-8).")
    collides_with: dict[str, Any] | None = Field(
        None, description="The earlier submission a copy collides with, only when it is the caller's own."
    )
    copy_refusals_left: int | None = Field(
        None, description="After a copy refusal: how many more the hotkey may get in the next 24 h."
    )
    embargo_until: datetime | None = Field(None, description="When the source becomes available, when known.")
    until_cycle: int | None = Field(None, description="The cycle whose end lifts a champion's embargo.")


class SubmissionSummary(BaseModel):
    id: int
    hotkey: str
    uid: int | None
    agent_name: str
    sha256: str
    size: int
    submitted_at: datetime
    commitment_block: int | None
    status: SubmissionStatus
    rejection_reason: str | None


class SubmissionPage(BaseModel):
    total: int
    offset: int
    items: list[SubmissionSummary]


class EmbargoView(BaseModel):
    embargoed: bool
    until: datetime | None
    until_cycle: int | None
    reason: str


class SubmissionSource(BaseModel):
    submission_id: int
    hotkey: str
    agent_name: str
    sha256: str
    size: int
    code: str = Field(description="The agent file as submitted (UTF-8).")


class IntentResult(BaseModel):
    """A submission's episodes of one intent in one stage of one cycle."""

    intent: Intent | None = Field(description="None: all intents together.")
    episodes: int
    done: int
    failed: int
    unfinished: int
    successes: int | None = Field(description="None while the cycle runs.")
    success_rate: float | None = Field(description="successes / done, None while the cycle runs or nothing is done.")
    mean_rule: float | None
    mean_coefficient: float | None = Field(description="Mean judge coefficient of the judged episodes.")
    judged: int


class StageResult(BaseModel):
    cycle: int
    stage: EpisodeStage
    cycle_finished: bool
    total: IntentResult
    by_intent: list[IntentResult]


class StandingView(BaseModel):
    cycle: int
    submission_id: int
    hotkey: str
    uid: int | None
    agent_name: str
    rank: int | None
    qualifying_score: float | None
    race_score: float | None
    success_rate: float | None
    mean_coefficient: float | None
    is_champion: bool


class SubmissionDetail(BaseModel):
    submission: SubmissionSummary
    status_note: str = Field(description="The status explained: where the agent stands and why (e.g. why retired).")
    embargo: EmbargoView
    standings: list[StandingView]
    results: list[StageResult]


class WeightsView(BaseModel):
    cycle: int
    uids: list[int]
    weights: list[float]
    block: int | None
    ok: bool
    message: str
    sent_at: datetime


class Leaderboard(BaseModel):
    cycle: int | None = Field(description="The latest cycle with standings (or the one asked for).")
    stage: CycleStage | None
    champion: StandingView | None
    entries: list[StandingView]
    weights: WeightsView | None = Field(description="The last weights this validator sent for that cycle.")
    waiting: list[SubmissionSummary] = Field(description="Accepted submissions that have no standing yet.")
    in_cycle: list[SubmissionSummary] = Field(
        default_factory=list, description="Submissions a cycle took in and has not decided: qualifying or racing."
    )


class CycleSummary(BaseModel):
    number: int
    suite_id: str
    stage: CycleStage
    finished: bool
    started_at: datetime
    intake_closed_at: datetime | None
    draw_block: int | None
    draw_block_hash: str | None
    finished_at: datetime | None
    halt: dict[str, Any] | None = Field(
        None,
        description="Why the cycle stopped undecided (the validator could not measure): stage, kind, reason, the "
        "submissions hit, the fix. Nothing was promoted and the last good weights were re-sent.",
    )


class StageView(BaseModel):
    stage: CycleStage
    started_at: datetime
    finished_at: datetime | None
    detail: dict[str, Any] | None = Field(description="What the stage produced; withheld until the cycle finishes.")


class CycleDetail(CycleSummary):
    params: dict[str, Any]
    stages: list[StageView]
    episodes: dict[EpisodeStage, dict[EpisodeStatus, int]] = Field(description="Episode counts per stage and status.")
    standings: list[StandingView]
    weights: list[WeightsView]


class ProblemView(BaseModel):
    suite_id: str
    problem_id: str
    cluster_id: str
    partition: PartitionName
    intent: Intent
    difficulty: Difficulty
    query: str
    row: dict[str, Any] = Field(description="The official task row, gold reward included.")


class JudgmentView(BaseModel):
    version: int
    judge: str
    rubric_version: str
    status: JudgmentStatus
    level: float | None
    coefficient: float | None
    explanation: str | None = Field(description="Withheld when the problem is hidden (it may quote it).")
    detail: dict[str, Any] | None
    judged_at: datetime | None


class EpisodeSummary(BaseModel):
    id: int
    cycle: int
    stage: EpisodeStage
    submission_id: int
    suite_id: str
    problem_id: str
    attempt: int
    status: EpisodeStatus
    termination: str | None = Field(
        default=None, description="How the agent ended (terminated, returned, timeout, crash, limit); None unrun."
    )
    visibility: Level
    success: bool | None
    rule: float | None
    coefficient: float | None = Field(description="The latest done judgment's coefficient.")
    created_at: datetime
    finished_at: datetime | None


class EpisodeDetail(EpisodeSummary):
    redaction: str | None = Field(description="Why parts are withheld; None when everything is shown.")
    problem: ProblemView | None
    record: dict[str, Any] | None = Field(description="The full EpisodeRecord (every tool and LLM call).")
    outcome: dict[str, Any] | None = Field(description="The OutcomeScore.")
    error: str | None
    fault_kind: str | None = Field(
        None, description="The validator-side failure the episode last hit (sandbox, upstream, judge, store, runner)."
    )
    fault_charged: bool | None = Field(
        None,
        description="Whether that failure was charged to the submission (the canary ran clean on the same "
        "sandbox: the failure follows the submission); false: the validator's, never the miner's.",
    )
    judgments: list[JudgmentView]


class EpisodePage(BaseModel):
    total: int
    offset: int
    items: list[EpisodeSummary]


class Health(BaseModel):
    status: str = Field(description="ok, or degraded when the database is unreachable or behind.")
    database: str
    revision: str | None
    head: str
    up_to_date: bool
    validator_hotkey: str | None
    accepting_submissions: bool


class AgentStatus(BaseModel):
    """A submission with its status said in words: what it means for this agent, and what comes next."""

    submission: SubmissionSummary
    status_note: str = Field(description="The status explained: where the agent stands and why (e.g. why retired).")


class AgentHistory(AgentStatus):
    """One agent's all-time record over the finished cycles it stood in."""

    cycles_raced: list[int] = Field(description="Finished cycles that ranked it.")
    best_race_score: float | None
    best_rank: int | None
    best_cycle: int | None = Field(description="The cycle of its best race score.")
    champion_cycles: list[int] = Field(description="Finished cycles that crowned it champion.")
    last_cycle: int = Field(description="The latest finished cycle it stood in.")


class ChampionSpell(BaseModel):
    """Consecutive crowning cycles of one champion (a halted cycle crowns nobody and breaks no spell)."""

    submission_id: int
    agent_name: str
    hotkey: str
    uid: int | None
    from_cycle: int
    to_cycle: int
    cycles: int = Field(description="Cycles that crowned it in this spell.")
    reigning: bool = Field(description="Whether this spell is the current champion's.")


class CycleResult(BaseModel):
    """One finished cycle: its ranked entrants, its champion and the weights it sent."""

    cycle: int
    finished_at: datetime | None
    halt_kind: str | None = Field(description="The fault kind when the cycle halted undecided; else None.")
    champion: StandingView | None
    entries: list[StandingView] = Field(description="Every entrant's row, ranked ones first by rank.")
    weights: WeightsView | None = Field(description="The last weights sent for the cycle (ok or failed).")


class History(BaseModel):
    """The leaderboard over time: every finished cycle, every agent's record, the champions' reigns, and who is
    in the running cycle or waiting for the next."""

    current_cycle: int | None = Field(description="The latest cycle, running or finished.")
    cycles: list[CycleResult] = Field(description="The latest finished cycles (at most ?limit), oldest first.")
    agents: list[AgentHistory] = Field(description="All-time: every agent that stood in a finished cycle, best first.")
    champions: list[ChampionSpell] = Field(description="Every champion's spells, oldest first.")
    in_cycle: list[AgentStatus] = Field(description="Entered by a cycle and not decided yet: qualifying or racing.")
    waiting: list[AgentStatus] = Field(description="Accepted, waiting for the next cycle's intake.")
