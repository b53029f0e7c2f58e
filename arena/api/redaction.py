"""What the API may show of a problem and of an episode.

Three rules, from the issue, applied in this order:

1. Nothing of the held-out partition is ever served: an episode on a held-out
   problem (there should be none: held-out is never raced) answers 404, and
   held-out problems count in no aggregate.
2. An episode of a cycle that has not finished is shown redacted: its keys
   and status only, no record, no scores, no problem text.
3. Problem text and gold answers (which the episode record carries too, in
   its problem ref and in every LLM request) are shown only for the public
   suite and for race-bank clusters the ledger has retired. Anything else is
   redacted: scores, yes; record, outcome details, judge explanation, no.

A :class:`Visibility` is computed per episode from the stored problem row,
the cycle's stage and the suite's ledger replay (cached per request).
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel
from sqlalchemy.orm import Session

from arena.problems.partitions import PartitionName
from arena.store import cycles as cycle_rows
from arena.store import suites as suite_rows
from arena.store.models_race import CycleStage
from arena.store.suites import ProblemRecord


class Level(StrEnum):
    full = "full"  # problem, gold, record, outcome, judgments
    scores = "scores"  # finished cycle, hidden problem: scores only
    status = "status"  # cycle still running: keys and status only
    hidden = "hidden"  # held-out: never served


class Visibility(BaseModel):
    level: Level
    reason: str

    @property
    def shows_scores(self) -> bool:
        return self.level in (Level.full, Level.scores)

    @property
    def shows_content(self) -> bool:
        return self.level is Level.full


def problem_is_public(partition: PartitionName, cluster_id: str, retired: set[str]) -> bool:
    """Problem text and gold may be shown: the public suite, or a race-bank cluster the ledger retired."""
    if partition is PartitionName.heldout:
        return False
    return partition is PartitionName.public or cluster_id in retired


class Redactor:
    """Visibility decisions within one read transaction; ledger replays and cycle stages cached."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._retired: dict[str, set[str]] = {}
        self._cycle_done: dict[int, bool] = {}

    def retired(self, suite_id: str) -> set[str]:
        if suite_id not in self._retired:
            self._retired[suite_id] = set(suite_rows.ledger_state(self.session, suite_id).retired)
        return self._retired[suite_id]

    def cycle_done(self, cycle: int) -> bool:
        if cycle not in self._cycle_done:
            info = cycle_rows.get_cycle(self.session, cycle)
            self._cycle_done[cycle] = info is not None and info.stage is CycleStage.done
        return self._cycle_done[cycle]

    def problem_row(self, suite_id: str, problem_id: str) -> ProblemRecord | None:
        return suite_rows.problem_record(self.session, suite_id, problem_id)

    def episode(self, cycle: int, suite_id: str, problem_id: str) -> Visibility:
        row = self.problem_row(suite_id, problem_id)
        if row is None or row.partition is PartitionName.heldout:
            return Visibility(level=Level.hidden, reason="held-out problems are never served")
        if not self.cycle_done(cycle):
            return Visibility(level=Level.status, reason=f"cycle {cycle} is still running")
        if problem_is_public(row.partition, row.cluster_id, self.retired(suite_id)):
            return Visibility(level=Level.full, reason=f"{row.partition.value} problem")
        return Visibility(
            level=Level.scores,
            reason=f"problem of the hidden {row.partition.value} partition (cluster not retired by the ledger)",
        )

    def problem(self, suite_id: str, problem_id: str) -> Visibility:
        """A problem on its own (no cycle): shown when public or retired, else redacted, held-out hidden."""
        row = self.problem_row(suite_id, problem_id)
        if row is None or row.partition is PartitionName.heldout:
            return Visibility(level=Level.hidden, reason="held-out problems are never served")
        if problem_is_public(row.partition, row.cluster_id, self.retired(suite_id)):
            return Visibility(level=Level.full, reason=f"{row.partition.value} problem")
        return Visibility(level=Level.scores, reason=f"problem of the hidden {row.partition.value} partition")
