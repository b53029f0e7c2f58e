"""What intake answers a miner: the stored submission, or a dry run's "admissible now"."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from arena.store.models import SubmissionStatus


class SubmissionAccepted(BaseModel):
    id: int
    status: SubmissionStatus
    hotkey: str
    uid: int
    agent_name: str
    sha256: str
    size: int
    submitted_at: datetime
    commitment_block: int | None = Field(description="Block of the matching chain commitment; None: not committed.")
    supersedes: list[int] = Field(
        default_factory=list, description="Earlier submissions this one replaced as a copy (its commitment came first)."
    )


class SubmissionAdmission(BaseModel):
    """A dry run's answer: this hotkey may submit this file now (nothing was stored, copies were not compared)."""

    admissible: bool = True
    hotkey: str
    uid: int
    sha256: str
    size: int
    detail: str = Field(description="What was checked, and what the real submission still checks.")
