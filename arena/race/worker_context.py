"""What the race's jobs need in one worker process: the store, the catalog, the model servers, the judge."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field
from pathlib import Path

from arena.race.held_results import HeldResults
from arena.race.settings import RaceSettings
from arena.runner.episode import EpisodeRunner, RunnerConfig
from arena.runner.proxy import SamplingPin, UpstreamRegistry
from arena.runner.record import EpisodeLimits
from arena.shop.index import CatalogIndex
from arena.shop.knowledge import KnowledgeCorpus
from arena.store import Store
from judge.batch import Judge
from judge.rules import probe_plan


@dataclass
class WorkerContext:
    """What the tasks need in one process: the store, the catalog, the model servers, the judge."""

    store: Store
    catalog: CatalogIndex
    registry: UpstreamRegistry
    judge: Judge
    race: RaceSettings
    limits: EpisodeLimits = field(default_factory=EpisodeLimits)
    knowledge: KnowledgeCorpus | None = None
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
                work_dir=self.work_dir, probe=probe_plan,
            )  # fmt: skip
            self._runners[key] = EpisodeRunner(self.catalog, self.registry, config, knowledge=self.knowledge)
        return self._runners[key]
