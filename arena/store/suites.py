"""Suites in the store: import a suite directory (problems and ledger), read them back.

A suite's problems never change after publication, so importing the same
suite again adds nothing; its ledger only grows, so a re-import appends the
events the store does not have yet, after checking that the ones it has are
the same (a ledger that was rewritten is refused, naming the first
difference). The file ledger stays the source the race appends to
(``arena.problems.draw``); the store's copy is what the API and researchers query.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict
from sqlalchemy import Table, func, select
from sqlalchemy.orm import Session

from arena.problems.ledger import LedgerEvent, LedgerState, replay
from arena.problems.model import Difficulty, Intent, Problem
from arena.problems.official import parse_row
from arena.problems.partitions import PartitionName
from arena.problems.suites import Suite, SuiteError, SuiteManifest
from arena.store.db import StoreError
from arena.store.models import LedgerEventRow, ProblemRow, SuiteRow, utcnow
from arena.store.models_race import Cycle

INSERT_CHUNK = 1000


class SuiteImport(BaseModel):
    suite_id: str
    content_hash: str
    new_suite: bool  # False: the suite was already in the store
    problems_added: int
    events_added: int
    ledger_seq: int  # events the store now holds for this suite


class SuiteInfo(BaseModel):
    id: str
    content_hash: str
    imported_at: datetime
    problem_count: int
    ledger_seq: int


def import_suite(session: Session, suite_dir: str | Path) -> SuiteImport:
    """Import a suite directory (see ``arena.problems.suites``); idempotent, and syncs new ledger events.

    Every problem file is verified against the manifest and the ledger's hash
    chain and replay are checked before anything is written; any failure is a
    StoreError naming the file and what is wrong.
    """
    try:
        suite = Suite(suite_dir)
        ledger = suite.read_ledger()
        failures = ledger.failures + suite.replay_events(ledger.events).failures
        if failures:
            raise StoreError(f"{suite.ledger_path}: the ledger is not intact: " + "; ".join(failures))
        manifest = suite.manifest
        existing = session.get(SuiteRow, manifest.version)
        if existing is not None and existing.content_hash != manifest.content_hash:
            raise StoreError(
                f"{suite.path}: suite version {manifest.version} is already in the store with content hash "
                f"{existing.content_hash}, not {manifest.content_hash}; a published version never changes"
            )
        other = session.execute(
            select(SuiteRow.id).where(SuiteRow.content_hash == manifest.content_hash)
        ).scalar_one_or_none()
        if existing is None and other is not None:
            raise StoreError(f"{suite.path}: the same problems are already in the store as suite {other}")
        added = 0
        if existing is None:
            groups = {name: suite.problems(name) for name in PartitionName}  # verified against the manifest
            session.add(
                SuiteRow(
                    id=manifest.version,
                    content_hash=manifest.content_hash,
                    manifest=manifest.model_dump(mode="json"),
                    imported_at=utcnow(),
                )
            )
            session.flush()
            added = _add_problems(session, manifest.version, groups)
    except SuiteError as exc:
        raise StoreError(str(exc)) from None
    events_added = _sync_ledger(session, manifest.version, ledger.events, suite.ledger_path)
    return SuiteImport(
        suite_id=manifest.version,
        content_hash=manifest.content_hash,
        new_suite=existing is None,
        problems_added=added,
        events_added=events_added,
        ledger_seq=len(ledger.events),
    )


def _add_problems(session: Session, suite_id: str, groups: dict[PartitionName, list[Problem]]) -> int:
    rows = [
        {
            "suite_id": suite_id,
            "problem_id": problem.id,
            "cluster_id": problem.cluster_id,
            "partition": partition,
            "intent": problem.intent,
            "difficulty": problem.difficulty,
            "row": problem.to_row(),
        }
        for partition, problems in groups.items()
        for problem in problems
    ]
    table = ProblemRow.__table__
    assert isinstance(table, Table)  # a mapped class's table (typed as any FROM clause)
    for start in range(0, len(rows), INSERT_CHUNK):
        session.execute(table.insert(), rows[start : start + INSERT_CHUNK])
    return len(rows)


def _sync_ledger(session: Session, suite_id: str, events: list[LedgerEvent], path: Path) -> int:
    stored = ledger_events(session, suite_id)
    for have, given in zip(stored, events, strict=False):
        if have.hash != given.hash:
            raise StoreError(
                f"{path}:{given.seq}: event hash {given.hash} differs from the stored {have.hash} for suite "
                f"{suite_id}; the ledger was rewritten after the store imported it"
            )
    if len(stored) > len(events):
        raise StoreError(
            f"{path}: has {len(events)} events but the store already holds {len(stored)} for suite {suite_id}; "
            f"the ledger only grows (was it cut off or replaced?)"
        )
    new = events[len(stored) :]
    for event in new:
        session.add(LedgerEventRow(suite_id=suite_id, **event.model_dump(mode="json")))
    session.flush()
    return len(new)


def ledger_events(session: Session, suite_id: str) -> list[LedgerEvent]:
    rows = session.scalars(
        select(LedgerEventRow).where(LedgerEventRow.suite_id == suite_id).order_by(LedgerEventRow.seq)
    )
    return [
        LedgerEvent(
            seq=row.seq,
            at=row.at,
            cycle=row.cycle,
            event=row.event,
            cluster_ids=list(row.cluster_ids),
            draw_seed=row.draw_seed,
            prev_hash=row.prev_hash,
            hash=row.hash,
        )
        for row in rows
    ]


def suite_manifest(session: Session, suite_id: str) -> SuiteManifest:
    """The sealed manifest (seed included: for the validator, never for the API)."""
    row = session.get(SuiteRow, suite_id)
    if row is None:
        raise StoreError(f"suite {suite_id} is not in the store (import it with `arena suite import DIR`)")
    return SuiteManifest.model_validate(row.manifest)


def ledger_state(session: Session, suite_id: str) -> LedgerState:
    """Which race-bank clusters were revealed and retired, replayed from the stored ledger."""
    manifest = suite_manifest(session, suite_id)
    bank = set(manifest.clusters[PartitionName.race_bank])
    elsewhere = {cid: name.value for name, ids in manifest.clusters.items() for cid in ids if cid not in bank}
    return replay(ledger_events(session, suite_id), manifest.content_hash, bank, elsewhere)


def suite_problems(session: Session, suite_id: str, partition: PartitionName | None = None) -> list[Problem]:
    """A suite's problems (of one partition as built), in id order."""
    statement = select(ProblemRow.row, ProblemRow.suite_id).where(ProblemRow.suite_id == suite_id)
    if partition is not None:
        statement = statement.where(ProblemRow.partition == partition)
    rows = session.execute(statement.order_by(ProblemRow.problem_id)).all()
    return [parse_row(row.row, source=f"suite {suite_id}") for row in rows]


