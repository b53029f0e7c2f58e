"""Alembic's entry point for the store's revisions.

``arena.store.migrate`` hands over an open connection in
``config.attributes["connection"]`` (so the engine's SQLite pragmas apply and
the caller controls the transaction). The ``alembic`` command line, used by
developers to write revisions, gets its URL from ``ARENA_DATABASE_URL``.
"""

from __future__ import annotations

import logging.config

from alembic import context
from sqlalchemy import Connection

from arena.store import metadata
from arena.store.db import create_store_engine
from arena.store.migrate import include_name

# Any constant works; it only has to be the same in every process that migrates this database.
MIGRATION_LOCK_KEY = 0x61726E61  # "arna"

config = context.config


def run_migrations(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        # SQLite can only ALTER by copying a table; batch mode lets later revisions alter columns there.
        render_as_batch=connection.dialect.name == "sqlite",
        # Our SQLite connections handle transactions themselves (BEGIN IMMEDIATE), DDL included.
        transactional_ddl=True,
        compare_type=True,
        include_name=include_name,
    )
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            # A validator and its workers may all start at once: one migrates, the others wait and
            # then find nothing left to do. The lock ends with the transaction.
            connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK_KEY})")
        context.run_migrations()


if context.is_offline_mode():
    raise SystemExit("the store's migrations run online only (one revision executes procrastinate's SQL itself)")

given = config.attributes.get("connection")
if given is not None:
    run_migrations(given)
else:
    if config.config_file_name is not None:
        logging.config.fileConfig(config.config_file_name, disable_existing_loggers=False)
    engine = create_store_engine(config.get_main_option("sqlalchemy.url") or None)
    try:
        with engine.connect() as connection:
            run_migrations(connection)
    finally:
        engine.dispose()
