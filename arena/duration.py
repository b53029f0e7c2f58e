"""``Duration``: a timedelta setting written as seconds or as an ISO 8601 duration; times as people read them.

pydantic reads a number as seconds, but an environment variable is always a
string, and it parses the string "300" as a malformed ISO duration. Every
duration setting takes this type, so ``ARENA_RACE__CYCLE_LENGTH=300``,
``= 300.5``, ``= PT5M`` and TOML's ``cycle_length = 300`` all mean five minutes.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Annotated

from pydantic import BeforeValidator


def _seconds_or_iso(value: object) -> object:
    if isinstance(value, str):
        try:
            return timedelta(seconds=float(value.strip()))
        except (ValueError, OverflowError):
            return value  # an ISO 8601 duration or [-][DD]D[,][HH:MM:]SS: pydantic's own parser decides
    return value


Duration = Annotated[timedelta, BeforeValidator(_seconds_or_iso)]


def human_time(moment: datetime) -> str:
    """A moment as people read it, to the minute (the JSON's ``until`` keeps the exact instant)."""
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def human_wait(seconds: float) -> str:
    """A wait as people say it: "11 h 59 min", "42 min 10 s", "30 s" (Retry-After keeps the exact seconds)."""
    hours, rest = divmod(max(0, math.ceil(seconds)), 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    if minutes:
        return f"{minutes} min {secs} s" if secs else f"{minutes} min"
    return f"{secs} s"
