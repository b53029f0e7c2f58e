"""Opening the local chain (the ``LocalChain`` kept in the store) for a command.

Shared by `arena submit --local`, `arena subnets ...` and `arena wallet`: each
refuses to create an empty database by accident and says which command sets one up.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from sqlalchemy.exc import SQLAlchemyError

from arena.commands.common import fail

DatabaseOption = Annotated[
    str | None,
    typer.Option(
        "--database-url",
        envvar="ARENA_DATABASE_URL",
        help="Database of the local chain (default sqlite:///./arena.db).",
    ),
]
NetuidOption = Annotated[int, typer.Option("--netuid", min=1, help="The subnet's id.")]
WalletNameOption = Annotated[str, typer.Option("--wallet.name", help="Wallet (coldkey) name.")]
WalletHotkeyOption = Annotated[str, typer.Option("--wallet.hotkey", help="Hotkey name.")]
LocalWalletPathOption = Annotated[
    Path | None, typer.Option("--wallet.path", help="Wallet folder (default ./wallets: local keys only).")
]


def open_local_chain(database_url: str | None, netuid: int):
    """The store-backed LocalChain on an existing, migrated database (imported lazily:
    only local runs need the store)."""
    try:
        from arena.chain.local import LocalChain
        from arena.store.db import StoreError, open_store, resolve_url, safe_url
        from arena.store.migrate import current_revision, head_revision
    except ImportError as exc:
        fail(f"the local chain is not available in this installation: {exc}")
    try:
        url = resolve_url(database_url)
        if url.get_backend_name() == "sqlite" and url.database and not Path(url.database).expanduser().exists():
            fail(
                f"no local chain database at {url.database}: create it with `arena db upgrade` "
                "(or run `arena demo`, which makes one)"
            )
        store = open_store(url)
        revision = current_revision(store.engine)
    except (StoreError, SQLAlchemyError) as exc:
        fail(f"local chain database: {str(exc).splitlines()[0]}")
    if revision != head_revision():
        fail(f"{safe_url(url)} is at schema revision {revision}, not {head_revision()}: run `arena db upgrade` first")
    return LocalChain(store.sessions, netuid)
