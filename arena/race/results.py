"""The cycle's last stages: scoring, promotion and weights, each a function of stored data.

- scoring: race scores by ``arena.race.stage_scores``'s rule, ranked by
  ``arena.race.promotion.rank_contenders``, stored as standings;
- promotion: ``decide_promotion`` with the champion's reign in whole days
  (from the intake close of the cycle that crowned it to this one's);
- weights: ``compute_weights`` of the standings and the chain's uids, sent
  with ``chain.set_weights`` and logged whatever the chain answered. A cycle
  that already logged accepted weights does not send them again. A cycle that
  raced nobody (no entrants, or none qualified) decides nothing: the last good
  vector is re-sent (``resend_last_weights``), so the runners-up of the last
  decided cycle keep their weight. The last good vector is the latest one the
  chain accepted: a halted or unraced cycle only ever re-sends it.
"""

from __future__ import annotations

from arena.chain.protocol import Chain
from arena.race import stage_scores
from arena.race.context import CycleContext
from arena.race.embargo import EmbargoRule, day_rule_end
from arena.race.promotion import Contender, decide_promotion, rank_contenders
from arena.race.weights import Finisher, compute_weights
from arena.store import Store
from arena.store import cycles as cycle_rows
from arena.store import judgments as judgment_rows
from arena.store import standings as standing_rows
from arena.store import submissions as submission_rows
from arena.store.models import SubmissionStatus
from arena.store.models_race import CycleStage, EpisodeStage
from arena.store.resilience import in_thread
from arena.store.standings import StandingIn, WeightsInfo


def _race_outcomes(ctx: CycleContext) -> list[judgment_rows.EpisodeOutcome]:
    with ctx.store.transaction() as session:
        return judgment_rows.stage_outcomes(session, ctx.number, EpisodeStage.race)


def _contenders(
    ctx: CycleContext, scores: dict[int, stage_scores.SubmissionScore], outcomes: list[judgment_rows.EpisodeOutcome]
) -> list[Contender]:
    with ctx.store.transaction() as session:
        found = []
        for submission_id, score in scores.items():
            info = submission_rows.get_submission(session, submission_id)
            assert info is not None
            found.append(
                Contender(
                    submission_id=submission_id,
                    race_score=score.score,
                    commitment_block=info.commitment_block,
                    submitted_at=info.submitted_at,
                    values=stage_scores.problem_values(outcomes, submission_id),
                )
            )
        return found


def _store_ranking(ctx: CycleContext, ranked: list[Contender], scores: dict[int, stage_scores.SubmissionScore]) -> None:
    with ctx.store.transaction() as session:
        for rank, contender in enumerate(ranked, start=1):
            score = scores[contender.submission_id]
            standing_rows.record_standing(
                session,
                StandingIn(
                    cycle=ctx.number,
                    submission_id=contender.submission_id,
                    race_score=score.score,
                    success_rate=score.success_rate,
                    mean_coefficient=score.mean_coefficient,
                    rank=rank,
                ),
            )


async def run_scoring(ctx: CycleContext) -> dict:
    race = ctx.detail(CycleStage.race)
    if race.get("skipped"):
        return {"skipped": race["skipped"]}
    outcomes = await in_thread(_race_outcomes, ctx)
    scores, exclusions = stage_scores.score_outcomes(outcomes, race["racers"])
    ranked = rank_contenders(await in_thread(_contenders, ctx, scores, outcomes))
    await in_thread(_store_ranking, ctx, ranked, scores)
    return {
        "scores": {str(k): v.model_dump() for k, v in scores.items()},
        "ranking": [c.submission_id for c in ranked],
        "excluded": [e.model_dump() for e in exclusions],
        "exclusion_rules": stage_scores.RULE_TEXT if exclusions else {},
    }


def _reign_days(ctx: CycleContext, champion: int) -> int:
    """Whole days from the intake close of the cycle that crowned ``champion`` to this cycle's."""
    with ctx.store.transaction() as session:
        crowned = standing_rows.first_crowned(session, champion)
        if crowned is None:
            return 0
        closes = cycle_rows.intake_closes(session, [crowned, ctx.number])
    start, now = closes.get(crowned), closes.get(ctx.number)
    if start is None or now is None:
        return 0
    return max(0, (now - start).days)


def _apply_promotion(ctx: CycleContext, champion_id: int | None, previous: int | None, racers: list[int]) -> None:
    rule = EmbargoRule(
        cycles_after_champion=ctx.race.embargo_cycles_after_champion,
        days_after_submission=ctx.race.embargo_days_after_submission,
    )
    with ctx.store.transaction() as session:
        if champion_id is not None:
            ranked = any(
                s.rank is not None
                for s in standing_rows.list_standings(session, ctx.number)
                if s.submission_id == champion_id
            )
            # Reigning unraced (no challenger qualified), the champion is this cycle's only finisher.
            extra = {} if ranked else {"rank": 1}
            standing_rows.record_standing(
                session, StandingIn(cycle=ctx.number, submission_id=champion_id, is_champion=True, **extra)
            )
            submission_rows.set_status(session, champion_id, SubmissionStatus.champion)
        for submission_id in sorted({*racers, *([previous] if previous is not None else [])}):
            if submission_id == champion_id:
                continue
            info = submission_rows.get_submission(session, submission_id)
            assert info is not None
            reigned = submission_id == previous
            # A former champion's embargo runs in cycles (the API's rule); everyone else's by the day rule.
            until = None if reigned else day_rule_end(info.submitted_at, rule, info.embargo_until)
            submission_rows.set_status(session, submission_id, SubmissionStatus.retired, embargo_until=until)


