"""Problem rows keep their key order: ``problems.row`` is plain JSON on PostgreSQL (JSONB sorted the keys of
every object, so the public qualifying file rebuilt from the store no longer matched the suite's sha256 and
`GET /v1/suite/qualifying.jsonl` answered 500). SQLite stores JSON text already: nothing changes there.
Rows imported before this revision keep the order JSONB gave them; re-import such a suite to serve it.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.alter_column("problems", "row", type_=sa.JSON(), existing_type=postgresql.JSONB(astext_type=sa.Text()),
                        postgresql_using='"row"::json')  # fmt: skip


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.alter_column("problems", "row", type_=postgresql.JSONB(astext_type=sa.Text()), existing_type=sa.JSON(),
                        postgresql_using='"row"::jsonb')  # fmt: skip
