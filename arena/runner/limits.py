"""The episode's log of the bounds it ran into (``EpisodeRecord.limits_hit``).

Every part of the episode server that refuses something for a bound (the
socket server, the tool route, the inference proxy) reports it here under the
``EpisodeLimits`` field's name. One entry per limit with a count: an agent
looping on a refusal leaves one line, not a record that grows with it.
"""

from __future__ import annotations

from collections.abc import Callable

from arena.runner.record import LimitHit


class LimitLog:
    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._hits: dict[str, LimitHit] = {}

    def hit(self, limit: str, detail: str, at_s: float | None = None) -> None:
        """``at_s``: when it happened, if not now (seconds since the episode started)."""
        held = self._hits.get(limit)
        if held is None:
            at = self._clock() if at_s is None else at_s
            self._hits[limit] = LimitHit(limit=limit, first_at_s=round(at, 6), detail=detail[:500])
        else:
            held.count += 1

    def count(self, limit: str) -> int:
        held = self._hits.get(limit)
        return 0 if held is None else held.count

    def hits(self) -> list[LimitHit]:
        return [hit.model_copy() for hit in self._hits.values()]
