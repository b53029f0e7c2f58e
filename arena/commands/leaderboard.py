"""`arena leaderboard --validator-url URL`: a validator's public standings in the terminal (its /v1/leaderboard).

The latest ranked cycle (or ``--cycle N``): each entrant's rank and scores, the champion, the weights the
validator sent for that cycle, and the accepted submissions still waiting for their first cycle.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Column, Table

from arena.commands.common import out, show
from arena.commands.public_api import JsonOption, PublicApi, TimeoutOption, ValidatorUrlOption, score, uid

LEGEND = (
    "qualifying: score on the public qualifying suite; race: score on the cycle's hidden draw; success: share of "
    "race episodes solved; coef: the judge's mean coefficient (0 to 1) over judged episodes"
)


def leaderboard(
    validator_url: ValidatorUrlOption,
    cycle: Annotated[
        int | None, typer.Option("--cycle", min=1, help="A cycle's standings (default: the latest).")
    ] = None,
    timeout: TimeoutOption = 30.0,
    as_json: JsonOption = False,
) -> None:
    """A validator's public standings: ranks, scores, champion, weights sent, and who waits to race."""
    api = PublicApi(validator_url, timeout)
    try:
        board = api.get(
            "/v1/leaderboard",
            {"cycle": cycle} if cycle else None,
            missing=f"{api.base} has no cycle {cycle}: `arena leaderboard` without --cycle shows the latest",
        )
    finally:
        api.close()
    if as_json:
        sys.stdout.write(json.dumps(board) + "\n")
        return
    _print(board)


def _print(board: dict[str, Any]) -> None:
    if board["cycle"] is None:
        out.print("no cycle has standings yet: the validator has not finished its first cycle", highlight=False)
    else:
        table = Table(
            "rank", "uid", Column("hotkey", overflow="fold"), "submission", "agent", "qualifying", "race", "success",
            "coef", "champion", title=f"cycle {board['cycle']} standings ({board['stage']})",
        )  # fmt: skip
        for row in board["entries"]:
            table.add_row(
                uid(row["rank"]), uid(row["uid"]), row["hotkey"], str(row["submission_id"]), escape(row["agent_name"]),
                score(row["qualifying_score"]), score(row["race_score"]), score(row["success_rate"]),
                score(row["mean_coefficient"]), "yes" if row["is_champion"] else "",
            )  # fmt: skip
        show(table)
        out.print(f"columns: {LEGEND}", highlight=False, soft_wrap=True)  # one line: a caption would wrap it
        champion = board["champion"]
        out.print(
            f"champion: submission {champion['submission_id']} ({escape(champion['agent_name'])}, uid "
            f"{uid(champion['uid'])})"
            if champion
            else "champion: none this cycle",
            highlight=False,
        )
        _print_weights(board)
    waiting = board["waiting"]
    names = ", ".join(f"{w['id']} ({escape(w['agent_name'])}, {w['status']})" for w in waiting)
    out.print(f"waiting for their first cycle: {names or 'none'}", highlight=False, soft_wrap=True)


def _print_weights(board: dict[str, Any]) -> None:
    weights = board["weights"]
    if weights is None:
        out.print("weights: none sent for this cycle", highlight=False)
        return
    hotkeys = {row["uid"]: row["hotkey"] for row in board["entries"] if row["uid"] is not None}
    table = Table("uid", Column("hotkey", overflow="fold"), "weight", title=f"weights sent (block {weights['block']})")
    for number, weight in zip(weights["uids"], weights["weights"], strict=True):
        # uids that stood in no cycle (the burn uid, the subnet owner's) have no hotkey in the standings
        table.add_row(str(number), hotkeys.get(number, "-"), f"{weight:.4f}")
    show(table)
    if set(weights["uids"]) - set(hotkeys):
        # /v1 has no metagraph: a uid that stood in no cycle has no hotkey here (arena subnets metagraph, btcli)
        out.print(
            "uids without a hotkey stood in no cycle: the burn uid is one (race.burn_uid, 0 by default: the subnet owner's), "
            "which gets the burn share and every share no miner earned",
            highlight=False,
            soft_wrap=True,
        )
