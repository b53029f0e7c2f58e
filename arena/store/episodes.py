"""Episodes: scheduled idempotently, claimed by one worker at a time, completed once.

The invariants the race relies on (a validator or worker killed at any point
resumes without redoing or losing an episode):

- ``ensure_episode`` inserts if absent and returns the row: scheduling twice is harmless.
- ``claim_next`` hands a pending episode (or one whose lease ran out) to one
  worker, in one UPDATE: ``FOR UPDATE SKIP LOCKED`` on PostgreSQL so workers
  never wait for each other, the write lock on SQLite (taken at BEGIN).
- ``complete`` stores the record and its score in one UPDATE, only while the
  episode is unfinished: completing twice is a no-op, and a trigger refuses
  any change to a done episode. It does not ask who holds the lease: a result
  kept through a store outage is stored by whoever ran it.
- A lease names the queue job holding it (``lease_job_id``): the same job,
  retried after a failed try, claims its own lease again, and
  ``release_leases_of_jobs`` frees the leases of a dead worker's jobs at once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import ColumnElement, CursorResult, and_, func, or_, select, tuple_, update
from sqlalchemy.orm import Session

from arena.store.db import StoreError, dialect_insert, jsonable
from arena.store.models import utcnow
from arena.store.models_race import Episode, EpisodeStage, EpisodeStatus

UNFINISHED = (EpisodeStatus.pending, EpisodeStatus.running)
KEY_COLUMNS = ("cycle", "stage", "submission_id", "problem_id", "attempt")


class EpisodeKey(BaseModel):
    """What identifies an episode: one attempt of one submission at one problem in one stage of a cycle."""

    model_config = ConfigDict(frozen=True)

    cycle: int
    stage: EpisodeStage
    submission_id: int
    suite_id: str
    problem_id: str
    attempt: int = Field(0, ge=0)

    def unique(self) -> tuple:
        return (self.cycle, self.stage, self.submission_id, self.problem_id, self.attempt)


class EpisodeInfo(BaseModel):
    id: int
    cycle: int
    stage: EpisodeStage
    submission_id: int
    suite_id: str
    problem_id: str
    attempt: int
    status: EpisodeStatus
    worker_id: str | None
    leased_until: datetime | None
    lease_job_id: int | None = None
    claims: int
    error: str | None
    fault_kind: str | None = None  # the validator-side failure last hit (arena.runner.record.FaultKind)
    fault_charged: bool | None = None  # that failure was charged to the submission (the canary ran clean)
    success: bool | None
    rule: float | None
    outcome: dict | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    record: dict | None = None  # loaded only on request: a record can be megabytes

    @property
    def key(self) -> EpisodeKey:
        return EpisodeKey(
            cycle=self.cycle,
            stage=self.stage,
            submission_id=self.submission_id,
            suite_id=self.suite_id,
            problem_id=self.problem_id,
            attempt=self.attempt,
        )


_INFO_COLUMNS = [c for c in Episode.__table__.columns if c.key != "record"]


def _info(row: Mapping[str, Any], record: dict | None = None) -> EpisodeInfo:
    return EpisodeInfo.model_validate({**row, "record": record})


def _select_info(with_record: bool = False):
    columns = list(Episode.__table__.columns) if with_record else _INFO_COLUMNS
    return select(*columns)


def _one(session: Session, condition: ColumnElement[bool], with_record: bool = False) -> EpisodeInfo | None:
    row = session.execute(_select_info(with_record).where(condition)).mappings().one_or_none()
    if row is None:
        return None
    values = dict(row)
    record = values.pop("record", None)
    return _info(values, record)


def ensure_episode(session: Session, key: EpisodeKey) -> EpisodeInfo:
    """The episode for ``key``, inserted as pending if it does not exist yet."""
    return ensure_episodes(session, [key])[0]


def ensure_episodes(session: Session, keys: Sequence[EpisodeKey]) -> list[EpisodeInfo]:
    """Many ``ensure_episode`` at once (a stage schedules hundreds); returned in the order of ``keys``."""
    if not keys:
        return []
    now = utcnow()
    rows = [
        key.model_dump() | {"status": EpisodeStatus.pending, "claims": 0, "created_at": now}
        for key in dict.fromkeys(keys)
    ]
    statement = dialect_insert(session, Episode).on_conflict_do_nothing(index_elements=list(KEY_COLUMNS))
    session.execute(statement, rows)
    found: dict[tuple, EpisodeInfo] = {}
    unique_keys = [k.unique() for k in dict.fromkeys(keys)]
    for start in range(0, len(unique_keys), 500):  # keep the IN list well under any parameter limit
        chunk = unique_keys[start : start + 500]
        condition = tuple_(*(getattr(Episode, name) for name in KEY_COLUMNS)).in_(chunk)
        for row in session.execute(_select_info().where(condition)).mappings():
            info = _info(dict(row))
            found[info.key.unique()] = info
    result = []
    for key in keys:
        info = found[key.unique()]
        if info.suite_id != key.suite_id:
            raise StoreError(
                f"episode {info.id} (cycle {key.cycle}, {key.stage}, submission {key.submission_id}, "
                f"problem {key.problem_id}, attempt {key.attempt}) exists for suite {info.suite_id}, not {key.suite_id}"
            )
        result.append(info)
    return result


def get_episode(session: Session, episode_id: int, *, with_record: bool = False) -> EpisodeInfo | None:
    return _one(session, Episode.id == episode_id, with_record)


def list_episodes(
    session: Session,
    *,
    cycle: int | None = None,
    stage: EpisodeStage | None = None,
    submission_id: int | None = None,
    status: EpisodeStatus | None = None,
) -> list[EpisodeInfo]:
    """Episodes matching every given filter, in id order (records not loaded)."""
    statement = _select_info().where(*_filters(cycle, stage, submission_id, status)).order_by(Episode.id)
    return [_info(dict(row)) for row in session.execute(statement).mappings()]


def status_counts(session: Session, *, cycle: int | None = None, stage: EpisodeStage | None = None) -> Counter:
    """Episodes per status (every status present, zero included), e.g. for progress bars."""
    statement = select(Episode.status, func.count()).where(*_filters(cycle, stage, None, None)).group_by(Episode.status)
    counts: Counter = Counter(dict.fromkeys(EpisodeStatus, 0))
    counts.update({status: n for status, n in session.execute(statement)})
    return counts


def _filters(cycle, stage, submission_id, status) -> list[ColumnElement[bool]]:
    filters = []
    if cycle is not None:
        filters.append(Episode.cycle == cycle)
    if stage is not None:
        filters.append(Episode.stage == stage)
    if submission_id is not None:
        filters.append(Episode.submission_id == submission_id)
    if status is not None:
        filters.append(Episode.status == status)
    return filters


def _claimable(now: datetime, job_id: int | None = None) -> ColumnElement[bool]:
    expired = and_(Episode.status == EpisodeStatus.running, Episode.leased_until < now)
    options = [Episode.status == EpisodeStatus.pending, expired]
    if job_id is not None:
        # The job that holds the lease, tried again (its last try raised): nobody else runs the episode.
        options.append(and_(Episode.status == EpisodeStatus.running, Episode.lease_job_id == job_id))
    return or_(*options)


def _claim(
    session: Session, target, worker_id: str, lease_s: float, now: datetime | None, job_id: int | None = None
) -> EpisodeInfo | None:
    if lease_s <= 0:
        raise StoreError(f"lease_s must be positive (got {lease_s})")
    now = now or utcnow()
    claimable = _claimable(now, job_id)
    statement = (
        update(Episode)
        # The outer condition again: on PostgreSQL a concurrent claim of the same row, once it
        # commits, makes this one re-check the row and find it no longer claimable.
        .where(Episode.id == target(claimable), claimable)
        .values(
            status=EpisodeStatus.running,
            worker_id=worker_id,
            leased_until=now + timedelta(seconds=lease_s),
            lease_job_id=job_id,
            claims=Episode.claims + 1,
            started_at=now,
        )
        .returning(Episode.id)
        .execution_options(synchronize_session=False)
    )
    claimed = session.execute(statement).scalar_one_or_none()
    return None if claimed is None else get_episode(session, claimed)


def claim_next(
    session: Session,
    worker_id: str,
    lease_s: float,
    *,
    cycle: int | None = None,
    stage: EpisodeStage | None = None,
    now: datetime | None = None,
) -> EpisodeInfo | None:
    """Hand the oldest claimable episode to ``worker_id`` for ``lease_s`` seconds (None: nothing to do).

    Claimable: pending, or running with an expired lease (its worker died).
    Commit right after, so the lease is visible to the other workers.
    """
    filters = _filters(cycle, stage, None, None)

    def oldest(claimable: ColumnElement[bool]):
        pick = select(Episode.id).where(claimable, *filters).order_by(Episode.id).limit(1)
        return pick.with_for_update(skip_locked=True).scalar_subquery()  # FOR UPDATE: ignored by SQLite

    return _claim(session, oldest, worker_id, lease_s, now)


def claim(
    session: Session,
    episode_id: int,
    worker_id: str,
    lease_s: float,
    *,
    job_id: int | None = None,
    now: datetime | None = None,
) -> EpisodeInfo | None:
    """Claim one given episode for the queue job ``job_id`` that names it; None when it is finished or
    leased to another live job. The job already holding the lease gets it again (a retried try)."""
    return _claim(session, lambda _claimable: episode_id, worker_id, lease_s, now, job_id)


def extend_lease(
    session: Session, episode_id: int, worker_id: str, lease_s: float, *, now: datetime | None = None
) -> bool:
    """Heartbeat of a long episode: True while ``worker_id`` still holds it."""
    now = now or utcnow()
    statement = (
        update(Episode)
        .where(Episode.id == episode_id, Episode.status == EpisodeStatus.running, Episode.worker_id == worker_id)
        .values(leased_until=now + timedelta(seconds=lease_s))
        .execution_options(synchronize_session=False)
    )
    # Session.execute is typed Result; an UPDATE or DELETE gives a CursorResult (SQLAlchemy's docs cast it)
    return cast(CursorResult[Any], session.execute(statement)).rowcount == 1


def complete(
    session: Session,
    episode_id: int,
    record: BaseModel | Mapping,
    outcome: BaseModel | Mapping | None,  # None (a record never scored) is refused below, by name
    *,
    fault_kind: str | None = None,
    charged: bool | None = None,
) -> bool:
    """Store an episode's record and outcome score together; True if stored, False if it was already finished.

    ``outcome`` is an ``OutcomeScore`` (or its JSON): its ``success`` and ``rule``
    are kept in their own columns for ranking without parsing JSON. The ``outcome`` column is the
    score's one home in the store: a record that arrives scored (a run-agent file's record carries its
    score, as a file has no column) is stored without it, so no reader can take a stale copy from the
    record. ``fault_kind``:
    the record stands although the validator saw a fault in it (charged to the
    submission: the canary ran clean); without it an earlier try's fault is cleared.
    """
    record_json, outcome_json = jsonable(record), jsonable(outcome)
    if not isinstance(outcome_json, dict) or "success" not in outcome_json or "rule" not in outcome_json:
        raise StoreError(f"episode {episode_id}: the outcome must be an OutcomeScore with success and rule")
    if isinstance(record_json, dict) and record_json.get("outcome") is not None:
        record_json = {**record_json, "outcome": None}
    statement = (
        update(Episode)
        .where(Episode.id == episode_id, Episode.status.in_(UNFINISHED))
        .values(
            status=EpisodeStatus.done,
            record=record_json,
            outcome=outcome_json,
            success=bool(outcome_json["success"]),
            rule=float(outcome_json["rule"]),
            finished_at=utcnow(),
            leased_until=None,
            error=None,
            fault_kind=None if fault_kind is None else str(fault_kind),
            fault_charged=charged if fault_kind is not None else None,
        )
        .execution_options(synchronize_session=False)
    )
    if cast(CursorResult[Any], session.execute(statement)).rowcount == 1:
        return True
    _require(session, episode_id)
    return False


def fail(
    session: Session, episode_id: int, reason: str, *, fault_kind: str | None = None, charged: bool | None = None
) -> bool:
    """Give up on an episode for good (``reason`` kept, with the validator fault that ended it, if one did,
    and whether that fault was charged to the submission); False if it was already finished."""
    faults = _fault_values(fault_kind, charged)
    return _finish_unfinished(
        session, episode_id, status=EpisodeStatus.failed, error=reason, finished_at=utcnow(), **faults
    )


def release(
    session: Session,
    episode_id: int,
    *,
    error: str | None = None,
    fault_kind: str | None = None,
    charged: bool | None = None,
) -> bool:
    """Hand a claimed episode back as pending (a transient error, or a validator fault to retry); False if it
    was already finished."""
    faults = _fault_values(fault_kind, charged)
    return _finish_unfinished(
        session, episode_id, status=EpisodeStatus.pending, error=error, worker_id=None, leased_until=None,
        lease_job_id=None, **faults,
    )  # fmt: skip


def _fault_values(fault_kind: str | None, charged: bool | None) -> dict[str, Any]:
    return {} if fault_kind is None else {"fault_kind": str(fault_kind), "fault_charged": charged}


def _finish_unfinished(session: Session, episode_id: int, **values: Any) -> bool:
    statement = (
        update(Episode)
        .where(Episode.id == episode_id, Episode.status.in_(UNFINISHED))
        .values(**values)
        .execution_options(synchronize_session=False)
    )
    if cast(CursorResult[Any], session.execute(statement)).rowcount == 1:
        return True
    _require(session, episode_id)
    return False


def release_expired_leases(session: Session, *, now: datetime | None = None) -> int:
    """Return every running episode whose lease ran out to pending; how many were released."""
    now = now or utcnow()
    statement = (
        update(Episode)
        .where(Episode.status == EpisodeStatus.running, Episode.leased_until < now)
        .values(
            status=EpisodeStatus.pending, worker_id=None, leased_until=None, lease_job_id=None, error="lease expired"
        )
        .execution_options(synchronize_session=False)
    )
    return cast(CursorResult[Any], session.execute(statement)).rowcount


def release_leases_of_jobs(session: Session, job_ids: Sequence[int], *, reason: str) -> list[int]:
    """Return to pending the running episodes whose lease one of ``job_ids`` holds (their worker is dead);
    the episode ids released. An episode claimed meanwhile by another job is left alone."""
    if not job_ids:
        return []
    statement = (
        update(Episode)
        .where(Episode.status == EpisodeStatus.running, Episode.lease_job_id.in_(list(job_ids)))
        .values(status=EpisodeStatus.pending, worker_id=None, leased_until=None, lease_job_id=None, error=reason)
        .returning(Episode.id)
        .execution_options(synchronize_session=False)
    )
    return sorted(session.execute(statement).scalars())


def _require(session: Session, episode_id: int) -> None:
    if session.execute(select(Episode.id).where(Episode.id == episode_id)).scalar_one_or_none() is None:
        raise StoreError(f"episode {episode_id} does not exist")
