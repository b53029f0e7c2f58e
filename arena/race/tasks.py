"""Episodes and judgments as procrastinate tasks: ``run_episode(episode_id)`` and ``judge_episode(episode_id)``.

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

Connectors: ``PsycopgConnector`` for PostgreSQL (any number of ``arena worker``
processes on any machines share the queue; its schema is the store's
migration 0002), ``InMemoryConnector`` for SQLite (the embedded validator runs
the same tasks in-process).
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from dataclasses import dataclass, field
from pathlib import Path

from procrastinate import App, BaseConnector, JobContext, PsycopgConnector, RetryStrategy
from procrastinate import exceptions as procrastinate_exceptions
from procrastinate.testing import InMemoryConnector
from sqlalchemy.engine import make_url

from arena.problems.model import Problem
from arena.race.halt import JUDGE_OUTAGE
from arena.race.held_results import HeldResult, HeldResults, held
from arena.race.resilience import in_thread
from arena.race.settings import RaceSettings
from arena.runner.episode import AgentSource, EpisodeRunner, RunnerConfig
from arena.runner.faults import (
    CANARY_NAME,
    CANARY_SOURCE,
    CanaryResult,
    canary_verdict,
    exception_fault,
    record_fault,
)
from arena.runner.proxy import SamplingPin, UpstreamRegistry
from arena.runner.record import (
    EpisodeLimits,
    EpisodeRecord,
    FaultKind,
    LLMCallRecord,
    ToolCallRecord,
    ValidatorFault,
)
from arena.scoring.outcome import ScoreMode, score_problem
from arena.shop.index import CatalogIndex
from arena.shop.knowledge import KnowledgeBackend
from arena.store import Store, StoreError, resolve_url
from arena.store import repositories as repo
from arena.store.models_race import EpisodeStatus, JudgmentStatus
from judge.batch import Judge
from judge.rubric import RUBRIC_VERSION
from judge.verdict import JudgmentPending, ReasoningJudgment

logger = logging.getLogger(__name__)

EPISODES_QUEUE = "episodes"
JUDGMENTS_QUEUE = "judgments"
QUEUES = (EPISODES_QUEUE, JUDGMENTS_QUEUE)
RETRY_BACKOFF_BASE_S = 2  # procrastinate's exponential wait: 2, 4, 8, ... seconds between tries


class JudgmentStillPending(RuntimeError):
    """The judge could not judge the episode this time; the job is retried with backoff."""


class ValidatorFaultRetry(RuntimeError):
    """The validator failed this episode's try (sandbox, model server, runner); the job is retried with backoff."""


@dataclass
class WorkerContext:
    """What the tasks need in one process: the store, the catalog, the model servers, the judge."""

    store: Store
    catalog: CatalogIndex
    registry: UpstreamRegistry
    judge: Judge
    race: RaceSettings
    limits: EpisodeLimits = field(default_factory=EpisodeLimits)
    knowledge: KnowledgeBackend | None = None
    runtime_dir: Path | None = None
    work_dir: Path | None = None  # root of the episode folders (arena.runner.workdirs)
    worker_id: str = field(default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}")
    _runners: dict[tuple, EpisodeRunner] = field(default_factory=dict)
    _held: HeldResults | None = None

    @property
    def held(self) -> HeldResults:
        """Finished results not yet in the store (made on first use: a worker that never finishes an
        episode never touches the folder)."""
        if self._held is None:
            self._held = HeldResults.for_store(self.race.held_results_dir, self.store.url)
        return self._held

    def runner(self, model: str, pin: SamplingPin | None) -> EpisodeRunner:
        """One runner per (model, pin): the cycle's parameters, not this process's, decide both."""
        key = (model, None if pin is None else (pin.temperature, pin.seed))
        if key not in self._runners:
            config = RunnerConfig(
                limits=self.limits, sandbox=self.race.sandbox, allowlist=[model], pin=pin, runtime_dir=self.runtime_dir,
                work_dir=self.work_dir,
            )  # fmt: skip
            self._runners[key] = EpisodeRunner(self.catalog, self.registry, config, knowledge=self.knowledge)
        return self._runners[key]


class QueueConnector(PsycopgConnector):
    """procrastinate's PostgreSQL connector, keeping its conninfo for the workers' job-notification listener."""

    def __init__(self, conninfo: str) -> None:
        # procrastinate's pool checks each connection as it is handed out, so a database restart costs a
        # reconnect, not a job.
        super().__init__(conninfo=conninfo, min_size=1, max_size=4)
        self.conninfo = conninfo


def connector_for(database_url: str | None) -> BaseConnector:
    """PostgreSQL: the shared queue in the store's database; SQLite: an in-process queue."""
    url = resolve_url(database_url)
    if url.get_backend_name() != "postgresql":
        return InMemoryConnector()
    return QueueConnector(make_url(url).set(drivername="postgresql").render_as_string(hide_password=False))


@dataclass
class _EpisodeInput:
    problem: Problem
    agent: AgentSource
    model: str
    pin: SamplingPin | None
    attempt: int
    claims: int


