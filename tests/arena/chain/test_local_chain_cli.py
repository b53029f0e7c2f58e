"""The local chain from the command line, as an operator and a miner use it:
`arena wallet create`, `arena subnets register / metagraph / commitments / weights`,
and `arena submit --local`, which never creates keys on its own."""

from __future__ import annotations

import json
import os
from contextlib import chdir
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli import app


class Done:
    def __init__(self, result) -> None:
        self.returncode, self.stdout, self.stderr = result.exit_code, result.stdout, result.stderr


def arena(folder: Path, *args: str) -> Done:
    # In-process (a subprocess costs seconds of imports each): the commands read ./arena.db and ./wallets.
    env = {k: v for k, v in os.environ.items() if k != "ARENA_DATABASE_URL"}
    with chdir(folder):
        return Done(CliRunner().invoke(app, list(args), env=env, catch_exceptions=False))


def ok(folder: Path, *args: str) -> dict:
    done = arena(folder, *args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def chain_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("localchain")
    assert arena(folder, "db", "upgrade").returncode == 0
    return folder


def test_register_needs_an_explicit_wallet_and_a_database(tmp_path):
    done = arena(tmp_path, "subnets", "register", "--wallet.name", "alice")
    assert done.returncode == 2 and "arena db upgrade" in done.stderr
    assert not (tmp_path / "arena.db").exists()


def test_operator_and_miner_on_the_local_chain(chain_dir):
    validator = ok(chain_dir, "wallet", "create", "--wallet.name", "validator", "--json")
    miner = ok(chain_dir, "wallet", "create", "--wallet.name", "miners", "--wallet.hotkey", "alice", "--json")
    # Idempotent: the same key comes back.
    assert ok(chain_dir, "wallet", "create", "--wallet.name", "validator", "--json") == validator

    v = ok(chain_dir, "subnets", "register", "--wallet.name", "validator", "--validator-permit", "--json")
    m = ok(chain_dir, "subnets", "register", "--wallet.name", "miners", "--wallet.hotkey", "alice", "--json")
    assert (v["hotkey"], m["hotkey"]) == (validator["ss58"], miner["ss58"])
    assert v["uid"] != m["uid"]
    again = ok(chain_dir, "subnets", "register", "--wallet.name", "miners", "--wallet.hotkey", "alice", "--json")
    assert again["uid"] == m["uid"]

    graph = ok(chain_dir, "subnets", "metagraph", "--json")
    by_hotkey = {n["hotkey"]: n for n in graph["neurons"]}
    assert by_hotkey[validator["ss58"]]["validator_permit"] is True
    assert by_hotkey[miner["ss58"]]["validator_permit"] is False
    assert by_hotkey[miner["ss58"]]["uid"] == m["uid"]

    # What the validator's race and the miner's submit write, read back through the commands.
    from arena.chain.local import LocalChain
    from arena.store.db import open_store

    store = open_store(f"sqlite:///{chain_dir / 'arena.db'}")
    chain = LocalChain(store.sessions, 15)
    chain.commit(miner["ss58"], "ab" * 32)
    assert chain.set_weights(validator["ss58"], [m["uid"]], [1.0]).ok
    store.dispose()

    commitments = ok(chain_dir, "subnets", "commitments", "--json")["commitments"]
    assert commitments == [{"hotkey": miner["ss58"], "data": "ab" * 32, "block": 0, "uid": m["uid"]}]
    weights = ok(chain_dir, "subnets", "weights", "--json")["validators"]
    assert weights == [{"uid": v["uid"], "hotkey": validator["ss58"], "block": 0, "weights": {str(m["uid"]): 1.0}}]


def test_submit_local_never_creates_a_wallet(chain_dir):
    agent = chain_dir / "agent.py"
    agent.write_text("def agent_main(problem):\n    return None\n")
    done = arena(chain_dir, "submit", str(agent), "--netuid", "15", "--local", "--wallet.name", "nosuch")
    assert done.returncode == 2
    assert "arena wallet create --wallet.name nosuch" in done.stderr
    assert not (chain_dir / "wallets" / "nosuch").exists()
