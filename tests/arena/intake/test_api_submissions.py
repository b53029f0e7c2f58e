"""``POST /v1/submissions`` over real HTTP (uvicorn on loopback), real sr25519 keys, on PostgreSQL and SQLite.

Every check answers its own error and stores nothing (rows counted before
and after); accepted files are stored with their fingerprint and commitment
block; concurrent submissions from many hotkeys all land once; the miner
client's whole path (commit, sign, post) works against the server.

PostgreSQL: a throwaway ``arena_test_*`` database per module on the server
at ARENA_TEST_POSTGRES_URL (default 127.0.0.1:5432/test), dropped afterwards;
skipped when unreachable unless ARENA_REQUIRE_POSTGRES=1.
"""

from __future__ import annotations

import hashlib
import random
import re
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import quote

import bittensor as bt
import httpx
import numpy as np
import pytest
import uvicorn
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select

from arena.api import create_app
from arena.api.endpoint import EndpointError, public_endpoint
from arena.api.settings import ApiSettings
from arena.chain.local import LocalChain
from arena.commands.validator import publish_api
from arena.duration import human_wait
from arena.intake.copies import fingerprint
from arena.miner.client import MinerClient, MinerClientError, Validator, resolve_validators
from arena.settings import ArenaSettings
from arena.store import Store
from arena.store.models import CopyRefusal, Miner, Nonce, Submission, SubmissionStatus
from arena.wallets import ensure_hotkeys, hotkey_address
from tests.arena.store.test_store import migrated_store

BACKENDS = ["sqlite", "postgresql"]
NETUID = 15


# --- shared helpers (test_api.py imports these) ---------------------------------------------------


# One temporary database helper for every test module (tests/arena/store/test_store.py).
migrated = migrated_store


def app_settings(race: dict | None = None, **api: object) -> ArenaSettings:
    """Settings with this ``api`` group (and this ``race`` group, when given)."""
    from arena.race.settings import RaceSettings

    return ArenaSettings(api=ApiSettings(**api), race=RaceSettings(**(race or {})))


