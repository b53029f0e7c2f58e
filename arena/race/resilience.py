"""Surviving a database that goes away for a moment (a restart, a failover).

Every store call of the race runs through ``in_thread``: off the event loop
(the loop also serves the episodes' tool servers and proxies, which must not
stall on a SQLite lock or a slow query), and retried with backoff while the
error is a lost or refused connection. A real error (a constraint, a bug)
is raised at once. SQLAlchemy's ``pool_pre_ping`` replaces the dead pooled
connections once the server is back.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TypeVar

import psycopg
from procrastinate import exceptions as procrastinate_exceptions
from sqlalchemy import exc as sa_exc

logger = logging.getLogger(__name__)

T = TypeVar("T")

OUTAGE_BUDGET_S = 120.0  # how long one call keeps retrying before the error is raised
_FIRST_PAUSE_S, _LONGEST_PAUSE_S = 0.25, 5.0


def is_transient(exc: BaseException) -> bool:
    """A connection-level failure that a retry after the server is back can fix."""
    if isinstance(exc, sa_exc.DBAPIError) and exc.connection_invalidated:
        return True
    if isinstance(exc, sa_exc.OperationalError | sa_exc.InterfaceError):
        return True  # PostgreSQL: server gone / refusing; SQLite: locked beyond the busy timeout
    if isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError):
        return True
    if isinstance(exc, procrastinate_exceptions.ConnectorException):
        cause = exc.__cause__ or exc.__context__
        return cause is None or is_transient(cause)
    return False


async def in_thread(fn: Callable[..., T], *args, budget_s: float = OUTAGE_BUDGET_S) -> T:
    """``fn(*args)`` in a worker thread, retried while it fails transiently (up to ``budget_s``)."""
    return await retry_async(lambda: asyncio.to_thread(fn, *args), what=getattr(fn, "__name__", "store call"),
                             budget_s=budget_s)  # fmt: skip


async def retry_async(call: Callable, *, what: str, budget_s: float = OUTAGE_BUDGET_S):
    """Await ``call()`` until it succeeds or fails for a non-transient reason or the budget is spent."""
    deadline = time.monotonic() + budget_s
    pause = _FIRST_PAUSE_S
    while True:
        try:
            return await call()
        except Exception as exc:
            if not is_transient(exc) or time.monotonic() + pause > deadline:
                raise
            logger.warning("%s: database unavailable (%s); retrying in %.2fs", what, _first_line(exc), pause)
            await asyncio.sleep(pause)
            pause = min(pause * 2, _LONGEST_PAUSE_S)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"
