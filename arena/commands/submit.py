"""`arena submit` (and `neurons/miner.py`): commit an agent's sha256, sign and post it to validators."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table
from sqlalchemy.exc import SQLAlchemyError

from arena.commands.common import LOCAL_HELP, NETWORK_HELP, err, fail, ignored_network, show
from arena.commands.local_chain import open_local_chain

NETWORK_WALLET_DIR = Path("~/.bittensor/wallets")  # the bittensor convention, for real keys only


def submit(
    agent: Annotated[Path, typer.Argument(metavar="AGENT_FILE", help="The agent file (defines agent_main(problem)).")],
    netuid: Annotated[int, typer.Option("--netuid", min=1, help="The subnet's id.")],
    network: Annotated[str, typer.Option("--network", help=NETWORK_HELP)] = "finney",
    wallet_name: Annotated[str, typer.Option("--wallet.name", help="Wallet (coldkey) name.")] = "default",
    wallet_hotkey: Annotated[str, typer.Option("--wallet.hotkey", help="Hotkey that signs and commits.")] = "default",
    wallet_path: Annotated[
        Path | None,
        typer.Option("--wallet.path", help="Wallet folder (default ~/.bittensor/wallets; with --local ./wallets)."),
    ] = None,
    validator_url: Annotated[
        list[str] | None,
        typer.Option(
            "--validator-url",
            help="A validator API as URL or HOTKEY@URL; repeatable. Default: every endpoint validators published on chain.",
        ),
    ] = None,
    local: Annotated[bool, typer.Option("--local", help=LOCAL_HELP)] = False,
    database_url: Annotated[
        str | None,
        typer.Option(
            "--database-url",
            envvar="ARENA_DATABASE_URL",
            help="Database of the local chain (with --local; default sqlite:///./arena.db).",
        ),
    ] = None,
    no_commit: Annotated[
        bool, typer.Option("--no-commit", help="Post without writing the sha256 commitment on chain.")
    ] = False,
    timeout: Annotated[float, typer.Option("--timeout", min=1.0, help="Seconds per HTTP request.")] = 30.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print exactly one JSON object on stdout.")] = False,
) -> None:
    """Ask each validator whether it would take the agent now (a signed dry run), commit its sha256 on chain,
    then sign it with the hotkey and post it to the validators that would.

    Exit status: 0 when every validator accepted, 1 when any refused or was
    unreachable (each answer is reported), 2 when nothing could be sent.
    """
    from arena.chain.bittensor_chain import BittensorChain, ChainAccessError, ChainConfigError
    from arena.duration import human_wait
    from arena.miner.client import MinerClient, MinerClientError, read_agent, resolve_validators
    from arena.wallets import LOCAL_WALLET_DIR, WalletError, load_wallet

    ignored_network(local, network)
    try:
        read_agent(agent)  # fail before touching keys or the chain
        if local:
            chain = open_local_chain(database_url, netuid)
            # Never creates keys: a mistyped --wallet.name must fail here, not mint a new hotkey.
            wallet = load_wallet(wallet_path or LOCAL_WALLET_DIR, wallet_name, wallet_hotkey, create_hint=True)
        else:
            wallet = load_wallet(wallet_path or NETWORK_WALLET_DIR, wallet_name, wallet_hotkey)
            chain = BittensorChain(network, netuid, wallet)
        validators = resolve_validators(list(validator_url or []), chain, timeout=timeout)
        with MinerClient(wallet, timeout=timeout) as client:
            err.print(f"hotkey {client.hotkey}: submitting {agent} to {len(validators)} validator(s)")
            result = client.submit(agent, validators, chain=chain, commit=not no_commit)
    except (MinerClientError, WalletError, ChainConfigError, ChainAccessError) as exc:
        fail(str(exc))
    except SQLAlchemyError as exc:  # the local chain's database went away mid-run
        fail(f"local chain database: {str(exc).splitlines()[0]}")
    if result.commitment is not None:
        err.print(f"commitment {result.commitment.data} at block {result.commitment.block}")
    elif not no_commit and all(r.dry_run for r in result.receipts):
        err.print("no validator would take the file now: nothing was committed on chain")
    table = Table("validator", "status", "answer", title=f"{agent.name} ({result.sha256[:12]})")
    for receipt in result.receipts:
        status = str(receipt.status_code or "-")
        if receipt.accepted:
            answer = f"[green]accepted[/] id {receipt.submission_id}"
        else:
            answer = f"[red]{receipt.error or 'refused'}[/]: {escape(receipt.detail)}"
            if receipt.retry_after is not None and "retry" not in receipt.detail:  # said once, in hours
                answer += f" (retry in {human_wait(receipt.retry_after)})"
            if receipt.dry_run:
                answer += " [dim](dry run: not committed, not posted)[/]"
        table.add_row(f"{receipt.validator.url} ({receipt.validator.hotkey[:8]}…)", status, answer)
    show(table, err)
    if as_json:
        sys.stdout.write(result.model_dump_json() + "\n")
    if not result.all_accepted:
        raise typer.Exit(1)
