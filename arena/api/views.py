"""The store's reads shaped as the API's response models: submissions with uids, standings with names, results
per intent, episode summaries as redaction allows.

Route functions stay thin; the queries are ``arena.store``'s, the shaping here, each function returning the
typed models of ``arena.api.schemas``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

from sqlalchemy.orm import Session

from arena.api.redaction import Level, Redactor
from arena.api.schemas import EpisodeSummary, IntentResult, StageResult, StandingView, SubmissionSummary
from arena.problems.model import Intent
from arena.store import episode_listing, submission_listing
from arena.store import standings as standing_rows
from arena.store.episode_listing import ResultRow
from arena.store.models import SubmissionStatus
from arena.store.models_race import EpisodeStage, EpisodeStatus
from arena.store.standings import StandingInfo


def _summary(listed: submission_listing.ListedSubmission) -> SubmissionSummary:
    return SubmissionSummary.model_validate(listed.model_dump())


def submission_summary(session: Session, submission_id: int) -> SubmissionSummary | None:
    found = submission_listing.listed_submission(session, submission_id)
    return None if found is None else _summary(found)


def submission_page(
    session: Session, *, status: SubmissionStatus | None, hotkey: str | None, offset: int, limit: int
) -> tuple[int, list[SubmissionSummary]]:
    total, page = submission_listing.submission_page(session, status=status, hotkey=hotkey, offset=offset, limit=limit)
    return total, [_summary(listed) for listed in page]


def waiting_submissions(session: Session) -> list[SubmissionSummary]:
    """Accepted submissions that no cycle has ranked yet."""
    return [_summary(listed) for listed in submission_listing.waiting_submissions(session)]


def listed_summaries(session: Session, submission_ids: set[int]) -> list[SubmissionSummary]:
    return [_summary(listed) for listed in submission_listing.listed_submissions(session, submission_ids)]


def in_cycle_submissions(session: Session) -> list[SubmissionSummary]:
    """Submissions a cycle took in and has not decided yet (qualifying, qualified, racing)."""
    return [_summary(listed) for listed in submission_listing.in_cycle_submissions(session)]


def standing_views(session: Session, rows: Iterable[StandingInfo]) -> list[StandingView]:
    rows = list(rows)
    names = submission_listing.submitters(session, {s.submission_id for s in rows})
    return [
        StandingView(
            cycle=s.cycle,
            submission_id=s.submission_id,
            hotkey=names[s.submission_id].hotkey,
            uid=names[s.submission_id].uid,
            agent_name=names[s.submission_id].agent_name,
            rank=s.rank,
            qualifying_score=s.qualifying_score,
            race_score=s.race_score,
            success_rate=s.success_rate,
            mean_coefficient=s.mean_coefficient,
            is_champion=s.is_champion,
        )
        for s in rows
    ]


def submission_standings(session: Session, submission_id: int) -> list[StandingView]:
    return standing_views(session, standing_rows.standings_of_submission(session, submission_id))


def _result(intent: Intent | None, rows: list[ResultRow], finished: bool) -> IntentResult:
    done = [r for r in rows if r.status is EpisodeStatus.done]
    judged = [r.coefficient for r in done if r.coefficient is not None]
    successes = sum(1 for r in done if r.success) if finished else None
    return IntentResult(
        intent=intent,
        episodes=len(rows),
        done=len(done),
        failed=sum(1 for r in rows if r.status is EpisodeStatus.failed),
        unfinished=sum(1 for r in rows if r.status in (EpisodeStatus.pending, EpisodeStatus.running)),
        successes=successes,
        success_rate=(successes / len(done)) if successes is not None and done else None,
        mean_rule=(sum(r.rule or 0.0 for r in done) / len(done)) if finished and done else None,
        mean_coefficient=(sum(judged) / len(judged)) if finished and judged else None,
        judged=len(judged) if finished else 0,
    )


def submission_results(session: Session, submission_id: int) -> list[StageResult]:
    """Per cycle and stage, the submission's episodes by intent. Held-out problems count nowhere;
    while a cycle runs only progress is shown (scores once it finished)."""
    groups: dict[tuple[int, EpisodeStage], list[ResultRow]] = defaultdict(list)
    finished: dict[int, bool] = {}
    for row in episode_listing.result_rows(session, submission_id):
        groups[(row.cycle, row.stage)].append(row)
        finished[row.cycle] = row.cycle_finished
    results = []
    for (cycle, stage), rows in sorted(groups.items(), key=lambda item: (item[0][0], item[0][1].value)):
        by_intent = defaultdict(list)
        for row in rows:
            by_intent[row.intent].append(row)
        results.append(
            StageResult(
                cycle=cycle,
                stage=stage,
                cycle_finished=finished[cycle],
                total=_result(None, rows, finished[cycle]),
                by_intent=[
                    _result(intent, by_intent[intent], finished[cycle]) for intent in Intent if intent in by_intent
                ],
            )
        )
    return results


def episode_summaries(
    session: Session,
    redactor: Redactor,
    *,
    submission_id: int | None = None,
    cycle: int | None = None,
    stage: EpisodeStage | None = None,
    offset: int = 0,
    limit: int | None = None,
) -> tuple[int, list[EpisodeSummary]]:
    """Episodes matching the filters with what may be shown of each; held-out ones are left out entirely."""
    total, page = episode_listing.episode_page(
        session, submission_id=submission_id, cycle=cycle, stage=stage, offset=offset, limit=limit
    )
    items = []
    for listed in page:
        view = redactor.episode(listed.cycle, listed.suite_id, listed.problem_id)
        items.append(episode_summary(listed.model_dump(), view.level, listed.coefficient))
    return total, items


def episode_summary(row: Mapping, level: Level, coefficient: float | None) -> EpisodeSummary:
    scores = level in (Level.full, Level.scores)
    return EpisodeSummary(
        id=row["id"],
        cycle=row["cycle"],
        stage=row["stage"],
        submission_id=row["submission_id"],
        suite_id=row["suite_id"],
        problem_id=row["problem_id"],
        attempt=row["attempt"],
        status=row["status"],
        # how it ended is a score-level fact: a crashed episode is "done" (its record is stored) yet scored 0
        termination=row.get("termination") if scores else None,
        visibility=level,
        success=row["success"] if scores else None,
        rule=row["rule"] if scores else None,
        coefficient=coefficient if scores else None,
        created_at=row["created_at"],
        finished_at=row["finished_at"],
    )
