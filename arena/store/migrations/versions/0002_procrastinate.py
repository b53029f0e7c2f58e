"""procrastinate's own schema (the task queue's tables and functions), PostgreSQL only.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30

Episodes and judgments are procrastinate tasks; its schema is applied here so
one `arena db upgrade` prepares the whole database. The SQL is the one the
installed procrastinate ships (``SchemaManager.get_schema()``). A later
procrastinate release that changes its schema needs a new revision applying
its migration files (``SchemaManager.get_migrations_path()``), as
procrastinate documents.

SQLite is skipped: the embedded mode runs the same tasks in-process with
procrastinate's in-memory connector, which needs no tables.
"""

from __future__ import annotations

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels = None
depends_on = None

# Everything procrastinate's schema creates is named procrastinate_* in the current schema.
DROP_PROCRASTINATE = r"""
DO $$
DECLARE item record;
BEGIN
    FOR item IN SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND c.relname LIKE 'procrastinate\_%'
    LOOP EXECUTE format('DROP TABLE IF EXISTS %I CASCADE', item.relname); END LOOP;
    FOR item IN SELECT p.oid::regprocedure AS signature FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                WHERE n.nspname = current_schema() AND p.proname LIKE 'procrastinate\_%'
    LOOP EXECUTE format('DROP FUNCTION IF EXISTS %s CASCADE', item.signature); END LOOP;
    FOR item IN SELECT t.typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
                WHERE n.nspname = current_schema() AND t.typname LIKE 'procrastinate\_%' AND t.typtype IN ('e', 'c')
    LOOP EXECUTE format('DROP TYPE IF EXISTS %I CASCADE', item.typname); END LOOP;
END $$;
"""


def _driver_execute(sql: str) -> None:
    # Through the psycopg connection itself, inside the migration's transaction: without parameters
    # psycopg sends the script as it is (many statements, '%' and ':' untouched), as procrastinate does.
    driver = op.get_bind().connection.driver_connection
    assert driver is not None  # the migration's connection is open
    driver.execute(sql)


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    from procrastinate.schema import SchemaManager

    _driver_execute(SchemaManager.get_schema())


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    _driver_execute(DROP_PROCRASTINATE)
