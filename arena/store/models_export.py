"""The store's tables, part three: corpus export runs and where each episode went.

Written by ``arena export --database-url`` so the API can show, for any
episode, the filter and gate verdicts of the latest export. Append-only:
a new export is a new run, never an edit of an old one.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from arena.store.models import Base, JSONType, UTCDateTime, utcnow


class ExportRun(Base):
    __tablename__ = "export_runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    out: Mapped[str] = mapped_column(String(1024))
    config: Mapped[dict] = mapped_column(JSONType)
    funnel: Mapped[dict | None] = mapped_column(JSONType)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class ExportVerdict(Base):
    __tablename__ = "export_verdicts"
    __table_args__ = (UniqueConstraint("run_id", "episode_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(Integer, ForeignKey("export_runs.id"), index=True)
    episode_id: Mapped[str] = mapped_column(String(64), index=True)  # the record's episode id
    destination: Mapped[str] = mapped_column(String(16))  # train | eval | subtask | rejected
    filter: Mapped[dict] = mapped_column(JSONType)
    gates: Mapped[dict] = mapped_column(JSONType)
