"""The validator API's settings: where it listens, whom it is, which chain it asks, intake and embargo rules.

``ApiSettings`` is the ``api`` group of the settings (``[api]`` in TOML,
``ARENA_API__*`` in the environment); ``AppSettings`` names every group the
app reads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, Field

from arena.intake.limits import IntakeLimits  # not arena.intake.checks: that module loads bittensor
from arena.race.settings import RaceSettings
from arena.shop.settings import CatalogSettings


class ApiSettings(BaseModel):
    host: str = Field("127.0.0.1", description="Interface `arena serve` binds (0.0.0.0 to accept remote miners).")
    port: int = Field(8000, ge=0, le=65535, description="Port `arena serve` listens on.")
    public_url: str | None = Field(
        None,
        description="The URL miners reach this API at, which `arena validator run --api` publishes on chain "
        "(e.g. https://validator.example.org); else http://HOST:PORT of a named bind host. A 0.0.0.0 bind "
        "without it publishes nothing.",
    )
    validator_hotkey: str | None = Field(
        None,
        description="This validator's hotkey (ss58): the receiver every signed submission must name. "
        "Else read from the wallet below; without either, submissions answer 503.",
    )
    wallet_name: str | None = Field(
        None, description="Validator wallet whose hotkey is the receiver (and signs chain writes)."
    )
    wallet_hotkey: str = Field("default", description="Hotkey name inside the validator wallet.")
    wallet_path: Path = Field(Path("~/.bittensor/wallets"), description="Folder holding the validator wallet.")
    chain: Literal["local", "bittensor"] = Field(
        "local", description="local: the LocalChain kept in the database; bittensor: a subtensor (see network)."
    )
    network: str = Field(
        "finney", description="Bittensor network for chain=bittensor: finney, test, local or ws(s)://."
    )
    netuid: int = Field(15, ge=1, description="The subnet's id.")
    intake: IntakeLimits = Field(default_factory=IntakeLimits, description="Submission checks and their limits.")
    page_size: int = Field(100, ge=1, le=10_000, description="Most rows a list endpoint returns per request.")
    access_log: bool = Field(
        True, description="One log line per request (method, path, status, milliseconds) on arena.api.access."
    )
    apply_migrations: bool = Field(True, description="`arena serve` brings the database to the latest schema first.")
    catalog_url: str | None = Field(
        None,
        description="Where miners download this validator's catalog (shown by `GET /v1/suite` and `arena suite fetch`); "
        "else they are told how to build it.",
    )


class AppSettings(Protocol):
    """The settings groups the app reads. ``ArenaSettings`` has them; the API takes them typed this way
    because it never imports the root settings, which assemble the groups of the floors above it too."""

    @property
    def api(self) -> ApiSettings: ...
    @property
    def race(self) -> RaceSettings: ...  # the embargo rule
    @property
    def catalog(self) -> CatalogSettings: ...  # the manifest `GET /v1/suite` shows
