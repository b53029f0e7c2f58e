"""Finished episode results the store could not take yet, held in memory and on local disk.

An episode that finished is worth its sandbox time: while the store is briefly
unavailable (read-only, restarting, unreachable) its result is kept, not
thrown away and run again. Before the first try to store it, the worker
writes the result to ``<held_results_dir>/<store>/episode-<id>.json``
(atomically: a temporary file renamed into place) and keeps it in memory too;
once stored, the file goes. A worker that restarts, or the same worker's
housekeeping, stores what it finds there (``WorkerContext.store_held``).

One folder per store (a hash of its URL without the password): a host may run
workers for two validators, and a result belongs to the database that
scheduled it. Each file also names the episode's key, checked before storing,
so a recreated database never receives a result meant for another episode.
"""

from __future__ import annotations

import hashlib
import logging
import os
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ValidationError

from arena.store.episodes import EpisodeKey

logger = logging.getLogger(__name__)


class HeldResult(BaseModel):
    """One finished episode's record and outcome, waiting to be stored."""

    episode_id: int
    key: EpisodeKey
    record: dict
    outcome: dict
    held_at: datetime
    fault_kind: str | None = None  # a validator fault that stands with the record, charged (arena.race.tasks)
    # Non-transient refusals by the store so far (arena.race.episode_jobs gives up after a bounded number).
    refusals: int = 0


def default_root() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "trajectory-arena" / "held-results"


class HeldResults:
    """The held results of one store, on this host."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._memory: dict[int, HeldResult] = {}

    @classmethod
    def for_store(cls, root: Path | None, store_url: str) -> HeldResults:
        """``store_url`` as ``Store.url`` gives it (password masked)."""
        return cls((root or default_root()) / hashlib.sha256(store_url.encode()).hexdigest()[:16])

    def _path(self, episode_id: int) -> Path:
        return self.folder / f"episode-{episode_id}.json"

    def keep(self, result: HeldResult) -> None:
        """Hold ``result`` in memory and on disk (a failing disk is logged: memory still holds it)."""
        self._memory[result.episode_id] = result
        target = self._path(result.episode_id)
        staging = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        try:
            with staging.open("wb") as out:
                out.write(result.model_dump_json().encode())
                out.flush()
                os.fsync(out.fileno())
            os.replace(staging, target)
        except (OSError, ValueError) as exc:  # ValueError: a value JSON cannot write (a lone surrogate)
            logger.error("episode %d: could not hold its result on disk (%s); held in memory", result.episode_id, exc)
            staging.unlink(missing_ok=True)

    def get(self, episode_id: int) -> HeldResult | None:
        if episode_id in self._memory:
            return self._memory[episode_id]
        try:
            return HeldResult.model_validate_json(self._path(episode_id).read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, ValidationError) as exc:
            self._set_aside(episode_id, f"unreadable: {exc}")
            return None

    def drop(self, episode_id: int) -> None:
        """The result is in the store (or never can be): forget it."""
        self._memory.pop(episode_id, None)
        self._path(episode_id).unlink(missing_ok=True)

    def set_aside(self, episode_id: int, reason: str) -> None:
        """A result that can never be stored here (its episode is another one now): kept for a person to read."""
        self._memory.pop(episode_id, None)
        self._set_aside(episode_id, reason)

    def _set_aside(self, episode_id: int, reason: str) -> None:
        path = self._path(episode_id)
        logger.error("episode %d: held result set aside as %s.rejected: %s", episode_id, path.name, reason)
        try:
            os.replace(path, path.with_name(f"{path.name}.rejected"))
        except FileNotFoundError:
            pass

    def waiting(self) -> list[int]:
        """The episodes whose results are held, in memory or on disk."""
        on_disk = set()
        for path in self.folder.glob("episode-*.json"):
            try:
                on_disk.add(int(path.stem.removeprefix("episode-")))
            except ValueError:
                continue
        return sorted(on_disk | set(self._memory))


def held(
    episode_id: int, key: EpisodeKey, record: BaseModel, outcome: BaseModel, fault_kind: str | None = None
) -> HeldResult:
    return HeldResult(
        episode_id=episode_id,
        key=key,
        record=record.model_dump(mode="json"),
        outcome=outcome.model_dump(mode="json"),
        held_at=datetime.now(UTC),
        fault_kind=fault_kind,
    )
