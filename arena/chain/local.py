"""``LocalChain``: the ``Chain`` protocol on the store's local-chain tables.

For local races and tests: blocks advance only when asked (``advance``), so a
run is reproducible; each block's hash is sha256 of (netuid, number, previous
hash), so a draw seeded by a block hash is too. Registration, commitments,
endpoints and weights follow the chain's rules that the arena relies on
(only registered hotkeys commit, publish or set weights; weights are
normalised) and are kept in the store, so every process on the database sees
one chain.
"""

from __future__ import annotations

import hashlib
import math

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from arena.chain.protocol import BlockInfo, Commitment, Neuron, WeightsReceipt
from arena.store.db import SessionFactory, StoreError, dialect_insert, transaction
from arena.store.models_chain import ChainBlock, ChainCommitment, ChainEndpoint, ChainNeuron, ChainWeights

GENESIS_PARENT = "0x" + "00" * 32
MAX_COMMITMENT = 1024  # the commitments pallet bounds a field; ours is a sha256 (64 hex characters)
RETRIES = 10  # concurrent writers of one block number or uid: the loser retries on the new head


class LocalChainError(StoreError):
    """A request the chain would refuse (unregistered hotkey, bad weights, unknown block)."""


def block_hash(netuid: int, number: int, previous: str) -> str:
    """The hash of local block ``number``: deterministic, so two runs of a local race draw the same problems."""
    return "0x" + hashlib.sha256(f"{netuid}:{number}:{previous}".encode()).hexdigest()


