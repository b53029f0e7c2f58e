"""One settings object for the whole system.

Values come, highest precedence first, from: explicit overrides (CLI flags),
``ARENA_*`` environment variables, one TOML file (``--config`` or
``ARENA_CONFIG``), then the defaults documented on each field. Nested groups
are set in the environment with a double underscore, e.g.
``ARENA_SCORING__TITLE_THRESHOLD_STRICT=0.75``, and in TOML as tables
(``[scoring]``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError
from pydantic_settings import BaseSettings, InitSettingsSource, PydanticBaseSettingsSource, SettingsConfigDict

from arena.api.settings import ApiSettings
from arena.config_file import ConfigError, read_config_file
from arena.race.settings import RaceSettings
from arena.runner.settings import RunnerSettings
from arena.scoring.settings import ScoringSettings
from arena.shop.settings import CatalogSettings
from judge.settings import JudgeSettings


class ArenaSettings(BaseSettings):
    """Every knob of the arena. ``arena config show`` prints the effective values."""

    model_config = SettingsConfigDict(env_prefix="ARENA_", env_nested_delimiter="__", extra="forbid")

    data_dir: Path = Field(
        Path("demo"), description="Where the demo and commands put catalogs, suites and outputs by default."
    )
    shoppingbench_dir: Path = Field(
        Path(__file__).resolve().parents[1].parent / "shared" / "data" / "shoppingbench",
        description="Folder with the official ShoppingBench task files.",
    )
    log_level: str = Field("INFO", description="Python logging level for arena commands.")
    log_libraries_level: str = Field(
        "WARNING",
        description="Logging level of third-party libraries (procrastinate, httpx, psycopg, ...); "
        "DEBUG or INFO to see their chatter.",
    )
    log_format: Literal["text", "json"] = Field(
        "text", description="Log lines of the validator, workers and API: text, or JSON with episode/submission ids."
    )
    database_url: str = Field(
        "sqlite:///./arena.db",
        description="The store: PostgreSQL in production (postgresql://...), a SQLite file as the embedded default.",
    )
    catalog: CatalogSettings = Field(default_factory=CatalogSettings)
    scoring: ScoringSettings = Field(default_factory=ScoringSettings)
    runner: RunnerSettings = Field(default_factory=RunnerSettings)
    judge: JudgeSettings = Field(default_factory=JudgeSettings)
    api: ApiSettings = Field(default_factory=ApiSettings)
    race: RaceSettings = Field(default_factory=RaceSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        toml_path = os.environ.get("ARENA_CONFIG")
        if (
            toml_path and Path(toml_path).is_file()
        ):  # load_settings names a missing file; a bare ArenaSettings() skips it
            sources.append(InitSettingsSource(settings_cls, init_kwargs=read_config_file(toml_path, "toml")))
        return tuple(sources)


def load_settings(config_file: str | Path | None = None, **overrides: Any) -> ArenaSettings:
    """Settings from the environment and an optional TOML file (``config_file``
    wins over ``ARENA_CONFIG``)."""
    previous = os.environ.get("ARENA_CONFIG")
    if config_file is not None:
        path = Path(config_file)
        if not path.is_file():
            raise ConfigError(f"config file {path} does not exist")
        os.environ["ARENA_CONFIG"] = str(path)
    elif previous and not Path(previous).is_file():
        raise ConfigError(f"ARENA_CONFIG points to {previous}, which does not exist")
    try:
        return ArenaSettings(**overrides)
    except ValidationError as exc:
        raise ConfigError(invalid_settings(exc)) from None
    finally:
        if config_file is not None:
            if previous is None:
                os.environ.pop("ARENA_CONFIG", None)
            else:
                os.environ["ARENA_CONFIG"] = previous


def invalid_settings(exc: ValidationError) -> str:
    """One line per bad setting: its name, the environment variable that sets it, what is wrong."""
    lines = []
    for error in exc.errors():
        name = ".".join(str(part) for part in error["loc"])
        env = "ARENA_" + "__".join(str(part) for part in error["loc"]).upper()
        got = f" (got {error['input']!r})" if not isinstance(error.get("input"), dict) else ""
        lines.append(f"setting {name} ({env}): {error['msg']}{got}")
    return "invalid settings: " + "; ".join(lines) + " (see docs/configuration.md or `arena config show`)"


def describe(settings: BaseModel, prefix: str = "") -> list[tuple[str, str, str]]:
    """(dotted name, effective value, description) for every field, nested groups flattened."""
    rows: list[tuple[str, str, str]] = []
    for name, field in type(settings).model_fields.items():
        value = getattr(settings, name)
        if isinstance(value, BaseModel):
            rows.extend(describe(value, f"{prefix}{name}."))
        else:
            rows.append((f"{prefix}{name}", str(value), field.description or ""))
    return rows
