"""The embargo rule, pure: when a submission's source may be served.

Discover-then-share: a champion's code is what every miner wants to read,
so it stays private while it reigns and until ``cycles_after_champion``
cycles after the cycle that dethroned it have finished (a cycle dethrones
when it crowns another submission); a submission that never reigned is
private for ``days_after_submission`` days after it was submitted. An
``embargo_until`` the race stored on the submission extends the day rule
(never shortens it).

The API reads the facts (reign, dethroning, finish times) from the store and
asks ``embargo_decision``; the race stores the day rule's end on every
submission that leaves the race without reigning (``day_rule_end``).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from pydantic import BaseModel, Field

from arena.duration import human_time


class EmbargoRule(BaseModel):
    cycles_after_champion: int = Field(2, ge=0)
    days_after_submission: float = Field(7.0, ge=0.0)


class ReignFacts(BaseModel):
    """A submission's history as champion, read from the standings."""

    last_reign_cycle: int | None = None  # the latest cycle it was champion in (None: never reigned)
    dethroned_cycle: int | None = None  # the first later cycle that crowned another submission
    until_cycle_finished_at: datetime | None = None  # when cycle dethroned + N finished (None: not yet)


class EmbargoDecision(BaseModel):
    embargoed: bool
    until: datetime | None  # None while the end depends on cycles not yet run
    until_cycle: int | None = None  # the cycle whose end lifts a former champion's embargo
    reason: str


def day_rule_end(submitted_at: datetime, rule: EmbargoRule, stored_until: datetime | None = None) -> datetime:
    until = submitted_at + timedelta(days=rule.days_after_submission)
    return stored_until if stored_until is not None and stored_until > until else until


def embargo_decision(
    submission_id: int,
    submitted_at: datetime,
    reign: ReignFacts,
    rule: EmbargoRule,
    now: datetime,
    *,
    stored_until: datetime | None = None,
) -> EmbargoDecision:
    if reign.last_reign_cycle is None:
        until = day_rule_end(submitted_at, rule, stored_until)
        if now < until:
            return EmbargoDecision(
                embargoed=True,
                until=until,
                reason=f"submission {submission_id} is embargoed until {human_time(until)} "
                f"({rule.days_after_submission:g} days after submission)",
            )
        return EmbargoDecision(embargoed=False, until=until, reason="the embargo ended")
    if reign.dethroned_cycle is None:
        return EmbargoDecision(
            embargoed=True,
            until=None,
            reason=f"submission {submission_id} is the champion (cycle {reign.last_reign_cycle}); its source stays "
            f"embargoed until {rule.cycles_after_champion} cycle(s) after it is dethroned",
        )
    until_cycle = reign.dethroned_cycle + rule.cycles_after_champion
    if rule.cycles_after_champion == 0 or reign.until_cycle_finished_at is not None:
        return EmbargoDecision(
            embargoed=False, until=reign.until_cycle_finished_at, until_cycle=until_cycle, reason="the embargo ended"
        )
    return EmbargoDecision(
        embargoed=True,
        until=None,
        until_cycle=until_cycle,
        reason=f"submission {submission_id} was champion until cycle {reign.dethroned_cycle} dethroned it; its "
        f"source is embargoed until cycle {until_cycle} finishes",
    )
