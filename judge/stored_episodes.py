"""Judging an episode the store holds: find the judgment version to fill, judge the record, store the outcome.

The race's judgment job, ``arena judge run --database-url`` and the experiment's arena step all write
judgments through here, so a stored judgment means the same thing whoever made it. A failure is stored
on the pending version (never a silent coefficient); a re-judgment is a new version made on purpose.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Session

from arena.runner.record import EpisodeRecord, LLMCallRecord, ToolCallRecord
from arena.store import Store
from arena.store import episodes as episode_rows
from arena.store import judgments as judgment_rows
from arena.store.models_race import EpisodeStatus, JudgmentStatus
from arena.store.resilience import in_thread
from judge.batch import Judge, judge_guarded
from judge.rubric import RUBRIC_VERSION
from judge.verdict import JUDGE_OUTAGE, JudgmentOutcome, JudgmentPending, ReasoningJudgment


@dataclass(frozen=True)
class JudgmentTarget:
    """A done episode and the pending judgment version to fill."""

    episode: episode_rows.EpisodeInfo
    judgment_id: int

    @property
    def record(self) -> EpisodeRecord:
        return EpisodeRecord.model_validate(self.episode.record)


def judgment_target(store: Store, episode_id: int, judge: str) -> JudgmentTarget | None:
    """The done episode and the pending judgment version to fill (created if none); None: nothing to judge."""
    with store.transaction() as session:
        info = episode_rows.get_episode(session, episode_id, with_record=True)
        if info is None or info.status is not EpisodeStatus.done:
            return None
        if judgment_rows.latest(session, episode_id) is not None:
            return None  # judged: a re-judgment is a new version made on purpose, not by the race
        history = judgment_rows.versions(session, episode_id)
        if history and history[-1].status is JudgmentStatus.pending:
            return JudgmentTarget(info, history[-1].id)
        return JudgmentTarget(info, judgment_rows.add_version(session, episode_id, judge, RUBRIC_VERSION).id)


def judgment_result(outcome: ReasoningJudgment) -> judgment_rows.JudgmentResult:
    return judgment_rows.JudgmentResult(
        level=outcome.level,
        coefficient=outcome.coefficient,
        explanation=outcome.explanation,
        detail=outcome.model_dump(mode="json"),
    )


def record_judgment(store: Store, judgment_id: int, outcome: JudgmentOutcome) -> None:
    """Fill the pending version: the judgment, or the reason it is still pending."""
    with store.transaction() as session:
        if isinstance(outcome, ReasoningJudgment):
            judgment_rows.record_result(session, judgment_id, judgment_result(outcome))
        else:
            judgment_rows.record_failure(session, judgment_id, outcome.reason)


def add_judgment(session: Session, episode_id: int, outcome: JudgmentOutcome) -> None:
    """A new judgment version for an episode judged before it was stored (a pending one stays pending)."""
    if isinstance(outcome, ReasoningJudgment):
        judgment_rows.add_version(session, episode_id, outcome.judge, outcome.rubric_version, judgment_result(outcome))
    else:
        judgment_rows.add_version(session, episode_id, outcome.judge, outcome.rubric_version)


async def judge_stored_episode(
    store: Store, judge: Judge, episode_id: int, *, canary: bool = False
) -> JudgmentOutcome | None:
    """Judge one stored episode and store the outcome; None when there is nothing to judge.

    ``canary``: a pending judgment is checked against a plain reference trajectory; when the judge cannot
    judge that either, the reason starts with ``JUDGE_OUTAGE`` (the judge is down, not the episode's doing)."""
    target = await in_thread(judgment_target, store, episode_id, judge.name)
    if target is None:
        return None
    record = target.record
    outcome = await judge_guarded(judge, record)
    if canary and isinstance(outcome, JudgmentPending) and not await _canary_ok(judge, record):
        outcome = outcome.model_copy(update={"reason": f"{JUDGE_OUTAGE}: {outcome.reason}"})
    await in_thread(record_judgment, store, target.judgment_id, outcome)
    return outcome


def judge_canary_record(record: EpisodeRecord) -> EpisodeRecord:
    """A plain reference trajectory on the same problem: one tool call, one model answer, terminated."""
    return record.model_copy(
        update={
            "episode_id": f"{record.episode_id}-judge-canary",
            "tool_calls": [
                ToolCallRecord(
                    index=0, name="terminate", arguments={"status": "failure"}, ok=True, at_s=0.1, duration_ms=1.0
                )
            ],  # fmt: skip
            "llm_calls": [
                LLMCallRecord(
                    index=0,
                    model=record.model,
                    request={"messages": [{"role": "user", "content": "hello"}]},
                    response={"content": "I could not find a product that meets every constraint."},
                    at_s=0.0,
                    latency_ms=1.0,
                )  # fmt: skip
            ],
            "final_recommendation": None,
            "terminate_status": "failure",
        }
    )


async def _canary_ok(judge: Judge, record: EpisodeRecord) -> bool:
    try:
        outcome = await judge.judge(judge_canary_record(record))
    except Exception:
        return False
    return not isinstance(outcome, JudgmentPending)
