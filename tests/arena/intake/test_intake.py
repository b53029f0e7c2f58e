"""Submission intake: btauth verification, registration, rate limit and every content check.

Keys are real sr25519 hotkeys made with the bittensor Wallet API in a temporary
folder; the agents are the reference agents in ``arena/agents`` plus copies
made from them here.
"""

from __future__ import annotations

import ast
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import bittensor as bt
import pytest

from arena.agents import agent_path
from arena.chain.protocol import Commitment, Neuron
from arena.intake.checks import SubmissionRejected, check_submission, commitment_block_for
from arena.intake.copies import EarlierSubmission, find_collisions, fingerprint, first_committed, minhash_bytes
from arena.intake.limits import IntakeLimits
from arena.intake.signed_requests import (
    BadSignatureError,
    MalformedAuthError,
    RateLimitedError,
    ReplayedRequestError,
    StaleRequestError,
    UnregisteredHotkeyError,
    WrongReceiverError,
    check_rate_limit,
    require_registered,
    verify_request,
)
from arena.wallets import ensure_wallet, hotkey_address

PATH = "/v1/submissions"
T0 = datetime(2025, 1, 1, tzinfo=UTC)
REFERENCE = ("tool_calling", "search_loop", "shortcut")


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    folder = tmp_path_factory.mktemp("wallets")
    return {name: ensure_wallet(folder, "arena", name) for name in ("miner", "validator", "other")}


def address(wallet) -> str:
    return hotkey_address(wallet)


def source(name: str) -> bytes:
    return agent_path(name).read_bytes()


def earlier(code: bytes, sid: int | str, hotkey: str, block: int | None = 100, at: datetime = T0) -> EarlierSubmission:
    return EarlierSubmission(
        id=sid, hotkey=hotkey, commitment_block=block, submitted_at=at, **fingerprint(code).model_dump()
    )


def signed(keys, body: bytes = b"print(1)\n", *, receiver: str | None = None, nonce_ns: int | None = None):
    return bt.http_auth.sign(
        keys["miner"],
        method="POST",
        path=PATH,
        body=body,
        receiver_ss58=receiver or address(keys["validator"]),
        nonce_ns=nonce_ns,
    )


def verify(keys, headers, body=b"print(1)\n", store=None, **kwargs):
    return verify_request(
        headers, body, "POST", PATH, address(keys["validator"]), store or bt.http_auth.InMemoryNonceStore(), **kwargs
    )


# --------------------------------------------------------------------------- btauth


def test_signed_request_round_trip_names_the_caller(keys):
    caller = verify(keys, signed(keys))
    assert caller.hotkey_ss58 == address(keys["miner"])
    assert caller.hotkey_ss58.startswith("5") and caller.crypto_type == bt.CRYPTO_SR25519


def test_replayed_request_is_409(keys):
    store = bt.http_auth.InMemoryNonceStore()
    headers = signed(keys)
    verify(keys, headers, store=store)
    with pytest.raises(ReplayedRequestError) as caught:
        verify(keys, headers, store=store)
    assert caught.value.status_code == 409 and caught.value.to_body()["error"] == "replayed_request"
    verify(keys, signed(keys), store=store)  # a fresh nonce from the same key is fine


def test_stale_and_future_nonces_are_401(keys):
    with pytest.raises(StaleRequestError) as old:
        verify(keys, signed(keys, nonce_ns=time.time_ns() - 60 * 10**9))
    assert old.value.status_code == 401 and "older" in old.value.reason
    with pytest.raises(StaleRequestError, match="future"):
        verify(keys, signed(keys, nonce_ns=time.time_ns() + 60 * 10**9))
    # the window is configurable: a 2-minute window accepts the 60-second-old request
    # (the nonce store must remember nonces at least as long as the window: the SDK refuses otherwise)
    verify(
        keys,
        signed(keys, nonce_ns=time.time_ns() - 60 * 10**9),
        store=bt.http_auth.InMemoryNonceStore(retention=300),
        limits=IntakeLimits(auth_max_age_s=120),
    )


