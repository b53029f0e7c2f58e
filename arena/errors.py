"""A failed command's one line: what went wrong and what to do, never a traceback unless asked.

Expected failures (a database or chain that cannot be reached, a missing
suite or catalog, bad settings, unreadable files) are the user's to fix and
get exit status 2, like every ``fail()``. Anything else is a bug: it gets
exit status 1 and the hint to rerun with ``--debug`` and report the traceback.
"""

from __future__ import annotations


def _expected_types() -> tuple[type[BaseException], ...]:
    found: list[type[BaseException]] = [OSError, ValueError, LookupError]
    try:
        from sqlalchemy.exc import SQLAlchemyError

        found.append(SQLAlchemyError)
    except ImportError:  # pragma: no cover - sqlalchemy is a core dependency
        pass
    try:
        from arena.store.db import StoreError

        found.append(StoreError)
    except ImportError:  # pragma: no cover
        pass
    return tuple(found)


def _first_line(exc: BaseException) -> str:
    original = getattr(exc, "orig", None)  # SQLAlchemy wraps the driver's error: its message is the useful one
    text = str(original or exc).strip()
    return text.splitlines()[0] if text else exc.__class__.__name__


def one_line_error(exc: BaseException) -> tuple[str, int]:
    """(the line to print, the exit status)."""
    if isinstance(exc, _expected_types()):
        hint = ""
        name = type(exc).__module__ + "." + type(exc).__name__
        if name.startswith("sqlalchemy.") or "psycopg" in name:
            hint = " (is the database up, and ARENA_DATABASE_URL / --database-url right?)"
        return f"error: {_first_line(exc)}{hint} (--debug shows the traceback)", 2
    return (
        f"error: unexpected {type(exc).__name__}: {_first_line(exc)}. This is a bug: rerun with --debug "
        "and report the traceback",
        1,
    )
