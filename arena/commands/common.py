"""What every `arena` subcommand shares: consoles, settings, failing clearly."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console, RenderableType

from arena.config_file import ConfigError
from arena.settings import ArenaSettings, load_settings

out = Console()
# soft_wrap: an error naming a long path must stay on one line for grep and CI logs.
err = Console(stderr=True, soft_wrap=True)

# A piped table is read by a program or a log, not a terminal: rich would cut it at 80 columns (and wrap
# hotkeys and ids mid-token), so it gets the width it needs instead.
PIPED_WIDTH = 10_000


def show(table: RenderableType, console: Console | None = None) -> None:
    """Print a table at the terminal's width, or whole (no column cut or wrapped) when it is not a terminal."""
    console = console or out
    if console.is_terminal:
        console.print(table)
        return
    before = console._width  # print(width=) is capped at the console's width: widen the console itself
    console.width = PIPED_WIDTH
    try:
        console.print(table)
    finally:
        console._width = before


ConfigOption = Annotated[Path | None, typer.Option("--config", help="TOML settings file (else ARENA_CONFIG).")]


# `--local` and `--network local` are different chains: one help text each, said the same way everywhere.
LOCAL_HELP = "Use the arena's own chain kept in the database (no subtensor; not the same as --network local)."
NETWORK_HELP = (
    "Bittensor network: finney, test, local (a subtensor node at ws://127.0.0.1:9944, not --local) "
    "or a ws(s):// endpoint; ignored with --local."
)


def deprecated(old: str, new: str) -> None:
    """A note for a spelling users may already script: it keeps working, the note names the new one."""
    err.print(f"[yellow]note:[/] {old} is deprecated; use {new}", highlight=False)


def ignored_network(local: bool, network: str, default: str = "finney") -> None:
    if local and network != default:
        err.print(
            f"[yellow]note:[/] --network {network} is ignored with --local (the database's chain)", highlight=False
        )


def fail(message: str, code: int = 2) -> NoReturn:
    err.print(f"[bold red]error:[/] {message}", markup=True, highlight=False)
    raise typer.Exit(code)


def settings_or_fail(config: Path | None) -> ArenaSettings:
    try:
        return load_settings(config)
    except ConfigError as exc:
        fail(str(exc))
