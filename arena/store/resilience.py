"""Surviving a database that goes away for a moment (a restart, a failover, a read-only spell).

Every store call of the race runs through ``in_thread``: off the event loop
(the loop also serves the episodes' tool servers and proxies, which must not
stall on a SQLite lock or a slow query), and retried with backoff while the
error is transient. A real error (a constraint, a bug) is raised at once.
SQLAlchemy's ``pool_pre_ping`` replaces the dead pooled connections once the
server is back. The dispatcher, the workers (store calls and the task queue's
own) and the validator's cycle loop all retry through ``retry_async`` /
``Backoff`` here, with the one classification ``is_transient``.

Transient, by PostgreSQL's SQLSTATE (the error's class, not its wording):

========  =====================================================================
08xxx     connection exception: refused, lost, broken mid-query
25006     read-only transaction: a failover left us on a standby, or
          ``default_transaction_read_only`` was switched on for maintenance
57P01-03  admin / crash shutdown, "the database system is starting up"
40001     serialization failure (retrying the transaction is the documented fix)
40P01     deadlock detected (idem)
53300     too many connections
========  =====================================================================

An error without a SQLSTATE from libpq (the server vanished before answering)
counts as a connection exception; on SQLite only "database is locked/busy" does.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import Callable
from typing import TypeVar

import psycopg
from procrastinate import exceptions as procrastinate_exceptions
from sqlalchemy import exc as sa_exc

from arena.store.db import StoreError, UnstorableValue

logger = logging.getLogger(__name__)

T = TypeVar("T")

OUTAGE_BUDGET_S = 120.0  # how long one call keeps retrying before the error is raised
_FIRST_PAUSE_S, LONGEST_PAUSE_S = 0.25, 5.0

TRANSIENT_SQLSTATES = frozenset({"25006", "57P01", "57P02", "57P03", "40001", "40P01", "53300"})
TRANSIENT_SQLSTATE_CLASSES = ("08",)


def is_transient(exc: BaseException) -> bool:
    """An error that the same call, retried once the database is back (or writable again), can get past."""
    if isinstance(exc, sa_exc.DBAPIError):
        if exc.connection_invalidated:
            return True
        return exc.orig is not None and is_transient(exc.orig)
    if isinstance(exc, sa_exc.DisconnectionError | sa_exc.TimeoutError):
        return True  # a pool checkout that found only dead connections, or none in time
    if isinstance(exc, psycopg.Error):
        sqlstate = exc.sqlstate
        if sqlstate is None:
            # No answer from the server at all (libpq: refused, closed, pool timeout): a connection failure.
            return isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError)
        return sqlstate in TRANSIENT_SQLSTATES or sqlstate.startswith(TRANSIENT_SQLSTATE_CLASSES)
    if isinstance(exc, sqlite3.OperationalError):
        text = str(exc).lower()
        return "locked" in text or "busy" in text  # the write lock held beyond the busy timeout
    if isinstance(exc, procrastinate_exceptions.ConnectorException):
        cause = exc.__cause__ or exc.__context__
        return cause is None or is_transient(cause)
    return False


# Refusals of the data itself: retrying the same value can never succeed. 22: data exception (22P05 untranslatable
# character: a U+0000 in JSONB; 22021 bad UTF-8; 22003 number out of range), 54: program limit exceeded (54000: a
# JSONB document over 255 MiB, 54001: a statement too complex, as a JSON nested too deep).
DATA_SQLSTATE_CLASSES = ("22", "54")


def is_data_error(exc: BaseException) -> bool:
    """An error caused by the value written, not by the database: the same write is refused every time.

    The race charges such a refusal of a finished episode to the submission whose content it was
    (``arena.race.episode_jobs``); any other non-transient refusal is the validator's."""
    if isinstance(exc, StoreError):
        return isinstance(exc, UnstorableValue)
    if isinstance(exc, sa_exc.StatementError):
        if isinstance(exc, sa_exc.DataError):
            return True
        return exc.orig is not None and is_data_error(exc.orig)
    if isinstance(exc, psycopg.Error):
        return exc.sqlstate is not None and exc.sqlstate.startswith(DATA_SQLSTATE_CLASSES)
    if isinstance(exc, sqlite3.DataError):
        return True  # SQLITE_TOOBIG, SQLITE_MISMATCH: a value too big or of the wrong kind
    # An encoder that met a structure too deep, a lone surrogate, a number too big. Nothing broader: a validator
    # bug must never be charged to a submission.
    return isinstance(exc, RecursionError | UnicodeError | OverflowError)


class Backoff:
    """Pauses between tries: doubling from ``first_s`` up to ``longest_s``; ``reset`` after a success."""

    def __init__(self, first_s: float = _FIRST_PAUSE_S, longest_s: float = LONGEST_PAUSE_S) -> None:
        self.first_s, self.longest_s = first_s, longest_s
        self.pause = first_s

    def next(self) -> float:
        pause = self.pause
        self.pause = min(self.pause * 2, self.longest_s)
        return pause

    def reset(self) -> None:
        self.pause = self.first_s


class StoreWeather:
    """When this process last saw the database fail transiently (or started: it knows nothing before).

    After an outage every worker's heartbeat is old, the live ones' too: whoever judges workers dead by
    their heartbeats asks ``calm_for`` first and waits until the store has been reachable for a whole
    heartbeat timeout plus the longest retry pause, so the live workers have had the time to beat again.
    """

    def __init__(self) -> None:
        self.last_failure = time.monotonic()

    def failed(self) -> None:
        self.last_failure = time.monotonic()

    def calm_for(self) -> float:
        return time.monotonic() - self.last_failure


weather = StoreWeather()


async def in_thread(fn: Callable[..., T], *args, budget_s: float = OUTAGE_BUDGET_S) -> T:
    """``fn(*args)`` in a worker thread, retried while it fails transiently (up to ``budget_s``)."""
    return await retry_async(lambda: asyncio.to_thread(fn, *args), what=getattr(fn, "__name__", "store call"),
                             budget_s=budget_s)  # fmt: skip


async def retry_async(call: Callable, *, what: str, budget_s: float = OUTAGE_BUDGET_S):
    """Await ``call()`` until it succeeds or fails for a non-transient reason or the budget is spent."""
    deadline = time.monotonic() + budget_s
    pauses = Backoff()
    while True:
        try:
            return await call()
        except Exception as exc:
            if not is_transient(exc):
                raise
            weather.failed()
            pause = pauses.next()
            if time.monotonic() + pause > deadline:
                raise
            logger.warning("%s: database unavailable (%s); retrying in %.2fs", what, first_line(exc), pause)
            await asyncio.sleep(pause)


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"