def test_wrong_or_missing_receiver_is_403(keys):
    with pytest.raises(WrongReceiverError) as caught:
        verify(keys, signed(keys, receiver=address(keys["other"])))
    assert caught.value.status_code == 403
    unbound = bt.http_auth.sign(keys["miner"], method="POST", path=PATH, body=b"print(1)\n")
    with pytest.raises(WrongReceiverError, match="receiver"):
        verify(keys, unbound)


def test_bad_signature_is_401(keys):
    headers = signed(keys)
    with pytest.raises(BadSignatureError) as tampered_body:
        verify(keys, headers, body=b"print(2)\n")
    assert tampered_body.value.status_code == 401
    impostor = dict(headers, **{bt.http_auth.HEADER_HOTKEY: address(keys["other"])})
    with pytest.raises(BadSignatureError):
        verify(keys, impostor)
    with pytest.raises(BadSignatureError):  # the signed path is part of the payload
        verify_request(
            headers, b"print(1)\n", "POST", "/v1/other", address(keys["validator"]), bt.http_auth.InMemoryNonceStore()
        )


def test_missing_headers_are_malformed_401(keys):
    headers = signed(keys)
    del headers[bt.http_auth.HEADER_SIGNATURE]
    with pytest.raises(MalformedAuthError) as caught:
        verify(keys, headers)
    assert caught.value.status_code == 401 and "X-Bittensor-Signature" in caught.value.reason
    with pytest.raises(MalformedAuthError):
        verify(keys, {})


def test_unregistered_hotkey_is_403(keys):
    neurons = [Neuron(uid=0, hotkey=address(keys["validator"]), validator_permit=True), Neuron(uid=3, hotkey="5Fabc")]
    with pytest.raises(UnregisteredHotkeyError) as caught:
        require_registered(address(keys["miner"]), neurons)
    assert caught.value.status_code == 403 and address(keys["miner"]) in caught.value.reason
    neurons.append(Neuron(uid=7, hotkey=address(keys["miner"])))
    assert require_registered(address(keys["miner"]), neurons).uid == 7


def test_rate_limit_gives_retry_after_in_seconds():
    window = timedelta(hours=12)
    check_rate_limit(None, now=T0, window=window)  # never accepted: free to submit
    with pytest.raises(RateLimitedError) as caught:
        check_rate_limit(T0, now=T0 + timedelta(hours=2), window=window)
    assert caught.value.status_code == 429
    assert caught.value.retry_after == 10 * 3600
    assert caught.value.headers() == {"Retry-After": "36000"}
    assert caught.value.to_body()["retry_after"] == 36000
    with pytest.raises(RateLimitedError) as almost:  # a fraction of a second rounds up, never to 0
        check_rate_limit(T0, now=T0 + window - timedelta(milliseconds=300), window=window)
    assert almost.value.retry_after == 1
    check_rate_limit(T0, now=T0 + window, window=window)  # exactly at the end of the window: allowed
    naive = datetime(2025, 1, 1)  # naive timestamps (SQLite) are read as UTC
    with pytest.raises(RateLimitedError):
        check_rate_limit(naive, now=T0 + timedelta(hours=1), window=window)


# --------------------------------------------------------------------------- content checks


def test_reference_agents_pass_in_any_order():
    accepted: list[EarlierSubmission] = []
    for i, name in enumerate(REFERENCE):
        verdict = check_submission(source(name), earlier=accepted, hotkey=f"hotkey-{i}")
        assert verdict.accepted, f"{name}: {verdict.reason}"
        assert verdict.status_code == 201 and verdict.fingerprint is not None
        accepted.append(earlier(source(name), i, f"hotkey-{i}"))


def test_oversized_file_is_413():
    code = source("shortcut") + b"#" * 300_000
    verdict = check_submission(code, earlier=[])
    assert (verdict.accepted, verdict.check, verdict.status_code) == (False, "size", 413)
    assert str(len(code)) in verdict.reason and "262144" in verdict.reason
    small = check_submission(source("shortcut"), earlier=[], limits=IntakeLimits(max_bytes=100))
    assert small.check == "size"
    assert check_submission(b"  \n", earlier=[]).check == "size"


