"""Miners and their submitted agents.

The intake checks (signature, rate limit, size, syntax, copy detection) live
in ``arena.intake``; this module stores what they decided and answers the questions
they ask: was this exact file, or this normalised AST, seen before; what did
this hotkey submit last; which earlier submissions to compare MinHashes with.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import datetime
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field, model_validator
from sqlalchemy import CursorResult, func, select, text, update
from sqlalchemy.orm import Session

from arena.store.db import StoreError, dialect_insert, is_sqlite
from arena.store.models import HASH, HOTKEY, Miner, Submission, SubmissionStatus, utcnow

INTAKE_LOCK = 0x6172656E61  # "arena": the advisory lock that serialises intake writes on PostgreSQL
# Who came first in a copy dispute: the earlier chain commitment, then the earlier arrival.
_PRIORITY = (Submission.commitment_block.is_(None), Submission.commitment_block, Submission.submitted_at, Submission.id)


class MinerInfo(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    hotkey: str
    uid: int | None
    first_seen: datetime


class NewSubmission(BaseModel):
    """What intake stores for one received agent file. ``sha256`` and ``size`` are computed from ``code``."""

    hotkey: str = Field(min_length=1, max_length=HOTKEY)
    agent_name: str = Field(min_length=1, max_length=200)
    code: bytes
    ast_hash: str = Field(min_length=1, max_length=HASH)
    minhash: bytes | None = None  # little-endian uint64 hash values (datasketch MinHash.hashvalues)
    commitment_block: int | None = Field(None, ge=0)
    status: SubmissionStatus = SubmissionStatus.accepted
    rejection_reason: str | None = None
    embargo_until: datetime | None = None
    submitted_at: datetime | None = None  # default: now

    @model_validator(mode="after")
    def _reason_iff_rejected(self) -> NewSubmission:
        if (self.status is SubmissionStatus.rejected) != (self.rejection_reason is not None):
            raise ValueError("a rejected submission needs a rejection_reason, and only a rejected one has one")
        return self


class SubmissionInfo(BaseModel):
    """A submission without its code (``submission_code`` reads that)."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    hotkey: str
    agent_name: str
    sha256: str
    ast_hash: str
    size: int
    submitted_at: datetime
    commitment_block: int | None
    status: SubmissionStatus
    rejection_reason: str | None
    embargo_until: datetime | None


class CopyCandidate(BaseModel):
    """An earlier submission as copy detection needs it."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    hotkey: str
    sha256: str
    ast_hash: str
    minhash: bytes | None
    commitment_block: int | None
    submitted_at: datetime


_INFO = [getattr(Submission, name) for name in SubmissionInfo.model_fields]
_CANDIDATE = [getattr(Submission, name) for name in CopyCandidate.model_fields]


def ensure_miner(session: Session, hotkey: str, uid: int | None = None) -> MinerInfo:
    """The miner row for ``hotkey``, created on first sight; ``uid`` (when given) updated to the chain's."""
    statement = dialect_insert(session, Miner).values(hotkey=hotkey, uid=uid, first_seen=utcnow())
    session.execute(statement.on_conflict_do_nothing(index_elements=["hotkey"]))
    if uid is not None:
        session.execute(
            update(Miner)
            .where(Miner.hotkey == hotkey, Miner.uid.is_distinct_from(uid))
            .values(uid=uid)
            .execution_options(synchronize_session=False)
        )
    row = session.execute(select(Miner.hotkey, Miner.uid, Miner.first_seen).where(Miner.hotkey == hotkey)).one()
    return MinerInfo.model_validate(row._asdict())


def add_submission(session: Session, new: NewSubmission) -> SubmissionInfo:
    """Store a received agent (its miner created if new) and return it with its id."""
    ensure_miner(session, new.hotkey)
    row = Submission(
        hotkey=new.hotkey,
        agent_name=new.agent_name,
        code=new.code,
        sha256=hashlib.sha256(new.code).hexdigest(),
        ast_hash=new.ast_hash,
        minhash=new.minhash,
        size=len(new.code),
        submitted_at=new.submitted_at or utcnow(),
        commitment_block=new.commitment_block,
        status=new.status,
        rejection_reason=new.rejection_reason,
        embargo_until=new.embargo_until,
    )
    session.add(row)
    session.flush()
    return SubmissionInfo.model_validate(row)


def _infos(session: Session, *conditions, order=_PRIORITY) -> list[SubmissionInfo]:
    rows = session.execute(select(*_INFO).where(*conditions).order_by(*order)).mappings()
    return [SubmissionInfo.model_validate(dict(row)) for row in rows]