@contextmanager
def live_server(app) -> Iterator[str]:
    """The app under uvicorn on a free loopback port, in a thread; yields its base URL."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)


def make_agent(seed: int) -> bytes:
    """A valid agent file whose syntax tree is its own: random expression statements of many node types.
    Measured: 300 seeds are pairwise at most 0.42 MinHash-similar (the copy threshold is 0.70)."""
    rng = random.Random(seed)
    binops = ["+", "-", "*", "//", "%", "<<", ">>", "&", "|", "^", "/", "**", "@"]
    cmps = ["<", ">", "==", "!=", "<=", ">=", "in", "not in", "is", "is not"]

    def leaf() -> str:
        return rng.choice(["a", "b", "c", "q", str(rng.randint(1, 9)), "'s'", "None", "True"])

    def expr(depth: int) -> str:
        if depth == 0 or rng.random() < 0.15:
            return leaf()

        def e() -> str:
            return expr(depth - 1)

        forms = [
            lambda: f"({e()} {rng.choice(binops)} {e()})",
            lambda: f"({e()} {rng.choice(cmps)} {e()})",
            lambda: f"({e()} {rng.choice(['and', 'or'])} {e()})",
            lambda: f"({rng.choice(['not ', '-', '~', '+'])}{e()})",
            lambda: f"[{e()}, {e()}]",
            lambda: f"({e()}, {e()}, {e()})",
            lambda: f"{{{e()}: {e()}}}",
            lambda: f"{{{e()}}}",
            lambda: f"{e()}[{e()}]",
            lambda: f"{e()}[{e()}:{e()}]",
            lambda: f"f({e()}, k={e()})",
            lambda: f"(lambda x: {e()})",
            lambda: f"[{e()} for x in {e()}]",
            lambda: f"{{x: {e()} for x in {e()}}}",
            lambda: f"({e()} if {e()} else {e()})",
            lambda: f"str({e()}).join({e()})",
            lambda: f"({e()}).m({e()})",
        ]
        return rng.choice(forms)()

    lines = ["def agent_main(problem):", "    q = problem", "    a = b = c = f = 0"]
    for _ in range(14):
        target, kind = rng.choice("abc"), rng.random()
        if kind < 0.4:
            lines.append(f"    {target} = {expr(3)}")
        elif kind < 0.55:
            lines += [f"    if {expr(2)}:", f"        {target} = {expr(2)}"]
        elif kind < 0.7:
            lines += [f"    for x in {expr(1)}:", f"        {target} {rng.choice(binops)}= {expr(2)}"]
        elif kind < 0.85:
            lines += [
                "    try:",
                f"        {target} = {expr(2)}",
                "    except Exception:",
                f"        {target} = {expr(1)}",
            ]
        else:
            lines += [f"    while {expr(2)}:", f"        {target} = {expr(2)}", "        break"]
    lines.append("    return {'recommend': [str(a)]}")
    return ("\n".join(lines) + "\n").encode()


def signed_headers(wallet, body: bytes, receiver: str, *, path: str = "/v1/submissions", nonce_ns: int | None = None):
    headers = bt.http_auth.sign(wallet, method="POST", path=path, body=body, receiver_ss58=receiver, nonce_ns=nonce_ns)
    return headers | {"Content-Type": "text/x-python; charset=utf-8", "X-Arena-Agent-Name": "agent.py"}


def row_counts(store: Store) -> dict[str, int]:
    with store.transaction() as session:
        return {
            table.__tablename__: session.execute(select(func.count()).select_from(table)).scalar_one()
            for table in (Submission, Miner, Nonce)
        }


@dataclass
class Arena:
    """One running API: its store, local chain, base URL, validator and miner keys."""

    store: Store
    chain: LocalChain
    url: str
    validator: bt.Wallet
    miners: list[bt.Wallet]
    http: httpx.Client

    @property
    def receiver(self) -> str:
        return hotkey_address(self.validator)

    def miner(self, index: int, *, register: bool = True) -> bt.Wallet:
        wallet = self.miners[index]
        if register:
            self.chain.register(hotkey_address(wallet))
        return wallet

    def post(self, wallet, body: bytes, **sign) -> httpx.Response:
        receiver = sign.pop("receiver", self.receiver)
        return self.http.post("/v1/submissions", content=body, headers=signed_headers(wallet, body, receiver, **sign))


@pytest.fixture(scope="module")
def wallets(tmp_path_factory) -> list[bt.Wallet]:
    """A validator hotkey (index 0) and 40 miner hotkeys, real sr25519 keys in a temporary wallet folder."""
    folder = tmp_path_factory.mktemp("wallets")
    return ensure_hotkeys(folder, "arena", ["validator", *(f"miner{i}" for i in range(40))])


@pytest.fixture(scope="module", params=BACKENDS)
def arena(request, tmp_path_factory, wallets) -> Iterator[Arena]:
    with migrated(request.param, tmp_path_factory.mktemp("db")) as store:
        chain = LocalChain(store.sessions, NETUID)
        validator = wallets[0]
        chain.register(hotkey_address(validator), validator_permit=True)
        app = create_app(app_settings(), store=store, chain=chain, validator_hotkey=hotkey_address(validator))
        with live_server(app) as url, httpx.Client(base_url=url, timeout=30) as http:
            yield Arena(store=store, chain=chain, url=url, validator=validator, miners=wallets[1:], http=http)


def assert_refused(arena: Arena, response: httpx.Response, status: int, error: str, before: dict[str, int]) -> dict:
    body = response.json()
    assert (response.status_code, body["error"]) == (status, error), body
    assert body["detail"], "every refusal says why"
    assert row_counts(arena.store) == before, f"{error}: a refused submission must store nothing"
    return body


# --- accepted ------------------------------------------------------------------------------------


def test_accepted_submission_is_stored_with_its_fingerprint_and_commitment(arena):
    wallet = arena.miner(0)
    code = make_agent(1000)
    commitment = arena.chain.commit(hotkey_address(wallet), hashlib.sha256(code).hexdigest())
    before = row_counts(arena.store)
    response = arena.post(wallet, code)
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["status"] == "accepted" and body["commitment_block"] == commitment.block
    assert body["hotkey"] == hotkey_address(wallet) and body["sha256"] == hashlib.sha256(code).hexdigest()
    after = row_counts(arena.store)
    assert after["submissions"] == before["submissions"] + 1 and after["nonces"] == before["nonces"] + 1
    expected = fingerprint(code)
    uid = arena.chain.register(hotkey_address(wallet))  # idempotent: the uid it already has
    with arena.store.transaction() as session:
        row = session.get(Submission, body["id"])
        miner = session.execute(select(Miner).where(Miner.hotkey == row.hotkey)).scalar_one()
        assert row.code == code and row.size == len(code) and row.agent_name == "agent.py"
        assert (row.sha256, row.ast_hash) == (expected.sha256, expected.ast_hash)
        assert np.frombuffer(row.minhash, dtype="<u8").tolist() == expected.minhash
        assert row.commitment_block == commitment.block and row.status is SubmissionStatus.accepted
        assert miner.uid == body["uid"] == uid


def test_an_uncommitted_or_mismatched_commitment_stores_no_block(arena):
    wallet = arena.miner(1)
    arena.chain.commit(hotkey_address(wallet), "f" * 64)  # a commitment to other code proves nothing
    response = arena.post(wallet, make_agent(1001))
    assert response.status_code == 201, response.text
    assert response.json()["commitment_block"] is None


# --- authentication and authorisation ------------------------------------------------------------


def test_each_request_check_has_its_error_and_stores_nothing(arena):
    wallet = arena.miner(2)
    code = make_agent(1002)
    before = row_counts(arena.store)

    missing = arena.http.post("/v1/submissions", content=code)
    assert_refused(arena, missing, 401, "malformed_auth", before)

    headers = signed_headers(wallet, code, arena.receiver)
    tampered = arena.http.post("/v1/submissions", content=code + b"\n# changed after signing\n", headers=headers)
    assert_refused(arena, tampered, 401, "bad_signature", before)

    stale = arena.post(wallet, code, nonce_ns=time.time_ns() - 60 * 10**9)
    assert "freshness" in assert_refused(arena, stale, 401, "stale_request", before)["detail"]
    future = arena.post(wallet, code, nonce_ns=time.time_ns() + 60 * 10**9)
    assert_refused(arena, future, 401, "stale_request", before)

    other_validator = hotkey_address(arena.miners[39])
    wrong = arena.post(wallet, code, receiver=other_validator)
    assert_refused(arena, wrong, 403, "wrong_receiver", before)

    stranger = arena.miner(3, register=False)
    unregistered = arena.post(stranger, code)
    body = assert_refused(arena, unregistered, 403, "unregistered_hotkey", before)
    assert hotkey_address(stranger) in body["detail"]

    headers = signed_headers(wallet, code, arena.receiver)
    first = arena.http.post("/v1/submissions", content=code, headers=headers)
    assert first.status_code == 201, first.text
    before = row_counts(arena.store)
    replayed = arena.http.post("/v1/submissions", content=code, headers=headers)
    assert_refused(arena, replayed, 409, "replayed_request", before)


def test_rate_limit_answers_429_with_retry_after(arena):
    wallet = arena.miner(4)
    assert arena.post(wallet, make_agent(1004)).status_code == 201
    before = row_counts(arena.store)
    response = arena.post(wallet, make_agent(1005))
    body = assert_refused(arena, response, 429, "rate_limited", before)
    retry_after = int(response.headers["Retry-After"])
    assert 12 * 3600 - 120 < retry_after <= 12 * 3600 and body["retry_after"] == retry_after


# --- content checks ------------------------------------------------------------------------------


def test_each_content_check_has_its_error_and_stores_nothing(arena):
    wallet = arena.miner(5)
    before = row_counts(arena.store)
    cases = [
        (b"# padding\n" * 30_000 + make_agent(1006), 413, "size"),
        (b"   \n", 400, "size"),
        (b"def agent_main(problem):\n    return '\xff\xfe'\n", 400, "utf8"),
        (b"def agent_main(problem):\n    x = (1,\n    return x\n", 422, "syntax"),
        (b"def helper(problem):\n    return {}\n", 422, "entrypoint"),
        (b"async def agent_main(problem):\n    return {}\n", 422, "entrypoint"),
    ]
    for code, status, error in cases:
        body = assert_refused(arena, arena.post(wallet, code), status, error, before)
        if error == "utf8":
            assert body["line"] == 2
        if error == "syntax":
            assert body["line"] in (2, 3) and "line" in body["detail"]
    assert arena.post(wallet, make_agent(1006)).status_code == 201  # the same hotkey, a sound file: accepted


def test_copies_are_refused_without_naming_the_earlier_submission_and_charged_to_a_daily_budget(arena):
    owner, copier = arena.miner(6), arena.miner(7)
    code = make_agent(1007)
    first = arena.post(owner, code)
    assert first.status_code == 201
    earlier = first.json()["id"]
    renamed = code.replace(b"'recommend'", b"'answer'").replace(b"q = problem", b"query = problem")
    near = code.replace(b"    return", b"    c = (a, b)\n    return")
    variants = ((code, "exact_copy"), (renamed, "ast_copy"), (near, "near_copy"))
    for left, (variant, error) in zip((2, 1, 0), variants, strict=True):
        before = row_counts(arena.store)
        response = arena.post(copier, variant)
        body = response.json()
        assert (response.status_code, body["error"], body["copy_refusals_left"]) == (409, error, left), body
        # The embargoed code's owner, id, commitment and similarity stay hidden: no oracle on it.
        assert body["detail"] == "this agent is too close to an earlier submission, which came first"
        assert "collides_with" not in body or body["collides_with"] is None
        assert str(earlier) not in response.text and hotkey_address(owner) not in response.text
        # Nothing is stored but the refusal itself (and its nonce: a replay cannot burn the budget twice).
        assert row_counts(arena.store) == {**before, "nonces": before["nonces"] + 1}
    with arena.store.transaction() as session:
        refusals = session.execute(select(CopyRefusal.check).where(CopyRefusal.hotkey == hotkey_address(copier)))
        assert sorted(refusals.scalars()) == sorted(error for _, error in variants)
    # The budget is spent: no copy check runs, not even for a sound file, until the oldest ages out.
    before = row_counts(arena.store)
    body = assert_refused(arena, arena.post(copier, make_agent(1107)), 429, "copy_budget_exhausted", before)
    assert 0 < body["retry_after"] <= 24 * 3600


def test_the_earlier_commitment_wins_a_copy_dispute(arena):
    original, copier = arena.miner(8), arena.miner(9)
    code = make_agent(1008)
    copy = code.replace(b"'recommend'", b"'picked'")
    arena.chain.commit(hotkey_address(original), hashlib.sha256(code).hexdigest())
    arena.chain.advance()
    arena.chain.commit(hotkey_address(copier), hashlib.sha256(copy).hexdigest())
    early_copy = arena.post(copier, copy)  # reaches the validator first, but committed later
    assert early_copy.status_code == 201
    response = arena.post(original, code)
    assert response.status_code == 201, response.text
    assert response.json()["supersedes"] == [early_copy.json()["id"]]
    with arena.store.transaction() as session:
        loser = session.get(Submission, early_copy.json()["id"])
        assert (
            loser.status is SubmissionStatus.rejected
            and f"submission {response.json()['id']}" in loser.rejection_reason
        )


# --- concurrency over real HTTP ------------------------------------------------------------------


def test_concurrent_submissions_from_twenty_hotkeys_all_land_once(arena):
    wallets = [arena.miner(i) for i in range(10, 30)]
    codes = [make_agent(2000 + i) for i in range(len(wallets))]
    before = row_counts(arena.store)

    def submit(i: int) -> httpx.Response:
        with httpx.Client(base_url=arena.url, timeout=60) as client:
            body = codes[i]
            return client.post(
                "/v1/submissions", content=body, headers=signed_headers(wallets[i], body, arena.receiver)
            )

    with ThreadPoolExecutor(max_workers=len(wallets)) as pool:
        responses = list(pool.map(submit, range(len(wallets))))
    assert [r.status_code for r in responses] == [201] * len(wallets), [
        r.text for r in responses if r.status_code != 201
    ]
    assert len({r.json()["id"] for r in responses}) == len(wallets)
    after = row_counts(arena.store)
    assert after["submissions"] == before["submissions"] + len(wallets)
    with arena.store.transaction() as session:
        stored = dict(
            session.execute(
                select(Submission.hotkey, Submission.sha256).where(
                    Submission.id.in_([r.json()["id"] for r in responses])
                )
            ).all()
        )
    assert stored == {hotkey_address(w): hashlib.sha256(c).hexdigest() for w, c in zip(wallets, codes, strict=True)}


def test_concurrent_duplicates_leave_exactly_one_winner(arena):
    """The same signed request twice at once is accepted once; the same file from two hotkeys at once
    ends with one live submission: the earlier commitment's."""
    replayer = arena.miner(30)
    code = make_agent(3000)
    headers = signed_headers(replayer, code, arena.receiver)
    with ThreadPoolExecutor(max_workers=4) as pool:
        answers = list(
            pool.map(lambda _: httpx.post(f"{arena.url}/v1/submissions", content=code, headers=headers), range(4))
        )
    assert sorted(r.status_code for r in answers) == [201, 409, 409, 409]
    assert {r.json()["error"] for r in answers if r.status_code == 409} == {"replayed_request"}

    first, second = arena.miner(31), arena.miner(32)
    shared = make_agent(3001)
    arena.chain.commit(hotkey_address(first), hashlib.sha256(shared).hexdigest())
    arena.chain.advance()
    arena.chain.commit(hotkey_address(second), hashlib.sha256(shared).hexdigest())
    with ThreadPoolExecutor(max_workers=2) as pool:
        pair = list(pool.map(lambda w: arena.post(w, shared), [second, first]))
    assert 201 in [r.status_code for r in pair]
    with arena.store.transaction() as session:
        live = (
            session.execute(
                select(Submission.hotkey).where(
                    Submission.sha256 == hashlib.sha256(shared).hexdigest(),
                    Submission.status != SubmissionStatus.rejected,
                )
            )
            .scalars()
            .all()
        )
    assert live == [hotkey_address(first)]


