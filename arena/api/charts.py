"""The front page's pictures, drawn on the server as SVG (no script, no CDN, nothing fetched): race scores and
the champion per cycle, and the weights each cycle sent.

Geometry is computed here from ``History`` (the ``/v1/history`` answer); ``templates/charts.py`` writes the
SVG with autoescape on, so an agent's name reaches the picture only as escaped ``<title>`` text.
"""

from __future__ import annotations

import math

from pydantic import BaseModel

from arena.api.schemas import CycleResult, History

WIDTH, HEIGHT = 720, 280
LEFT, RIGHT, TOP, BOTTOM = 66, 12, 14, 70  # the bottom margin holds the champion strip and the cycle numbers
MAX_CYCLES = 40  # the latest cycles drawn; the tables below carry the whole history
# Colour-blind-safe-ish, distinct on white; a champion keeps its colour across the score and the strip.
PALETTE = ("#2952cc", "#d4620b", "#127a3d", "#9e1f63", "#0e9384", "#7a5af8", "#b42318", "#6b7a00", "#c11574",
           "#475467")  # fmt: skip
ENTRANT = "#98a2b3"  # a challenger that did not take the title: one grey, the champions carry the colour


class Dot(BaseModel):
    x: float
    y: float
    r: float
    fill: str
    title: str


class Cell(BaseModel):
    x: float
    y: float
    width: float
    height: float
    fill: str
    title: str


class Text(BaseModel):
    x: float
    y: float
    text: str
    anchor: str = "middle"


class Line(BaseModel):
    points: str
    stroke: str


class Key(BaseModel):
    fill: str
    label: str


class Chart(BaseModel):
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT  # the plot's edges, where the grid lines start and end
    right: int = RIGHT
    title: str
    dots: list[Dot] = []
    cells: list[Cell] = []
    lines: list[Line] = []
    grid: list[Text] = []  # y-axis labels; a grid line is drawn at each
    labels: list[Text] = []  # x-axis labels and captions
    keys: list[Key] = []
    empty: str | None = None  # what to say when there is nothing to draw


def _x_positions(cycles: list[int]) -> tuple[dict[int, float], float]:
    step = (WIDTH - LEFT - RIGHT) / max(len(cycles), 1)
    return {c: LEFT + (i + 0.5) * step for i, c in enumerate(cycles)}, step


def _cycle_labels(cycles: list[int], xs: dict[int, float], y: float) -> list[Text]:
    every = max(1, math.ceil(len(cycles) / 12))  # at most a dozen numbers: they stay legible on a phone
    return [Text(x=xs[c], y=y, text=str(c)) for i, c in enumerate(cycles) if i % every == 0 or i == len(cycles) - 1]


def _colours(results: list[CycleResult]) -> dict[int, str]:
    colours: dict[int, str] = {}
    for result in results:
        if result.champion is not None and result.champion.submission_id not in colours:
            colours[result.champion.submission_id] = PALETTE[len(colours) % len(PALETTE)]
    return colours


