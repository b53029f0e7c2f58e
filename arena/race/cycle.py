"""The cycle driver: intake -> qualifying -> race -> judging -> scoring -> promotion -> weights -> done.

Every stage reads what it needs from the store and from the details the
stages before it stored, does work that is idempotent in the store
(episodes are scheduled by unique key, the draw is recorded once per cycle,
standings are upserts), then records its own detail with ``finish_stage``.
A stage whose detail is stored is never run again. So a validator killed
at any point and restarted calls ``run_cycle`` again and continues where it
was: a finished episode is kept (``complete`` is once-only), an unfinished
one is queued again, and no decision already recorded is re-taken.

The cycle's parameters (sizes, K, margins, shares, model, sampling pin) are
stored with the cycle when it starts; a resumed cycle runs with them, not
with whatever the restarted process was configured with.

A stage that finds the validator unable to measure (``arena.race.halt``)
raises ``CycleHalted``: the halt goes into the store (``cycles.halt`` and the
stage's detail), the log gets one line, nothing is promoted, the last good
weight vector is re-sent instead of a new one, the entrants wait for the next
cycle, and the cycle ends. ``CycleReport.halt`` says why.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import datetime

from pydantic import BaseModel

from arena.chain.protocol import Chain
from arena.problems.suites import Suite
from arena.race import qualifying, racing, results
from arena.race.context import CycleContext, RaceError
from arena.race.dispatch import Dispatcher
from arena.race.halt import CycleHalted, Halt
from arena.race.settings import RaceSettings
from arena.store import Store
from arena.store import cycles as cycle_rows
from arena.store import standings as standing_rows
from arena.store import submissions as submission_rows
from arena.store.cycles import CycleInfo, StageInfo
from arena.store.models import SubmissionStatus
from arena.store.models_race import CycleStage
from arena.store.resilience import in_thread
from arena.store.standings import StandingInfo, WeightsInfo

logger = logging.getLogger(__name__)

# What a cycle fixes when it starts (stored in cycles.params["race"]); the rest is how this process runs.
CYCLE_PARAMETERS = (
    "qualifying_size",
    "qualifying_attempts",
    "qualification_fraction",
    "draw_size",
    "attempts",
    "promotion_margin",
    "margin_decay_per_day",
    "margin_floor",
    "confidence",
    "champion_share",
    "taper",
    "burn_share",
    "burn_uid",
    "fault_halt_fraction",
    "embargo_days_after_submission",
    "embargo_cycles_after_champion",
    "judge_kind",
    "judge_timeout_s",
    "model",
    "pin_temperature",
    "pin_seed",
)


class CycleReport(BaseModel):
    """A finished cycle, as the commands and the demo print it."""

    cycle: int
    suite_id: str
    started_at: datetime
    finished_at: datetime | None
    draw_block: int | None
    draw_block_hash: str | None
    stages: dict[str, dict]
    standings: list[StandingInfo]
    champion_id: int | None
    weights: WeightsInfo | None
    halt: Halt | None = None  # the cycle stopped undecided: why, and the fix


StageFunction = Callable[[CycleContext], Awaitable[dict]]


def cycle_params(race: RaceSettings, suite_id: str) -> dict:
    pin = race.pin
    return {
        "suite_id": suite_id,
        "race": {name: getattr(race, name) for name in CYCLE_PARAMETERS},
        "model": race.model,
        "pin": None if pin is None else pin.model_dump(),
    }


def with_cycle_params(race: RaceSettings, params: dict) -> RaceSettings:
    """This process's settings with the stored cycle's parameters in force."""
    stored = params.get("race") or {}
    return race.model_copy(update={name: stored[name] for name in CYCLE_PARAMETERS if name in stored})


def _open_cycle(store: Store, race: RaceSettings, suite_id: str) -> CycleInfo:
    """The unfinished latest cycle, or a new one after it."""
    with store.transaction() as session:
        latest = cycle_rows.latest_cycle(session)
        if latest is not None and latest.stage is not CycleStage.done:
            return latest
        number = 1 if latest is None else latest.number + 1
        return cycle_rows.start_cycle(session, number, suite_id, cycle_params(race, suite_id))


def _finished_details(store: Store, number: int) -> dict[CycleStage, dict]:
    with store.transaction() as session:
        return {s.stage: s.detail for s in cycle_rows.stages(session, number) if s.finished_at is not None}


def _begin(store: Store, number: int, stage: CycleStage) -> StageInfo:
    with store.transaction() as session:
        return cycle_rows.begin_stage(session, number, stage)


def _finish(store: Store, number: int, stage: CycleStage, detail: dict) -> StageInfo:
    with store.transaction() as session:
        return cycle_rows.finish_stage(session, number, stage, detail)


async def run_cycle(
    store: Store,
    chain: Chain,
    race: RaceSettings,
    suite: Suite,
    suite_id: str,
    dispatcher: Dispatcher,
    validator_hotkey: str,
) -> CycleReport:
    """Run (or resume) the current cycle to its end and report it."""
    cycle = await in_thread(_open_cycle, store, race, suite_id)
    if cycle.suite_id != suite_id:
        raise RaceError(
            f"cycle {cycle.number} is unfinished and races suite {cycle.suite_id}, but this validator is "
            f"configured with suite {suite_id}; finish it with that suite first"
        )
    ctx = CycleContext(
        store=store,
        chain=chain,
        race=with_cycle_params(race, cycle.params),
        suite=suite,
        suite_id=suite_id,
        dispatcher=dispatcher,
        number=cycle.number,
        validator_hotkey=validator_hotkey,
    )
    dispatcher.race = ctx.race
    ctx.details = await in_thread(_finished_details, store, cycle.number)
    if cycle.halt is not None:  # halted before a restart: only the ending is left to do
        await _end_halted(ctx, Halt.model_validate(cycle.halt))
        return await in_thread(cycle_report, store, cycle.number)
    await dispatcher.requeue_old_judgments(cycle.number)
    order: list[tuple[CycleStage, StageFunction]] = [
        (CycleStage.intake, close_intake),
        (CycleStage.qualifying, qualifying.run),
        (CycleStage.race, racing.run_race),
        (CycleStage.judging, racing.run_judging),
        (CycleStage.scoring, results.run_scoring),
        (CycleStage.promotion, results.run_promotion),
        (CycleStage.weights, results.run_weights),
    ]
    for stage, function in order:
        if stage in ctx.details:
            continue
        await in_thread(_begin, store, cycle.number, stage)
        logger.info("cycle %d: %s", cycle.number, stage.value)
        try:
            detail = await function(ctx)
        except CycleHalted as halted:
            await in_thread(_record_halt, ctx, stage, halted.halt)
            await _end_halted(ctx, halted.halt)
            return await in_thread(cycle_report, store, cycle.number)
        await in_thread(_finish, store, cycle.number, stage, detail)
        ctx.details[stage] = detail
    if CycleStage.done not in ctx.details:
        await in_thread(_begin, store, cycle.number, CycleStage.done)
        await in_thread(_finish, store, cycle.number, CycleStage.done, {})
    return await in_thread(cycle_report, store, cycle.number)


def _record_halt(ctx: CycleContext, stage: CycleStage, halt: Halt) -> None:
    """The halt in the store (the cycle's and the stage's), and this cycle's entrants back in the queue."""
    with ctx.store.transaction() as session:
        cycle_rows.halt_cycle(session, ctx.number, halt.model_dump(mode="json"))
        cycle_rows.finish_stage(session, ctx.number, stage, {"halted": halt.model_dump(mode="json")})
        waiting = (SubmissionStatus.qualifying, SubmissionStatus.qualified, SubmissionStatus.racing)
        for submission_id in ctx.detail(CycleStage.intake).get("entrants", []):
            info = submission_rows.get_submission(session, submission_id)
            if info is not None and info.status in waiting:
                submission_rows.set_status(
                    session, submission_id, SubmissionStatus.qualifying
                )  # races in the next cycle