# --- the miner's client, end to end --------------------------------------------------------------


def test_the_miner_client_commits_signs_and_posts(arena, tmp_path):
    miner, copier = arena.miner(33), arena.miner(34)
    agent = tmp_path / "my_agent.py"
    agent.write_bytes(make_agent(4000))
    validator = Validator(hotkey=arena.receiver, url=arena.url)
    with MinerClient(miner) as client:
        result = client.submit(agent, [validator], chain=arena.chain)
    assert result.all_accepted, result.receipts
    receipt = result.receipts[0]
    assert receipt.status_code == 201 and isinstance(receipt.submission_id, int)
    with arena.store.transaction() as session:
        row = session.get(Submission, receipt.submission_id)
        assert row.commitment_block == result.commitment.block and row.agent_name == "my_agent.py"
        assert row.sha256 == result.sha256 == result.commitment.data

    with MinerClient(copier) as client:
        copied = client.submit(agent, [validator], chain=arena.chain)
    refused = copied.receipts[0]
    assert not refused.accepted and (refused.status_code, refused.error) == (409, "exact_copy")
    assert "earlier submission" in refused.detail and str(receipt.submission_id) not in refused.detail

    with MinerClient(miner) as client:  # the same hotkey again within 12 h: the client surfaces Retry-After
        again = client.post(make_agent(4001), validator)
    assert (again.status_code, again.error) == (429, "rate_limited") and again.retry_after > 0


