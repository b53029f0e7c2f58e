"""LocalChain: the Chain protocol on the store, on a real SQLite file and a real PostgreSQL database.

Each test uses its own netuid, so one migrated database per backend serves them all.
"""

from __future__ import annotations

import hashlib
import itertools
import threading
from collections.abc import Iterator

import pytest

from arena.chain.local import GENESIS_PARENT, LocalChain, LocalChainError, block_hash
from arena.chain.protocol import BlockInfo, Chain, Commitment, Neuron
from arena.store import Store, open_store
from tests.arena.store.test_store import BACKENDS, migrated_store

_netuids = itertools.count(100)


@pytest.fixture(scope="module", params=BACKENDS)
def store(request, tmp_path_factory) -> Iterator[Store]:
    with migrated_store(request.param, tmp_path_factory.mktemp("chain")) as opened:
        yield opened


@pytest.fixture
def chain(store) -> LocalChain:
    return LocalChain(store.sessions, netuid=next(_netuids))


def test_implements_the_chain_protocol(chain):
    assert isinstance(chain, Chain)


def test_blocks_advance_deterministically(chain, store, tmp_path):
    genesis = chain.current_block()
    assert genesis == BlockInfo(number=0, hash=block_hash(chain.netuid, 0, GENESIS_PARENT))
    expected = "0x" + hashlib.sha256(f"{chain.netuid}:0:{GENESIS_PARENT}".encode()).hexdigest()
    assert genesis.hash == expected
    one = chain.advance()
    assert one == BlockInfo(number=1, hash=block_hash(chain.netuid, 1, genesis.hash))
    head = chain.advance(3)
    assert head.number == 4 and chain.current_block() == head
    assert chain.block_hash(1) == one.hash and chain.block_hash(0) == genesis.hash
    with pytest.raises(LocalChainError, match="block 5 does not exist"):
        chain.block_hash(5)
    with pytest.raises(LocalChainError, match="n >= 1"):
        chain.advance(0)
    # The same netuid on another database (another validator's local chain) has the same blocks.
    with migrated_store("sqlite", tmp_path) as other:
        twin = LocalChain(other.sessions, netuid=chain.netuid)
        assert twin.advance(4) == head


def test_register_is_idempotent_and_numbers_uids(chain):
    assert chain.register("hk-validator", validator_permit=True) == 0
    assert [chain.register(f"hk-{i}") for i in range(3)] == [1, 2, 3]
    assert chain.register("hk-1") == 2  # a registered hotkey keeps its uid
    chain.register("hk-2", validator_permit=True)
    assert chain.neurons() == [
        Neuron(uid=0, hotkey="hk-validator", validator_permit=True),
        Neuron(uid=1, hotkey="hk-0"),
        Neuron(uid=2, hotkey="hk-1"),
        Neuron(uid=3, hotkey="hk-2", validator_permit=True),
    ]
    with pytest.raises(LocalChainError, match="empty hotkey"):
        chain.register("")


def test_commitments_record_the_block_they_landed_in(chain):
    with pytest.raises(LocalChainError, match="not registered; it cannot commit"):
        chain.commit("stranger", "ab" * 32)
    chain.register("miner")
    assert chain.get_commitment("miner") is None
    chain.advance(2)
    first = chain.commit("miner", "aa" * 32)
    assert first == Commitment(hotkey="miner", data="aa" * 32, block=2)
    chain.advance()
    chain.commit("miner", "bb" * 32)
    assert chain.get_commitment("miner") == Commitment(hotkey="miner", data="bb" * 32, block=3)
    with pytest.raises(LocalChainError, match="1..1024 characters"):
        chain.commit("miner", "")


def test_endpoints_are_published_per_registered_hotkey(chain):
    with pytest.raises(LocalChainError, match="cannot publish an endpoint"):
        chain.publish_endpoint("stranger", "http://127.0.0.1:8000")
    chain.register("v1", validator_permit=True)
    chain.register("v2", validator_permit=True)
    chain.publish_endpoint("v1", "http://127.0.0.1:8000")
    chain.publish_endpoint("v2", "http://127.0.0.1:8001")
    chain.publish_endpoint("v1", "https://validator.example:443")  # republishing moves it
    assert chain.validator_endpoints() == {"v1": "https://validator.example:443", "v2": "http://127.0.0.1:8001"}
    with pytest.raises(LocalChainError, match="not an http"):
        chain.publish_endpoint("v1", "ftp://nope")


def test_set_weights_normalises_and_refuses_what_the_chain_refuses(chain):
    validator = "validator"
    for hotkey in (validator, "m1", "m2"):
        chain.register(hotkey, validator_permit=hotkey == validator)
    chain.advance(7)
    receipt = chain.set_weights(validator, [1, 2], [3.0, 1.0])
    assert (receipt.ok, receipt.block, receipt.uids, receipt.weights) == (True, 7, [1, 2], [0.75, 0.25])
    assert chain.weights(validator) == receipt
    refusals = {
        "stranger": ([1], [1.0], "not registered"),
        validator: ([1, 2], [1.0], "2 uids but 1 weights"),
    }
    for hotkey, (uids, weights, message) in refusals.items():
        refused = chain.set_weights(hotkey, uids, weights)
        assert not refused.ok and message in refused.message
    for uids, weights, message in [
        ([1, 1], [0.5, 0.5], "appears twice"),
        ([1], [-1.0], "non-negative"),
        ([1], [float("nan")], "finite"),
        ([1, 2], [0.0, 0.0], "sum to zero"),
        ([1, 9], [0.5, 0.5], "uids [9] are not registered"),
    ]:
        refused = chain.set_weights(validator, uids, weights)
        assert not refused.ok and message in refused.message, (uids, refused.message)
    assert chain.weights(validator) == receipt  # refusals changed nothing
    assert chain.weights("m1") is None


def test_state_is_shared_by_every_process_on_the_database(chain, store):
    chain.register("shared-miner")
    chain.advance(2)
    chain.commit("shared-miner", "cc" * 32)
    other = open_store(store.engine.url.render_as_string(hide_password=False))  # another process's own engine
    try:
        seen = LocalChain(other.sessions, netuid=chain.netuid)
        assert seen.current_block() == chain.current_block()
        assert seen.get_commitment("shared-miner").block == 2
        assert LocalChain(other.sessions, netuid=chain.netuid + 10_000).neurons() == []  # netuids are apart
    finally:
        other.dispose()


def test_concurrent_registration_and_blocks_never_collide(chain):
    uids: list[int] = []
    barrier = threading.Barrier(6)

    def work(i: int) -> None:
        barrier.wait()
        uids.append(chain.register(f"racer-{i}"))
        chain.advance()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(uids) == list(range(6))
    head = chain.current_block()
    assert head.number == 6
    previous = chain.block_hash(0)
    for number in range(1, 7):  # one unbroken hash chain, whoever produced each block
        assert chain.block_hash(number) == block_hash(chain.netuid, number, previous)
        previous = chain.block_hash(number)