async def _end_halted(ctx: CycleContext, halt: Halt) -> None:
    """Re-send the last good weights (none are computed from this cycle), log one line, end the cycle."""
    if CycleStage.done in ctx.details:
        return
    resent = await in_thread(results.resend_last_weights, ctx.store, ctx.chain, ctx.validator_hotkey, ctx.number)
    logger.error(
        "cycle %d halted at %s: %s fault: %s. Nothing was promoted and no new weights were set%s. Fix: %s",
        ctx.number, halt.stage, halt.kind, halt.reason,
        f" (the last good vector was re-sent: uids {resent.uids})" if resent else "", halt.fix,
        extra={"cycle": ctx.number, "halt_kind": halt.kind, "halt_stage": halt.stage},
    )  # fmt: skip
    detail = {
        "halted": halt.model_dump(mode="json"),
        "resent_weights": resent.model_dump(mode="json") if resent else None,
    }
    await in_thread(_begin, ctx.store, ctx.number, CycleStage.done)
    await in_thread(_finish, ctx.store, ctx.number, CycleStage.done, detail)
    ctx.details[CycleStage.done] = detail


def cycle_report(store: Store, number: int) -> CycleReport:
    with store.transaction() as session:
        cycle = cycle_rows.get_cycle(session, number)
        if cycle is None:
            raise RaceError(f"cycle {number} does not exist")
        table = standing_rows.list_standings(session, number)
        sent = [w for w in standing_rows.weights_sent(session, cycle=number) if w.ok]
        return CycleReport(
            cycle=number,
            suite_id=cycle.suite_id,
            started_at=cycle.started_at,
            finished_at=cycle.finished_at,
            draw_block=cycle.draw_block,
            draw_block_hash=cycle.draw_block_hash,
            stages={s.stage.value: s.detail for s in cycle_rows.stages(session, number)},
            standings=table,
            champion_id=next((s.submission_id for s in table if s.is_champion), None),
            weights=sent[-1] if sent else None,
            halt=Halt.model_validate(cycle.halt) if cycle.halt else None,
        )


