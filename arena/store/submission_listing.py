"""Submissions as the API lists them: each with its miner's uid, paged and filtered, or waiting for a cycle.

Read-only; every function takes the caller's session. Held in one place so the routes and the
dashboard page through the same joins.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from arena.store.models import Miner, Submission, SubmissionStatus
from arena.store.models_race import Standing


class ListedSubmission(BaseModel):
    """A submission without its code, with its miner's uid (None once the hotkey left the subnet)."""

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


class Submitter(BaseModel):
    """Who stands behind a submission, as a standings table names it."""

    hotkey: str
    agent_name: str
    uid: int | None


_LISTED = [Miner.uid if name == "uid" else getattr(Submission, name) for name in ListedSubmission.model_fields]


def _listed(session: Session, *conditions, offset: int = 0, limit: int | None = None) -> list[ListedSubmission]:
    statement = (
        select(*_LISTED).join(Miner, Miner.hotkey == Submission.hotkey).where(*conditions).order_by(Submission.id)
    )
    if offset:
        statement = statement.offset(offset)
    if limit is not None:
        statement = statement.limit(limit)
    return [ListedSubmission.model_validate(dict(row)) for row in session.execute(statement).mappings()]


def listed_submission(session: Session, submission_id: int) -> ListedSubmission | None:
    found = _listed(session, Submission.id == submission_id)
    return found[0] if found else None


def submission_page(
    session: Session,
    *,
    status: SubmissionStatus | None = None,
    hotkey: str | None = None,
    offset: int = 0,
    limit: int | None = None,
) -> tuple[int, list[ListedSubmission]]:
    """How many submissions match (of ``status``, of ``hotkey``), and the page of them by id."""
    conditions = []
    if status is not None:
        conditions.append(Submission.status == status)
    if hotkey is not None:
        conditions.append(Submission.hotkey == hotkey)
    total = session.execute(select(func.count()).select_from(Submission).where(*conditions)).scalar_one()
    return total, _listed(session, *conditions, offset=offset, limit=limit)


def waiting_submissions(session: Session) -> list[ListedSubmission]:
    """Accepted submissions that no cycle has ranked yet."""
    ranked = select(Standing.submission_id).distinct()
    return _listed(session, Submission.status == SubmissionStatus.accepted, Submission.id.not_in(ranked))


def listed_submissions(session: Session, submission_ids: set[int]) -> list[ListedSubmission]:
    """The given submissions by id (any status)."""
    return _listed(session, Submission.id.in_(submission_ids)) if submission_ids else []


# Entered by a cycle's intake and not yet decided: qualifying, or through it and racing.
IN_CYCLE = (SubmissionStatus.qualifying, SubmissionStatus.qualified, SubmissionStatus.racing)


def in_cycle_submissions(session: Session) -> list[ListedSubmission]:
    """Submissions a cycle took in and has not decided yet (qualifying, qualified, racing)."""
    return _listed(session, Submission.status.in_(IN_CYCLE))


def submitters(session: Session, submission_ids: set[int]) -> dict[int, Submitter]:
    """Hotkey, agent name and uid of each given submission, by id."""
    rows = session.execute(
        select(Submission.id, Submission.hotkey, Submission.agent_name, Miner.uid)
        .join(Miner, Miner.hotkey == Submission.hotkey)
        .where(Submission.id.in_(submission_ids))
    )
    return {row.id: Submitter(hotkey=row.hotkey, agent_name=row.agent_name, uid=row.uid) for row in rows}
