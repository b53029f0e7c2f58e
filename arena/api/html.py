"""The leaderboard as one plain HTML page (the dashboard issue makes it rich).

Every value from the store is escaped: agent names come from miners.
"""

from __future__ import annotations

from html import escape

from arena.api.schemas import Leaderboard, StandingView, SubmissionSummary


def _cell(value: object) -> str:
    if value is None:
        return "<td>–</td>"
    if isinstance(value, float):
        return f"<td>{value:.4f}</td>"
    return f"<td>{escape(str(value))}</td>"


def _standing(row: StandingView) -> str:
    crown = " 👑" if row.is_champion else ""
    cells = [
        row.rank,
        f"{row.agent_name}{crown}",
        row.hotkey,
        row.uid,
        row.qualifying_score,
        row.race_score,
        row.success_rate,
        row.mean_coefficient,
    ]
    link = f'<td><a href="/v1/submissions/{row.submission_id}">{row.submission_id}</a></td>'
    return "<tr>" + link + "".join(_cell(c) for c in cells) + "</tr>"


def _waiting(row: SubmissionSummary) -> str:
    cells = [row.agent_name, row.hotkey, row.submitted_at.isoformat(timespec="seconds"), row.commitment_block]
    link = f'<td><a href="/v1/submissions/{row.id}">{row.id}</a></td>'
    return "<tr>" + link + "".join(_cell(c) for c in cells) + "</tr>"


def leaderboard_page(board: Leaderboard) -> str:
    if board.cycle is None:
        heading = "No cycle has been ranked yet."
    else:
        stage = board.stage.value if board.stage else "?"
        heading = f"Cycle {board.cycle} ({escape(stage)})"
    champion = (
        f"<p>Champion: <strong>{escape(board.champion.agent_name)}</strong> "
        f"(submission {board.champion.submission_id}, {escape(board.champion.hotkey)})</p>"
        if board.champion
        else ""
    )
    standings = "".join(_standing(row) for row in board.entries) or '<tr><td colspan="9">no standings</td></tr>'
    waiting = "".join(_waiting(row) for row in board.waiting) or '<tr><td colspan="5">none</td></tr>'
    weights = ""
    if board.weights is not None:
        pairs = ", ".join(f"{uid}: {w:.4f}" for uid, w in zip(board.weights.uids, board.weights.weights, strict=True))
        state = "sent" if board.weights.ok else f"failed ({escape(board.weights.message)})"
        weights = f"<p>Weights {state}: {escape(pairs)}</p>"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Arena leaderboard</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:.3em .6em;text-align:left}}</style></head>
<body><h1>Arena leaderboard</h1><p>{heading}</p>{champion}
<table><thead><tr><th>submission</th><th>rank</th><th>agent</th><th>hotkey</th><th>uid</th>
<th>qualifying</th><th>race score</th><th>success</th><th>judge coef.</th></tr></thead>
<tbody>{standings}</tbody></table>{weights}
<h2>Waiting to race</h2>
<table><thead><tr><th>submission</th><th>agent</th><th>hotkey</th><th>submitted</th><th>commitment block</th></tr></thead>
<tbody>{waiting}</tbody></table>
<p><a href="/docs">API</a> · <a href="/v1/leaderboard">JSON</a> · <a href="/v1/cycles">cycles</a></p>
</body></html>
"""
