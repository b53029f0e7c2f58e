"""The built-in offline policy: a heuristic shopping "model" behind an OpenAI-compatible server.

Model id ``heuristic-policy``. It is a hand-written planner (``heuristic``),
not a neural network: it lets the arena run whole episodes, tests and demos
without a GPU or model weights. See docs/offline-policy.md.
"""

from arena.policy.chat_format import MODEL_ID, SYSTEM_FINGERPRINT, count_tokens
from arena.policy.heuristic import Decision, Episode, PlannedCall
from arena.policy.parsing import ItemRequest, PriceRange, ShoppingRequest, VoucherTerms, parse_request
from arena.policy.policy import HeuristicPolicy
from arena.policy.server import create_policy_app

__all__ = [
    "MODEL_ID",
    "SYSTEM_FINGERPRINT",
    "Decision",
    "Episode",
    "HeuristicPolicy",
    "ItemRequest",
    "PlannedCall",
    "PriceRange",
    "ShoppingRequest",
    "VoucherTerms",
    "count_tokens",
    "create_policy_app",
    "parse_request",
]
