"""What a running cycle's stages share: the cycle's context and the error that stops it.

The stage modules (qualifying, racing, results) take a ``CycleContext``; the driver
(``arena.race.cycle``) builds one and runs them in order, so this sits below both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from arena.chain.protocol import Chain
from arena.problems.suites import Suite
from arena.race.dispatch import Dispatcher
from arena.race.halt import CycleHalted, FaultedEpisode, UnjudgedEpisode, assess_episodes, assess_judgments
from arena.race.settings import RaceSettings
from arena.store import Store
from arena.store import episodes as episode_rows
from arena.store import judgments as judgment_rows
from arena.store.episodes import EpisodeKey
from arena.store.models_race import CycleStage, EpisodeStage, EpisodeStatus
from arena.store.resilience import in_thread


class RaceError(RuntimeError):
    """The cycle cannot go on (an empty race bank, a ledger that disagrees with the store); says why."""


@dataclass
class CycleContext:
    """One cycle being run: where things are and what the finished stages decided."""

    store: Store
    chain: Chain
    race: RaceSettings
    suite: Suite
    suite_id: str
    dispatcher: Dispatcher
    number: int
    validator_hotkey: str
    details: dict[CycleStage, dict] = field(default_factory=dict)

    def detail(self, stage: CycleStage) -> dict:
        return self.details.get(stage, {})

    async def run_episodes(
        self, stage: EpisodeStage, submissions: Sequence[int], problems: Sequence[str], attempts: int
    ) -> None:
        """Every (submission, problem, attempt) episode of ``stage`` in this cycle, run to the end.
        Scheduling is by unique key, so a resumed stage adds only the episodes it lacks."""
        keys = [
            EpisodeKey(
                cycle=self.number,
                stage=stage,
                submission_id=submission_id,
                suite_id=self.suite_id,
                problem_id=problem_id,
                attempt=attempt,
            )
            for submission_id in submissions
            for problem_id in problems
            for attempt in range(attempts)
        ]
        await self.dispatcher.run_episodes(keys, self.number, stage)
        await self.check_faults(stage, submissions)

    @property
    def seed(self) -> str:
        """The cycle's public randomness (the intake block hash): seeds every paired decision."""
        return str(self.detail(CycleStage.intake).get("draw_block_hash") or f"cycle-{self.number}")

    async def check_faults(self, stage: EpisodeStage, submissions: Sequence[int]) -> None:
        """Halt the cycle if the stage's given-up episodes show the validator failing for everyone."""
        faulted = await in_thread(_faulted, self.store, self.number, stage)
        halt = assess_episodes(stage.value, faulted, submissions, self.race.fault_halt_fraction)
        if halt is not None:
            raise CycleHalted(halt)

    async def check_judgments(self, stage: EpisodeStage, unjudged: Sequence[int], submissions: Sequence[int]) -> None:
        """Halt the cycle if the episodes left unjudged at the deadline show the judge down."""
        if not unjudged:
            return
        found = await in_thread(_unjudged, self.store, list(unjudged))
        halt = assess_judgments(f"judging: {stage.value}", found, submissions, self.race.fault_halt_fraction)
        if halt is not None:
            raise CycleHalted(halt)


def _faulted(store: Store, number: int, stage: EpisodeStage) -> list[FaultedEpisode]:
    """Episodes given up on for a fault, and those whose record stood despite one (charged)."""
    with store.transaction() as session:
        failed = [
            e
            for e in episode_rows.list_episodes(session, cycle=number, stage=stage)
            if e.status in (EpisodeStatus.failed, EpisodeStatus.done)
        ]
    return [
        FaultedEpisode(
            episode_id=e.id,
            submission_id=e.submission_id,
            fault_kind=e.fault_kind,
            charged=e.fault_charged,
            error=e.error,
        )  # fmt: skip
        for e in failed
        if e.fault_kind is not None
    ]


def _unjudged(store: Store, episode_ids: list[int]) -> list[UnjudgedEpisode]:
    found = []
    with store.transaction() as session:
        for episode_id in episode_ids:
            info = episode_rows.get_episode(session, episode_id)
            history = judgment_rows.versions(session, episode_id)
            if info is not None:
                reason = history[-1].reason if history else None
                found.append(UnjudgedEpisode(episode_id=episode_id, submission_id=info.submission_id, reason=reason))
    return found