# --- intake -----------------------------------------------------------------------------------------


def _close_intake(ctx: CycleContext) -> CycleInfo:
    with ctx.store.transaction() as session:
        cycle = cycle_rows.get_cycle(session, ctx.number)
        assert cycle is not None
        if cycle.draw_block is not None:
            return cycle
    advance = getattr(ctx.chain, "advance", None)
    if callable(advance):
        # A local chain makes blocks only when asked: one new block per cycle gives each draw a fresh seed.
        advance()
    head = ctx.chain.current_block()
    block_hash = ctx.chain.block_hash(head.number)
    with ctx.store.transaction() as session:
        return cycle_rows.close_intake(session, ctx.number, head.number, block_hash)


def _entrants(ctx: CycleContext, closed_at: datetime) -> tuple[list[int], int | None]:
    with ctx.store.transaction() as session:
        waiting = submission_rows.list_submissions(
            session, statuses=[SubmissionStatus.accepted, SubmissionStatus.qualifying]
        )
        entrants = [s.id for s in waiting if s.submitted_at <= closed_at]
        for submission_id in entrants:
            submission_rows.set_status(session, submission_id, SubmissionStatus.qualifying)
        reigning = standing_rows.champion(session, up_to_cycle=ctx.number - 1)
        return entrants, None if reigning is None else reigning.submission_id


async def close_intake(ctx: CycleContext) -> dict:
    """Close intake: fix the draw's block (public randomness from after the close) and the entrants."""
    cycle = await in_thread(_close_intake, ctx)
    assert cycle.intake_closed_at is not None
    entrants, champion = await in_thread(_entrants, ctx, cycle.intake_closed_at)
    return {
        "intake_closed_at": cycle.intake_closed_at.isoformat(),
        "draw_block": cycle.draw_block,
        "draw_block_hash": cycle.draw_block_hash,
        "entrants": entrants,
        "champion": champion,
    }
