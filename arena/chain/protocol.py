"""What the arena needs from a chain, and nothing more.

``BittensorChain`` implements it with the bittensor 11 SDK; ``LocalChain``
implements it in the store for local races and tests. Everything above this
floor talks to ``Chain`` only, so no test ever needs a real chain.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pydantic import BaseModel, Field


class BlockInfo(BaseModel):
    number: int
    hash: str  # 0x-prefixed hex; the public randomness a race draw is seeded with


class Neuron(BaseModel):
    uid: int
    hotkey: str  # ss58
    validator_permit: bool = False


class Commitment(BaseModel):
    hotkey: str
    data: str  # what the miner committed: the agent's sha256 (hex)
    block: int  # the block the commitment landed in; earlier wins a copy dispute


class WeightsReceipt(BaseModel):
    ok: bool
    block: int | None = None
    message: str = ""
    uids: list[int] = Field(default_factory=list)
    weights: list[float] = Field(default_factory=list)


@runtime_checkable
class Chain(Protocol):
    netuid: int

    def current_block(self) -> BlockInfo:
        """The chain head."""
        ...

    def block_hash(self, number: int) -> str:
        """The hash of a past block (0x hex)."""
        ...

    def neurons(self) -> list[Neuron]:
        """The subnet's registered hotkeys and uids."""
        ...

    def validator_endpoints(self) -> dict[str, str]:
        """hotkey -> the validator's published API URL (so miners can find validators)."""
        ...

    def publish_endpoint(self, hotkey: str, url: str) -> None:
        """Publish this validator's API URL for its hotkey."""
        ...

    def get_commitment(self, hotkey: str) -> Commitment | None:
        """The hotkey's latest submission commitment, if any."""
        ...

    def commit(self, hotkey: str, data: str) -> Commitment:
        """Write the hotkey's submission commitment (the agent's sha256)."""
        ...

    def set_weights(self, hotkey: str, uids: list[int], weights: list[float]) -> WeightsReceipt:
        """Set this validator's weights (normalised by the implementation as the chain requires)."""
        ...
