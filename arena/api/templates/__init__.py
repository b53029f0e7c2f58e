"""The dashboard's Jinja2 templates, kept as Python strings so they ship inside the package with no
package-data entry and no build step; autoescape is on, so every value from the store is escaped."""

from __future__ import annotations

import json
import re
from datetime import datetime
from functools import cache

from jinja2 import DictLoader, Environment, StrictUndefined
from markupsafe import Markup, escape

from arena.api.status_note import tone
from arena.api.templates import charts, episode, layout, race

TEMPLATES = {
    "base.html": layout.BASE,
    "error.html": layout.ERROR,
    "leaderboard.html": race.LEADERBOARD,
    "cycles.html": race.CYCLES,
    "cycle.html": race.CYCLE,
    "submission.html": race.SUBMISSION,
    "standings": race.STANDINGS,
    "chart": charts.CHART,
    "episode.html": episode.EPISODE,
}


def _number(value: object, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def _when(value: datetime | None) -> str:
    return "–" if value is None else value.strftime("%Y-%m-%d %H:%M:%S UTC")


def _pretty(value: object, limit: int = 20_000) -> str:
    """Indented JSON, cut at ``limit`` characters: a search result can be long, the JSON API has it whole."""
    text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit} more characters in the JSON API)"


def _short(value: str, keep: int = 12) -> str:
    """A hotkey is 48 characters: its head identifies it on screen, the title attribute carries the whole."""
    return value if len(value) <= keep + 2 else value[:keep] + "…"


def _breakable(value: object) -> Markup:
    """Escaped, with a line-break opportunity after each ``_ . - /``: a long file name wraps at its parts
    on a phone instead of widening its table (or breaking mid-word)."""
    return Markup(re.sub(r"([_./-])", r"\1<wbr>", str(escape(value))))


@cache
def environment() -> Environment:
    env = Environment(loader=DictLoader(TEMPLATES), autoescape=True, undefined=StrictUndefined, trim_blocks=True)
    env.filters.update(
        tone=tone, breakable=_breakable, short=_short, number=_number, percent=_percent, when=_when, pretty=_pretty
    )
    return env


def render(name: str, **context: object) -> str:
    return environment().get_template(name).render(**context)
