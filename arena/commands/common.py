"""What every `arena` subcommand shares: consoles, settings, failing clearly."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console

from arena.config import ArenaSettings, ConfigError, load_settings

out = Console()
# soft_wrap: an error naming a long path must stay on one line for grep and CI logs.
err = Console(stderr=True, soft_wrap=True)

ConfigOption = Annotated[Path | None, typer.Option("--config", help="TOML settings file (else ARENA_CONFIG).")]


def fail(message: str, code: int = 2) -> NoReturn:
    err.print(f"[bold red]error:[/] {message}", markup=True, highlight=False)
    raise typer.Exit(code)


def settings_or_fail(config: Path | None) -> ArenaSettings:
    try:
        return load_settings(config)
    except ConfigError as exc:
        fail(str(exc))
