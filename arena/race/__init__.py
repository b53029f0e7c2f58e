"""The race: submission intake, qualifying, race, promotion, embargo and weights.

Modules here sit above the store and the chain protocol and below the API;
``intake`` is pure (no database, no network) so every rule is testable alone.
"""
