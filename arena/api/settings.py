"""The validator API's settings: where it listens, whom it is, which chain it asks, intake and embargo rules.

``ApiSettings`` is a nested group of ``ArenaSettings`` (``[api]`` in TOML,
``ARENA_API__*`` in the environment). Until the group is wired into
``arena/config.py``, :func:`api_settings` reads the same ``ARENA_API__*``
variables itself, so ``arena serve`` is configurable either way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from arena.intake.limits import IntakeLimits  # not arena.intake.checks: that module loads bittensor


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
    apply_migrations: bool = Field(True, description="`arena serve` brings the database to the latest schema first.")
    catalog_url: str | None = Field(
        None,
        description="Where miners download this validator's catalog (shown by `GET /v1/suite` and `arena suite fetch`); "
        "else they are told how to build it.",
    )


class _ApiFromEnvironment(BaseSettings):
    """The ``api`` group alone, from ``ARENA_API__*`` (used only while ArenaSettings lacks the group)."""

    model_config = SettingsConfigDict(env_prefix="ARENA_", env_nested_delimiter="__", extra="ignore")

    api: ApiSettings = Field(default_factory=ApiSettings)


def api_settings(settings: object) -> ApiSettings:
    """The ``api`` group of an ``ArenaSettings``, or the environment's when the object has none."""
    found = getattr(settings, "api", None)
    if isinstance(found, ApiSettings):
        return found
    return _ApiFromEnvironment().api
