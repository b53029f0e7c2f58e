"""`arena problems generate` (being written)."""

from __future__ import annotations

from arena.commands.common import fail


def generate() -> None:
    """Generate problems from a catalog."""
    fail("not available yet")
