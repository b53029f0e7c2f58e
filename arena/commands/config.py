"""`arena config`."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from arena.commands.common import ConfigOption, settings_or_fail, show
from arena.settings import describe

app = typer.Typer(help="Settings.", no_args_is_help=True)


@app.command("show")
def config_show(config: ConfigOption = None, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Print the effective settings and where each can be set."""
    settings = settings_or_fail(config)
    if as_json:
        print(settings.model_dump_json(indent=2))
        return
    table = Table(title="arena settings (env ARENA_<NAME>, nested with __; or TOML)")
    for column in ("setting", "value", "meaning"):
        table.add_column(column)
    for name, value, meaning in describe(settings):
        table.add_row(name, value, meaning)
    show(table)