# --- the dry run a miner asks before committing ------------------------------------------------


def test_the_admission_dry_run_checks_like_a_submission_and_stores_nothing(arena):
    wallet = arena.miner(35)
    code = make_agent(5000)

    def admission(wallet, body: bytes) -> httpx.Response:
        path = "/v1/submissions/admission"
        return arena.http.post(path, content=body, headers=signed_headers(wallet, body, arena.receiver, path=path))

    before = row_counts(arena.store)
    answer = admission(wallet, code)
    assert answer.status_code == 200, answer.text
    assert answer.json()["admissible"] and answer.json()["sha256"] == hashlib.sha256(code).hexdigest()
    assert row_counts(arena.store) == before  # not the submission, not the miner, not even the nonce
    # signed for the admission path, the same headers are no submission (btauth/1 covers the target)
    headers = signed_headers(wallet, code, arena.receiver, path="/v1/submissions/admission")
    assert_refused(
        arena, arena.http.post("/v1/submissions", content=code, headers=headers), 401, "bad_signature", before
    )

    assert_refused(arena, admission(arena.miner(36, register=False), code), 403, "unregistered_hotkey", before)
    assert_refused(arena, admission(wallet, b"def helper():\n    return 1\n"), 422, "entrypoint", before)
    unsigned = arena.http.post("/v1/submissions/admission", content=code)
    assert_refused(arena, unsigned, 401, "malformed_auth", before)

    stored = arena.post(wallet, code)
    assert stored.status_code == 201, stored.text
    before = row_counts(arena.store)
    # a copy of a stored file is admissible: the dry run never compares copies (it would let miners probe)
    copier = arena.miner(37)
    assert admission(copier, code).status_code == 200 and row_counts(arena.store) == before
    limited = admission(wallet, make_agent(5001))
    body = assert_refused(arena, limited, 429, "rate_limited", before)
    assert int(limited.headers["Retry-After"]) == body["retry_after"] > 11 * 3600
    assert re.search(r"retry in 1[12] h( \d+ min)?$", body["detail"]), body["detail"]  # once, in hours
    assert body["detail"].count("retry") == 1, body["detail"]
    assert not re.search(r"\d{2}:\d{2}:\d{2}\.\d+", body["detail"]), body["detail"]  # no raw ISO microseconds