def test_invalid_utf8_names_the_line():
    verdict = check_submission(b"import json\n\ndef agent_main(p):\n    x = '\xff'\n", earlier=[])
    assert (verdict.check, verdict.status_code, verdict.line) == ("utf8", 400, 4)


def test_invalid_python_names_the_line():
    code = b"import json\n\n\ndef agent_main(problem)\n    return None\n"
    verdict = check_submission(code, earlier=[])
    assert (verdict.check, verdict.status_code, verdict.line) == ("syntax", 422, 4)
    assert "line 4" in verdict.reason
    assert check_submission(b"def agent_main(p):\n    pass\n\x00\n", earlier=[]).check == "syntax"


def test_missing_or_unusable_agent_main_is_422():
    no_entry = Path(__file__).parents[2] / "support" / "agents" / "no_entry.py"
    verdict = check_submission(no_entry.read_bytes(), earlier=[])
    assert (verdict.check, verdict.status_code) == ("entrypoint", 422)
    assert "agent_main" in verdict.reason
    for code, words in (
        (b"async def agent_main(problem):\n    pass\n", "async"),
        (b"def agent_main():\n    pass\n", "argument"),
        (b"class A:\n    def agent_main(self, problem):\n        pass\n", "top-level"),
        (b"agent_main = print\n", "top-level"),
    ):
        verdict = check_submission(code, earlier=[])
        assert verdict.check == "entrypoint" and words in verdict.reason, code
    assert check_submission(b"def agent_main(*args):\n    pass\n", earlier=[]).accepted
    assert check_submission(b"\xef\xbb\xbfdef agent_main(p):\n    pass\n", earlier=[]).accepted  # BOM


def test_a_copy_of_another_hotkeys_code_names_nothing_about_it():
    code = source("tool_calling")
    verdict = check_submission(code, earlier=[earlier(code, 41, "5Original")], hotkey="5Copier", commitment_block=200)
    assert (verdict.accepted, verdict.check, verdict.status_code) == (False, "exact_copy", 409)
    assert verdict.collision is not None and verdict.collision.submission_id == 41  # validator-side only
    assert verdict.reason == "this agent is too close to an earlier submission, which came first"
    with pytest.raises(SubmissionRejected) as caught:
        verdict.raise_for_rejection()
    assert caught.value.status_code == 409
    body = caught.value.to_body()
    assert "collides_with" not in body and not any(leak in str(body) for leak in ("41", "5Original", "100", "1.0"))


def test_a_copy_of_ones_own_code_names_that_submission():
    code = source("tool_calling")
    verdict = check_submission(code, earlier=[earlier(code, 41, "5Same")], hotkey="5Same", commitment_block=200)
    assert (verdict.check, verdict.status_code) == ("exact_copy", 409)
    assert "your own earlier submission 41" in verdict.reason
    assert SubmissionRejected(verdict).to_body()["collides_with"]["submission_id"] == 41


def renamed(code: str) -> str:
    """Every identifier the agent defines renamed, every string literal re-worded."""
    swaps = {
        "messages": "dialogue",
        "MAX_STEPS": "TURN_LIMIT",
        "SYSTEM_PROMPT": "INSTRUCTIONS",
        "_assistant_message": "as_turn",
        "_execute": "run_tool",
        "finished": "done",
        "content": "text_out",
        "arguments": "parsed_args",
        "problem": "task",
        "You are a careful shopping assistant": "You are a meticulous buyer's agent",
    }
    for old, new in swaps.items():
        code = code.replace(old, new)
    return code


def test_renamed_variables_copy_is_caught_by_the_ast_hash():
    original = source("tool_calling")
    copy = renamed(original.decode()).encode()
    assert copy != original
    verdict = check_submission(
        copy, earlier=[earlier(original, 1, "5Original")], hotkey="5Copier", commitment_block=300
    )
    assert (verdict.check, verdict.status_code) == ("ast_copy", 409)
    assert verdict.collision.kind == "ast" and "too close to an earlier submission" in verdict.reason


