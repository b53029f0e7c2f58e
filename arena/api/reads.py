"""What each read endpoint answers, built in one read session.

The JSON routes (``routes/``) and the dashboard's pages (``dashboard.py``) both call these, so the
redaction rules of ``redaction.py`` and the embargo of ``embargo_view.py`` apply to both alike: a
page can never show more than ``/v1`` does. An unknown id raises the API's 404 (``deps.not_found``).
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from arena.api.deps import not_found
from arena.api.embargo_view import embargo_state
from arena.api.history import submission_note
from arena.api.redaction import Level, Redactor
from arena.api.schemas import (
    CycleDetail,
    CycleSummary,
    EmbargoView,
    EpisodeDetail,
    JudgmentView,
    Leaderboard,
    ProblemView,
    StageView,
    SubmissionDetail,
    WeightsView,
)
from arena.api.views import (
    episode_summary,
    in_cycle_submissions,
    standing_views,
    submission_results,
    submission_standings,
    submission_summary,
    waiting_submissions,
)
from arena.race.embargo import EmbargoRule
from arena.runner.record import knowledge_unscoped
from arena.store import cycles as cycle_rows
from arena.store import episodes as episode_rows
from arena.store import judgments as judgment_rows
from arena.store import standings as standing_rows
from arena.store import submissions as submission_rows
from arena.store.cycles import CycleInfo
from arena.store.models import utcnow
from arena.store.models_race import CycleStage, EpisodeStage, JudgmentStatus
from arena.store.standings import latest_ranked_cycle


def leaderboard(session: Session, cycle: int | None = None) -> Leaderboard:
    """The standings of ``cycle``, else of the latest finished cycle, with its champion, weights and the waiting."""
    if cycle is None:
        cycle = latest_ranked_cycle(session)
    info = cycle_rows.get_cycle(session, cycle) if cycle is not None else None
    if cycle is not None and info is None:
        raise not_found(f"cycle {cycle}")
    entries = standing_views(session, standing_rows.list_standings(session, cycle)) if cycle is not None else []
    sent = standing_rows.weights_sent(session, cycle=cycle) if cycle is not None else []
    return Leaderboard(
        cycle=cycle,
        stage=info.stage if info else None,
        champion=next((e for e in entries if e.is_champion), None),
        entries=entries,
        weights=WeightsView.model_validate(sent[-1].model_dump()) if sent else None,
        waiting=waiting_submissions(session),
        in_cycle=in_cycle_submissions(session),
    )


def cycle_summary(info: CycleInfo) -> CycleSummary:
    return CycleSummary(**info.model_dump(exclude={"params"}), finished=info.stage is CycleStage.done)


def cycle_stages(session: Session, info: CycleInfo) -> list[StageView]:
    """The cycle's timeline; a running cycle's stage details are withheld (they may name its draw)."""
    done = info.stage is CycleStage.done
    return [
        StageView(stage=s.stage, started_at=s.started_at, finished_at=s.finished_at, detail=s.detail if done else None)
        for s in cycle_rows.stages(session, info.number)
    ]


def known_cycle(session: Session, number: int) -> CycleInfo:
    info = cycle_rows.get_cycle(session, number)
    if info is None:
        raise not_found(f"cycle {number}")
    return info


def cycle_detail(session: Session, number: int) -> CycleDetail:
    info = known_cycle(session, number)
    episodes = {
        stage: {status: n for status, n in episode_rows.status_counts(session, cycle=number, stage=stage).items()}
        for stage in EpisodeStage
    }
    return CycleDetail(
        **cycle_summary(info).model_dump(),
        params=info.params,
        stages=cycle_stages(session, info),
        episodes=episodes,
        standings=standing_views(session, standing_rows.list_standings(session, number)),
        weights=[WeightsView.model_validate(w.model_dump()) for w in standing_rows.weights_sent(session, cycle=number)],
    )


def submission_detail(session: Session, submission_id: int, rule: EmbargoRule) -> SubmissionDetail:
    summary = submission_summary(session, submission_id)
    info = submission_rows.get_submission(session, submission_id)
    if summary is None or info is None:
        raise not_found(f"submission {submission_id}")
    embargo = embargo_state(session, info, rule, utcnow())
    return SubmissionDetail(
        submission=summary,
        status_note=submission_note(session, summary),
        embargo=EmbargoView.model_validate(embargo.model_dump()),
        standings=submission_standings(session, submission_id),
        results=submission_results(session, submission_id),
    )


# A record stored before web_search was filtered to the episode's own problem (issue 30) may quote another
# problem's answer page anywhere in its tool results or model messages: withheld whole, whatever its partition.
UNSCOPED_RECORD = (
    "record withheld: its web_search answers predate the per-problem knowledge filter and may hold other "
    "problems' answer pages"
)


def episode_detail(session: Session, episode_id: int) -> EpisodeDetail:
    """One episode, as much of it as the redaction rules allow; a held-out one answers as a missing one."""
    info = episode_rows.get_episode(session, episode_id, with_record=True)
    if info is None:
        raise not_found(f"episode {episode_id}")
    redactor = Redactor(session)
    view = redactor.episode(info.cycle, info.suite_id, info.problem_id)
    if view.level is Level.hidden:
        raise not_found(f"episode {episode_id}")  # the same answer as a missing one: held-out leaves no trace
    judgments = judgment_rows.versions(session, episode_id) if view.shows_scores else []
    done = [j for j in judgments if j.status is JudgmentStatus.done]
    facts = info.model_dump() | {"termination": (info.record or {}).get("termination")}
    summary = episode_summary(facts, view.level, done[-1].coefficient if done else None)
    problem = None
    if view.shows_content:
        row = redactor.problem_row(info.suite_id, info.problem_id)
        assert row is not None  # the visibility came from this row
        problem = ProblemView(
            suite_id=row.suite_id,
            problem_id=row.problem_id,
            cluster_id=row.cluster_id,
            partition=row.partition,
            intent=row.intent,
            difficulty=row.difficulty,
            query=str(row.row.get("query", "")),
            row=row.row,
        )
    redaction = None if view.shows_content else view.reason
    record = info.record if view.shows_content else None
    if knowledge_unscoped(record):
        redaction, record = UNSCOPED_RECORD, None
    return EpisodeDetail(
        **summary.model_dump(),
        redaction=redaction,
        problem=problem,
        record=record,
        outcome=info.outcome if view.shows_content else None,
        error=info.error if view.shows_content else None,
        fault_kind=info.fault_kind,
        fault_charged=info.fault_charged,
        judgments=[
            JudgmentView(
                version=j.version,
                judge=j.judge,
                rubric_version=j.rubric_version,
                status=j.status,
                level=j.level,
                coefficient=j.coefficient,
                explanation=j.explanation if view.shows_content else None,
                detail=j.detail if view.shows_content else None,
                judged_at=j.judged_at,
            )
            for j in judgments
        ],
    )
