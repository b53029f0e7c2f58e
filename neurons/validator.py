"""Validator entry point, with the subnet's usual flags.

    python neurons/validator.py --netuid N --network finney \
        --wallet.name NAME --wallet.hotkey HOTKEY --database-url postgresql://...
    python neurons/validator.py --local [--database-url sqlite:///./arena.db] --suite SUITE_DIR --once

It brings the store to the latest schema (``arena.store.migrate.upgrade_database``),
serves the submission API in the same process (``--no-api`` to leave it to
``arena serve``) and runs the race cycle after cycle. The options are those of
``arena validator run``; only the API default differs.
"""

from __future__ import annotations

import typer

from arena.commands.common import ConfigOption
from arena.commands.validator import (
    ApiHost,
    ApiOption,
    ApiPort,
    CatalogOption,
    DatabaseOption,
    JsonOption,
    LocalOption,
    NetuidOption,
    NetworkOption,
    OnceOption,
    RaceConfigOption,
    SuiteOption,
    WalletHotkey,
    WalletName,
    WalletPath,
    WorkersOption,
    run_validator,
)


def validator(
    netuid: NetuidOption = None,
    network: NetworkOption = "finney",
    wallet_name: WalletName = "default",
    wallet_hotkey: WalletHotkey = "default",
    wallet_path: WalletPath = None,
    database_url: DatabaseOption = None,
    local: LocalOption = False,
    once: OnceOption = False,
    suite: SuiteOption = None,
    catalog: CatalogOption = None,
    race_config: RaceConfigOption = None,
    workers: WorkersOption = None,
    as_json: JsonOption = False,
    api: ApiOption = True,
    api_host: ApiHost = "127.0.0.1",
    api_port: ApiPort = 8000,
    config: ConfigOption = None,
) -> None:
    """Migrate the store, serve the API and run the race."""
    run_validator(**locals())


def main() -> None:
    typer.run(validator)


if __name__ == "__main__":
    main()