def test_reformatted_copy_is_caught_by_the_ast_hash():
    original = source("search_loop")
    tree = ast.parse(original)
    reformatted = "# my own agent, written from scratch\n" + ast.unparse(tree).replace("    ", "  ") + "\n# the end\n"
    assert ast.parse(reformatted)  # still valid Python
    verdict = check_submission(reformatted.encode(), earlier=[earlier(original, "s-9", "5Original")], hotkey="5Copier")
    assert verdict.check == "ast_copy" and verdict.collision.submission_id == "s-9"


def near_copies() -> dict[str, tuple[str, bytes]]:
    """Hand-made near copies: small structural edits the AST hash does not catch."""
    tool = source("tool_calling").decode()
    loop = source("search_loop").decode()
    short = source("shortcut").decode()
    edits = {
        "extra statement": (
            "tool_calling",
            tool.replace(
                "    for _ in range(MAX_STEPS):", "    steps = 0\n    for _ in range(MAX_STEPS):\n        steps += 1"
            ),
        ),
        "extra helper": ("tool_calling", tool + "\n\ndef _unused(values):\n    return [v * 2 for v in values if v]\n"),
        "rewritten branch": (
            "tool_calling",
            tool.replace(
                'finished = finished or (ok and call.function.name == "terminate")',
                'if ok and call.function.name == "terminate":\n                finished = True',
            ),
        ),
        "fewer candidates": (
            "search_loop",
            loop.replace("    ids = ", "    if len(hits) > 3:\n        hits = hits[:3]\n    ids = "),
        ),
        "cheaper second hit": (
            "shortcut",
            short.replace(
                "    first = hits[0]",
                "    first = hits[0]\n    if len(hits) > 1 and hits[1].get('price', 0) < first.get('price', 0):\n"
                "        first = hits[1]",
            ),
        ),
    }
    return {label: (base, code.encode()) for label, (base, code) in edits.items()}


@pytest.mark.parametrize("label", list(near_copies()))
def test_near_copy_is_caught_by_minhash(label):
    base, copy = near_copies()[label]
    assert copy != source(base)
    prior = earlier(source(base), f"{base}-1", "5Original")
    verdict = check_submission(copy, earlier=[prior], hotkey="5Copier", commitment_block=500)
    assert (verdict.check, verdict.status_code) == ("near_copy", 409), verdict.reason
    assert verdict.collision.submission_id == f"{base}-1"
    assert verdict.collision.similarity >= IntakeLimits().minhash_threshold
    assert "%" not in verdict.reason and "5Original" not in verdict.reason  # the similarity stays validator-side


def test_threshold_separates_distinct_agents_from_near_copies():
    """The measurement behind the default threshold, kept honest by the test suite."""
    limits = IntakeLimits()
    prints = {name: fingerprint(source(name)) for name in REFERENCE}
    for i, name in enumerate(REFERENCE):
        others = [earlier(source(o), o, f"h-{o}") for o in REFERENCE[i + 1 :]]
        assert find_collisions(prints[name], others, limits, hotkey=f"h-{name}") == []
    strict = limits.model_copy(update={"minhash_threshold": 0.5})  # well below the default: still no collision
    assert not find_collisions(prints["tool_calling"], [earlier(source("shortcut"), 1, "x")], strict)


def test_the_submitters_own_near_copies_are_allowed_but_not_resubmissions():
    base = source("tool_calling")
    improved = near_copies()["extra helper"][1]
    own = [earlier(base, 5, "5Me")]
    assert check_submission(improved, earlier=own, hotkey="5Me").accepted
    assert check_submission(improved, earlier=own, hotkey="5Someone").check == "near_copy"
    strict = IntakeLimits(near_copy_of_own=True)
    assert check_submission(improved, earlier=own, hotkey="5Me", limits=strict).check == "near_copy"
    again = check_submission(base, earlier=own, hotkey="5Me")
    assert again.check == "exact_copy" and "your own" in again.reason


