"""The store's tables, part three: the local chain (``arena.chain.local.LocalChain``).

A stand-in for the subnet's on-chain state so a local race and the tests need
no chain. Every table is keyed by netuid, so several local subnets can share
one database.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from arena.store.models import HASH, HOTKEY, Base, JSONType, UTCDateTime, utcnow


class ChainBlock(Base):
    __tablename__ = "chain_blocks"

    netuid: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    number: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    hash: Mapped[str] = mapped_column(String(HASH + 2))  # 0x + sha256(netuid, number, previous hash)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class ChainNeuron(Base):
    __tablename__ = "chain_neurons"
    __table_args__ = (UniqueConstraint("netuid", "hotkey"),)

    netuid: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    uid: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    hotkey: Mapped[str] = mapped_column(String(HOTKEY))
    validator_permit: Mapped[bool] = mapped_column(Boolean, default=False)
    registered_block: Mapped[int] = mapped_column(Integer)


class ChainCommitment(Base):
    """Every commitment written, in order; a hotkey's current one is its latest."""

    __tablename__ = "chain_commitments"
    __table_args__ = (Index("ix_chain_commitments_hotkey", "netuid", "hotkey"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    netuid: Mapped[int] = mapped_column(Integer)
    hotkey: Mapped[str] = mapped_column(String(HOTKEY))
    data: Mapped[str] = mapped_column(Text)
    block: Mapped[int] = mapped_column(Integer)


class ChainEndpoint(Base):
    __tablename__ = "chain_endpoints"

    netuid: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    hotkey: Mapped[str] = mapped_column(String(HOTKEY), primary_key=True)
    url: Mapped[str] = mapped_column(Text)
    block: Mapped[int] = mapped_column(Integer)


class ChainWeights(Base):
    """Every set_weights call, in order (the chain keeps only the latest; the history costs little here)."""

    __tablename__ = "chain_weights"
    __table_args__ = (Index("ix_chain_weights_validator", "netuid", "validator_hotkey"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    netuid: Mapped[int] = mapped_column(Integer)
    validator_hotkey: Mapped[str] = mapped_column(String(HOTKEY))
    block: Mapped[int] = mapped_column(Integer)
    uids: Mapped[list[int]] = mapped_column(JSONType)
    weights: Mapped[list[float]] = mapped_column(JSONType)
