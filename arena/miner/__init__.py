"""The miner side: commit an agent's sha256 on chain, then sign and post the file to validators.

``neurons/miner.py`` and ``arena submit`` are the two front doors; both run
:class:`arena.miner.client.MinerClient`.
"""

from arena.miner.client import (
    MinerClient,
    MinerClientError,
    SubmissionReceipt,
    SubmissionResult,
    Validator,
    read_agent,
    resolve_validators,
)

__all__ = [
    "MinerClient",
    "MinerClientError",
    "SubmissionReceipt",
    "SubmissionResult",
    "Validator",
    "read_agent",
    "resolve_validators",
]
