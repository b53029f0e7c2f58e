"""The miner client against a small validator on loopback.

Real parts throughout: sr25519 hotkeys from the bittensor Wallet API, a
LocalChain on a migrated SQLite store, and a FastAPI app served by uvicorn
that authenticates with ``bittensor.http_auth.verify`` and runs the intake
checks. Only the app is test-sized: the real submission API is built elsewhere.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import bittensor as bt
import httpx
import pytest
import typer
import uvicorn
from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse
from typer.testing import CliRunner

from arena.agents import agent_path
from arena.chain.local import LocalChain
from arena.commands.submit import submit
from arena.intake.checks import check_submission, commitment_block_for
from arena.intake.copies import EarlierSubmission
from arena.intake.signed_requests import IntakeError, check_rate_limit, require_registered
from arena.miner.client import (
    AGENT_NAME_HEADER,
    MinerClient,
    MinerClientError,
    Validator,
    parse_error,
    read_agent,
    resolve_validators,
)
from arena.store.db import open_store
from arena.store.migrate import upgrade_database
from arena.wallets import ensure_wallet, hotkey_address

REPO = Path(__file__).resolve().parents[3]
NETUID = 15


@dataclass
class Seen:
    """What the test validator accepted (reset for every test)."""

    accepted: list[EarlierSubmission] = field(default_factory=list)
    names: list[str] = field(default_factory=list)


def validator_app(validator_hotkey: str, chain: LocalChain, seen: Seen) -> FastAPI:
    app = FastAPI()
    nonces = bt.http_auth.InMemoryNonceStore()

    async def receive(request: Request) -> JSONResponse:
        body = await request.body()
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        try:
            caller = bt.http_auth.verify(
                dict(request.headers),
                body,
                method=request.method,
                path=target,
                self_hotkey_ss58=validator_hotkey,
                nonce_store=nonces,
            )
        except bt.http_auth.WrongReceiver as exc:  # FastAPI's own error shape: {"detail": "..."}
            raise HTTPException(403, detail=str(exc)) from exc
        except bt.http_auth.AuthError as exc:
            raise HTTPException(401, detail=str(exc)) from exc
        try:
            require_registered(caller.hotkey_ss58, chain.neurons())
            mine = [s.submitted_at for s in seen.accepted if s.hotkey == caller.hotkey_ss58]
            check_rate_limit(max(mine, default=None), now=datetime.now(UTC), window=timedelta(hours=12))
            sha = hashlib.sha256(body).hexdigest()
            block = commitment_block_for(sha, chain.get_commitment(caller.hotkey_ss58))
            verdict = check_submission(
                body, earlier=seen.accepted, hotkey=caller.hotkey_ss58, commitment_block=block
            ).raise_for_rejection()
        except IntakeError as exc:  # the arena's shape: {"error": code, "detail": reason, ...}
            return JSONResponse(exc.to_body(), status_code=exc.status_code, headers=exc.headers())
        sid = len(seen.accepted) + 1
        seen.accepted.append(
            EarlierSubmission(
                id=sid,
                hotkey=caller.hotkey_ss58,
                commitment_block=block,
                submitted_at=datetime.now(UTC),
                **verdict.fingerprint.model_dump(),
            )
        )
        seen.names.append(request.headers.get(AGENT_NAME_HEADER, ""))
        return JSONResponse({"id": sid, "sha256": sha, "commitment_block": block}, status_code=201)

    app.add_api_route("/v1/submissions", receive, methods=["POST"])
    app.add_api_route("/arena/v1/submissions", receive, methods=["POST"])  # served behind a path prefix
    return app


@dataclass
class Env:
    folder: Path
    database_url: str
    chain: LocalChain
    validator: bt.Wallet
    url: str
    seen: Seen

    def miner(self, name: str, *, register: bool = True) -> bt.Wallet:
        wallet = ensure_wallet(self.folder / "wallets", "miners", name)
        if register:
            self.chain.register(hotkey_address(wallet))
        return wallet


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    folder = tmp_path_factory.mktemp("miner")
    database_url = f"sqlite:///{folder / 'arena.db'}"
    upgrade_database(database_url)
    store = open_store(database_url)
    chain = LocalChain(store.sessions, NETUID)
    validator = ensure_wallet(folder / "wallets", "validator", "default")
    chain.register(hotkey_address(validator), validator_permit=True)
    seen = Seen()
    server = uvicorn.Server(
        uvicorn.Config(
            validator_app(hotkey_address(validator), chain, seen),
            host="127.0.0.1",
            port=0,
            log_level="warning",
            lifespan="off",
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "the test validator did not start"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    chain.publish_endpoint(hotkey_address(validator), url)
    yield Env(folder, database_url, chain, validator, url, seen)
    server.should_exit = True
    thread.join(timeout=10)
    store.dispose()


@pytest.fixture
def fresh(env):
    env.seen.accepted.clear()
    env.seen.names.clear()
    return env


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# --------------------------------------------------------------------------- end to end


def test_submit_commits_first_then_posts_and_is_accepted(fresh):
    wallet = fresh.miner("alice")
    agent = agent_path("tool_calling")
    sha = hashlib.sha256(agent.read_bytes()).hexdigest()
    with MinerClient(wallet) as client:
        result = client.submit(agent, resolve_validators([], fresh.chain), chain=fresh.chain)
    assert result.sha256 == sha and result.hotkey == hotkey_address(wallet)
    assert result.commitment is not None and result.commitment.data == sha
    assert fresh.chain.get_commitment(hotkey_address(wallet)) == result.commitment
    (receipt,) = result.receipts
    assert receipt.accepted and receipt.status_code == 201 and receipt.submission_id == 1
    assert result.all_accepted
    (stored,) = fresh.seen.accepted
    assert stored.hotkey == hotkey_address(wallet)  # the validator authenticated this hotkey
    assert stored.commitment_block == result.commitment.block  # and found the commitment for this code
    assert fresh.seen.names == ["tool_calling.py"]


def test_resubmitting_the_same_file_keeps_the_first_commitment(fresh):
    wallet = fresh.miner("bob")
    code = agent_path("search_loop").read_bytes()
    with MinerClient(wallet) as client:
        first = client.commit(code, fresh.chain)
        fresh.chain.advance(3)
        again = client.commit(code, fresh.chain)
        assert again == first  # the earlier block is what wins copy disputes: keep it
        changed = client.commit(code + b"\n# v2\n", fresh.chain)
    assert changed.block == first.block + 3 and changed.data != first.data


def test_a_copy_is_refused_without_naming_the_original(fresh):
    original, copier = fresh.miner("carol"), fresh.miner("mallory")
    agent = agent_path("tool_calling")
    copy = fresh.folder / "my_agent.py"
    copy.write_text(agent.read_text().replace("messages", "history").replace("MAX_STEPS", "LIMIT"))
    validators = resolve_validators([fresh.url], fresh.chain)
    with MinerClient(original) as client:
        assert client.submit(agent, validators, chain=fresh.chain).all_accepted
    fresh.chain.advance()
    with MinerClient(copier) as client:
        result = client.submit(copy, validators, chain=fresh.chain)
    (receipt,) = result.receipts
    assert not receipt.accepted and receipt.status_code == 409 and receipt.error == "ast_copy"
    assert receipt.detail == "this agent is too close to an earlier submission, which came first"
    assert hotkey_address(original) not in str(receipt.body) and receipt.body.get("collides_with") is None


def test_the_rate_limit_answer_carries_retry_after(fresh):
    wallet = fresh.miner("dave")
    validators = resolve_validators([], fresh.chain)
    with MinerClient(wallet) as client:
        assert client.submit(agent_path("shortcut"), validators, chain=fresh.chain).all_accepted
        result = client.submit(agent_path("search_loop"), validators, chain=fresh.chain)
    (receipt,) = result.receipts
    assert (receipt.status_code, receipt.error) == (429, "rate_limited")
    assert 12 * 3600 - 60 < receipt.retry_after <= 12 * 3600


def test_signing_for_the_wrong_receiver_is_refused(fresh):
    wallet = fresh.miner("erin")
    wrong = Validator(hotkey=hotkey_address(wallet), url=fresh.url)  # signed for a hotkey that is not the server's
    with MinerClient(wallet) as client:
        receipt = client.post(agent_path("shortcut").read_bytes(), wrong)
    assert (receipt.accepted, receipt.status_code, receipt.error) == (False, 403, None)
    assert "different receiving hotkey" in receipt.detail  # FastAPI's {"detail": "..."} shape
    assert fresh.seen.accepted == []


def test_an_unregistered_hotkey_is_refused(fresh):
    stranger = fresh.miner("stranger", register=False)
    with MinerClient(stranger) as client:
        receipt = client.post(agent_path("shortcut").read_bytes(), resolve_validators([], fresh.chain)[0])
    assert (receipt.status_code, receipt.error) == (403, "unregistered_hotkey")
    assert hotkey_address(stranger) in receipt.detail


def test_a_validator_behind_a_path_prefix_gets_the_full_signed_path(fresh):
    wallet = fresh.miner("frank")
    validator = Validator(hotkey=hotkey_address(fresh.validator), url=f"{fresh.url}/arena/")
    with MinerClient(wallet) as client:
        receipt = client.post(agent_path("search_loop").read_bytes(), validator, agent_name="loop.py")
    assert receipt.accepted, receipt.detail
    assert fresh.seen.names == ["loop.py"]


def test_an_unreachable_validator_is_reported_not_raised(fresh):
    wallet = fresh.miner("grace")
    nowhere = Validator(hotkey=hotkey_address(fresh.validator), url=f"http://127.0.0.1:{free_port()}")
    with MinerClient(wallet, timeout=2, retries=1) as client:
        result = client.submit(
            agent_path("shortcut"),
            [nowhere, resolve_validators([], fresh.chain)[0]],
            chain=fresh.chain,
        )
    down, up = result.receipts
    assert (down.accepted, down.status_code, down.error) == (False, None, "unreachable")
    assert "Connect" in down.detail
    assert up.accepted and not result.all_accepted


# --------------------------------------------------------------------------- pieces


def test_validators_are_resolved_from_the_chain(fresh):
    validator = hotkey_address(fresh.validator)
    assert resolve_validators([], fresh.chain) == [Validator(hotkey=validator, url=fresh.url)]
    assert resolve_validators([fresh.url + "/"], fresh.chain) == [Validator(hotkey=validator, url=fresh.url)]
    explicit = resolve_validators(["5Given@http://10.0.0.9:8000"], fresh.chain)
    assert explicit == [Validator(hotkey="5Given", url="http://10.0.0.9:8000")]
    with pytest.raises(MinerClientError, match="HOTKEY@http://10.0.0.9:8000"):
        resolve_validators(["http://10.0.0.9:8000"], fresh.chain)
    with pytest.raises(MinerClientError, match="expected http"):
        resolve_validators(["10.0.0.9:8000"], fresh.chain)
    empty = LocalChain(fresh.chain.sessions, NETUID + 1)
    with pytest.raises(MinerClientError, match=f"netuid {NETUID + 1}"):
        resolve_validators([], empty)


def test_read_agent_runs_the_local_checks(tmp_path):
    assert read_agent(agent_path("shortcut")) == agent_path("shortcut").read_bytes()
    with pytest.raises(MinerClientError, match="cannot read agent file"):
        read_agent(tmp_path / "missing.py")
    broken = tmp_path / "broken.py"
    broken.write_text("def agent_main(problem):\n    return (\n")
    with pytest.raises(MinerClientError, match="broken.py: .*line"):
        read_agent(broken)


def test_parse_error_reads_every_error_shape():
    def answer(status: int, **kwargs) -> httpx.Response:
        return httpx.Response(status, request=httpx.Request("POST", "http://v/v1/submissions"), **kwargs)

    assert parse_error(answer(409, json={"error": "near_copy", "detail": "a near copy"}))[:2] == (
        "near_copy",
        "a near copy",
    )
    nested = answer(429, json={"detail": {"error": "rate_limited", "detail": "wait", "retry_after": 5}})
    assert parse_error(nested)[0] == "rate_limited" and parse_error(nested)[2]["retry_after"] == 5
    validation = answer(422, json={"detail": [{"loc": ["body"], "msg": "field required"}]})
    assert parse_error(validation)[:2] == (None, "field required")
    assert parse_error(answer(502, text="<html>Bad Gateway</html>"))[:2] == (None, "<html>Bad Gateway</html>")
    assert parse_error(answer(500, content=b""))[1] == "Internal Server Error"


# --------------------------------------------------------------------------- front doors


def test_arena_submit_local_prints_one_json_object(fresh):
    wallet = fresh.miner("heidi")
    app = typer.Typer()
    app.command()(submit)
    args = [
        str(agent_path("shortcut")),
        "--netuid",
        str(NETUID),
        "--local",
        "--database-url",
        fresh.database_url,
        "--wallet.path",
        str(fresh.folder / "wallets"),
        "--wallet.name",
        "miners",
        "--wallet.hotkey",
        "heidi",
        "--json",
    ]
    outcome = CliRunner().invoke(app, args)
    assert outcome.exit_code == 0, outcome.output
    report = json.loads(outcome.stdout)
    assert report["hotkey"] == hotkey_address(wallet) and report["receipts"][0]["accepted"]
    assert report["commitment"]["data"] == hashlib.sha256(agent_path("shortcut").read_bytes()).hexdigest()
    refused = CliRunner().invoke(app, args)  # the same hotkey again: rate limited, exit status 1
    assert refused.exit_code == 1 and json.loads(refused.stdout)["receipts"][0]["error"] == "rate_limited"
    report = refused.stderr  # the human table: the wait said once, in hours, not twice in seconds
    assert report.count("retry") == 1 and re.search(r"retry\s+in\s+1[12]\s+h", report), report


def test_arena_submit_fails_clearly_without_a_wallet(fresh, tmp_path):
    app = typer.Typer()
    app.command()(submit)
    outcome = CliRunner().invoke(
        app,
        [str(agent_path("shortcut")), "--netuid", "15", "--network", "test", "--wallet.path", str(tmp_path)],
    )
    assert outcome.exit_code == 2
    assert "no hotkey 'default' in wallet 'default'" in outcome.output and str(tmp_path) in outcome.output


def test_neurons_miner_submits_with_subnet_flags(fresh):
    fresh.miner("ivan")
    command = [
        sys.executable,
        str(REPO / "neurons" / "miner.py"),
        str(agent_path("search_loop")),
        "--netuid",
        str(NETUID),
        "--local",
        "--database-url",
        fresh.database_url,
        "--wallet.path",
        str(fresh.folder / "wallets"),
        "--wallet.name",
        "miners",
        "--wallet.hotkey",
        "ivan",
        "--validator-url",
        fresh.url,
        "--json",
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=dict(os.environ, COLUMNS="200"))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["receipts"][0]["accepted"]
    assert "accepted" in done.stderr  # the human report goes to stderr
