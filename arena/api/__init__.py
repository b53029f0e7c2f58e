"""The validator's HTTP API (FastAPI): signed submissions, leaderboard, cycles, episodes, health, metrics.

``create_app(settings, store=..., chain=...)`` builds it; ``arena serve`` runs it.
"""

from arena.api.app import ApiSetupError, create_app

__all__ = ["ApiSetupError", "create_app"]
