"""The store's tables, part one: shared column types, miners, submissions, suites, problems, the ledger, nonces,
copy refusals.

The race's tables are in ``models_race``, the local chain's in
``models_chain``; ``arena.store`` imports all three so ``Base.metadata`` is
the whole schema. The schema itself changes only through the Alembic
revisions in ``migrations/``; a test proves these models and the migrated
database agree.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum

from sqlalchemy import (
    JSON,
    BigInteger,
    DateTime,
    Enum,
    ForeignKey,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    TypeDecorator,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from arena.problems.ledger import EventKind
from arena.problems.model import Difficulty, Intent
from arena.problems.partitions import PartitionName

# Named constraints: Alembic can only drop or alter what has a stable name, on both backends.
NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_N_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# JSONB on PostgreSQL (indexable, compact, compared by value); SQLite stores JSON text.
JSONType = JSON().with_variant(JSONB(), "postgresql")

HOTKEY = 64  # ss58 addresses are 47-48 characters; room for other encodings
HASH = 64  # hex sha256
ID = 200  # problem, cluster and suite ids


def utcnow() -> datetime:
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on both backends.

    SQLite has no time zone type and hands back naive values; comparing those
    with aware ones raises. So every value is stored as UTC and read back aware.
    A naive value is refused rather than guessed.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value.isoformat()} given to the store; pass a timezone-aware one")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def str_enum(enum: type[StrEnum], name: str) -> Enum:
    """A portable enum column: VARCHAR plus a named CHECK constraint (no PostgreSQL enum type to migrate)."""
    return Enum(
        enum,
        name=name,
        native_enum=False,
        create_constraint=True,
        length=24,
        values_callable=lambda members: [m.value for m in members],
        validate_strings=True,
    )


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class SubmissionStatus(StrEnum):
    accepted = "accepted"  # passed intake, waiting for qualifying
    rejected = "rejected"  # failed a check; rejection_reason says which
    qualifying = "qualifying"  # running the public suite
    qualified = "qualified"  # close enough to the leader to race
    racing = "racing"
    champion = "champion"
    retired = "retired"  # superseded: no longer races


class Miner(Base):
    __tablename__ = "miners"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    hotkey: Mapped[str] = mapped_column(String(HOTKEY), unique=True)
    uid: Mapped[int | None] = mapped_column(Integer)
    first_seen: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class Submission(Base):
    __tablename__ = "submissions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    hotkey: Mapped[str] = mapped_column(String(HOTKEY), ForeignKey("miners.hotkey"), index=True)
    agent_name: Mapped[str] = mapped_column(String(200))
    code: Mapped[bytes] = mapped_column(LargeBinary)
    sha256: Mapped[str] = mapped_column(String(HASH), index=True)
    ast_hash: Mapped[str] = mapped_column(String(HASH), index=True)  # normalised AST: names and literals abstracted
    minhash: Mapped[bytes | None] = mapped_column(LargeBinary)  # little-endian uint64 hash values (datasketch)
    size: Mapped[int] = mapped_column(Integer)
    submitted_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)
    commitment_block: Mapped[int | None] = mapped_column(Integer)  # earlier commitment wins a copy dispute
    status: Mapped[SubmissionStatus] = mapped_column(
        str_enum(SubmissionStatus, "submission_status"), default=SubmissionStatus.accepted, index=True
    )
    rejection_reason: Mapped[str | None] = mapped_column(Text)
    embargo_until: Mapped[datetime | None] = mapped_column(UTCDateTime())


class SuiteRow(Base):
    """An imported suite. ``manifest`` is the sealed manifest, seed included: never serve it."""

    __tablename__ = "suites"

    id: Mapped[str] = mapped_column(String(ID), primary_key=True)  # the suite's version name
    content_hash: Mapped[str] = mapped_column(String(HASH), unique=True)
    manifest: Mapped[dict] = mapped_column(JSONType)
    imported_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class ProblemRow(Base):
    """A suite's problem as built. ``partition`` is the partition at build time; the ledger says what moved since."""

    __tablename__ = "problems"

    suite_id: Mapped[str] = mapped_column(String(ID), ForeignKey("suites.id"), primary_key=True)
    problem_id: Mapped[str] = mapped_column(String(ID), primary_key=True)
    cluster_id: Mapped[str] = mapped_column(String(ID), index=True)
    partition: Mapped[PartitionName] = mapped_column(str_enum(PartitionName, "partition"))
    intent: Mapped[Intent] = mapped_column(str_enum(Intent, "intent"))
    difficulty: Mapped[Difficulty] = mapped_column(str_enum(Difficulty, "difficulty"))
    # Problem.to_row(): the official shape plus our keys. Plain JSON, not JSONB, on PostgreSQL too: the text
    # keeps the file's key order, so the public file the API rebuilds from these rows has the manifest's sha256.
    row: Mapped[dict] = mapped_column(JSON)


class LedgerEventRow(Base):
    """One event of a suite's hash-chained ledger. Append-only: triggers refuse UPDATE and DELETE."""

    __tablename__ = "ledger_events"

    suite_id: Mapped[str] = mapped_column(String(ID), ForeignKey("suites.id"), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[str] = mapped_column(String(40))  # the file's exact text: the event hash covers it
    cycle: Mapped[int] = mapped_column(Integer)
    event: Mapped[EventKind] = mapped_column(str_enum(EventKind, "ledger_event_kind"))
    cluster_ids: Mapped[list[str]] = mapped_column(JSONType)
    draw_seed: Mapped[str | None] = mapped_column(String(200))
    prev_hash: Mapped[str] = mapped_column(String(HASH))
    hash: Mapped[str] = mapped_column(String(HASH), unique=True)


class Nonce(Base):
    """Signed-request nonces already accepted: replay protection shared by every API process."""

    __tablename__ = "nonces"

    hotkey: Mapped[str] = mapped_column(String(HOTKEY), primary_key=True)
    nonce: Mapped[int] = mapped_column(BigInteger, primary_key=True)  # btauth/1: nanoseconds since the epoch
    seen_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)


class CopyRefusal(Base):
    """A submission refused as a copy of another hotkey's: each one draws on the hotkey's daily
    copy budget, so the copy check cannot be asked about embargoed code without end."""

    __tablename__ = "copy_refusals"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    hotkey: Mapped[str] = mapped_column(String(HOTKEY), index=True)
    check: Mapped[str] = mapped_column(String(32))  # exact_copy, ast_copy or near_copy
    sha256: Mapped[str] = mapped_column(String(HASH))  # of the refused file (its code is not kept)
    refused_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)