def test_a_refused_dry_run_commits_nothing_on_chain(arena, tmp_path):
    miner = arena.miner(38)
    first = tmp_path / "first.py"
    first.write_bytes(make_agent(6000))
    validator = Validator(hotkey=arena.receiver, url=arena.url)
    with MinerClient(miner) as client:
        assert client.submit(first, [validator], chain=arena.chain).all_accepted
    committed = arena.chain.get_commitment(hotkey_address(miner))
    second = tmp_path / "second.py"
    second.write_bytes(make_agent(6001))
    before = row_counts(arena.store)
    with MinerClient(miner) as client:
        result = client.submit(second, [validator], chain=arena.chain)
    refused = result.receipts[0]
    assert refused.dry_run and (refused.status_code, refused.error) == (429, "rate_limited")
    assert result.commitment is None and arena.chain.get_commitment(hotkey_address(miner)) == committed
    assert row_counts(arena.store) == before


def test_waits_are_said_in_hours_and_minutes():
    assert human_wait(43189) == "11 h 59 min"
    assert human_wait(7200) == "2 h"
    assert human_wait(125) == "2 min 5 s"
    assert human_wait(0.2) == "1 s"


# --- where a validator is found, and what it publishes ------------------------------------------


def test_a_bare_validator_url_is_resolved_by_its_healthz_hotkey_once_the_chain_confirms_it(arena):
    assert arena.url not in arena.chain.validator_endpoints().values()  # `arena serve` published nothing
    assert resolve_validators([arena.url + "/"], arena.chain) == [Validator(hotkey=arena.receiver, url=arena.url)]
    other_subnet = LocalChain(arena.store.sessions, NETUID + 7)  # the reported hotkey is no validator there
    with pytest.raises(MinerClientError, match=f"reports hotkey {arena.receiver}, which is not registered on netuid"):
        resolve_validators([arena.url], other_subnet)
    miner_only = LocalChain(arena.store.sessions, NETUID + 8)
    miner_only.register(arena.receiver)  # a uid, but no validator permit
    with pytest.raises(MinerClientError, match="holds no validator permit"):
        resolve_validators([arena.url], miner_only)


