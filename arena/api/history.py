"""The leaderboard over time (``/v1/history`` and the front page): every finished cycle's ranked entrants and
champion, each agent's all-time record, the champions' spells, and who is in the running cycle or waiting.

Built only from what ``/v1/leaderboard`` and ``/v1/cycles/{n}`` already serve (finished cycles' standings, the
weights log, submission summaries), so the history reveals nothing the per-cycle answers do not.
"""

from __future__ import annotations

from collections import defaultdict

from sqlalchemy.orm import Session

from arena.api.schemas import (
    AgentHistory,
    AgentStatus,
    ChampionSpell,
    CycleResult,
    History,
    StandingView,
    SubmissionSummary,
    WeightsView,
)
from arena.api.status_note import status_note
from arena.api.views import in_cycle_submissions, listed_summaries, standing_views, waiting_submissions
from arena.store import cycles as cycle_rows
from arena.store import standings as standing_rows
from arena.store.cycles import CycleInfo, latest_cycle
from arena.store.models import SubmissionStatus


def champion_spells(cycles: list[CycleResult], reigning: int | None) -> list[ChampionSpell]:
    """Runs of crowning cycles with the same champion; a cycle that crowned nobody (halted) breaks no run."""
    spells: list[ChampionSpell] = []
    for result in cycles:
        champion = result.champion
        if champion is None:
            continue
        last = spells[-1] if spells else None
        if last is not None and last.submission_id == champion.submission_id:
            spells[-1] = last.model_copy(update={"to_cycle": result.cycle, "cycles": last.cycles + 1})
            continue
        spells.append(
            ChampionSpell(
                submission_id=champion.submission_id, agent_name=champion.agent_name, hotkey=champion.hotkey,
                uid=champion.uid, from_cycle=result.cycle, to_cycle=result.cycle, cycles=1, reigning=False,
            )
        )  # fmt: skip
    if spells and spells[-1].submission_id == reigning:
        spells[-1] = spells[-1].model_copy(update={"reigning": True})
    return spells


def _agent(
    summary: SubmissionSummary, rows: list[StandingView], current: CycleInfo | None, champions: dict
) -> AgentHistory:
    ranked = [r for r in rows if r.rank is not None and r.race_score is not None]
    best = max(ranked, key=lambda r: (r.race_score, -r.cycle), default=None)
    return AgentHistory(
        submission=summary,
        status_note=status_note(summary, rows, current, champions),
        cycles_raced=[r.cycle for r in ranked],
        best_race_score=best.race_score if best else None,
        best_rank=min((r.rank for r in ranked if r.rank is not None), default=None),
        best_cycle=best.cycle if best else None,
        champion_cycles=[r.cycle for r in rows if r.is_champion],
        last_cycle=rows[-1].cycle,
    )


def history(session: Session, limit: int | None = None) -> History:
    """The whole history; ``limit`` keeps the latest finished cycles in ``cycles`` (agents and spells count all)."""
    infos = {c.number: c for c in cycle_rows.list_cycles(session)}
    current = infos[max(infos)] if infos else None
    rows = standing_views(session, standing_rows.finished_standings(session))
    by_cycle: dict[int, list[StandingView]] = defaultdict(list)
    by_submission: dict[int, list[StandingView]] = defaultdict(list)
    for view in rows:
        by_cycle[view.cycle].append(view)
        by_submission[view.submission_id].append(view)
    weights: dict[int, WeightsView] = {}
    for sent in standing_rows.weights_sent(session):  # in the order sent: the last one of a cycle stands
        weights[sent.cycle] = WeightsView.model_validate(sent.model_dump())
    results = [
        CycleResult(
            cycle=number,
            finished_at=info.finished_at,
            halt_kind=(info.halt or {}).get("kind"),
            champion=next((v for v in by_cycle[number] if v.is_champion), None),
            entries=by_cycle[number],
            weights=weights.get(number),
        )
        for number, info in sorted(infos.items())
        if info.finished_at is not None
    ]
    champions = {r.cycle: r.champion for r in results}
    listed = {s.id: s for s in listed_summaries(session, set(by_submission))}
    agents = [_agent(listed[sid], own, current, champions) for sid, own in by_submission.items() if sid in listed]
    agents.sort(key=lambda a: (a.best_race_score is None, -(a.best_race_score or 0.0), a.submission.id))
    reigning = next((a.submission.id for a in agents if a.submission.status is SubmissionStatus.champion), None)

    def statuses(summaries: list[SubmissionSummary]) -> list[AgentStatus]:
        return [
            AgentStatus(submission=s, status_note=status_note(s, by_submission.get(s.id, []), current, champions))
            for s in summaries
        ]

    return History(
        current_cycle=current.number if current else None,
        cycles=results[-limit:] if limit else results,
        agents=agents,
        champions=champion_spells(results, reigning),
        in_cycle=statuses(in_cycle_submissions(session)),
        waiting=statuses(waiting_submissions(session)),
    )


def submission_note(session: Session, summary: SubmissionSummary) -> str:
    """``status_note`` for one submission, from its rows in finished cycles and those cycles' champions."""
    finished = {c.number for c in cycle_rows.list_cycles(session) if c.finished_at is not None}
    rows = [r for r in standing_views(session, standing_rows.standings_of_submission(session, summary.id))
            if r.cycle in finished]  # fmt: skip
    champions: dict[int, StandingView | None] = {}
    for cycle in {r.cycle for r in rows}:
        table = standing_views(session, standing_rows.list_standings(session, cycle))
        champions[cycle] = next((v for v in table if v.is_champion), None)
    return status_note(summary, rows, latest_cycle(session), champions)
