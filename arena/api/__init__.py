"""The validator's HTTP API (FastAPI): signed submissions, leaderboard, cycles, episodes, health, metrics.

``create_app(settings, store=..., chain=...)`` builds it; ``arena serve`` runs it.
"""

__all__ = ["ApiSetupError", "create_app"]


def __getattr__(name: str):
    # Lazy: arena.settings reads arena.api.settings, and every `arena` command would otherwise load
    # FastAPI, the store and bittensor just to parse its settings.
    if name in __all__:
        from arena.api import app

        return getattr(app, name)
    raise AttributeError(f"module 'arena.api' has no attribute {name!r}")