def test_the_earlier_chain_commitment_wins_a_collision():
    code = source("shortcut")
    prior = earlier(code, 8, "5Late", block=900, at=T0)
    # this submission arrives later, but its hash was committed on chain first: it wins
    verdict = check_submission(
        code, earlier=[prior], hotkey="5Early", commitment_block=850, submitted_at=T0 + timedelta(1)
    )
    assert verdict.accepted and [c.submission_id for c in verdict.supersedes] == [8]
    assert check_submission(code, earlier=[prior], hotkey="5Early", commitment_block=901).check == "exact_copy"
    assert check_submission(code, earlier=[prior], hotkey="5Early", commitment_block=None).check == "exact_copy"


def test_first_committed_rules():
    a = earlier(b"def agent_main(p):\n    pass\n", "a", "5A", block=10, at=T0 + timedelta(hours=5))
    b = a.model_copy(update={"id": "b", "commitment_block": 11, "submitted_at": T0})
    assert first_committed(a, b) is a and first_committed(b, a) is a  # the block decides, not arrival
    tie = b.model_copy(update={"commitment_block": 10})
    assert first_committed(a, tie) is tie  # same block: the earlier submission
    uncommitted = b.model_copy(update={"commitment_block": None, "submitted_at": T0 - timedelta(days=9)})
    assert first_committed(uncommitted, a) is a  # no commitment loses to any commitment
    both = uncommitted.model_copy(update={"id": "c", "submitted_at": T0})
    assert first_committed(both, uncommitted) is uncommitted  # neither committed: arrival decides


def test_fingerprint_is_stable_and_storable():
    code = source("search_loop")
    print_ = fingerprint(code)
    assert print_ == fingerprint(code.decode())
    assert print_ == check_submission(code, earlier=[]).fingerprint
    assert len(print_.minhash) == 256 and all(0 <= v < 2**32 for v in print_.minhash)
    stored = minhash_bytes(print_.minhash)
    assert len(stored) == 256 * 8
    row = EarlierSubmission(
        id=1, hotkey="5X", sha256=print_.sha256, ast_hash=print_.ast_hash, minhash=stored, submitted_at=T0
    )
    assert row.minhash == print_.minhash
    commented = b"# a comment changes the bytes, not the tree\n" + code
    assert fingerprint(commented).ast_hash == print_.ast_hash and fingerprint(commented).sha256 != print_.sha256


def test_sketches_of_another_size_are_a_clear_error():
    code = source("shortcut")
    prior = earlier(code, 1, "5A").model_copy(update={"minhash": [1, 2, 3], "sha256": "0", "ast_hash": "0"})
    with pytest.raises(ValueError, match="earlier submissions 1 \\(3\\) .*re-fingerprint"):
        check_submission(source("search_loop"), earlier=[prior])
    unsketched = EarlierSubmission.model_validate(prior.model_dump() | {"id": 2, "minhash": None})  # a row without one
    assert unsketched.minhash == []
    with pytest.raises(ValueError, match="earlier submissions 2 \\(0\\)"):
        check_submission(source("search_loop"), earlier=[unsketched])


def test_commitment_block_counts_only_for_the_same_code():
    sha = fingerprint(source("shortcut")).sha256
    assert commitment_block_for(sha, Commitment(hotkey="5A", data=sha, block=77)) == 77
    assert commitment_block_for(sha, Commitment(hotkey="5A", data="0" * 64, block=77)) is None
    assert commitment_block_for(sha, None) is None


def test_the_auth_window_defaults_are_bittensors():
    from bittensor import http_auth

    from arena.intake.limits import AUTH_ALLOWED_SKEW_S, AUTH_MAX_AGE_S

    assert (AUTH_MAX_AGE_S, AUTH_ALLOWED_SKEW_S) == (http_auth.DEFAULT_MAX_AGE, http_auth.DEFAULT_ALLOWED_SKEW)
