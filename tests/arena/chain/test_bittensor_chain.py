"""BittensorChain, offline: construction, argument checks, u16 weights, endpoint encoding,
and how SDK results map to the protocol's models.

No test may reach a real chain, so the SDK client is replaced in the mapping
tests by ``FakeSubtensor`` below: a STAND-IN for ``bittensor.Subtensor`` with
only the five calls BittensorChain makes, returning the SDK's own result types
(``BlockInfo``, ``reads.Neuron``, ``reads.Commitment``, ``ExtrinsicResult``,
``ChainError``). Everything else (wallets, signing keys, intents, call
builders, the SDK's normaliser) is real.
"""

from __future__ import annotations

import ipaddress
import socket
from datetime import UTC, datetime
from types import SimpleNamespace

import bittensor as bt
import pytest
from bittensor.balance import Balance
from bittensor.client import BlockInfo as SdkBlockInfo
from bittensor.reads import Commitment as SdkCommitment
from bittensor.reads import Neuron as SdkNeuron

from arena.chain.bittensor_chain import (
    PROTOCOL_HTTP,
    PROTOCOL_HTTPS,
    BittensorChain,
    ChainAccessError,
    ChainConfigError,
    endpoint_url,
    normalize_weights,
    parse_endpoint,
)
from arena.chain.protocol import Chain
from arena.wallets import ensure_wallet, hotkey_address

SHA = "ab" * 32


@pytest.fixture(scope="module")
def wallets(tmp_path_factory):
    folder = tmp_path_factory.mktemp("wallets")
    return ensure_wallet(folder, "validator", "default"), ensure_wallet(folder, "miner", "default")


def axon(ip: str, port: int, protocol: int = PROTOCOL_HTTP) -> dict:
    address = ipaddress.ip_address(ip)
    return {"ip": int(address), "port": port, "ip_type": address.version, "protocol": protocol, "version": 1}


def sdk_neuron(uid: int, hotkey: str, permit: bool, axon_info: dict | None = None) -> SdkNeuron:
    raw = {"uid": uid, "hotkey": hotkey, "axon_info": axon_info or {"ip": 0, "port": 0, "ip_type": 4, "protocol": 4}}
    return SdkNeuron(
        uid=uid,
        hotkey=hotkey,
        coldkey="5Cold",
        active=True,
        validator_permit=permit,
        last_update=0,
        total_stake=Balance.from_rao(0),
        raw=raw,
    )


class FakeSubtensor:
    """STAND-IN for bittensor.Subtensor in unit tests only (a real chain cannot exist here)."""

    def __init__(self, head: int = 1200, neurons: list[SdkNeuron] | None = None) -> None:
        self.head = head
        self.records = neurons or []
        self.commitments: dict[str, SdkCommitment] = {}
        self.executed: list[tuple[object, object, dict]] = []
        self.calls: list[tuple[object, object, dict]] = []
        self.next_result: bt.ExtrinsicResult | Exception | None = None
        self.neurons = SimpleNamespace(all=lambda netuid: list(self.records))
        self.identity = SimpleNamespace(commitment=lambda netuid, hotkey: self.commitments.get(hotkey))

    def block_info(self, block: int | None = None) -> SdkBlockInfo | None:
        number = self.head if block is None else block
        if number > self.head:
            return None
        return SdkBlockInfo(
            number=number,
            hash=f"0x{number:064x}",
            timestamp=datetime(2025, 1, 1, tzinfo=UTC),
            explorer_url=None,
            header={},
            extrinsics=[],
        )

    def _answer(self, default: bt.ExtrinsicResult) -> bt.ExtrinsicResult:
        result = default if self.next_result is None else self.next_result
        self.next_result = None
        if isinstance(result, Exception):
            raise result
        return result

    def execute(self, intent, wallet, **kwargs) -> bt.ExtrinsicResult:
        self.executed.append((intent, wallet, kwargs))
        return self._answer(bt.ExtrinsicResult(success=True, message="ok", extrinsic_id=f"{self.head + 1}-3"))

    def submit_call(self, call, wallet, **kwargs) -> bt.ExtrinsicResult:
        self.calls.append((call, wallet, kwargs))
        result = self._answer(bt.ExtrinsicResult(success=True, message="ok", extrinsic_id=f"{self.head + 1}-2"))
        if result.success:
            field = call.params["info"]["fields"][0][0]
            data = next(iter(field.values())).decode()
            self.commitments[hotkey_address(wallet)] = SdkCommitment(
                block=self.head + 1, deposit=Balance.from_rao(0), data=data, fields=[field]
            )
        return result