def _claim(
    store: Store, episode_id: int, worker_id: str, lease_s: float, job_id: int | None
) -> repo.EpisodeInfo | None:
    with store.transaction() as session:
        return repo.claim(session, episode_id, worker_id, lease_s, job_id=job_id)


def _episode_input(store: Store, info: repo.EpisodeInfo) -> _EpisodeInput:
    with store.transaction() as session:
        problem = repo.get_problem(session, info.suite_id, info.problem_id)
        submission = repo.get_submission(session, info.submission_id)
        code = repo.submission_code(session, info.submission_id)
        cycle = repo.get_cycle(session, info.cycle)
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
        return repo.extend_lease(session, episode_id, worker_id, lease_s)


class NotThisEpisode(StoreError):
    """A held result whose episode id now names another episode (the database was recreated)."""


def store_result(store: Store, result: HeldResult) -> bool:
    """Store a finished result once; True if stored now, False if the episode was already finished."""
    with store.transaction() as session:
        info = repo.get_episode(session, result.episode_id)
        if info is None or info.key != result.key:
            raise NotThisEpisode(f"episode {result.episode_id} of {store.url} is not {result.key} any more")
        kind = result.fault_kind
        return repo.complete(
            session, result.episode_id, result.record, result.outcome, fault_kind=kind, charged=True if kind else None
        )


def _give_back(
    store: Store, episode_id: int, reason: str, final: bool, fault_kind: str | None = None, charged: bool | None = None
) -> None:
    with store.transaction() as session:
        if final:
            repo.fail(session, episode_id, reason, fault_kind=fault_kind, charged=charged)
        else:
            repo.release(session, episode_id, error=reason, fault_kind=fault_kind, charged=charged)


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


async def store_held(store: Store, held_results: HeldResults, result: HeldResult) -> bool | None:
    """Store a held result (retried while the store is unavailable) and forget it: True if this call stored
    it, False if the episode was finished already, None if the episode is another one now (set aside)."""
    try:
        stored = await in_thread(store_result, store, result)
    except NotThisEpisode as exc:
        held_results.set_aside(result.episode_id, str(exc))
        return None
    held_results.drop(result.episode_id)
    return stored


async def store_held_results(store: Store, held_results: HeldResults) -> list[int]:
    """Store every result held for ``store`` (left by a restarted worker, or by a try that ran out of
    retries); the episodes stored now. A store still away raises (after the retry budget)."""
    stored = []
    for episode_id in held_results.waiting():
        result = held_results.get(episode_id)
        if result is not None and await store_held(store, held_results, result):
            stored.append(episode_id)
    if stored:
        logger.warning("stored %d held episode result(s): %s", len(stored), stored)
    return stored


async def run_episode_now(ctx: WorkerContext, app: App, episode_id: int, job_id: int | None = None) -> str:
    """The body of ``run_episode``: claim, run in the sandbox, score (strict), store once, queue the judgment."""
    kept = ctx.held.get(episode_id)
    stored_kept = None if kept is None else await store_held(ctx.store, ctx.held, kept)
    if stored_kept is not None:  # finished by an earlier try, not stored then: stored now, never run again
        await defer_judgment(app, episode_id)
        return "stored (held result)" if stored_kept else "already stored by another worker"
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
        outcome = score_problem(job.problem, record.final_recommendation, ctx.catalog, mode=ScoreMode.strict)
        record.outcome = outcome.model_dump(mode="json")
        kind = None if standing_fault is None else standing_fault.kind.value
        result = held(episode_id, claimed.key, record, outcome, kind)
        ctx.held.keep(result)  # before the first try: a store outage or a worker restart cannot lose it now
        # The lease is renewed until the result is in: a long outage must not hand the episode to another run.
        stored = await in_thread(store_result, ctx.store, result)
    finally:
        beat.cancel()
    ctx.held.drop(episode_id)
    logger.info(
        "episode %d %s (%s, success=%s)", episode_id, "stored" if stored else "already stored",
        record.termination.value, outcome.success,
        extra={"episode_id": episode_id, "submission_id": claimed.submission_id, "cycle": claimed.cycle,
               "stage": claimed.stage.value, "termination": record.termination.value, "worker": ctx.worker_id},
    )  # fmt: skip
    await defer_judgment(app, episode_id)
    return "stored" if stored else "already stored by another worker"


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


async def _fault(ctx: WorkerContext, claimed: repo.EpisodeInfo, fault: ValidatorFault, canary: CanaryResult) -> str:
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


def judgment_target(store: Store, episode_id: int, judge: str) -> tuple[repo.EpisodeInfo, int] | None:
    """The done episode and the pending judgment version to fill (created if none); None: nothing to judge."""
    with store.transaction() as session:
        info = repo.get_episode(session, episode_id, with_record=True)
        if info is None or info.status is not EpisodeStatus.done:
            return None
        if repo.latest(session, episode_id) is not None:
            return None  # judged: a re-judgment is a new version made on purpose, not by the race
        history = repo.versions(session, episode_id)
        if history and history[-1].status is JudgmentStatus.pending:
            return info, history[-1].id
        return info, repo.add_version(session, episode_id, judge, RUBRIC_VERSION).id


