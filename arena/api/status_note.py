"""A submission's status said in words: a status alone ("retired") reads as a failure, when it usually means the
agent raced and the champion kept the title, or that a submission races in one cycle only.

The note is built from the facts the API already serves (the submission's rows in finished cycles, the latest
cycle, each cycle's champion), so it never reveals more than ``/v1`` does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from arena.api.schemas import StandingView, SubmissionSummary
from arena.store.cycles import CycleInfo
from arena.store.models import SubmissionStatus

# The colour a status is shown in: only a rejection is an error; retiring is how every non-champion ends.
TONES = {
    SubmissionStatus.champion: "ok",
    SubmissionStatus.rejected: "bad",
    SubmissionStatus.qualifying: "warn",
    SubmissionStatus.qualified: "warn",
    SubmissionStatus.racing: "warn",
    SubmissionStatus.accepted: "muted",
    SubmissionStatus.retired: "muted",
}

ONCE = "a submission races in one cycle only: submit an improved agent to race again"


def tone(status: SubmissionStatus) -> str:
    return TONES.get(status, "muted")


def status_note(
    submission: SubmissionSummary,
    rows: Sequence[StandingView],
    current: CycleInfo | None,
    champions: Mapping[int, StandingView | None],
) -> str:
    """What ``submission.status`` means for it. ``rows``: its standings in finished cycles, oldest first;
    ``current``: the latest cycle; ``champions``: each finished cycle's champion (None: nobody crowned)."""
    status = submission.status
    if status is SubmissionStatus.rejected:
        return f"rejected at intake: {submission.rejection_reason or 'no reason recorded'}"
    if status is SubmissionStatus.accepted:
        return "accepted: waiting for the next cycle's intake to take it in"
    running = current is not None and current.finished_at is None
    where = f"cycle {current.number}" if current is not None else "the next cycle"
    if status is SubmissionStatus.qualifying:
        if running:
            return f"qualifying in {where}: running the public suite"
        return "waiting to qualify in the next cycle (its cycle halted before deciding; no charge to the miner)"
    if status is SubmissionStatus.qualified:
        return f"qualified in {where}: races the champion on hidden problems next"
    if status is SubmissionStatus.racing:
        return f"racing in {where}"
    crowned = [r.cycle for r in rows if r.is_champion]
    if status is SubmissionStatus.champion:
        if not crowned:
            return "the reigning champion"
        return f"the reigning champion: crowned in cycle {crowned[0]}, defended through cycle {crowned[-1]}"
    return _retired(rows, crowned, champions)


def _retired(rows: Sequence[StandingView], crowned: list[int], champions: Mapping[int, StandingView | None]) -> str:
    if crowned:
        after = [r.cycle for r in rows if r.cycle > crowned[-1]]
        lost = f", dethroned in cycle {after[0]} by a challenger that cleared the promotion margin" if after else ""
        return f"retired: champion in cycles {crowned[0]}–{crowned[-1]}{lost}"
    ranked = [r for r in rows if r.rank is not None and r.race_score is not None]
    if ranked:
        last = ranked[-1]
        champion = champions.get(last.cycle)
        if champion is None:
            why = "nobody was crowned (a first champion must score confidently above zero)"
        else:
            why = f"the title went to {champion.agent_name} (a challenger must beat the champion by the margin)"
        return (
            f"retired after racing: ranked #{last.rank} in cycle {last.cycle} (race score {last.race_score:.3f}), "
            f"but {why}; {ONCE}"
        )
    qualified = [r for r in rows if r.qualifying_score is not None]
    if qualified:
        last = qualified[-1]
        return (
            f"retired in qualifying (cycle {last.cycle}): its qualifying score {last.qualifying_score:.3f} was "
            f"confidently below the qualifying fraction of the leader's; {ONCE}"
        )
    return f"retired: it no longer races; {ONCE}"
