"""The episode job: claim a stored episode, run it in the sandbox, score it, store it once, queue its judgment.

The store, not the queue, is the source of truth. A job names an episode;
the task claims it in the store with a lease that names the job (renewed
while it runs), holds the finished result in memory and on local disk
(``arena.race.held_results``) until the store's idempotent ``complete``
takes it, and queues its judgment. So a job may be lost (the in-memory queue of an embedded
validator dies with its process), duplicated (a stalled job retried while the
episode was re-queued) or retried after a worker died mid-episode: the
episode still runs to completion and is stored exactly once. The validator's
dispatcher re-queues what the store says is unfinished (``arena.race.dispatch``).
A result finished while the store is briefly unavailable is never thrown
away: the store calls retry with backoff, and a result still unstored after
that is stored by the job's next try, by the worker's housekeeping, or by the
worker after a restart, from the held copy, without running the episode again.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from procrastinate import App

from arena.problems.model import Problem
from arena.race.held_results import HeldResult, HeldResults, held
from arena.race.queues import defer_judgment
from arena.race.worker_context import WorkerContext
from arena.runner.episode import AgentSource
from arena.runner.faults import (
    CANARY_NAME,
    CANARY_SOURCE,
    CanaryResult,
    canary_verdict,
    exception_fault,
    record_fault,
)
from arena.runner.proxy import SamplingPin
from arena.runner.record import EpisodeRecord, FaultKind, ValidatorFault
from arena.runner.verdict import score_episode
from arena.scoring.outcome import ScoreMode
from arena.store import Store, StoreError
from arena.store import cycles as cycle_rows
from arena.store import episodes as episode_rows
from arena.store import submissions as submission_rows
from arena.store import suites as suite_rows
from arena.store.db import refuses_content
from arena.store.episodes import EpisodeInfo
from arena.store.resilience import first_line, in_thread, is_data_error, is_transient

logger = logging.getLogger(__name__)


class ValidatorFaultRetry(RuntimeError):
    """The validator failed this episode's try (sandbox, model server, runner); the job is retried with backoff."""


@dataclass
class _EpisodeInput:
    problem: Problem
    agent: AgentSource
    model: str
    pin: SamplingPin | None
    attempt: int
    claims: int


def _claim(store: Store, episode_id: int, worker_id: str, lease_s: float, job_id: int | None) -> EpisodeInfo | None:
    with store.transaction() as session:
        return episode_rows.claim(session, episode_id, worker_id, lease_s, job_id=job_id)


def _episode_input(store: Store, info: EpisodeInfo) -> _EpisodeInput:
    with store.transaction() as session:
        problem = suite_rows.get_problem(session, info.suite_id, info.problem_id)
        submission = submission_rows.get_submission(session, info.submission_id)
        code = submission_rows.submission_code(session, info.submission_id)
        cycle = cycle_rows.get_cycle(session, info.cycle)
    if problem is None or submission is None or code is None or cycle is None:
        raise LookupError(
            f"episode {info.id}: problem {info.suite_id}/{info.problem_id}, submission {info.submission_id} "
            f"or cycle {info.cycle} is missing from the store"
        )
    pin = cycle.params.get("pin")
    return _EpisodeInput(
        problem=problem,
        agent=AgentSource(name=Path(submission.agent_name).stem or f"submission-{submission.id}", code=code),
        model=cycle.params.get("model", "heuristic-policy"),
        pin=SamplingPin.model_validate(pin) if pin else None,
        attempt=info.attempt,
        claims=info.claims,
    )


def _extend(store: Store, episode_id: int, worker_id: str, lease_s: float) -> bool:
    with store.transaction() as session:
        return episode_rows.extend_lease(session, episode_id, worker_id, lease_s)


class StoreRefusal(RuntimeError):
    """The store refused a finished result (no outage), not for the last time: the job is retried; the held
    result counts the refusal, and the bound (``RaceSettings.store_refusals``) makes the next one final."""


STORE_REFUSALS = 3  # RaceSettings.store_refusals' default, for callers without the settings (housekeeping)


class NotThisEpisode(StoreError):
    """A held result whose episode id now names another episode (the database was recreated)."""


def store_result(store: Store, result: HeldResult) -> bool:
    """Store a finished result once; True if stored now, False if the episode was already finished."""
    with store.transaction() as session:
        info = episode_rows.get_episode(session, result.episode_id)
        if info is None or info.key != result.key:
            raise NotThisEpisode(f"episode {result.episode_id} of {store.url} is not {result.key} any more")
        kind = result.fault_kind
        return episode_rows.complete(
            session, result.episode_id, result.record, result.outcome, fault_kind=kind, charged=True if kind else None
        )


def _give_back(
    store: Store, episode_id: int, reason: str, final: bool, fault_kind: str | None = None, charged: bool | None = None
) -> None:
    with store.transaction() as session:
        if final:
            episode_rows.fail(session, episode_id, reason, fault_kind=fault_kind, charged=charged)
        else:
            episode_rows.release(session, episode_id, error=reason, fault_kind=fault_kind, charged=charged)


