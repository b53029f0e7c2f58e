"""Engines and sessions for the store, chosen by one URL.

PostgreSQL is the production store; a SQLite file is the embedded default so
a local race needs no server. The URL comes from the caller, else
``ARENA_DATABASE_URL``, else ``sqlite:///./arena.db``. ``postgresql://`` (and
``postgres://``, as Heroku-style tools write it) is mapped to psycopg 3,
the only PostgreSQL driver installed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, overload

import orjson
from pydantic import BaseModel
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.orm import Session, sessionmaker

ENV_VAR = "ARENA_DATABASE_URL"
DEFAULT_URL = "sqlite:///./arena.db"
SQLITE_BUSY_TIMEOUT_MS = 30_000

SessionFactory = Callable[[], Session]


class StoreError(ValueError):
    """A store operation refused: bad URL, unknown row, a write that would break an invariant."""


class UnstorableValue(StoreError):
    """A value the store's JSON encoding refuses (nested past its recursion limit, an integer over 64 bits):
    the data's fault, not the database's; the same value is refused however often it is tried."""


def resolve_url(url: str | URL | None = None) -> URL:
    """The URL to use, normalised: explicit, else ``ARENA_DATABASE_URL``, else the SQLite default."""
    raw = url if url is not None else os.environ.get(ENV_VAR) or DEFAULT_URL
    try:
        parsed = make_url(raw)
    except ArgumentError:
        shown = raw if isinstance(raw, str) else raw.render_as_string()
        raise StoreError(
            f"database URL {shown!r} is not a URL (expected sqlite:///PATH or postgresql://USER@HOST:PORT/DB)"
        ) from None
    backend = parsed.get_backend_name()
    if backend in ("postgresql", "postgres"):
        if parsed.drivername in ("postgresql", "postgres"):
            return parsed.set(drivername="postgresql+psycopg")
        if parsed.get_driver_name() != "psycopg":
            raise StoreError(
                f"{safe_url(parsed)}: driver {parsed.get_driver_name()!r} is not supported; "
                f"use postgresql:// (psycopg 3)"
            )
        return parsed
    if backend == "sqlite":
        return parsed
    raise StoreError(f"{safe_url(parsed)}: unsupported database {backend!r}; use sqlite:///PATH or postgresql://...")


def safe_url(url: str | URL) -> str:
    """The URL with its password masked, for messages and logs."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "<unparseable URL>"


def is_sqlite(bind: Engine | Session) -> bool:
    engine = bind.get_bind() if isinstance(bind, Session) else bind
    return engine.dialect.name == "sqlite"


def create_store_engine(url: str | URL | None = None, *, echo: bool = False) -> Engine:
    """An engine for ``url`` with the settings each backend needs to be safe under concurrency."""
    parsed = resolve_url(url)
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_engine(parsed, echo=echo)
    # pre_ping: a validator survives a database restart by replacing dead pooled connections.
    return create_engine(parsed, echo=echo, pool_pre_ping=True, future=True)


def _sqlite_engine(url: URL, *, echo: bool) -> Engine:
    if url.database and url.database != ":memory:" and not url.database.startswith("file:"):
        Path(url.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, echo=echo, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record) -> None:
        # pysqlite's own transaction handling would open deferred transactions behind our back;
        # turn it off and emit BEGIN ourselves (the SQLAlchemy-documented recipe).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")  # short commits; several processes share the file safely
        cursor.execute("PRAGMA foreign_keys=ON")  # off by default in SQLite; our schema relies on them
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")  # queue for the write lock, don't fail
        cursor.execute("PRAGMA synchronous=NORMAL")  # durable at checkpoints; safe with WAL
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection) -> None:
        # IMMEDIATE takes the write lock at BEGIN: a deferred transaction that reads and then writes
        # fails outright (SQLITE_BUSY, no waiting) when another writer committed in between. SQLite has
        # one writer anyway; queueing whole (short) transactions, reads included, costs little and
        # makes every read-then-write safe without retry loops.
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def create_session_factory(engine: Engine) -> sessionmaker[Session]:
    # expire_on_commit=False: repositories hand back values that stay readable after their transaction.
    return sessionmaker(engine, expire_on_commit=False, future=True)


@dataclass
class Store:
    """An engine and its session factory: what a process opens once and shares."""

    engine: Engine
    sessions: sessionmaker[Session]

    @property
    def url(self) -> str:
        return safe_url(self.engine.url)

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        with transaction(self.sessions) as session:
            yield session

    def dispose(self) -> None:
        self.engine.dispose()


def open_store(url: str | URL | None = None, *, echo: bool = False) -> Store:
    engine = create_store_engine(url, echo=echo)
    return Store(engine=engine, sessions=create_session_factory(engine))


@contextmanager
def transaction(factory: SessionFactory) -> Iterator[Session]:
    """A session whose work commits on success and rolls back on any error."""
    with factory() as session, session.begin():
        yield session


def dialect_insert(session: Session, table):
    """INSERT with ON CONFLICT support for the session's backend (both spell it the same way)."""
    insert = sqlite_insert if is_sqlite(session) else postgresql_insert
    return insert(table)


# A mapping comes back a dict (the columns typed dict take it as one); a model may be a list (a RootModel).
@overload
def jsonable(value: Mapping[Any, Any]) -> dict: ...
@overload
def jsonable(value: object) -> dict | list: ...
def jsonable(value: object) -> dict | list:
    """A pydantic model or mapping as plain JSON values (datetimes as ISO strings, NaN as null:
    JSONB refuses NaN), so what is stored reads back the same on both backends."""
    try:
        if isinstance(value, BaseModel):
            value = value.model_dump(mode="json")
        return orjson.loads(orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY))
    except (TypeError, ValueError) as exc:
        # The value's own content (too deep, a lone surrogate, a huge integer) is the data's fault; anything else
        # (an object of a type JSON has no form for) is the caller's: a bug, never charged to whoever wrote the data.
        error = UnstorableValue if refuses_content(exc) else StoreError
        raise error(f"value cannot be stored as JSON: {exc}") from None


# What orjson and pydantic say when the content itself cannot be written (their messages, lower-cased).
_CONTENT_REFUSALS = ("recursion limit", "serialization depth", "surrogates not allowed", "64-bit range", "utf-8")


def refuses_content(exc: BaseException) -> bool:
    """An encoder's refusal of a value's content (too deep, a lone surrogate, a huge integer), not of its type."""
    if isinstance(exc, RecursionError | UnicodeError):
        return True
    return isinstance(exc, TypeError | ValueError) and any(sign in str(exc).lower() for sign in _CONTENT_REFUSALS)
