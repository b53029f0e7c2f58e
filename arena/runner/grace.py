"""``terminate`` ends the episode: the agent's grace after it, then its sandbox is stopped.

The episode server tells the runner when the agent's terminate call went through; from then on
its tool and model calls are refused (arena/runner/server.py), and an agent still running
``terminate_grace_s`` later is stopped, its whole process tree, as the wall clock would stop it.
Without this an agent that sleeps after its answer holds a worker until the wall clock (docs/security.md).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from arena.runner.limits import LimitLog
from arena.runner.process import ProcessResult, StopSwitch


class TerminateGrace:
    def __init__(self, grace_s: float, clock: Callable[[], float]) -> None:
        self.grace_s = grace_s
        self.switch = StopSwitch()  # handed to the sandbox process's runner (arena.runner.launch)
        self._clock = clock
        self._timer: asyncio.TimerHandle | None = None
        self._stopped_s: float | None = None

    def start(self) -> None:
        """On the event loop, when the agent's terminate call has gone through."""
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.grace_s, self._stop)

    def _stop(self) -> None:
        if self.switch.stop():
            self._stopped_s = self._clock()

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()

    def report(self, result: ProcessResult, terminated: bool, limit_log: LimitLog) -> None:
        """Names the stop in the record's ``limits_hit``: the agent outlived its own terminate (stopped at
        the grace, or still running when the wall clock came first)."""
        if result.stopped:
            detail = f"still running {self.grace_s:g} s after its terminate call: stopped"
            limit_log.hit("terminate_grace_s", detail, at_s=self._stopped_s)
        elif result.timed_out and terminated:
            limit_log.hit("terminate_grace_s", "still running at the wall clock after its terminate call")