async def _heartbeat(ctx: WorkerContext, episode_id: int) -> None:
    """Renew the lease every third of it; a lost lease means another worker took over (its result wins)."""
    while True:
        await asyncio.sleep(ctx.race.lease_s / 3)
        try:
            held = await in_thread(_extend, ctx.store, episode_id, ctx.worker_id, ctx.race.lease_s)
        except Exception:  # the store is down for longer than a retry budget: the lease may lapse, nothing else
            logger.exception("episode %d: could not renew the lease", episode_id)
            continue
        if not held:
            logger.warning("episode %d: lease lost to another worker; its result will be the stored one", episode_id)
            return


class Stored(StrEnum):
    """What became of one try to store a held result."""

    now = "stored"  # this call stored it
    already = "already stored by another worker"  # the episode was finished already
    elsewhere = "set aside: the episode is another one now"  # NotThisEpisode
    refused = "failed: the store refused the result for good"  # given up on, the episode failed


async def store_held(
    store: Store, held_results: HeldResults, result: HeldResult, *, refusals_allowed: int = STORE_REFUSALS
) -> Stored:
    """Store a held result (retried while the store is unavailable) and forget it.

    A refusal that is no outage is counted on the held result: a data error (the record's own content,
    which the runner should have made storable: ``arena.runner.storable``) is final at once and charged to
    the submission; any other refusal is the validator's, final after ``refusals_allowed``. Either way the
    episode is failed in the store, so it cannot hold its stage open, and the result is set aside on disk
    for a person to read. An outage still unresolved after the retry budget is raised: the result stays held."""
    try:
        stored = await in_thread(store_result, store, result)
    except NotThisEpisode as exc:
        held_results.set_aside(result.episode_id, str(exc))
        return Stored.elsewhere
    except Exception as exc:
        if is_transient(exc):
            raise
        return await _refused(store, held_results, result, exc, refusals_allowed)
    held_results.drop(result.episode_id)
    return Stored.now if stored else Stored.already


async def _refused(
    store: Store, held_results: HeldResults, result: HeldResult, exc: Exception, refusals_allowed: int
) -> Stored:
    episode_id = result.episode_id
    tries = result.refusals + 1
    submission_s = is_data_error(exc)
    owner = "the submission's (its record's content)" if submission_s else "the validator's"
    reason = f"the store refused the finished result ({owner}), try {tries}: {first_line(exc)}"[:1000]
    if not submission_s and tries < refusals_allowed:
        held_results.keep(result.model_copy(update={"refusals": tries}))
        logger.warning("episode %d: %s; held, tried again later", episode_id, reason)
        raise StoreRefusal(reason) from exc
    # Final. Charged when the content caused it; otherwise the validator's (the stage's halt rules decide).
    await in_thread(_give_back, store, episode_id, reason, True, FaultKind.store.value, submission_s)
    held_results.set_aside(episode_id, reason)
    logger.error("episode %d failed for good: %s", episode_id, reason, exc_info=exc)
    return Stored.refused


async def store_held_results(
    store: Store, held_results: HeldResults, *, refusals_allowed: int = STORE_REFUSALS
) -> list[int]:
    """Store every result held for ``store`` (left by a restarted worker, or by a try that ran out of
    retries); the episodes stored now. A store still away raises (after the retry budget); a result the
    store refuses is counted and, after the bound, given up on (``store_held``)."""
    stored = []
    for episode_id in held_results.waiting():
        result = held_results.get(episode_id)
        if result is None:
            continue
        try:
            outcome = await store_held(store, held_results, result, refusals_allowed=refusals_allowed)
        except StoreRefusal:
            continue  # counted on the held result; the next sweep or job tries again, up to the bound
        if outcome is Stored.now:
            stored.append(episode_id)
    if stored:
        logger.warning("stored %d held episode result(s): %s", len(stored), stored)
    return stored