def score_chart(history: History) -> Chart:
    """Each cycle's entrants by race score (grey), its champion (coloured, joined across its reign), and a strip
    under the axis naming each cycle's champion."""
    results = history.cycles[-MAX_CYCLES:]
    chart = Chart(title="Race scores and the champion per cycle")
    scores = [e.race_score for r in results for e in r.entries if e.race_score is not None]
    if not scores:
        chart.empty = "no cycle has ranked an entrant yet"
        return chart
    top = max(1.0, math.ceil(max(scores) * 4) / 4)
    plot = HEIGHT - TOP - BOTTOM
    xs, step = _x_positions([r.cycle for r in results])
    colours = _colours(results)

    def y(score: float) -> float:
        return TOP + plot * (1 - max(score, 0.0) / top)

    chart.grid = [Text(x=LEFT - 6, y=y(top * i / 4), text=f"{top * i / 4:g}", anchor="end") for i in range(5)]
    reign: list[tuple[int, float, float]] = []  # (champion, x, y) in cycle order
    for result in results:
        x = xs[result.cycle]
        champion = result.champion.submission_id if result.champion else None
        for entry in result.entries:
            if entry.race_score is None or entry.submission_id == champion:
                continue
            chart.dots.append(Dot(x=x, y=y(entry.race_score), r=3.5, fill=ENTRANT, title=(
                f"cycle {result.cycle}: {entry.agent_name} #{entry.submission_id}, rank {entry.rank}, "
                f"race score {entry.race_score:.3f}")))  # fmt: skip
        if result.champion is not None:
            c = result.champion
            fill = colours[c.submission_id]
            score = c.race_score if c.race_score is not None else 0.0
            chart.dots.append(Dot(x=x, y=y(score), r=6, fill=fill, title=(
                f"cycle {result.cycle}: champion {c.agent_name} #{c.submission_id}, race score {score:.3f}")))  # fmt: skip
            reign.append((c.submission_id, x, y(score)))
            chart.cells.append(Cell(x=x - step / 2 + 1, y=HEIGHT - BOTTOM + 8, width=max(step - 2, 1), height=14,
                                    fill=fill, title=f"cycle {result.cycle}: champion {c.agent_name} #{c.submission_id}"))  # fmt: skip
        else:
            why = f"halted ({result.halt_kind})" if result.halt_kind else "no champion crowned"
            chart.cells.append(Cell(x=x - step / 2 + 1, y=HEIGHT - BOTTOM + 8, width=max(step - 2, 1), height=14,
                                    fill="#e4e7ef", title=f"cycle {result.cycle}: {why}"))  # fmt: skip
    start = 0
    for i in range(1, len(reign) + 1):  # one line per run of the same champion
        if i == len(reign) or reign[i][0] != reign[start][0]:
            if i - start > 1:
                points = " ".join(f"{x:.1f},{yy:.1f}" for _, x, yy in reign[start:i])
                chart.lines.append(Line(points=points, stroke=colours[reign[start][0]]))
            start = i
    chart.labels = [
        *_cycle_labels([r.cycle for r in results], xs, HEIGHT - BOTTOM + 38),
        Text(x=LEFT, y=HEIGHT - BOTTOM + 19, text="champion", anchor="end"),
        Text(x=(LEFT + WIDTH - RIGHT) / 2, y=HEIGHT - 8, text="cycle"),
    ]
    names = {r.champion.submission_id: r.champion.agent_name for r in results if r.champion is not None}
    chart.keys = [Key(fill=colour, label=f"{names[sid]} #{sid}") for sid, colour in colours.items()]
    chart.keys.append(Key(fill=ENTRANT, label="other entrants"))
    return chart


def weights_chart(history: History) -> Chart:
    """The share each uid got from the weights each cycle sent (the last successful vector of the cycle)."""
    sent = [(r.cycle, r.weights) for r in history.cycles[-MAX_CYCLES:] if r.weights is not None and r.weights.ok]
    chart = Chart(title="Weights sent per cycle, by uid")
    if not sent:
        chart.empty = "no weights have been sent yet"
        return chart
    xs, step = _x_positions([cycle for cycle, _ in sent])
    plot = HEIGHT - TOP - BOTTOM
    uids: dict[int, str] = {}
    agents = {e.uid: e.agent_name for r in history.cycles for e in r.entries if e.uid is not None}
    for cycle, weights in sent:
        total = sum(weights.weights) or 1.0
        bottom = float(TOP + plot)
        for uid, weight in sorted(zip(weights.uids, weights.weights, strict=True)):
            if weight <= 0:
                continue
            colour = uids.setdefault(uid, PALETTE[len(uids) % len(PALETTE)])
            height = plot * weight / total
            bottom -= height
            who = f" ({agents[uid]})" if uid in agents else ""
            chart.cells.append(Cell(x=xs[cycle] - step * 0.35, y=bottom, width=step * 0.7, height=height, fill=colour,
                                    title=f"cycle {cycle}: uid {uid}{who} {weight / total:.1%}"))  # fmt: skip
    chart.grid = [Text(x=LEFT - 6, y=TOP + plot * (1 - i / 4), text=f"{25 * i}%", anchor="end") for i in range(5)]
    chart.labels = [
        *_cycle_labels([cycle for cycle, _ in sent], xs, HEIGHT - BOTTOM + 18),
        Text(x=(LEFT + WIDTH - RIGHT) / 2, y=HEIGHT - BOTTOM + 38, text="cycle"),
    ]
    chart.keys = [Key(fill=colour, label=f"uid {uid}" + (f" ({agents[uid]})" if uid in agents else ""))
                  for uid, colour in sorted(uids.items())]  # fmt: skip
    return chart
