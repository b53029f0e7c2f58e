"""``Duration``: a timedelta setting written as seconds or as an ISO 8601 duration.

pydantic reads a number as seconds, but an environment variable is always a
string, and it parses the string "300" as a malformed ISO duration. Every
duration setting takes this type, so ``ARENA_RACE__CYCLE_LENGTH=300``,
``= 300.5``, ``= PT5M`` and TOML's ``cycle_length = 300`` all mean five minutes.
"""

from __future__ import annotations

from datetime import timedelta
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
