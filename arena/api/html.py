"""The leaderboard as HTML for callers that hold a ``Leaderboard`` already (``routes/leaderboard.py``).

The dashboard (``arena.api.dashboard``, served at ``/``) owns the page; this
renders the same template without the current-cycle panel, so both can never
drift apart. Every value is escaped by the template's autoescape.
"""

from __future__ import annotations

from arena.api.schemas import Leaderboard
from arena.api.templates import render


def leaderboard_page(board: Leaderboard) -> str:
    pairs = list(zip(board.weights.uids, board.weights.weights, strict=True)) if board.weights else []
    return render(
        "leaderboard.html", board=board, current=None, current_finished=0, current_total=0, weight_pairs=pairs
    )