def test_the_endpoint_is_published_after_registration_and_never_as_a_wildcard(arena):
    chain = LocalChain(arena.store.sessions, NETUID + 9)
    hotkey = hotkey_address(arena.miners[30])
    assert publish_api(chain, hotkey, None, "127.0.0.1", 8123) is None  # not registered yet: nothing published
    assert chain.validator_endpoints() == {}
    chain.register(hotkey, validator_permit=True)  # what `validator run --api` does before it publishes
    for wildcard in ("0.0.0.0", "::", ""):
        assert publish_api(chain, hotkey, None, wildcard, 8123) is None
    assert chain.validator_endpoints() == {}
    assert publish_api(chain, hotkey, "https://validator.example.org/", "0.0.0.0", 8123) == (
        "https://validator.example.org"
    )
    assert chain.validator_endpoints() == {hotkey: "https://validator.example.org"}
    assert public_endpoint(None, "10.1.2.3", 9000) == "http://10.1.2.3:9000"
    assert public_endpoint(None, "::1", 9000) == "http://[::1]:9000"
    with pytest.raises(EndpointError, match="ARENA_API__PUBLIC_URL"):
        public_endpoint(None, "0.0.0.0", 9000)
    with pytest.raises(EndpointError, match="not an http"):
        public_endpoint("validator.example.org", "0.0.0.0", 9000)


