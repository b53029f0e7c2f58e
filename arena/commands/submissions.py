"""`arena submissions show ID`: a miner's view of its submission, from the validator's public /v1 API.

What `/submissions/ID` on the dashboard shows: the status (and why a refusal), the cycles it stood in with
its scores, its results per stage, and how its episodes ended (counted per cycle and stage, from
``/v1/submissions/ID/episodes``). Hidden problems stay hidden: the API redacts them, this only counts.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from arena.commands.common import out, show
from arena.commands.public_api import JsonOption, PublicApi, TimeoutOption, ValidatorUrlOption, score, uid

app = typer.Typer(help="A submission's status, cycles, scores and episodes, from a validator's API.")


def outcomes(episodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The episodes counted per (cycle, stage): by status, successes, and how each agent run ended."""
    groups: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for episode in episodes:
        groups.setdefault((episode["cycle"], episode["stage"]), []).append(episode)
    summary = []
    for (cycle, stage), group in sorted(groups.items()):
        status = Counter(e["status"] for e in group)
        summary.append({
            "cycle": cycle,
            "stage": stage,
            "episodes": len(group),
            "done": status["done"],
            "failed": status["failed"],
            "unfinished": status["pending"] + status["running"],
            "successes": sum(1 for e in group if e["success"]),
            "terminations": dict(sorted(Counter(e["termination"] or "not run" for e in group).items())),
        })  # fmt: skip
    return summary


@app.command("show")
def submissions_show(
    submission_id: Annotated[int, typer.Argument(help="The submission id `arena submit` printed.", min=1)],
    validator_url: ValidatorUrlOption,
    timeout: TimeoutOption = 30.0,
    as_json: JsonOption = False,
) -> None:
    """A submission's status, the cycles it stood in with its scores, and its episodes' outcomes."""
    api = PublicApi(validator_url, timeout)
    try:
        missing = (
            f"{api.base} has no submission {submission_id}: check the id `arena submit` printed for this validator"
        )
        detail = api.get(f"/v1/submissions/{submission_id}", missing=missing)
        episodes = api.pages(f"/v1/submissions/{submission_id}/episodes")
    finally:
        api.close()
    summary = outcomes(episodes)
    if as_json:
        sys.stdout.write(json.dumps({**detail, "episodes": {"total": len(episodes), "outcomes": summary}}) + "\n")
        return
    _print(detail, summary)


def _print(detail: dict[str, Any], summary: list[dict[str, Any]]) -> None:
    sub = detail["submission"]
    line = f"submission {sub['id']}: {escape(sub['agent_name'])} by {sub['hotkey']} (uid {uid(sub['uid'])}), "
    line += f"{sub['status']}"
    if sub["rejection_reason"]:
        line += f": {escape(sub['rejection_reason'])}"
    out.print(line, highlight=False, soft_wrap=True)
    embargo = detail["embargo"]
    out.print(f"source: {'embargoed, ' if embargo['embargoed'] else ''}{escape(embargo['reason'])}", highlight=False)
    if not detail["standings"]:
        out.print("no standing yet: it stands in the next cycle the validator runs", highlight=False)
    else:
        table = Table(title="cycles")
        for column in ("cycle", "rank", "qualifying", "race", "success", "coef", "champion"):
            table.add_column(column, justify="right" if column != "champion" else "left", no_wrap=True)
        for row in detail["standings"]:
            table.add_row(
                str(row["cycle"]), uid(row["rank"]), score(row["qualifying_score"]), score(row["race_score"]),
                score(row["success_rate"]), score(row["mean_coefficient"]), "yes" if row["is_champion"] else "",
            )  # fmt: skip
        show(table)
    if summary:
        table = Table(title="episodes")
        for column in ("cycle", "stage", "episodes", "done", "failed", "unfinished", "successes", "ended as"):
            table.add_column(column, no_wrap=column != "ended as")
        for group in summary:
            ended = ", ".join(f"{name} {count}" for name, count in group["terminations"].items())
            table.add_row(
                str(group["cycle"]), group["stage"], str(group["episodes"]), str(group["done"]), str(group["failed"]),
                str(group["unfinished"]), str(group["successes"]), ended,
            )  # fmt: skip
        show(table)
    out.print("coef: the judge's mean coefficient (0 to 1) over the judged episodes", highlight=False)