class LocalChain:
    """A chain in the store (``Chain`` protocol); ``netuid`` keeps several local subnets apart in one database."""

    def __init__(self, session_factory: SessionFactory, netuid: int = 15) -> None:
        self.sessions = session_factory
        self.netuid = netuid

    # --- blocks ---

    def _head(self, session: Session) -> ChainBlock | None:
        return session.scalars(
            select(ChainBlock).where(ChainBlock.netuid == self.netuid).order_by(ChainBlock.number.desc()).limit(1)
        ).one_or_none()

    def _head_or_genesis(self, session: Session) -> ChainBlock:
        head = self._head(session)
        if head is not None:
            return head
        genesis = {"netuid": self.netuid, "number": 0, "hash": block_hash(self.netuid, 0, GENESIS_PARENT)}
        session.execute(
            dialect_insert(session, ChainBlock).values(**genesis).on_conflict_do_nothing(),
        )
        head = self._head(session)
        assert head is not None
        return head

    def current_block(self) -> BlockInfo:
        with transaction(self.sessions) as session:
            head = self._head_or_genesis(session)
            return BlockInfo(number=head.number, hash=head.hash)

    def advance(self, n: int = 1) -> BlockInfo:
        """Produce ``n`` new blocks; returns the new head."""
        if n < 1:
            raise LocalChainError(f"advance needs n >= 1 (got {n})")
        for _ in range(RETRIES):
            try:
                with transaction(self.sessions) as session:
                    head = self._head_or_genesis(session)
                    number, previous = head.number, head.hash
                    for _ in range(n):
                        number, previous = number + 1, block_hash(self.netuid, number + 1, previous)
                        session.add(ChainBlock(netuid=self.netuid, number=number, hash=previous))
                    session.flush()
                    return BlockInfo(number=number, hash=previous)
            except IntegrityError:
                continue  # another process produced these numbers first: build on its head
        raise LocalChainError(f"netuid {self.netuid}: could not advance after {RETRIES} concurrent conflicts")

    def block_hash(self, number: int) -> str:
        with transaction(self.sessions) as session:
            self._head_or_genesis(session)
            found = session.execute(
                select(ChainBlock.hash).where(ChainBlock.netuid == self.netuid, ChainBlock.number == number)
            ).scalar_one_or_none()
        if found is None:
            raise LocalChainError(f"netuid {self.netuid}: block {number} does not exist (yet)")
        return found

    # --- neurons ---

    def register(self, hotkey: str, *, validator_permit: bool = False) -> int:
        """Register ``hotkey`` on the subnet (idempotent: a registered hotkey keeps its uid); returns the uid."""
        if not hotkey:
            raise LocalChainError("cannot register an empty hotkey")
        for _ in range(RETRIES):
            try:
                with transaction(self.sessions) as session:
                    existing = self._uid(session, hotkey)
                    if existing is not None:
                        if validator_permit:
                            neuron = session.get(ChainNeuron, (self.netuid, existing))
                            assert neuron is not None  # _uid found its row in this transaction
                            neuron.validator_permit = True
                        return existing
                    uid = session.execute(
                        select(func.coalesce(func.max(ChainNeuron.uid) + 1, 0)).where(ChainNeuron.netuid == self.netuid)
                    ).scalar_one()
                    block = self._head_or_genesis(session).number
                    session.add(
                        ChainNeuron(
                            netuid=self.netuid,
                            uid=uid,
                            hotkey=hotkey,
                            validator_permit=validator_permit,
                            registered_block=block,
                        )
                    )
                    session.flush()
                    return uid
            except IntegrityError:
                continue  # the uid (or the hotkey) was taken meanwhile: look again
        raise LocalChainError(f"netuid {self.netuid}: could not register {hotkey} after {RETRIES} conflicts")

    def _uid(self, session: Session, hotkey: str) -> int | None:
        return session.execute(
            select(ChainNeuron.uid).where(ChainNeuron.netuid == self.netuid, ChainNeuron.hotkey == hotkey)
        ).scalar_one_or_none()

    def _registered(self, session: Session, hotkey: str, action: str) -> int:
        uid = self._uid(session, hotkey)
        if uid is None:
            raise LocalChainError(f"netuid {self.netuid}: {hotkey} is not registered; it cannot {action}")
        return uid

    def neurons(self) -> list[Neuron]:
        with transaction(self.sessions) as session:
            rows = session.scalars(
                select(ChainNeuron).where(ChainNeuron.netuid == self.netuid).order_by(ChainNeuron.uid)
            )
            return [Neuron(uid=r.uid, hotkey=r.hotkey, validator_permit=r.validator_permit) for r in rows]

    # --- endpoints ---

    def publish_endpoint(self, hotkey: str, url: str) -> None:
        if not url.startswith(("http://", "https://")):
            raise LocalChainError(f"endpoint {url!r} is not an http(s) URL")
        with transaction(self.sessions) as session:
            self._registered(session, hotkey, "publish an endpoint")
            block = self._head_or_genesis(session).number
            row = session.get(ChainEndpoint, (self.netuid, hotkey))
            if row is None:
                session.add(ChainEndpoint(netuid=self.netuid, hotkey=hotkey, url=url, block=block))
            else:
                row.url, row.block = url, block

    def validator_endpoints(self) -> dict[str, str]:
        """Published endpoints of hotkeys still registered."""
        with transaction(self.sessions) as session:
            rows = session.execute(
                select(ChainEndpoint.hotkey, ChainEndpoint.url)
                .join(
                    ChainNeuron,
                    (ChainNeuron.netuid == ChainEndpoint.netuid) & (ChainNeuron.hotkey == ChainEndpoint.hotkey),
                )
                .where(ChainEndpoint.netuid == self.netuid)
                .order_by(ChainNeuron.uid)
            )
            return {hotkey: url for hotkey, url in rows}

    # --- commitments ---

    def commit(self, hotkey: str, data: str) -> Commitment:
        """Record ``data`` as the hotkey's commitment in the current block (it does not advance the chain)."""
        if not data or len(data) > MAX_COMMITMENT:
            raise LocalChainError(f"a commitment must be 1..{MAX_COMMITMENT} characters (got {len(data)})")
        with transaction(self.sessions) as session:
            self._registered(session, hotkey, "commit")
            block = self._head_or_genesis(session).number
            session.add(ChainCommitment(netuid=self.netuid, hotkey=hotkey, data=data, block=block))
        return Commitment(hotkey=hotkey, data=data, block=block)

    def get_commitment(self, hotkey: str) -> Commitment | None:
        with transaction(self.sessions) as session:
            row = session.scalars(
                select(ChainCommitment)
                .where(ChainCommitment.netuid == self.netuid, ChainCommitment.hotkey == hotkey)
                .order_by(ChainCommitment.id.desc())
                .limit(1)
            ).one_or_none()
            return None if row is None else Commitment(hotkey=row.hotkey, data=row.data, block=row.block)

    def commitments(self) -> list[Commitment]:
        """Every registered hotkey's latest commitment, by uid (what `arena subnets commitments` lists)."""
        with transaction(self.sessions) as session:
            latest = (
                select(ChainCommitment.hotkey, func.max(ChainCommitment.id).label("id"))
                .where(ChainCommitment.netuid == self.netuid)
                .group_by(ChainCommitment.hotkey)
                .subquery()
            )
            rows = session.execute(
                select(ChainCommitment.hotkey, ChainCommitment.data, ChainCommitment.block)
                .join(latest, latest.c.id == ChainCommitment.id)
                .join(
                    ChainNeuron,
                    (ChainNeuron.netuid == ChainCommitment.netuid) & (ChainNeuron.hotkey == ChainCommitment.hotkey),
                )
                .order_by(ChainNeuron.uid)
            )
            return [Commitment(hotkey=hotkey, data=data, block=block) for hotkey, data, block in rows]

    # --- weights ---

    def set_weights(self, hotkey: str, uids: list[int], weights: list[float]) -> WeightsReceipt:
        """Store normalised weights (summing to 1) as the hotkey's latest; a refusal is a receipt with ok=False."""
        with transaction(self.sessions) as session:
            if self._uid(session, hotkey) is None:
                return WeightsReceipt(ok=False, message=f"{hotkey} is not registered on netuid {self.netuid}")
            problem = self._weights_problem(session, uids, weights)
            if problem:
                return WeightsReceipt(ok=False, message=problem, uids=list(uids), weights=list(weights))
            total = math.fsum(weights)
            normalised = [w / total for w in weights]
            block = self._head_or_genesis(session).number
            session.add(
                ChainWeights(
                    netuid=self.netuid, validator_hotkey=hotkey, block=block, uids=list(uids), weights=normalised
                )
            )
        return WeightsReceipt(ok=True, block=block, uids=list(uids), weights=normalised)

    def _weights_problem(self, session: Session, uids: list[int], weights: list[float]) -> str:
        if len(uids) != len(weights):
            return f"{len(uids)} uids but {len(weights)} weights"
        if len(set(uids)) != len(uids):
            return "a uid appears twice"
        if any(not math.isfinite(w) or w < 0 for w in weights):
            return "weights must be finite and non-negative"
        if math.fsum(weights) <= 0:
            return "weights sum to zero"
        known = set(
            session.scalars(select(ChainNeuron.uid).where(ChainNeuron.netuid == self.netuid, ChainNeuron.uid.in_(uids)))
        )
        unknown = sorted(set(uids) - known)
        return f"uids {unknown} are not registered" if unknown else ""

    def weights(self, hotkey: str) -> WeightsReceipt | None:
        """The hotkey's latest weights as the chain holds them (what a metagraph read would show)."""
        with transaction(self.sessions) as session:
            row = session.scalars(
                select(ChainWeights)
                .where(ChainWeights.netuid == self.netuid, ChainWeights.validator_hotkey == hotkey)
                .order_by(ChainWeights.id.desc())
                .limit(1)
            ).one_or_none()
            if row is None:
                return None
            return WeightsReceipt(ok=True, block=row.block, uids=list(row.uids), weights=list(row.weights))
