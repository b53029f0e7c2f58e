"""Rotation: each race cycle draws a fresh race set from a suite's bank.

A draw takes ``n`` clusters of the race bank that no earlier cycle revealed
and one problem from each. One problem per cluster, not whole clusters,
because a race should measure ``n`` independent problems: a cluster's members
are variants of one problem, so racing several of them weighs that problem
several times over and makes a race's size depend on cluster sizes. Once one
member is shown the whole cluster counts as leaked, so it is never drawn again
and is retired, whole, to the train pool, where the unshown variants are
useful training data.

The draw is a function of (suite content hash, cycle, draw seed) and of the
ledger's events of earlier cycles only, so every validator with the same
suite and ledger draws the same problems, and a past cycle's draw can be
recomputed at any time.
"""

from __future__ import annotations

from pydantic import BaseModel

from arena.problems.ledger import EventKind, LedgerError, LedgerEvent, append_event
from arena.problems.partitions import PartitionName, rank
from arena.problems.suites import Suite, SuiteError


class BankExhausted(SuiteError):
    """The race bank has fewer unrevealed clusters than a draw asks for."""


def normalize_seed(draw_seed: str) -> str:
    """A draw seed is hex (a block hash, say), with or without ``0x``; lower-cased."""
    seed = draw_seed.strip().lower().removeprefix("0x")
    if not seed or any(c not in "0123456789abcdef" for c in seed):
        raise SuiteError(f"draw seed {draw_seed!r} is not a hex string")
    return seed


def _unrevealed(suite: Suite, events: list[LedgerEvent], cycle: int) -> list[str]:
    """Bank clusters no event of a cycle before ``cycle`` revealed."""
    revealed = {cid for e in events if e.event is EventKind.revealed and e.cycle < cycle for cid in e.cluster_ids}
    return [cid for cid in suite.manifest.clusters[PartitionName.race_bank] if cid not in revealed]


def _intact_events(suite: Suite) -> list[LedgerEvent]:
    ledger = suite.read_ledger()
    failures = ledger.failures + suite.replay_events(ledger.events).failures
    if failures:
        raise LedgerError(f"{suite.ledger_path}: the ledger is not intact: " + "; ".join(failures))
    return ledger.events


def _draw(suite: Suite, events: list[LedgerEvent], cycle: int, seed: str, n: int) -> list[tuple[str, str]]:
    """(cluster id, problem id) pairs, in draw order."""
    if n < 1:
        raise SuiteError(f"a draw needs n >= 1 (got {n})")
    if cycle < 0:
        raise SuiteError(f"cycle must be >= 0 (got {cycle})")
    key = suite.manifest.content_hash
    bank_problems = suite.problems(PartitionName.race_bank)  # verified against the manifest first
    available = _unrevealed(suite, events, cycle)
    if len(available) < n:
        bank = len(suite.manifest.clusters[PartitionName.race_bank])
        raise BankExhausted(
            f"race bank exhausted: cycle {cycle} asks for {n} clusters but only {len(available)} of the bank's "
            f"{bank} clusters are unrevealed ({bank - len(available)} revealed in earlier cycles); "
            f"draw fewer (--n {len(available)}) or build a new suite"
            if available
            else f"race bank exhausted: all {bank} bank clusters were revealed before cycle {cycle}; build a new suite"
        )
    chosen = sorted(available, key=lambda cid: rank(key, str(cycle), seed, cid))[:n]
    members: dict[str, list[str]] = {}
    for problem in bank_problems:
        members.setdefault(problem.cluster_id or "", []).append(problem.id)
    return [(cid, min(members[cid], key=lambda pid: rank(key, str(cycle), seed, cid, pid))) for cid in chosen]