def record_judgment(store: Store, judgment_id: int, outcome: ReasoningJudgment | JudgmentPending) -> None:
    with store.transaction() as session:
        if isinstance(outcome, ReasoningJudgment):
            result = repo.JudgmentResult(
                level=outcome.level,
                coefficient=outcome.coefficient,
                explanation=outcome.explanation,
                detail=outcome.model_dump(mode="json"),
            )
            repo.record_result(session, judgment_id, result)
        else:
            repo.record_failure(session, judgment_id, outcome.reason)


async def judge_episode_now(ctx: WorkerContext, episode_id: int) -> str:
    """The body of ``judge_episode``. A failure is recorded on the pending version and raised (retried):
    never a silent coefficient."""
    target = await in_thread(judgment_target, ctx.store, episode_id, ctx.judge.name)
    if target is None:
        return "nothing to judge"
    info, judgment_id = target
    record = EpisodeRecord.model_validate(info.record)
    try:
        judge_now = getattr(ctx.judge, "judge_now", None)
        # The rules judge is CPU work: in a thread, so the episodes' tool servers on this loop keep answering.
        outcome = await (asyncio.to_thread(judge_now, record) if judge_now else ctx.judge.judge(record))
    except Exception as exc:  # a judge bug is a failed attempt like any other
        outcome = JudgmentPending(
            episode_id=record.episode_id,
            reason=f"the judge crashed: {type(exc).__name__}: {exc}",
            attempts=0,
            judge=ctx.judge.name,
            rubric_version=RUBRIC_VERSION,
        )
    if isinstance(outcome, JudgmentPending) and not await _judge_canary_ok(ctx, record):
        # The judge cannot judge a plain reference trajectory either: it is down, not this episode's doing.
        outcome = outcome.model_copy(update={"reason": f"{JUDGE_OUTAGE}: {outcome.reason}"})
    await in_thread(record_judgment, ctx.store, judgment_id, outcome)
    if isinstance(outcome, JudgmentPending):
        raise JudgmentStillPending(f"episode {episode_id}: judgment pending: {outcome.reason}")
    return f"judged level {outcome.level}"


def judge_canary_record(record: EpisodeRecord) -> EpisodeRecord:
    """A plain reference trajectory on the same problem: one tool call, one model answer, terminated."""
    return record.model_copy(
        update={
            "episode_id": f"{record.episode_id}-judge-canary",
            "tool_calls": [
                ToolCallRecord(
                    index=0, name="terminate", arguments={"status": "failure"}, ok=True, at_s=0.1, duration_ms=1.0
                )
            ],  # fmt: skip
            "llm_calls": [
                LLMCallRecord(
                    index=0,
                    model=record.model,
                    request={"messages": [{"role": "user", "content": "hello"}]},
                    response={"content": "I could not find a product that meets every constraint."},
                    at_s=0.0,
                    latency_ms=1.0,
                )  # fmt: skip
            ],
            "final_recommendation": None,
            "terminate_status": "failure",
        }
    )


async def _judge_canary_ok(ctx: WorkerContext, record: EpisodeRecord) -> bool:
    try:
        outcome = await ctx.judge.judge(judge_canary_record(record))
    except Exception:
        return False
    return not isinstance(outcome, JudgmentPending)


def create_task_app(connector: BaseConnector, context: WorkerContext) -> App:
    """A procrastinate App with the race's two tasks bound to ``context``."""
    app = App(connector=connector)
    race = context.race
    episode_retry = RetryStrategy(max_attempts=race.episode_attempts, exponential_wait=RETRY_BACKOFF_BASE_S)
    judge_retry = RetryStrategy(max_attempts=race.judge_attempts, exponential_wait=RETRY_BACKOFF_BASE_S)

    @app.task(name="run_episode", queue=EPISODES_QUEUE, retry=episode_retry, pass_context=True)
    async def run_episode(job: JobContext, episode_id: int) -> str:
        return await run_episode_now(context, app, episode_id, job.job.id)

    @app.task(name="judge_episode", queue=JUDGMENTS_QUEUE, retry=judge_retry)
    async def judge_episode(episode_id: int) -> str:
        return await judge_episode_now(context, episode_id)

    return app


async def _defer(app: App, task_name: str, lock: str, episode_id: int, *, exclusive: bool = False) -> bool:
    """Queue one job unless the same one is already waiting (its queueing lock); True if queued.
    ``exclusive``: jobs for the same episode also never run at the same time (procrastinate's lock)."""
    deferrer = app.tasks[task_name].configure(queueing_lock=lock, lock=lock if exclusive else None)
    try:
        await deferrer.defer_async(episode_id=episode_id)
    except procrastinate_exceptions.AlreadyEnqueued:
        return False
    return True


async def defer_episode(app: App, episode_id: int) -> bool:
    return await _defer(app, "run_episode", f"episode-{episode_id}", episode_id)


async def defer_judgment(app: App, episode_id: int) -> bool:
    # Exclusive: two judge jobs of one episode running together would each add a judgment version.
    return await _defer(app, "judge_episode", f"judgment-{episode_id}", episode_id, exclusive=True)
