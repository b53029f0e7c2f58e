"""The append-only, hash-chained ledger beside a suite.

A suite's files never change; what changes over time (which race-bank
clusters a race revealed, which of them then moved to the train pool) is
recorded here, one JSON event per line, so any past partition can be rebuilt
by replaying the first ``seq`` events. Each event carries the hash of the one
before it (the first one the suite's content hash), so an edited, removed or
inserted line breaks the chain and `arena suite check` names it. A chain
cannot show that its tail was cut off or that it was rewritten from scratch:
publish the head hash (``LedgerState.head``) where others can see it.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator


class LedgerError(ValueError):
    pass


class EventKind(StrEnum):
    revealed = "revealed"  # a race showed these clusters to miners
    retired = "retired"  # revealed clusters moved to the train pool after their race


class LedgerEvent(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seq: int = Field(ge=1)
    at: str
    cycle: int = Field(ge=0)
    event: EventKind
    cluster_ids: list[str] = Field(min_length=1)
    draw_seed: str | None = None
    prev_hash: str
    hash: str

    @field_validator("at")
    @classmethod
    def _iso_time(cls, value: str) -> str:
        datetime.fromisoformat(value)  # a ValueError becomes a validation error naming the field
        return value

    def content_hash(self) -> str:
        return event_hash(self.model_dump(mode="json", exclude={"hash"}))


def event_hash(fields: Mapping) -> str:
    return hashlib.sha256(orjson.dumps(dict(fields), option=orjson.OPT_SORT_KEYS)).hexdigest()


class LedgerRead(BaseModel):
    """The events that could be read, and what is wrong with the chain (empty when intact)."""

    events: list[LedgerEvent] = Field(default_factory=list)
    failures: list[str] = Field(default_factory=list)


def read_ledger(path: Path, genesis: str) -> LedgerRead:
    """Every event of the ledger and every break in its chain. A missing file is an empty ledger."""
    if not path.exists():
        return LedgerRead()
    return _parse(path.read_bytes(), path.name, genesis)


def _parse(data: bytes, name: str, genesis: str) -> LedgerRead:
    report = LedgerRead()
    prev, last_cycle = genesis, 0
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for lineno, raw in enumerate(lines, start=1):
        where = f"{name}:{lineno}"
        try:
            event = LedgerEvent.model_validate(orjson.loads(raw))
        except (orjson.JSONDecodeError, ValidationError) as exc:
            reason = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else "not JSON"
            report.failures.append(f"{where}: not a ledger event ({reason}); the chain cannot be followed past it")
            return report
        if event.seq != lineno:
            report.failures.append(f"{where}: seq is {event.seq}, expected {lineno} (a line was removed or inserted)")
        if event.prev_hash != prev:
            report.failures.append(
                f"{where}: prev_hash does not match the previous event's hash "
                f"(a line before it was changed, removed or inserted)"
            )
        if event.content_hash() != event.hash:
            report.failures.append(f"{where}: hash does not match the event's content (the line was edited)")
        if event.cycle < last_cycle:
            report.failures.append(f"{where}: cycle {event.cycle} comes after cycle {last_cycle}")
        prev, last_cycle = event.hash, max(last_cycle, event.cycle)
        report.events.append(event)
    return report


class LedgerState(BaseModel):
    """Where the race-bank clusters stand after some events."""

    seq: int = 0
    head: str  # hash of the last event replayed (the suite's content hash before any)
    last_cycle: int | None = None
    revealed: dict[str, int] = Field(default_factory=dict)  # cluster id -> cycle a race revealed it
    retired: dict[str, int] = Field(default_factory=dict)  # cluster id -> cycle it moved to the train pool
    failures: list[str] = Field(default_factory=list)


def replay(events: Iterable[LedgerEvent], genesis: str, bank: set[str], elsewhere: Mapping[str, str]) -> LedgerState:
    """Apply events in order; ``elsewhere`` maps every non-bank cluster to its partition
    so that a reveal of, say, a held-out cluster is named for what it is."""
    state = LedgerState(head=genesis)
    for event in events:
        where = f"seq {event.seq}"
        for cid in event.cluster_ids:
            if event.event is EventKind.revealed:
                if cid in bank:
                    if cid in state.revealed:
                        state.failures.append(
                            f"{where}: cluster {cid} revealed again (first in cycle {state.revealed[cid]})"
                        )
                    state.revealed.setdefault(cid, event.cycle)
                elif elsewhere.get(cid) == "heldout":
                    state.failures.append(f"{where}: held-out cluster {cid} was revealed (held-out is never raced)")
                elif cid in elsewhere:
                    state.failures.append(
                        f"{where}: cluster {cid} revealed but it is in {elsewhere[cid]}, not the bank"
                    )
                else:
                    state.failures.append(f"{where}: cluster {cid} revealed but the suite has no such cluster")
            else:
                if cid not in state.revealed:
                    state.failures.append(f"{where}: cluster {cid} retired before any race revealed it")
                elif cid in state.retired:
                    state.failures.append(f"{where}: cluster {cid} retired twice")
                state.retired.setdefault(cid, event.cycle)
        if event.event is EventKind.revealed and not event.draw_seed:
            state.failures.append(f"{where}: a reveal without its draw seed cannot be reproduced")
        state.seq, state.head, state.last_cycle = event.seq, event.hash, event.cycle
    return state


def append_event(
    path: Path,
    genesis: str,
    *,
    cycle: int,
    kind: EventKind,
    decide: Callable[[list[LedgerEvent]], list[str]],
    draw_seed: str | None = None,
) -> LedgerEvent:
    """Append one event under an exclusive lock; refuses when the chain is broken.

    ``decide`` sees the current events while the lock is held and returns the
    event's cluster ids (or raises to refuse), so two writers cannot both
    record against the same state.
    """
    with path.open("a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        data = handle.read()
        current = _parse(data, path.name, genesis)
        if current.failures:
            raise LedgerError(f"{path}: refusing to append to a broken ledger: " + "; ".join(current.failures))
        cluster_ids = decide(current.events)
        fields = {
            "seq": len(current.events) + 1,
            "at": datetime.now(UTC).isoformat(timespec="seconds"),
            "cycle": cycle,
            "event": kind.value,
            "cluster_ids": sorted(cluster_ids),
            "draw_seed": draw_seed,
            "prev_hash": current.events[-1].hash if current.events else genesis,
        }
        event = LedgerEvent.model_validate(fields | {"hash": event_hash(fields)})
        separator = b"\n" if data and not data.endswith(b"\n") else b""  # a hand-saved file may lack the last newline
        handle.write(separator + orjson.dumps(event.model_dump(mode="json")) + b"\n")
        handle.flush()
        os.fsync(handle.fileno())
    return event
