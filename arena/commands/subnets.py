"""`arena subnets`: the local chain, as btcli's `subnets` commands show a real one.

An operator or miner on a local race registers hotkeys and reads the
metagraph, the commitments and the weights here. On a real network the
same actions are btcli's (`btcli subnets register`, `btcli subnets metagraph`).
"""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer
from rich.table import Column, Table

from arena.commands.common import err, fail, show
from arena.commands.local_chain import (
    DatabaseOption,
    LocalWalletPathOption,
    NetuidOption,
    WalletHotkeyOption,
    WalletNameOption,
    open_local_chain,
)

app = typer.Typer(help="The local chain kept in the database: register, metagraph, commitments, weights.")
HOTKEY = Column("hotkey", overflow="fold")  # an ss58 is never cut: it is copied from here
JsonOption = Annotated[bool, typer.Option("--json", help="Print exactly one JSON object on stdout.")]


@app.command("register")
def register(
    netuid: NetuidOption = 15,
    wallet_name: WalletNameOption = "default",
    wallet_hotkey: WalletHotkeyOption = "default",
    wallet_path: LocalWalletPathOption = None,
    validator_permit: Annotated[
        bool, typer.Option("--validator-permit", help="Register with a validator permit (a validator's hotkey).")
    ] = False,
    database_url: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Register a local wallet's hotkey on the local subnet; prints its uid (idempotent)."""
    from arena.wallets import LOCAL_WALLET_DIR, WalletError, hotkey_address, load_wallet

    chain = open_local_chain(database_url, netuid)
    try:
        address = hotkey_address(
            load_wallet(wallet_path or LOCAL_WALLET_DIR, wallet_name, wallet_hotkey, create_hint=True)
        )
    except WalletError as exc:
        fail(str(exc))
    uid = chain.register(address, validator_permit=validator_permit)
    if as_json:
        sys.stdout.write(json.dumps({"netuid": netuid, "uid": uid, "hotkey": address}) + "\n")
    else:
        err.print(f"netuid {netuid}: {wallet_name}/{wallet_hotkey} ({address}) registered as uid {uid}")


@app.command("metagraph")
def metagraph(netuid: NetuidOption = 15, database_url: DatabaseOption = None, as_json: JsonOption = False) -> None:
    """The neurons: uid, hotkey, validator permit, published endpoint."""
    chain = open_local_chain(database_url, netuid)
    neurons = chain.neurons()
    endpoints = chain.validator_endpoints()
    block = chain.current_block()
    if as_json:
        rows = [n.model_dump() | {"endpoint": endpoints.get(n.hotkey)} for n in neurons]
        sys.stdout.write(json.dumps({"netuid": netuid, "block": block.number, "neurons": rows}) + "\n")
        return
    table = Table("uid", HOTKEY, "validator", "endpoint", title=f"netuid {netuid} at block {block.number}")
    for neuron in neurons:
        permit = "yes" if neuron.validator_permit else ""
        table.add_row(str(neuron.uid), neuron.hotkey, permit, endpoints.get(neuron.hotkey, ""))
    show(table, err)


@app.command("commitments")
def commitments(netuid: NetuidOption = 15, database_url: DatabaseOption = None, as_json: JsonOption = False) -> None:
    """Each registered hotkey's latest commitment (an agent's sha256) and its block."""
    chain = open_local_chain(database_url, netuid)
    uids = {n.hotkey: n.uid for n in chain.neurons()}
    rows = chain.commitments()
    if as_json:
        data = [c.model_dump() | {"uid": uids.get(c.hotkey)} for c in rows]
        sys.stdout.write(json.dumps({"netuid": netuid, "commitments": data}) + "\n")
        return
    table = Table("uid", HOTKEY, Column("commitment", overflow="fold"), "block", title=f"netuid {netuid} commitments")
    for c in rows:
        table.add_row(str(uids.get(c.hotkey, "-")), c.hotkey, c.data, str(c.block))
    show(table, err)


@app.command("weights")
def weights(netuid: NetuidOption = 15, database_url: DatabaseOption = None, as_json: JsonOption = False) -> None:
    """The latest weights each validator set: uid -> weight, and the block."""
    chain = open_local_chain(database_url, netuid)
    found = []
    for neuron in chain.neurons():
        receipt = chain.weights(neuron.hotkey)
        if receipt is not None:
            found.append((neuron, receipt))
    if as_json:
        data = [
            {"uid": n.uid, "hotkey": n.hotkey, "block": r.block, "weights": dict(zip(r.uids, r.weights, strict=True))}
            for n, r in found
        ]
        sys.stdout.write(json.dumps({"netuid": netuid, "validators": data}) + "\n")
        return
    table = Table("validator uid", "block", "weights (uid: weight)", title=f"netuid {netuid} weights")
    for n, r in found:
        table.add_row(
            str(n.uid), str(r.block), ", ".join(f"{u}: {w:.3f}" for u, w in zip(r.uids, r.weights, strict=True))
        )
    show(table, err)
    if not found:
        err.print("no validator has set weights yet")