def chain_with(wallets, fake: FakeSubtensor, **kwargs) -> BittensorChain:
    return BittensorChain("test", 7, wallets[0], subtensor=fake, **kwargs)


# --------------------------------------------------------------------------- construction


def test_construction_is_offline_and_satisfies_the_protocol(wallets):
    chain = BittensorChain("test", 7, wallets[0])
    assert isinstance(chain, Chain)
    assert chain.endpoint == "wss://test.finney.opentensor.ai:443" and chain.netuid == 7
    assert chain.hotkey == hotkey_address(wallets[0])
    assert BittensorChain("ws://10.1.2.3:9944", 3).endpoint == "ws://10.1.2.3:9944"
    assert BittensorChain("local", 2).endpoint.startswith("ws://")


@pytest.mark.parametrize(
    ("network", "netuid", "match"),
    [
        ("mainnet", 7, "unknown network 'mainnet'"),
        ("http://x", 7, "unknown network"),
        ("finney", 0, "root network"),
        ("finney", -1, "netuid"),
        ("finney", 70000, "netuid"),
        ("finney", True, "netuid"),
        ("finney", "7", "netuid"),
    ],
)
def test_bad_configuration_is_refused_with_a_reason(network, netuid, match):
    with pytest.raises(ChainConfigError, match=match):
        BittensorChain(network, netuid)


def test_a_wallet_must_be_a_bittensor_wallet():
    with pytest.raises(ChainConfigError, match="Wallet"):
        BittensorChain("finney", 7, wallet="my-wallet")


def test_unreachable_node_is_a_clear_error():
    with socket.socket() as probe:  # a loopback port nobody listens on: refused at once, no network involved
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    chain = BittensorChain(f"ws://127.0.0.1:{port}", 7)
    with pytest.raises(ChainAccessError, match=f"ws://127.0.0.1:{port}.*reading the chain head failed"):
        chain.current_block()


# --------------------------------------------------------------------------- pure helpers


def test_weights_are_max_upscaled_to_u16():
    assert normalize_weights([0, 1, 2], [1.0, 2.0, 4.0]) == ([0, 1, 2], [16384, 32768, 65535])
    assert normalize_weights([5, 9], [0.0, 0.3]) == ([9], [65535])  # zeros are dropped
    assert normalize_weights([4, 2], [3, 1]) == ([4, 2], [65535, 21845])  # order kept, ints accepted
    assert normalize_weights([1, 2], [1.0, 1e-9]) == ([1], [65535])  # rounds to zero in u16


@pytest.mark.parametrize(
    ("uids", "weights", "match"),
    [
        ([1, 2], [1.0], "pair up"),
        ([], [], "no weights"),
        ([1, 1], [0.5, 0.5], "duplicate uids: \\[1\\]"),
        ([1, 70000], [0.5, 0.5], "0..65535"),
        ([True, 2], [0.5, 0.5], "integers"),
        ([1, 2], [0.5, -0.1], "non-negative"),
        ([1, 2], [float("nan"), 1.0], "finite"),
        ([1, 2], [float("inf"), 1.0], "finite"),
        ([1, 2], [0.0, 0.0], "all weights are zero"),
    ],
)
def test_bad_weights_are_refused_before_signing(uids, weights, match):
    with pytest.raises(ChainConfigError, match=match):
        normalize_weights(uids, weights)


