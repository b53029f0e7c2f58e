"""Episode leases name the queue job that holds them.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01

A worker whose heartbeat stopped is dead: the dispatcher releases the leases
its jobs hold at once (``release_leases_of_jobs``) instead of waiting for them
to lapse. The job id, not the worker's name, ties a lease to the dead worker:
an episode re-claimed meanwhile by another job keeps its lease.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("episodes", sa.Column("lease_job_id", sa.BigInteger(), nullable=True))
    op.create_index(op.f("ix_episodes_lease_job_id"), "episodes", ["lease_job_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_episodes_lease_job_id"), table_name="episodes")
    op.drop_column("episodes", "lease_job_id")
