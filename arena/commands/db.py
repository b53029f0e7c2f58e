"""`arena db`: apply, undo and inspect the store's schema migrations.

The database is ``--database-url``, else ``ARENA_DATABASE_URL``, else
``sqlite:///./arena.db``. The revision id is the only thing on stdout (or one
JSON object with ``--json``); what changed is reported on stderr.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from arena.commands.common import err, fail, out

app = typer.Typer(help="The store's schema: apply and inspect migrations.", no_args_is_help=True)

DatabaseUrl = Annotated[
    str | None,
    typer.Option(
        "--database-url",
        help="postgresql://USER@HOST:PORT/DB or sqlite:///PATH (else ARENA_DATABASE_URL, else sqlite:///./arena.db).",
    ),
]


def _errors() -> tuple[type[Exception], ...]:
    from sqlalchemy.exc import SQLAlchemyError

    from arena.store.db import StoreError

    return StoreError, SQLAlchemyError, OSError


def _url(database_url: str | None):
    from arena.store.db import StoreError, resolve_url, safe_url

    try:
        url = resolve_url(database_url)
    except StoreError as exc:
        fail(str(exc))
    return url, safe_url(url)


def _missing_sqlite_file(url) -> bool:
    """Reading a revision must not create an empty database file where a path was mistyped."""
    database = url.database or ""
    return url.get_backend_name() == "sqlite" and database not in ("", ":memory:") and not Path(database).exists()


def _emit(text: str) -> None:
    out.print(text, markup=False, highlight=False, soft_wrap=True)


def _reason(exc: Exception) -> str:
    # A driver error's first line says what happened (refused connection, missing database); the rest is SQL noise.
    reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
    fix = connection_fix(reason)
    return f"{reason}. Fix: {fix}" if fix else reason


# What PostgreSQL says when the server, the role or the database is missing, and the step that makes it; the
# commands are a stock Debian/Ubuntu PostgreSQL's (peer login as `postgres`), as docs/operator-guide.md runs them.
_FIXES = (
    (re.compile(r'role "([^"]+)" does not exist'),
     "create the role: sudo -u postgres psql -c \"CREATE ROLE {0} LOGIN PASSWORD '...'\" (docs/operator-guide.md)"),
    (re.compile(r'database "([^"]+)" does not exist'),
     "create the database: sudo -u postgres createdb --owner ROLE {0} (docs/operator-guide.md)"),
    (re.compile(r"password authentication failed for user \"([^\"]+)\"|no password supplied"),
     "put the role's password in the URL (postgresql://ROLE:PASSWORD@HOST:PORT/DB)"),
    (re.compile(r"Connection refused|could not connect|No such file or directory"),
     "start PostgreSQL (check it with pg_isready -h HOST -p PORT), or correct the URL's host and port"),
)  # fmt: skip


def connection_fix(reason: str) -> str:
    """The one step that fixes a failed connection, when the driver's reason is a known one."""
    for pattern, fix in _FIXES:
        if found := pattern.search(reason):
            return fix.format(*(g or "" for g in found.groups()))
    return ""


@app.command("upgrade")
def db_upgrade(
    revision: Annotated[str, typer.Argument(help="Target revision.")] = "head",
    database_url: DatabaseUrl = None,
) -> None:
    """Apply every migration up to REVISION (default: the latest). Safe to run again, or from several processes."""
    from arena.store.migrate import current_revision, upgrade_database

    url, shown = _url(database_url)
    try:
        before = current_revision(url)
        after = upgrade_database(url, revision)
    except _errors() as exc:
        fail(f"{shown}: upgrade failed: {_reason(exc)}")
    change = "already at" if before == after else f"{before or 'empty'} ->"
    err.print(f"{escape(shown)}: {change} {after}", highlight=False)
    _emit(after or "base")


@app.command("downgrade")
def db_downgrade(
    revision: Annotated[str, typer.Argument(help='Target revision ("base" drops every table; "-1" undoes one).')],
    database_url: DatabaseUrl = None,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask before dropping tables and their data.")] = False,
) -> None:
    """Undo migrations down to REVISION. Tables the undone revisions created are dropped with their data."""
    from arena.store.migrate import current_revision, downgrade_database

    url, shown = _url(database_url)
    if not yes and not typer.confirm(f"Downgrade {shown} to {revision}? Data in dropped tables is lost.", err=True):
        fail("downgrade cancelled")
    try:
        before = current_revision(url)
        after = downgrade_database(url, revision)
    except _errors() as exc:
        fail(f"{shown}: downgrade failed: {_reason(exc)}")
    err.print(f"{escape(shown)}: {before or 'base'} -> {after or 'base'}", highlight=False)
    _emit(after or "base")


@app.command("current")
def db_current(
    database_url: DatabaseUrl = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print url, current, head and up_to_date as JSON.")] = False,
) -> None:
    """Print the database's revision ("base" when never migrated) and whether it is up to date."""
    from arena.store.migrate import current_revision, head_revision

    url, shown = _url(database_url)
    try:
        current = None if _missing_sqlite_file(url) else current_revision(url)
    except _errors() as exc:
        fail(f"{shown}: cannot read the revision: {_reason(exc)}")
    head = head_revision()
    if as_json:
        _emit(json.dumps({"url": shown, "current": current, "head": head, "up_to_date": current == head}))
        return
    state = "up to date" if current == head else f"behind head {head}: run `arena db upgrade`"
    err.print(f"{escape(shown)}: {current or 'base'} ({state})", highlight=False)
    _emit(current or "base")