async def run_episode_now(ctx: WorkerContext, app: App, episode_id: int, job_id: int | None = None) -> str:
    """The body of ``run_episode``: claim, run in the sandbox, score (strict), store once, queue the judgment."""
    kept = ctx.held.get(episode_id)
    if kept is not None:  # finished by an earlier try, not stored then: stored now (or given up), never run again
        done = await store_held(ctx.store, ctx.held, kept, refusals_allowed=ctx.race.store_refusals)
        if done is Stored.now or done is Stored.already:
            await defer_judgment(app, episode_id)
            return "stored (held result)" if done is Stored.now else done.value
        if done is Stored.refused:
            return done.value
    claimed = await in_thread(_claim, ctx.store, episode_id, ctx.worker_id, ctx.race.lease_s, job_id)
    if claimed is None:
        return "skipped: finished, or leased to a live worker"
    if claimed.claims > ctx.race.episode_attempts:
        # Handed out again and again without ever finishing: its workers keep dying (an agent that takes
        # the worker down with it). Give up rather than loop forever.
        reason = f"claimed {claimed.claims} times without finishing (workers died or lost the lease)"
        # Charged: it follows this submission from worker to worker (a fault for everyone halts the stage).
        await in_thread(_give_back, ctx.store, episode_id, reason, True, FaultKind.runner.value, True)
        return "failed"
    beat = asyncio.create_task(_heartbeat(ctx, episode_id))
    job: _EpisodeInput | None = None
    record: EpisodeRecord | None = None
    canary: CanaryResult | None = None
    standing_fault: ValidatorFault | None = None
    try:
        try:
            job = await in_thread(_episode_input, ctx.store, claimed)
            record = await ctx.runner(job.model, job.pin).run(job.agent, job.problem, job.model, attempt=job.attempt)
            fault = record_fault(record)
        except Exception as exc:
            # Not a record: the validator failed (sandbox missing, store, runtime, a bug); an agent's crash is one.
            fault = exception_fault(exc)
            logger.warning("episode %d: %s fault: %s", episode_id, fault.kind.value, fault.detail,
                           exc_info=exc if fault.kind is FaultKind.runner else None)  # fmt: skip
        if fault is not None:
            canary = await _canary(ctx, job, fault)  # still under the lease: the heartbeat runs on
        if fault is not None and canary is not None:
            if record is not None and fault.kind is FaultKind.upstream and canary.ok:
                # The model server answered the reference agent on the same problem right after: the failed
                # calls were this agent's own doing. Its record stands (a retry would be a free re-roll).
                logger.info("episode %d: upstream failures, but the canary ran clean: the record stands", episode_id)
                standing_fault = fault  # stored with the record: a fault that follows the submission, charged
            else:
                beat.cancel()
                return await _fault(ctx, claimed, fault, canary)
        assert job is not None and record is not None
        outcome = score_episode(job.problem, record, ctx.catalog, mode=ScoreMode.strict)
        kind = None if standing_fault is None else standing_fault.kind.value
        try:
            result = held(episode_id, claimed.key, record, outcome, kind)
        except (ValueError, RecursionError) as exc:  # a record JSON cannot even hold (past the storable boundary)
            if not refuses_content(exc):
                raise  # a validator bug: the job is retried, bounded by episode_attempts
            reason = f"the finished result cannot be encoded (the submission's, its record's content): {exc}"[:1000]
            await in_thread(_give_back, ctx.store, episode_id, reason, True, FaultKind.store.value, True)
            logger.error("episode %d failed for good: %s", episode_id, reason)
            return Stored.refused.value
        ctx.held.keep(result)  # before the first try: a store outage or a worker restart cannot lose it now
        # The lease is renewed until the result is in: a long outage must not hand the episode to another run.
        stored = await store_held(ctx.store, ctx.held, result, refusals_allowed=ctx.race.store_refusals)
    finally:
        beat.cancel()
    if stored is Stored.refused or stored is Stored.elsewhere:
        return stored.value
    logger.info(
        "episode %d %s (%s, success=%s)", episode_id, stored.value,
        record.termination.value, outcome.success,
        extra={"episode_id": episode_id, "submission_id": claimed.submission_id, "cycle": claimed.cycle,
               "stage": claimed.stage.value, "termination": record.termination.value, "worker": ctx.worker_id},
    )  # fmt: skip
    await defer_judgment(app, episode_id)
    return stored.value


async def _canary(ctx: WorkerContext, job: _EpisodeInput | None, fault: ValidatorFault) -> CanaryResult:
    """Run the reference canary on the same runner (sandbox, proxy, model server) and problem."""
    if fault.kind is FaultKind.store or job is None:
        return CanaryResult(ok=False, detail=f"no canary: the episode could not even be loaded ({fault.detail})")
    try:
        runner = ctx.runner(job.model, job.pin)
        record = await runner.run(AgentSource(name=CANARY_NAME, code=CANARY_SOURCE), job.problem, job.model)
    except Exception as exc:
        return CanaryResult(ok=False, detail=f"the canary could not run: {type(exc).__name__}: {exc}")
    return canary_verdict(record)


async def _fault(ctx: WorkerContext, claimed: EpisodeInfo, fault: ValidatorFault, canary: CanaryResult) -> str:
    """A validator fault: the episode is tried again; after ``episode_attempts`` tries it is given up on,
    charged to the submission only if the canary ran clean (the failure follows the submission)."""
    episode_id = claimed.id
    final = claimed.claims >= ctx.race.episode_attempts
    reason = f"{fault.kind.value} fault on try {claimed.claims}: {fault.detail} [canary: {canary.detail}]"
    await in_thread(_give_back, ctx.store, episode_id, reason, final, fault.kind.value, canary.ok)
    extra = {"episode_id": episode_id, "submission_id": claimed.submission_id, "cycle": claimed.cycle,
             "fault": fault.kind.value, "canary_ok": canary.ok}  # fmt: skip
    if final:
        logger.error("episode %d failed for good: %s", episode_id, reason, extra=extra)
        return "failed"
    raise ValidatorFaultRetry(f"episode {episode_id}: {reason}")
