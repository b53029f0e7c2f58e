"""Corpus export runs and per-episode verdicts.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels = None
depends_on = None


# Written out in full, like 0001, so the revision never changes with the models.
def json() -> sa.types.TypeEngine:
    return sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def ts() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "export_runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("out", sa.String(length=1024), nullable=False),
        sa.Column("config", json(), nullable=False),
        sa.Column("funnel", json(), nullable=True),
        sa.Column("started_at", ts(), nullable=False),
        sa.Column("finished_at", ts(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_export_runs")),
    )
    op.create_table(
        "export_verdicts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("episode_id", sa.String(length=64), nullable=False),
        sa.Column("destination", sa.String(length=16), nullable=False),
        sa.Column("filter", json(), nullable=False),
        sa.Column("gates", json(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["export_runs.id"], name=op.f("fk_export_verdicts_run_id_export_runs")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_export_verdicts")),
        sa.UniqueConstraint("run_id", "episode_id", name=op.f("uq_export_verdicts_run_id_episode_id")),
    )
    op.create_index(op.f("ix_export_verdicts_run_id"), "export_verdicts", ["run_id"])
    op.create_index(op.f("ix_export_verdicts_episode_id"), "export_verdicts", ["episode_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_export_verdicts_episode_id"), table_name="export_verdicts")
    op.drop_index(op.f("ix_export_verdicts_run_id"), table_name="export_verdicts")
    op.drop_table("export_verdicts")
    op.drop_table("export_runs")
