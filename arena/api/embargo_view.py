"""The embargo as the API applies it: the facts read from the store, the rule from ``arena.race.embargo``.

The rule (a champion's source stays private while it reigns and until N
cycles after the cycle that dethroned it have finished; any other source for
D days after submission, or until the ``embargo_until`` the race stored, if
later) is the race's, configured in its settings
(``race.embargo_cycles_after_champion``, ``race.embargo_days_after_submission``),
so the validator that decides and the API that serves cannot disagree.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.orm import Session

from arena.race.embargo import EmbargoDecision, EmbargoRule, ReignFacts, embargo_decision
from arena.race.settings import RaceSettings
from arena.store import standings as standing_rows
from arena.store.submissions import SubmissionInfo


def embargo_rule(race: RaceSettings) -> EmbargoRule:
    """The rule these race settings configure."""
    return EmbargoRule(
        cycles_after_champion=race.embargo_cycles_after_champion,
        days_after_submission=race.embargo_days_after_submission,
    )


def reign_facts(session: Session, submission_id: int, rule: EmbargoRule) -> ReignFacts:
    """When the submission last reigned, which cycle dethroned it, and whether cycle dethroned + N finished."""
    return ReignFacts.model_validate(
        standing_rows.reign(session, submission_id, rule.cycles_after_champion).model_dump()
    )


def embargo_state(session: Session, submission: SubmissionInfo, rule: EmbargoRule, now: datetime) -> EmbargoDecision:
    return embargo_decision(
        submission.id,
        submission.submitted_at,
        reign_facts(session, submission.id, rule),
        rule,
        now,
        stored_until=submission.embargo_until,
    )
