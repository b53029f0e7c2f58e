"""The trajectory store: SQLAlchemy 2 models, every query, and Alembic migrations.

PostgreSQL in production, a SQLite file (``./arena.db``) as the embedded
default, chosen by ``ARENA_DATABASE_URL``. The queries live in one module per
domain (``episodes``, ``judgments``, ``cycles``, ...), called as
``episode_rows.complete(session, ...)``; the schema is applied by
``arena.store.migrate.upgrade_database`` (``arena db upgrade``).
"""

from arena.store import models_chain, models_export, models_race  # noqa: F401  (registers their tables on Base.metadata)
from arena.store.db import (
    DEFAULT_URL,
    ENV_VAR,
    Store,
    StoreError,
    create_session_factory,
    create_store_engine,
    open_store,
    resolve_url,
    safe_url,
    transaction,
)
from arena.store.migrate import current_revision, downgrade_database, head_revision, upgrade_database
from arena.store.models import Base

metadata = Base.metadata

__all__ = [
    "DEFAULT_URL",
    "ENV_VAR",
    "Base",
    "Store",
    "StoreError",
    "create_session_factory",
    "create_store_engine",
    "current_revision",
    "downgrade_database",
    "head_revision",
    "metadata",
    "open_store",
    "resolve_url",
    "safe_url",
    "transaction",
    "upgrade_database",
]
