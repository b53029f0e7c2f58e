"""The race and its judging: a fresh hidden draw, K attempts per racer and problem, then the judgments.

The draw is seeded by the block hash fixed when intake closed, so every
validator with the same suite and ledger races the same problems. It is
recorded in the suite's ledger (``record_draw``) once per cycle; a resumed
cycle recomputes it (``draw`` ignores the cycle's own reveal) and checks it
against the recorded reveal. The store's copy of the ledger is synced after
every append (``import_suite``). Once every race episode is done the
revealed clusters are retired to the train pool, and the judging stage waits
for the judgments until ``judge_timeout_s`` after it began (a stored time,
so a restart does not extend it).
"""

from __future__ import annotations

from datetime import timedelta

from arena.problems.draw import draw, partition_at, record_draw
from arena.problems.ledger import EventKind
from arena.problems.partitions import PartitionName
from arena.race.context import CycleContext, RaceError
from arena.store import cycles as cycle_rows
from arena.store import submissions as submission_rows
from arena.store import suites as suite_rows
from arena.store.models import SubmissionStatus
from arena.store.models_race import CycleStage, EpisodeStage
from arena.store.resilience import in_thread


def _sync_ledger(ctx: CycleContext) -> None:
    with ctx.store.transaction() as session:
        suite_rows.import_suite(session, ctx.suite.path)


def _draw(ctx: CycleContext, seed: str) -> tuple[list[str], list[str]]:
    """(problem ids, their cluster ids) of this cycle's draw: recorded now, or recomputed and checked."""
    suite = ctx.suite
    events = suite.read_ledger().events
    recorded = [e for e in events if e.event is EventKind.revealed and e.cycle == ctx.number]
    cluster_of = {p.id: p.cluster_id or "" for p in suite.problems(PartitionName.race_bank)}
    if recorded:
        problem_ids = draw(suite, ctx.number, seed, len(recorded[0].cluster_ids))
        if sorted(cluster_of[p] for p in problem_ids) != sorted(recorded[0].cluster_ids):
            raise RaceError(
                f"{suite.ledger_path}: the reveal recorded for cycle {ctx.number} (seq {recorded[0].seq}) does not "
                f"match the draw recomputed from its seed; the ledger or the suite changed under the race"
            )
    else:
        available = len(partition_at(suite).race_bank)
        if available == 0:
            raise RaceError(
                f"suite {ctx.suite_id}: the race bank is exhausted (every cluster was revealed); "
                f"build and import a new suite version"
            )
        problem_ids = record_draw(suite, ctx.number, seed, min(ctx.race.draw_size, available))
    _sync_ledger(ctx)
    return problem_ids, [cluster_of[p] for p in problem_ids]


def _mark_racing(ctx: CycleContext, challengers: list[int]) -> None:
    with ctx.store.transaction() as session:
        for submission_id in challengers:
            submission_rows.set_status(session, submission_id, SubmissionStatus.racing)


async def run_race(ctx: CycleContext) -> dict:
    champion: int | None = ctx.detail(CycleStage.intake).get("champion")
    challengers: list[int] = ctx.detail(CycleStage.qualifying).get("qualified", [])
    racers = sorted(set(challengers) | ({champion} if champion is not None else set()))
    if not challengers:
        # Racing the champion alone would spend bank clusters to learn nothing.
        return {"racers": racers, "skipped": "no challenger qualified; the champion keeps its title unraced"}
    seed = ctx.detail(CycleStage.intake)["draw_block_hash"]
    problem_ids, clusters = await in_thread(_draw, ctx, seed)
    await in_thread(_mark_racing, ctx, challengers)
    await ctx.run_episodes(EpisodeStage.race, racers, problem_ids, ctx.race.attempts)
    return {
        "racers": racers,
        "draw_seed": seed,
        "draw_block": ctx.detail(CycleStage.intake).get("draw_block"),
        "problems": problem_ids,
        "clusters": clusters,
        "attempts": ctx.race.attempts,
    }


def _retire(ctx: CycleContext) -> list[str]:
    """Retire every cluster revealed up to this cycle and not retired yet; the clusters this cycle retired."""
    from arena.problems.draw import retire

    suite = ctx.suite
    state = suite.replay_events(suite.read_ledger().events)
    waiting = sorted(c for c, at in state.revealed.items() if at <= ctx.number and c not in state.retired)
    if waiting:
        retire(suite, ctx.number)
    _sync_ledger(ctx)
    events = suite.read_ledger().events
    return sorted(c for e in events if e.event is EventKind.retired and e.cycle == ctx.number for c in e.cluster_ids)


def _judging_started(ctx: CycleContext):
    with ctx.store.transaction() as session:
        found = [s for s in cycle_rows.stages(session, ctx.number) if s.stage is CycleStage.judging]
    return found[0].started_at


async def run_judging(ctx: CycleContext) -> dict:
    race = ctx.detail(CycleStage.race)
    if race.get("skipped"):
        return {"skipped": race["skipped"]}
    retired = await in_thread(_retire, ctx)
    started = await in_thread(_judging_started, ctx)
    deadline = (started + timedelta(seconds=ctx.race.judge_timeout_s)).timestamp()
    unjudged = await ctx.dispatcher.wait_for_judgments(ctx.number, EpisodeStage.race, deadline)
    await ctx.check_judgments(EpisodeStage.race, unjudged, race["racers"])
    return {
        "retired_clusters": retired,
        "judge_timeout_s": ctx.race.judge_timeout_s,
        "unjudged_at_timeout": unjudged,
    }
