"""Apply, undo and inspect the store's Alembic revisions from code.

Alembic is configured here rather than from an ini file, and the revisions
are found inside the installed ``arena.store`` package, so migrating works
from a wheel and from any working directory, not only the repository root.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources

from alembic import command
from alembic.config import Config
from alembic.runtime.environment import NameFilterParentNames, NameFilterType
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util import CommandError
from sqlalchemy import Connection, Engine, text
from sqlalchemy.engine import URL
from sqlalchemy.exc import SQLAlchemyError

from arena.store.db import StoreError, create_store_engine, safe_url

FOREIGN_PREFIXES = ("procrastinate_",)  # tables another package owns (applied by revision 0002 on PostgreSQL)


def include_name(name: str | None, type_: NameFilterType, parent_names: NameFilterParentNames) -> bool:
    """Alembic's filter for comparing models with a database: leave procrastinate's objects out."""
    return not (type_ in ("table", "index") and name and name.startswith(FOREIGN_PREFIXES))


def migrations_dir() -> str:
    return str(resources.files("arena.store") / "migrations")


def alembic_config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", migrations_dir())
    config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None  # the package always ships its revisions
    return head


def revisions() -> list[str]:
    """Every revision id, oldest first."""
    script = ScriptDirectory.from_config(alembic_config())
    return [rev.revision for rev in reversed(list(script.walk_revisions()))]


@contextmanager
def _engine(bind: str | URL | Engine | None) -> Iterator[Engine]:
    if isinstance(bind, Engine):
        yield bind
        return
    engine = create_store_engine(bind)
    try:
        yield engine
    finally:
        engine.dispose()


def current_revision(bind: str | URL | Engine | None = None) -> str | None:
    """The database's revision (None: never migrated, or downgraded to base)."""
    with _engine(bind) as engine, engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def database_state(engine: Engine) -> tuple[str, str | None]:
    """("ok", its revision) when the database answers; else ("unreachable: " + the driver's first line, None)."""
    try:
        with engine.connect() as connection:
            connection.execute(text("SELECT 1"))
        return "ok", current_revision(engine)
    except SQLAlchemyError as exc:
        return f"unreachable: {str(getattr(exc, 'orig', None) or exc).strip().splitlines()[0]}", None


def upgrade_database(bind: str | URL | Engine | None = None, revision: str = "head") -> str | None:
    """Apply every revision up to ``revision`` in one transaction; returns the database's revision.

    Safe to call from several processes at once (PostgreSQL serialises them on
    an advisory lock, SQLite on its write lock) and a no-op when up to date.
    """
    return _run(bind, lambda config: command.upgrade(config, revision))


def downgrade_database(bind: str | URL | Engine | None, revision: str) -> str | None:
    """Undo revisions down to ``revision`` ("base" drops every table); returns the database's revision."""
    return _run(bind, lambda config: command.downgrade(config, revision))


# Alembic keeps the running migration in module globals (``alembic.context``): two threads of one process
# must not migrate at once. Processes are serialised by the database (see migrations/env.py).
_ALEMBIC_LOCK = threading.Lock()


def _run(bind, action) -> str | None:
    with _ALEMBIC_LOCK, _engine(bind) as engine:
        try:
            with engine.begin() as connection:
                action(alembic_config(connection))
        except CommandError as exc:
            raise StoreError(f"{safe_url(engine.url)}: {exc}") from None
        return current_revision(engine)