def draw(suite: Suite, cycle: int, draw_seed_hex: str, n: int) -> list[str]:
    """The problem ids cycle ``cycle`` races, from clusters no earlier cycle revealed.

    Deterministic from (suite content hash, cycle, draw seed) and the ledger's
    earlier cycles; raises BankExhausted (naming the counts) when fewer than
    ``n`` clusters are left. The held-out and public partitions are never drawn.
    """
    events = _intact_events(suite)
    return [pid for _, pid in _draw(suite, events, cycle, normalize_seed(draw_seed_hex), n)]


def record_draw(suite: Suite, cycle: int, draw_seed_hex: str, n: int) -> list[str]:
    """Draw and append the reveal to the ledger: one reveal per cycle, cycles only move forward."""
    seed = normalize_seed(draw_seed_hex)
    drawn: list[tuple[str, str]] = []

    def decide(events: list[LedgerEvent]) -> list[str]:
        _refuse_unsound(suite, events)
        if events and events[-1].cycle > cycle:
            raise SuiteError(f"the ledger is already at cycle {events[-1].cycle}; cannot record cycle {cycle}")
        if any(e.event is EventKind.revealed and e.cycle == cycle for e in events):
            raise SuiteError(f"cycle {cycle} already has a recorded reveal; a cycle is drawn once")
        drawn.extend(_draw(suite, events, cycle, seed, n))
        return [cid for cid, _ in drawn]

    append_event(
        suite.ledger_path,
        suite.manifest.content_hash,
        cycle=cycle,
        kind=EventKind.revealed,
        decide=decide,
        draw_seed=seed,
    )
    return [pid for _, pid in drawn]


def retire(suite: Suite, cycle: int) -> LedgerEvent:
    """After cycle ``cycle``'s race: move every revealed, not yet retired cluster to the train pool."""

    def decide(events: list[LedgerEvent]) -> list[str]:
        state = _refuse_unsound(suite, events)
        if events and events[-1].cycle > cycle:
            raise SuiteError(f"the ledger is already at cycle {events[-1].cycle}; cannot retire at cycle {cycle}")
        pending = sorted(cid for cid, at in state.revealed.items() if at <= cycle and cid not in state.retired)
        if not pending:
            raise SuiteError(f"nothing to retire: no cluster revealed up to cycle {cycle} is still unretired")
        return pending

    return append_event(
        suite.ledger_path, suite.manifest.content_hash, cycle=cycle, kind=EventKind.retired, decide=decide
    )


def _refuse_unsound(suite: Suite, events: list[LedgerEvent]):
    state = suite.replay_events(events)
    if state.failures:
        raise LedgerError(f"{suite.ledger_path}: refusing to append to an unsound ledger: " + "; ".join(state.failures))
    return state


class PartitionState(BaseModel):
    """Cluster ids per partition after the first ``seq`` ledger events (0: as built)."""

    seq: int
    head: str  # the chain hash after those events: publish it to pin this state
    last_cycle: int | None
    public: list[str]
    race_bank: list[str]  # not yet revealed: what later cycles can draw
    revealed: list[str]  # revealed by a race, not yet retired
    train_pool: list[str]  # the train pool as built plus every retired cluster
    heldout: list[str]


def partition_at(suite: Suite, seq: int | None = None) -> PartitionState:
    """Reconstruct the partition as it stood after ledger event ``seq`` (default: the latest)."""
    events = _intact_events(suite)
    if seq is None:
        seq = len(events)
    if not 0 <= seq <= len(events):
        raise SuiteError(f"seq {seq} is outside the ledger (it has {len(events)} events; 0 is the suite as built)")
    state = suite.replay_events(events[:seq])
    clusters = suite.manifest.clusters
    return PartitionState(
        seq=seq,
        head=state.head,
        last_cycle=state.last_cycle,
        public=clusters[PartitionName.public],
        race_bank=[c for c in clusters[PartitionName.race_bank] if c not in state.revealed],
        revealed=sorted(c for c in state.revealed if c not in state.retired),
        train_pool=sorted([*clusters[PartitionName.train_pool], *state.retired]),
        heldout=clusters[PartitionName.heldout],
    )