async def run_promotion(ctx: CycleContext) -> dict:
    champion: int | None = ctx.detail(CycleStage.intake).get("champion")
    race = ctx.detail(CycleStage.race)
    scoring_detail = ctx.detail(CycleStage.scoring)
    if race.get("skipped"):
        if champion is not None:
            await in_thread(_apply_promotion, ctx, champion, champion, [])
        return {"champion_id": champion, "previous_champion_id": champion, "promoted": False,
                "reason": race["skipped"]}  # fmt: skip
    scores = {int(k): stage_scores.SubmissionScore.model_validate(v) for k, v in scoring_detail["scores"].items()}
    outcomes = await in_thread(_race_outcomes, ctx)
    ranked = rank_contenders(await in_thread(_contenders, ctx, scores, outcomes))
    reign_days = await in_thread(_reign_days, ctx, champion) if champion is not None else 0
    decision = decide_promotion(
        ranked,
        champion,
        reign_days=reign_days,
        promotion_margin=ctx.race.promotion_margin,
        decay_per_day=ctx.race.margin_decay_per_day,
        floor=ctx.race.margin_floor,
        seed=ctx.seed,
        confidence=ctx.race.confidence,
    )
    await in_thread(_apply_promotion, ctx, decision.champion_id, champion, race["racers"])
    return decision.model_dump(mode="json")


def _finishers(ctx: CycleContext) -> list[Finisher]:
    with ctx.store.transaction() as session:
        finishers = []
        for standing in standing_rows.list_standings(session, ctx.number):
            if standing.rank is None:
                continue  # qualified out: not a finisher of this cycle
            info = submission_rows.get_submission(session, standing.submission_id)
            assert info is not None
            finishers.append(
                Finisher(
                    submission_id=standing.submission_id,
                    hotkey=info.hotkey,
                    rank=standing.rank,
                    race_score=standing.race_score or 0.0,
                    is_champion=standing.is_champion,
                )
            )
        return finishers


def _accepted_weights(ctx: CycleContext) -> WeightsInfo | None:
    with ctx.store.transaction() as session:
        sent = [w for w in standing_rows.weights_sent(session, cycle=ctx.number) if w.ok]
    return sent[-1] if sent else None


def _send(ctx: CycleContext, uids: list[int], weights: list[float]) -> WeightsInfo:
    return send_weights(ctx.store, ctx.chain, ctx.validator_hotkey, ctx.number, uids, weights)


def send_weights(
    store: Store, chain: Chain, hotkey: str, cycle: int, uids: list[int], weights: list[float], note: str = ""
) -> WeightsInfo:
    """``chain.set_weights`` and its log row (under ``cycle``), whatever the chain answered."""
    receipt = chain.set_weights(hotkey, uids, weights)
    message = f"{note}; {receipt.message}" if note and receipt.message else (note or receipt.message)
    with store.transaction() as session:
        return standing_rows.record_weights(
            session, cycle, uids, weights, ok=receipt.ok, block=receipt.block, message=message
        )


def last_good_weights(store: Store) -> WeightsInfo | None:
    """The latest vector the chain accepted: the last decided one (halted and unraced cycles only re-send it)."""
    with store.transaction() as session:
        accepted = [w for w in standing_rows.weights_sent(session) if w.ok]
    return accepted[-1] if accepted else None


def resend_last_weights(store: Store, chain: Chain, hotkey: str, cycle: int | None = None) -> WeightsInfo | None:
    """Send the last good vector again (logged under ``cycle``, default the latest); None if there is none."""
    last = last_good_weights(store)
    if last is None:
        return None
    if cycle is None:
        with store.transaction() as session:
            latest = cycle_rows.latest_cycle(session)
        cycle = latest.number if latest is not None else last.cycle
    return send_weights(store, chain, hotkey, cycle, last.uids, last.weights, note=f"re-sent from cycle {last.cycle}")


async def run_weights(ctx: CycleContext) -> dict:
    already = await in_thread(_accepted_weights, ctx)
    if already is not None:
        return {"uids": already.uids, "weights": already.weights, "ok": True, "block": already.block,
                "note": "sent before a restart"}  # fmt: skip
    skipped = ctx.detail(CycleStage.race).get("skipped")
    if skipped:
        resent = await in_thread(resend_last_weights, ctx.store, ctx.chain, ctx.validator_hotkey, ctx.number)
        if resent is not None:
            return {"uids": resent.uids, "weights": resent.weights, "ok": resent.ok, "block": resent.block,
                    "message": resent.message, "decided": False,
                    "note": f"{skipped}: the last decided weights stand (re-sent)"}  # fmt: skip
    finishers = await in_thread(_finishers, ctx)
    neurons = await in_thread(ctx.chain.neurons)
    vector = compute_weights(
        finishers,
        {n.hotkey: n.uid for n in neurons},
        champion_share=ctx.race.champion_share,
        taper=ctx.race.taper,
        burn_share=ctx.race.burn_share,
        burn_uid=ctx.race.burn_uid,
    )
    if not vector.uids:
        return {"uids": [], "weights": [], "ok": False, "dropped": vector.dropped,
                "note": "no finisher and no burn share: nothing to set"}  # fmt: skip
    sent = await in_thread(_send, ctx, vector.uids, vector.weights)
    return {
        "uids": sent.uids,
        "weights": sent.weights,
        "ok": sent.ok,
        "block": sent.block,
        "message": sent.message,
        "dropped": vector.dropped,
        "decided": True,
        "finishers": [f.model_dump() for f in finishers],
    }