def get_problem(session: Session, suite_id: str, problem_id: str) -> Problem | None:
    row = session.get(ProblemRow, (suite_id, problem_id))
    return None if row is None else parse_row(row.row, source=f"suite {suite_id}")


class ProblemRecord(BaseModel):
    """A stored problem as the suite filed it: its partition, cluster and the official row (gold included)."""

    model_config = ConfigDict(from_attributes=True)

    suite_id: str
    problem_id: str
    cluster_id: str
    partition: PartitionName
    intent: Intent
    difficulty: Difficulty
    row: dict


def problem_record(session: Session, suite_id: str, problem_id: str) -> ProblemRecord | None:
    row = session.get(ProblemRow, (suite_id, problem_id))
    return None if row is None else ProblemRecord.model_validate(row)


def current_suite_id(session: Session) -> str | None:
    """The suite of the newest cycle, else the newest imported suite (None: no suite yet)."""
    suite_id = session.scalars(select(Cycle.suite_id).order_by(Cycle.number.desc()).limit(1)).first()
    if suite_id is None:
        suite_id = session.scalars(select(SuiteRow.id).order_by(SuiteRow.imported_at.desc(), SuiteRow.id)).first()
    return suite_id


def list_suites(session: Session) -> list[SuiteInfo]:
    problems = (
        select(ProblemRow.suite_id, func.count().label("n")).group_by(ProblemRow.suite_id).subquery("problem_counts")
    )
    events = select(LedgerEventRow.suite_id, func.count().label("n")).group_by(LedgerEventRow.suite_id).subquery("seqs")
    statement = (
        select(SuiteRow.id, SuiteRow.content_hash, SuiteRow.imported_at, problems.c.n, events.c.n.label("seq"))
        .outerjoin(problems, problems.c.suite_id == SuiteRow.id)
        .outerjoin(events, events.c.suite_id == SuiteRow.id)
        .order_by(SuiteRow.imported_at, SuiteRow.id)
    )
    return [
        SuiteInfo(
            id=r.id,
            content_hash=r.content_hash,
            imported_at=r.imported_at,
            problem_count=r.n or 0,
            ledger_seq=r.seq or 0,
        )  # fmt: skip
        for r in session.execute(statement)
    ]
