"""Copy refusals: what a hotkey's daily copy budget counts (see ``arena.intake.signed_requests.check_copy_budget``)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.store.models import CopyRefusal


def copy_refusals_since(session: Session, hotkey: str, since: datetime) -> list[datetime]:
    """When the hotkey's copy refusals at or after ``since`` happened, oldest first."""
    rows = session.execute(
        select(CopyRefusal.refused_at)
        .where(CopyRefusal.hotkey == hotkey, CopyRefusal.refused_at >= since)
        .order_by(CopyRefusal.refused_at)
    )
    return list(rows.scalars())


def add_copy_refusal(session: Session, hotkey: str, check: str, sha256: str, at: datetime) -> None:
    session.add(CopyRefusal(hotkey=hotkey, check=check, sha256=sha256, refused_at=at))
    session.flush()
