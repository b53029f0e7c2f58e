"""The API's request parameters, bounded where the store's columns are.

Ids and cycle numbers are ``Integer`` columns (32-bit on PostgreSQL), offsets and
limits 64-bit integers in SQL: an unbounded ``int`` let ``offset=99999999999999999999``
reach SQLite, which raised OverflowError and reset the connection, and a huge
episode id made PostgreSQL's "integer out of range" a 500. So each is checked here,
and a value out of range answers 422 ``invalid_request`` (``app.py``) like any other
bad parameter.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query

INT32_MAX = 2**31 - 1  # the store's Integer columns (ids, cycle numbers) on PostgreSQL
INT64_MAX = 2**63 - 1  # SQL's LIMIT / OFFSET

RowId = Annotated[int, Path(ge=0, le=INT32_MAX, description="A row id.")]
CycleNumber = Annotated[int, Path(ge=0, le=INT32_MAX, description="A cycle number.")]
CycleFilter = Annotated[int | None, Query(ge=0, le=INT32_MAX, description="Only this cycle.")]
Offset = Annotated[int, Query(ge=0, le=INT64_MAX, description="Rows to skip.")]
Limit = Annotated[int | None, Query(ge=1, le=INT64_MAX, description="Rows per page (at most api.page_size).")]
# Printable ASCII only: an ss58 address is, and PostgreSQL refuses a NUL in text outright.
HotkeyFilter = Annotated[str | None, Query(min_length=1, max_length=64, pattern=r"^[\x21-\x7e]+$")]