def test_endpoints_round_trip_through_the_axon_encoding():
    for url in ("http://203.0.113.5:8000", "https://[2001:db8::7]:8443"):
        ip, port, protocol = parse_endpoint(url)
        assert endpoint_url(axon(ip, port, protocol)) == url
    assert parse_endpoint("https://203.0.113.5") == ("203.0.113.5", 443, PROTOCOL_HTTPS)
    assert parse_endpoint("http://203.0.113.5/") == ("203.0.113.5", 80, PROTOCOL_HTTP)
    assert endpoint_url({"ip": 0, "port": 0, "ip_type": 4, "protocol": 4}) is None  # never served
    assert endpoint_url(axon("203.0.113.5", 8000, protocol=0)) is None  # a tag this subnet does not use
    assert endpoint_url(None) is None


@pytest.mark.parametrize(
    ("url", "match"),
    [
        ("http://validator.example.org:8000", "IP address, not a host name"),
        ("http://203.0.113.5:8000/api", "no path"),
        ("http://203.0.113.5:8000/?x=1", "no path or query"),
        ("ftp://203.0.113.5:21", "http or https"),
        ("http://0.0.0.0:8000", "not an address peers can reach"),
    ],
)
def test_unpublishable_endpoints_say_why(url, match):
    with pytest.raises(ChainConfigError, match=match):
        parse_endpoint(url)


# --------------------------------------------------------------------------- SDK results -> protocol models


def test_blocks_map_to_number_and_hash(wallets):
    chain = chain_with(wallets, FakeSubtensor(head=1200))
    head = chain.current_block()
    assert (head.number, head.hash) == (1200, f"0x{1200:064x}")
    assert chain.block_hash(17) == f"0x{17:064x}"
    with pytest.raises(ChainAccessError, match="block 5000 is not available"):
        chain.block_hash(5000)
    with pytest.raises(ChainConfigError, match="non-negative"):
        chain.block_hash(-1)


def test_neurons_and_validator_endpoints(wallets):
    fake = FakeSubtensor(
        neurons=[
            sdk_neuron(0, "5Validator", True, axon("203.0.113.5", 8000)),
            sdk_neuron(1, "5Miner", False, axon("203.0.113.9", 9000)),  # served, but no permit: not a validator
            sdk_neuron(2, "5Silent", True),  # permit, nothing published
            sdk_neuron(3, "5Tls", True, axon("2001:db8::7", 8443, PROTOCOL_HTTPS)),
        ]
    )
    chain = chain_with(wallets, fake)
    assert [(n.uid, n.hotkey, n.validator_permit) for n in chain.neurons()] == [
        (0, "5Validator", True),
        (1, "5Miner", False),
        (2, "5Silent", True),
        (3, "5Tls", True),
    ]
    assert chain.validator_endpoints() == {
        "5Validator": "http://203.0.113.5:8000",
        "5Tls": "https://[2001:db8::7]:8443",
    }


def test_publish_endpoint_serves_the_axon_once(wallets):
    validator = hotkey_address(wallets[0])
    fake = FakeSubtensor(neurons=[sdk_neuron(0, validator, True)])
    chain = chain_with(wallets, fake)
    chain.publish_endpoint(validator, "https://203.0.113.5:8443")
    (intent, signer, _kwargs) = fake.executed[0]
    assert isinstance(intent, bt.ServeAxon) and signer is wallets[0]
    assert (intent.netuid, intent.ip, intent.port, intent.protocol) == (7, "203.0.113.5", 8443, PROTOCOL_HTTPS)
    fake.records = [sdk_neuron(0, validator, True, axon("203.0.113.5", 8443, PROTOCOL_HTTPS))]
    chain.publish_endpoint(validator, "https://203.0.113.5:8443")  # already on chain: no second extrinsic
    assert len(fake.executed) == 1
    fake.next_result = bt.ExtrinsicResult(
        success=False, message="ServingRateLimitExceeded", error=bt.ChainError("ServingRateLimitExceeded")
    )
    with pytest.raises(ChainAccessError, match="ServingRateLimitExceeded"):
        chain.publish_endpoint(validator, "http://203.0.113.5:8000")


def test_writes_need_the_wallet_of_that_hotkey(wallets):
    fake = FakeSubtensor()
    with pytest.raises(ChainConfigError, match="needs a wallet"):
        BittensorChain("test", 7, subtensor=fake).commit("5Someone", SHA)
    miner = hotkey_address(wallets[1])
    with pytest.raises(ChainConfigError, match=f"cannot act for {miner}"):
        chain_with(wallets, fake).set_weights(miner, [0], [1.0])
    assert fake.calls == [] and fake.executed == []


