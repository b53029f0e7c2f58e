"""Replay protection for signed requests, shared by every process on one database.

``bittensor.http_auth`` verifies a ``btauth/1`` signature and its freshness,
then asks a ``NonceStore`` whether the (hotkey, nonce) pair was seen. Its
default store is a dict in one process; this one is a table with a primary
key on the pair and INSERT ... ON CONFLICT DO NOTHING, so of two processes
(or two machines) receiving the same signed request, exactly one accepts it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import CursorResult, delete, select
from sqlalchemy.orm import Session

from arena.store.db import SessionFactory, dialect_insert, transaction
from arena.store.models import Nonce, utcnow

INT64 = (-(2**63), 2**63 - 1)


def check_and_store(session: Session, hotkey: str, nonce: int) -> bool:
    """True (and remembered) the first time a (hotkey, nonce) pair is seen, False on every replay."""
    if not INT64[0] <= nonce <= INT64[1]:
        return False  # no honest nanosecond timestamp is this big; the column could not hold it anyway
    statement = dialect_insert(session, Nonce).values(hotkey=hotkey, nonce=nonce, seen_at=utcnow())
    # RETURNING, not rowcount: an ORM insert on psycopg reports rowcount -1. A row back means it was new.
    inserted = session.execute(statement.on_conflict_do_nothing().returning(Nonce.nonce)).first()
    return inserted is not None


def nonce_seen(session: Session, hotkey: str, nonce: int) -> bool:
    """Whether the (hotkey, nonce) pair was stored, without storing it (intake spends it with the submission)."""
    found = session.execute(select(Nonce.nonce).where(Nonce.hotkey == hotkey, Nonce.nonce == nonce)).first()
    return found is not None


def purge_nonces(session: Session, older_than: timedelta, *, now: datetime | None = None) -> int:
    """Forget nonces seen before the freshness window (the verifier rejects those as stale anyway)."""
    cutoff = (now or utcnow()) - older_than
    # Session.execute is typed Result; an UPDATE or DELETE gives a CursorResult (SQLAlchemy's docs cast it)
    return cast(CursorResult[Any], session.execute(delete(Nonce).where(Nonce.seen_at < cutoff))).rowcount


class DatabaseNonceStore:
    """A ``bittensor.http_auth.NonceStore`` backed by the store; each check is its own committed transaction."""

    def __init__(self, sessions: SessionFactory, *, retention: float = 600.0) -> None:
        self.sessions = sessions
        # Seconds, as http_auth reads it: it refuses a store that forgets sooner than max_age + allowed_skew.
        self.retention = float(retention)

    def check_and_store(self, hotkey_ss58: str, nonce_ns: int) -> bool:
        with transaction(self.sessions) as session:
            return check_and_store(session, hotkey_ss58, nonce_ns)

    def purge(self, *, now: datetime | None = None) -> int:
        with transaction(self.sessions) as session:
            return purge_nonces(session, timedelta(seconds=self.retention), now=now)
