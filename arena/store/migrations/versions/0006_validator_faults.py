"""Validator faults on episodes and halted cycles.

``episodes.fault_kind`` / ``fault_charged``: the validator-side failure an episode last hit (sandbox,
upstream, judge, store, runner; the reason is in ``error``) and whether it was charged to the submission
(the canary ran clean, so the failure followed the submission). ``cycles.halt``: why a cycle stopped
without deciding anything (kind, stage, reason, submissions hit, the fix).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels = None
depends_on = None


def json() -> sa.types.TypeEngine:
    return sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    # Plain ADD COLUMN (SQLite has it): a batch rebuild would drop the episodes table's guard triggers.
    op.add_column("episodes", sa.Column("fault_kind", sa.String(length=20), nullable=True))
    op.add_column("episodes", sa.Column("fault_charged", sa.Boolean(), nullable=True))
    op.add_column("cycles", sa.Column("halt", json(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("cycles") as batch:
        batch.drop_column("halt")
    with op.batch_alter_table("episodes") as batch:
        batch.drop_column("fault_charged")
        batch.drop_column("fault_kind")