def test_commit_writes_a_raw64_commitment_and_reads_it_back(wallets):
    fake = FakeSubtensor(head=500)
    chain = chain_with(wallets, fake)
    hotkey = hotkey_address(wallets[0])
    assert chain.get_commitment(hotkey) is None
    stored = chain.commit(hotkey, SHA)
    assert (stored.hotkey, stored.data, stored.block) == (hotkey, SHA, 501)
    call, signer, kwargs = fake.calls[0]
    assert (call.module, call.function) == ("Commitments", "set_commitment")
    assert call.params == {"netuid": 7, "info": {"fields": [[{"Raw64": SHA.encode()}]]}}
    assert signer is wallets[0] and kwargs["signer"] == "hotkey"
    assert chain.get_commitment(hotkey) == stored
    with pytest.raises(ChainConfigError, match="64 lowercase hex"):
        chain.commit(hotkey, "not-a-hash")
    fake.next_result = bt.ExtrinsicResult(
        success=False,
        message="CommitmentSetRateLimitExceeded",
        error=bt.ChainError("too soon", code=bt.ErrorCode.RATE_LIMITED),
    )
    with pytest.raises(ChainAccessError, match="CommitmentSetRateLimitExceeded") as caught:
        chain.commit(hotkey, "cd" * 32)
    assert caught.value.code == "rate_limited"


def test_set_weights_receipt_on_success(wallets):
    fake = FakeSubtensor(head=900)
    chain = chain_with(wallets, fake, version_key=3)
    receipt = chain.set_weights(hotkey_address(wallets[0]), [4, 1, 2], [0.5, 0.0, 0.25])
    assert receipt.ok and receipt.block == 901 and receipt.message == "set"
    assert receipt.uids == [4, 2]
    assert receipt.weights == pytest.approx([65535 / (65535 + 32768), 32768 / (65535 + 32768)])
    intent, _wallet, kwargs = fake.executed[0]
    assert isinstance(intent, bt.SetWeights)
    assert (intent.netuid, intent.uids, intent.weights, intent.version_key) == (7, [4, 1, 2], [0.5, 0.0, 0.25], 3)
    assert kwargs["retries"] == 2


def test_set_weights_commit_reveal_is_reported(wallets):
    fake = FakeSubtensor(head=900)
    fake.next_result = bt.ExtrinsicResult(success=True, extrinsic_id="901-1", data={"reveal_round": 4242})
    receipt = chain_with(wallets, fake).set_weights(hotkey_address(wallets[0]), [0, 1], [1.0, 1.0])
    assert receipt.ok and "drand round 4242" in receipt.message and receipt.weights == [0.5, 0.5]


def test_set_weights_refusals_become_failed_receipts(wallets):
    fake = FakeSubtensor()
    chain = chain_with(wallets, fake)
    hotkey = hotkey_address(wallets[0])
    fake.next_result = bt.ChainError(
        "Weights on netuid 7 were last set 10 blocks ago; the rate limit is 100 blocks. Retry in ~90 blocks (~1080s).",
        code=bt.ErrorCode.RATE_LIMITED,
    )
    limited = chain.set_weights(hotkey, [0, 1], [0.7, 0.3])
    assert not limited.ok and "rate_limited" in limited.message and "Retry in ~90 blocks" in limited.message
    assert limited.uids == [0, 1]  # what would have been sent is still on the receipt
    fake.next_result = bt.ExtrinsicResult(success=False, message="NeuronNoValidatorPermit", extrinsic_id="1201-4")
    denied = chain.set_weights(hotkey, [0, 1], [0.7, 0.3])
    assert not denied.ok and denied.message == "NeuronNoValidatorPermit" and denied.block == 1201
    fake.next_result = bt.RpcConnectionError("connection dropped")
    dropped = chain.set_weights(hotkey, [0, 1], [0.7, 0.3])
    assert not dropped.ok and "connection dropped" in dropped.message and "wss://test" in dropped.message
