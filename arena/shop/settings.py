"""The catalog's knobs: which built index the commands, the race and the API use, and how a build treats bad rows."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field


class CatalogSettings(BaseModel):
    """The ``catalog`` group of the settings (``[catalog]`` in TOML, ``ARENA_CATALOG__*``)."""

    path: Path = Field(Path("demo/catalog"), description="Built catalog index directory used by default.")
    strict_load: bool = Field(
        False,
        description="Fail a catalog build on the first bad document row instead of skipping it (skips are always reported).",
    )