# --- bad input, property-tested ------------------------------------------------------------------

GARBAGE = st.one_of(
    st.sampled_from(["", "0", "-1", "99999999999999999999", "9223372036854775808", "0x", "nan", " ", "x" * 3000]),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=100),  # what a header can carry
)


def test_garbage_in_a_submission_request_answers_the_documented_error_and_stores_nothing(arena):
    wallet = arena.miner(30)
    code = make_agent(3001)

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
    @given(
        field=st.sampled_from(["X-Bittensor-Version", "X-Bittensor-Hotkey", "X-Bittensor-Nonce", "X-Bittensor-Signature",
                               "X-Bittensor-Receiver", "X-Bittensor-Crypto", "X-Arena-Agent-Name", "query"]),
        value=GARBAGE,
        body=st.one_of(st.just(code), st.binary(max_size=300)),
    )  # fmt: skip
    def check(field: str, value: str, body: bytes) -> None:
        before = row_counts(arena.store)
        headers = signed_headers(wallet, code, arena.receiver)
        target = "/v1/submissions"
        if field == "query":
            target += "?" + (quote(value, safe="=&") or "x")  # not signed: the signature covers the query
        elif field == "X-Arena-Agent-Name":
            headers[field] = value.strip()  # (h11 refuses to send surrounding whitespace)
            body = b"\0"  # the unsigned name header must not make a bad file pass
        else:
            headers = {k: v for k, v in headers.items() if k.lower() != field.lower()} | {field: value.strip()}
        response = arena.http.post(target, content=body, headers=headers)
        assert response.status_code < 500, response.text[:300]
        answer = response.json()
        if response.status_code != 201:  # a mutation that changes nothing signed (say, an explicit default) may pass
            assert isinstance(answer["error"], str) and isinstance(answer["detail"], str), answer
            assert row_counts(arena.store) == before

    check()
