"""Copy refusals: the per-hotkey daily budget of submissions refused as copies.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "copy_refusals",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("hotkey", sa.String(length=64), nullable=False),
        sa.Column("check", sa.String(length=32), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("refused_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_copy_refusals")),
    )
    op.create_index(op.f("ix_copy_refusals_hotkey"), "copy_refusals", ["hotkey"])
    op.create_index(op.f("ix_copy_refusals_refused_at"), "copy_refusals", ["refused_at"])


def downgrade() -> None:
    op.drop_index(op.f("ix_copy_refusals_refused_at"), table_name="copy_refusals")
    op.drop_index(op.f("ix_copy_refusals_hotkey"), table_name="copy_refusals")
    op.drop_table("copy_refusals")
