"""`arena wallet`: local hotkeys for the local chain (btcli's `wallet create` / `wallet list`).

Keys are made only here, on an explicit command, never as a side effect of
`arena submit`. They are unencrypted throwaway keys under ./wallets: for a
real network, make keys with btcli.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Column, Table

from arena.commands.common import err, fail, show
from arena.commands.local_chain import LocalWalletPathOption, WalletHotkeyOption, WalletNameOption

app = typer.Typer(help="Local hotkeys for the local chain (unencrypted; for a real network use btcli).")


@app.command("create")
def create(
    wallet_name: WalletNameOption = "default",
    wallet_hotkey: WalletHotkeyOption = "default",
    wallet_path: LocalWalletPathOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print exactly one JSON object on stdout.")] = False,
) -> None:
    """Create the coldkey (if missing) and the hotkey of a local wallet; prints the hotkey's ss58.

    Idempotent: an existing hotkey is kept and printed again.
    """
    from arena.wallets import LOCAL_WALLET_DIR, WalletError, ensure_wallet, hotkey_address

    folder = wallet_path or LOCAL_WALLET_DIR
    try:
        address = hotkey_address(ensure_wallet(folder, wallet_name, wallet_hotkey))
    except WalletError as exc:
        fail(str(exc))
    if as_json:
        sys.stdout.write(json.dumps({"wallet": wallet_name, "hotkey": wallet_hotkey, "ss58": address}) + "\n")
    else:
        err.print(f"wallet {wallet_name}/{wallet_hotkey} under {folder}: hotkey {address}")


@app.command("list")
def list_wallets(wallet_path: LocalWalletPathOption = None) -> None:
    """Every wallet and hotkey in the local wallet folder, with its ss58."""
    from arena.wallets import LOCAL_WALLET_DIR, WalletError, hotkey_address, load_wallet

    folder = Path(wallet_path or LOCAL_WALLET_DIR)
    table = Table("wallet", "hotkey", Column("ss58", overflow="fold"), title=str(folder))
    for hotkeys in sorted(folder.glob("*/hotkeys")):
        for key in sorted(p for p in hotkeys.iterdir() if p.is_file() and not p.name.endswith("pub.txt")):
            try:
                address = hotkey_address(load_wallet(folder, hotkeys.parent.name, key.name))
            except WalletError as exc:
                address = f"unreadable: {exc}"
            table.add_row(hotkeys.parent.name, key.name, address)
    show(table, err)
