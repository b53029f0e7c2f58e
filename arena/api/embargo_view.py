"""The embargo rule: when a submission's source may be served.

Discover-then-share: a champion's code is what every miner wants to read,
so it stays private while it reigns and for ``cycles_after_champion`` cycles
after the cycle that dethroned it (a cycle "dethrones" when it crowns another
submission); any submission that never reigned is private for
``days_after_submission`` days. An ``embargo_until`` the race stored on the
submission extends the day rule (never shortens it).

Defined here because ``arena.race.embargo`` does not exist yet; when it
lands this module should call it instead of restating the rule.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from pydantic import BaseModel
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from arena.api.settings import EmbargoSettings
from arena.store.models_race import Cycle, Standing
from arena.store.submissions import SubmissionInfo


class EmbargoState(BaseModel):
    embargoed: bool
    until: datetime | None  # None while the end depends on cycles not yet run
    until_cycle: int | None = None  # the cycle whose end lifts a champion's embargo
    reason: str


def embargo_state(session: Session, submission: SubmissionInfo, rule: EmbargoSettings, now: datetime) -> EmbargoState:
    reigned = session.execute(
        select(func.max(Standing.cycle)).where(Standing.submission_id == submission.id, Standing.is_champion.is_(True))
    ).scalar_one_or_none()
    if reigned is not None:
        return _champion_embargo(session, submission.id, reigned, rule)
    until = submission.submitted_at + timedelta(days=rule.days_after_submission)
    if submission.embargo_until is not None and submission.embargo_until > until:
        until = submission.embargo_until
    if now < until:
        return EmbargoState(
            embargoed=True,
            until=until,
            reason=f"submission {submission.id} is embargoed until {until.isoformat()} "
            f"({rule.days_after_submission:g} days after submission)",
        )
    return EmbargoState(embargoed=False, until=until, reason="the embargo ended")


def _champion_embargo(session: Session, submission_id: int, last_reign: int, rule: EmbargoSettings) -> EmbargoState:
    dethroned = session.execute(
        select(func.min(Standing.cycle)).where(
            Standing.cycle > last_reign, Standing.is_champion.is_(True), Standing.submission_id != submission_id
        )
    ).scalar_one_or_none()
    if dethroned is None:
        return EmbargoState(
            embargoed=True,
            until=None,
            reason=f"submission {submission_id} is the champion (cycle {last_reign}); its source stays embargoed "
            f"until {rule.cycles_after_champion} cycle(s) after it is dethroned",
        )
    until_cycle = dethroned + rule.cycles_after_champion
    finished = session.execute(select(Cycle.finished_at).where(Cycle.number == until_cycle)).scalar_one_or_none()
    if rule.cycles_after_champion == 0 or finished is not None:
        return EmbargoState(embargoed=False, until=finished, until_cycle=until_cycle, reason="the embargo ended")
    return EmbargoState(
        embargoed=True,
        until=None,
        until_cycle=until_cycle,
        reason=f"submission {submission_id} was champion until cycle {dethroned} dethroned it; its source is "
        f"embargoed until cycle {until_cycle} finishes",
    )