def get_submission(session: Session, submission_id: int) -> SubmissionInfo | None:
    found = _infos(session, Submission.id == submission_id)
    return found[0] if found else None


def submission_code(session: Session, submission_id: int) -> bytes | None:
    return session.execute(select(Submission.code).where(Submission.id == submission_id)).scalar_one_or_none()


def _not_rejected(include_rejected: bool):
    return () if include_rejected else (Submission.status != SubmissionStatus.rejected,)


def by_sha256(session: Session, sha256: str, *, include_rejected: bool = False) -> list[SubmissionInfo]:
    """Submissions of exactly this file, earliest commitment first (the first one owns it)."""
    return _infos(session, Submission.sha256 == sha256.lower(), *_not_rejected(include_rejected))


def by_ast_hash(session: Session, ast_hash: str, *, include_rejected: bool = False) -> list[SubmissionInfo]:
    """Submissions with this normalised AST, earliest commitment first."""
    return _infos(session, Submission.ast_hash == ast_hash, *_not_rejected(include_rejected))


def latest_for_hotkey(
    session: Session, hotkey: str, *, statuses: Iterable[SubmissionStatus] | None = None
) -> SubmissionInfo | None:
    """The hotkey's most recent submission (of the given statuses): the rate limit counts from it."""
    conditions = [Submission.hotkey == hotkey]
    if statuses is not None:
        conditions.append(Submission.status.in_(list(statuses)))
    found = _infos(session, *conditions, order=(Submission.submitted_at.desc(), Submission.id.desc()))
    return found[0] if found else None


def latest_per_hotkey(session: Session, *, include_rejected: bool = False) -> list[SubmissionInfo]:
    """Each hotkey's most recent submission, by hotkey."""
    conditions = _not_rejected(include_rejected)
    newest = (
        select(Submission.hotkey, func.max(Submission.id).label("id")).where(*conditions).group_by(Submission.hotkey)
    ).subquery()
    return _infos(session, Submission.id.in_(select(newest.c.id)), order=(Submission.hotkey,))


def copy_candidates(session: Session, *, include_rejected: bool = False) -> list[CopyCandidate]:
    """Every earlier submission with its MinHash, earliest commitment first."""
    rows = session.execute(select(*_CANDIDATE).where(*_not_rejected(include_rejected)).order_by(*_PRIORITY))
    return [CopyCandidate.model_validate(dict(row)) for row in rows.mappings()]


def copy_candidates_after(session: Session, seen: int) -> list[CopyCandidate]:
    """Copy candidates stored after submission ``seen`` (by concurrent requests), oldest first."""
    rows = session.execute(
        select(*_CANDIDATE)
        .where(Submission.id > seen, Submission.status != SubmissionStatus.rejected)
        .order_by(Submission.id)
    ).mappings()
    return [CopyCandidate.model_validate(dict(row)) for row in rows]


def lock_intake(session: Session) -> None:
    """Serialise intake writes until the transaction ends (SQLite already did: its transactions begin IMMEDIATE)."""
    if not is_sqlite(session):
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": INTAKE_LOCK})


def list_submissions(session: Session, *, statuses: Iterable[SubmissionStatus] | None = None) -> list[SubmissionInfo]:
    conditions = [] if statuses is None else [Submission.status.in_(list(statuses))]
    return _infos(session, *conditions, order=(Submission.id,))


def set_status(
    session: Session,
    submission_id: int,
    status: SubmissionStatus,
    *,
    reason: str | None = None,
    embargo_until: datetime | None = None,
) -> SubmissionInfo:
    """Move a submission to ``status`` (a rejection needs its ``reason``); ``embargo_until`` set when given."""
    if (status is SubmissionStatus.rejected) != (reason is not None):
        raise StoreError("a rejection needs a reason, and only a rejection has one")
    values: dict = {"status": status, "rejection_reason": reason}
    if embargo_until is not None:
        values["embargo_until"] = embargo_until
    # Session.execute is typed Result; an UPDATE or DELETE gives a CursorResult (SQLAlchemy's docs cast it)
    result = cast(
        CursorResult[Any],
        session.execute(
            update(Submission)
            .where(Submission.id == submission_id)
            .values(**values)
            .execution_options(synchronize_session=False)
        ),
    )
    if result.rowcount != 1:
        raise StoreError(f"submission {submission_id} does not exist")
    info = get_submission(session, submission_id)
    assert info is not None
    return info
