"""The ``Chain`` protocol on a real subtensor, with the bittensor 11 SDK.

What maps to what:

- blocks: ``Subtensor.block_info`` (number and hash in one read, so the race
  seed can never pair one block's number with another's hash);
- neurons: ``subtensor.neurons.all(netuid)`` (one runtime-API call);
- endpoints: the ``ServeAxon`` intent publishes ``ip:port`` plus a protocol
  tag; the chain stores no URL, so the scheme travels in the tag
  (:data:`PROTOCOL_HTTP` / :data:`PROTOCOL_HTTPS`) and the host must be an IP
  address. A validator's endpoint is read back from its neuron's axon info;
- commitments: v11 has no commitment intent, so ``commit`` submits the raw
  ``Commitments.set_commitment`` call (one ``Raw64`` field: the sha256 hex),
  signed by the hotkey; reads use the SDK's ``commitment`` read;
- weights: the ``SetWeights`` intent, which clips to the subnet's
  max-weight limit, quantises to u16, picks plaintext or timelocked
  commit-reveal (v4) from the subnet's settings and preflights registration
  and the weights rate limit, so a too-early call fails fast with the
  chain's own "retry in N blocks" message.

Reads raise :class:`ChainAccessError` naming the network and the operation;
``set_weights`` never raises for a chain-side refusal: it returns a
``WeightsReceipt`` with ``ok=False`` and the reason, so the validator's
cycle records it and carries on. Construction does no I/O (the SDK connects
on first use), so a misconfigured network fails at the first call, not here.
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar
from urllib.parse import urlsplit

import bittensor as bt
from bittensor.intents import normalize as sdk_normalize
from bittensor.settings import U16_MAX, resolve_endpoint

from arena.chain.protocol import BlockInfo, Commitment, Neuron, WeightsReceipt
from arena.wallets import hotkey_address

PROTOCOL_HTTP = 4  # ServeAxon's default tag; its meaning is subnet-defined, here "http"
PROTOCOL_HTTPS = 5
_SCHEMES = {PROTOCOL_HTTP: "http", PROTOCOL_HTTPS: "https"}
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
T = TypeVar("T")


class ChainConfigError(ValueError):
    """The chain was configured or called wrongly (network, netuid, wallet, arguments)."""


class ChainAccessError(RuntimeError):
    """A read or write did not go through; ``code`` is the SDK's error code when it gave one."""

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code


def normalize_weights(uids: Sequence[int], weights: Sequence[float]) -> tuple[list[int], list[int]]:
    """Validate and quantise weights the way the chain stores them: max-upscaled to u16, zeros dropped.

    The SDK's own ``normalize`` does the arithmetic; the checks here turn
    every bad input into one clear message before anything is signed.
    """
    uids, weights = list(uids), list(weights)
    if len(uids) != len(weights):
        raise ChainConfigError(f"{len(uids)} uids but {len(weights)} weights: they must pair up")
    if not uids:
        raise ChainConfigError("no weights to set")
    if any(isinstance(u, bool) or not isinstance(u, int) or not 0 <= u <= U16_MAX for u in uids):
        raise ChainConfigError(f"uids must be integers in 0..{U16_MAX}: {uids}")
    if len(set(uids)) != len(uids):
        raise ChainConfigError(f"duplicate uids: {sorted(u for u in set(uids) if uids.count(u) > 1)}")
    if any(not isinstance(w, int | float) or not math.isfinite(w) or w < 0 for w in weights):
        raise ChainConfigError(f"weights must be finite and non-negative: {weights}")
    quantised_uids, values = sdk_normalize(uids, [float(w) for w in weights])
    if not values:
        raise ChainConfigError("all weights are zero (or round to zero in u16): nothing to set")
    return quantised_uids, values


def endpoint_url(axon: dict[str, Any] | None) -> str | None:
    """The URL a neuron's published axon info stands for, or None when nothing is served."""
    if not isinstance(axon, dict):
        return None
    ip, port = int(axon.get("ip") or 0), int(axon.get("port") or 0)
    tag = axon.get("protocol")
    scheme = _SCHEMES.get(PROTOCOL_HTTP if tag is None else int(tag))  # other tags: not an arena endpoint
    if not ip or not port or scheme is None:
        return None
    if int(axon.get("ip_type") or 4) == 6:
        return f"{scheme}://[{ipaddress.IPv6Address(ip)}]:{port}"
    return f"{scheme}://{ipaddress.IPv4Address(ip)}:{port}"


def parse_endpoint(url: str) -> tuple[str, int, int]:
    """(ip, port, protocol tag) for a URL the chain can hold, or a clear reason why not."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ChainConfigError(f"endpoint {url!r}: the scheme must be http or https")
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username:
        raise ChainConfigError(f"endpoint {url!r}: the chain stores only ip:port, so the URL can have no path or query")
    try:
        ip = ipaddress.ip_address(parts.hostname or "")
        port = parts.port
    except ValueError as exc:
        raise ChainConfigError(
            f"endpoint {url!r}: the chain stores an IP address, not a host name ({exc}); publish the public IP"
        ) from None
    if ip.is_unspecified:
        raise ChainConfigError(f"endpoint {url!r}: {ip} is not an address peers can reach")
    port = port or (443 if parts.scheme == "https" else 80)
    return str(ip), port, PROTOCOL_HTTPS if parts.scheme == "https" else PROTOCOL_HTTP


def _block_of(result: Any) -> int | None:
    """The including block of an extrinsic, from its "block-index" identifier."""
    extrinsic_id = getattr(result, "extrinsic_id", None) or ""
    head = extrinsic_id.split("-", 1)[0]
    return int(head) if head.isdigit() else None


class BittensorChain:
    """``Chain`` on finney, test, a local subtensor or any ws(s):// endpoint.

    ``wallet`` is needed only for writes (publishing an endpoint, committing,
    setting weights), which must be for the wallet's own hotkey. ``subtensor``
    replaces the SDK client; only unit tests pass it, since no test may reach
    a real chain.
    """

    def __init__(
        self,
        network: str,
        netuid: int,
        wallet: bt.Wallet | None = None,
        *,
        subtensor: Any | None = None,
        version_key: int = 0,
        wait_for_finalization: bool = False,
        retries: int = 2,
    ) -> None:
        try:
            self.network, self.endpoint = resolve_endpoint(network)
        except ValueError:
            raise ChainConfigError(
                f"unknown network {network!r}: use finney, test, local or a ws:// / wss:// endpoint"
            ) from None
        if isinstance(netuid, bool) or not isinstance(netuid, int) or not 1 <= netuid <= U16_MAX:
            raise ChainConfigError(
                f"netuid must be a subnet id in 1..{U16_MAX} (0 is the root network), not {netuid!r}"
            )
        if wallet is not None and not isinstance(wallet, bt.Wallet):
            raise ChainConfigError(f"wallet must be a bittensor Wallet, not {type(wallet).__name__}")
        if version_key < 0 or retries < 0:
            raise ChainConfigError("version_key and retries must be non-negative")
        self.netuid = netuid
        self.wallet = wallet
        self.version_key = version_key
        self.wait_for_finalization = wait_for_finalization
        self.retries = retries
        self._subtensor = subtensor if subtensor is not None else bt.Subtensor(network)

    def __repr__(self) -> str:
        return f"BittensorChain(network={self.network!r}, netuid={self.netuid})"

    @property
    def hotkey(self) -> str | None:
        """The hotkey this chain signs with, if it has a wallet."""
        return hotkey_address(self.wallet) if self.wallet is not None else None

    # ----------------------------------------------------------------- reads

    def _sdk(self, operation: str, call: Callable[[], T]) -> T:
        try:
            return call()
        except bt.ChainError as exc:
            code = exc.code.value if exc.code is not None else None
            raise ChainAccessError(f"{self}: {operation} refused: {exc}", code=code) from exc
        except (bt.BittensorError, OSError, TimeoutError) as exc:
            raise ChainAccessError(f"{self} at {self.endpoint}: {operation} failed: {exc}") from exc

    def current_block(self) -> BlockInfo:
        info = self._sdk("reading the chain head", lambda: self._subtensor.block_info())
        if info is None or not info.hash:
            raise ChainAccessError(f"{self}: the node returned no head block")
        return BlockInfo(number=int(info.number), hash=_hex(info.hash))

    def block_hash(self, number: int) -> str:
        if isinstance(number, bool) or not isinstance(number, int) or number < 0:
            raise ChainConfigError(f"block number must be a non-negative integer, not {number!r}")
        info = self._sdk(f"reading block {number}", lambda: self._subtensor.block_info(number))
        if info is None or not info.hash:
            raise ChainAccessError(f"{self}: block {number} is not available (not produced yet, or pruned)")
        return _hex(info.hash)

    def _neuron_records(self) -> list[Any]:
        return list(self._sdk("reading neurons", lambda: self._subtensor.neurons.all(self.netuid)) or [])

    def neurons(self) -> list[Neuron]:
        return [
            Neuron(uid=int(n.uid), hotkey=str(n.hotkey), validator_permit=bool(n.validator_permit))
            for n in self._neuron_records()
        ]

    def validator_endpoints(self) -> dict[str, str]:
        endpoints: dict[str, str] = {}
        for record in self._neuron_records():
            url = endpoint_url((getattr(record, "raw", None) or {}).get("axon_info"))
            if record.validator_permit and url:
                endpoints[str(record.hotkey)] = url
        return endpoints

    def get_commitment(self, hotkey: str) -> Commitment | None:
        found = self._sdk(
            f"reading the commitment of {hotkey}", lambda: self._subtensor.identity.commitment(self.netuid, hotkey)
        )
        if found is None:
            return None
        return Commitment(hotkey=hotkey, data=str(found.data), block=int(found.block))

    # ----------------------------------------------------------------- writes

    def _signer(self, hotkey: str, action: str) -> bt.Wallet:
        if self.wallet is None:
            raise ChainConfigError(f"{action} needs a wallet: construct BittensorChain with the hotkey's wallet")
        own = hotkey_address(self.wallet)
        if hotkey != own:
            raise ChainConfigError(f"{action}: this chain signs with hotkey {own}, so it cannot act for {hotkey}")
        return self.wallet

    def _submitted(self, action: str, result: Any) -> Any:
        if not getattr(result, "success", False):
            error = getattr(result, "error", None)
            code = error.code.value if error is not None and error.code is not None else None
            raise ChainAccessError(f"{self}: {action} failed: {getattr(result, 'message', '') or error}", code=code)
        return result

    def publish_endpoint(self, hotkey: str, url: str) -> None:
        ip, port, protocol = parse_endpoint(url)
        wallet = self._signer(hotkey, "publishing an endpoint")
        wanted = f"{_SCHEMES[protocol]}://{f'[{ip}]' if ':' in ip else ip}:{port}"
        if self.validator_endpoints().get(hotkey) == wanted:
            return  # already published: re-serving would only hit the serving rate limit
        intent = bt.ServeAxon(netuid=self.netuid, ip=ip, port=port, protocol=protocol)
        action = f"publishing {wanted} for {hotkey}"
        result = self._sdk(
            action, lambda: self._subtensor.execute(intent, wallet, wait_for_finalization=self.wait_for_finalization)
        )
        self._submitted(action, result)

    def commit(self, hotkey: str, data: str) -> Commitment:
        if not _SHA256.match(data):
            raise ChainConfigError(
                f"a submission commitment is the agent's sha256 as 64 lowercase hex digits, not {data!r}"
            )
        wallet = self._signer(hotkey, "committing")
        # CommitmentInfo { fields: BoundedVec<Data> }: the outer list is the BoundedVec newtype, as the
        # SDK's own v10 commitment extrinsic encodes it. Not exercised against a live chain in tests.
        call = bt.calls.Commitments.set_commitment(netuid=self.netuid, info={"fields": [[{"Raw64": data.encode()}]]})
        action = f"committing {data} for {hotkey}"
        result = self._submitted(
            action,
            self._sdk(
                action,
                lambda: self._subtensor.submit_call(
                    call, wallet, signer="hotkey", wait_for_finalization=self.wait_for_finalization
                ),
            ),
        )
        stored = self.get_commitment(hotkey)
        if stored is not None and stored.data == data:
            return stored
        block = _block_of(result)
        if block is None:
            raise ChainAccessError(f"{self}: the commitment of {hotkey} was included but reads back as {stored}")
        return Commitment(hotkey=hotkey, data=data, block=block)

    def set_weights(self, hotkey: str, uids: list[int], weights: list[float]) -> WeightsReceipt:
        quantised_uids, values = normalize_weights(uids, weights)
        wallet = self._signer(hotkey, "setting weights")
        total = sum(values)
        sent = {"uids": quantised_uids, "weights": [v / total for v in values]}
        intent = bt.SetWeights(
            netuid=self.netuid, uids=list(uids), weights=[float(w) for w in weights], version_key=self.version_key
        )
        try:
            result = self._subtensor.execute(
                intent, wallet, retries=self.retries, wait_for_finalization=self.wait_for_finalization
            )
        except bt.ChainError as exc:  # preflight refusals: not registered, rate limit, too few weights
            code = f" [{exc.code.value}]" if exc.code is not None else ""
            return WeightsReceipt(ok=False, message=f"refused{code}: {exc}", **sent)
        except (bt.BittensorError, OSError, TimeoutError) as exc:
            return WeightsReceipt(ok=False, message=f"{self} at {self.endpoint}: {exc}", **sent)
        if not result.success:
            return WeightsReceipt(
                ok=False, block=_block_of(result), message=result.message or str(result.error), **sent
            )
        reveal_round = (result.data or {}).get("reveal_round")
        message = (
            f"committed (timelocked commit-reveal; the chain reveals at drand round {reveal_round})"
            if reveal_round is not None
            else "set"
        )
        return WeightsReceipt(ok=True, block=_block_of(result), message=message, **sent)

    def close(self) -> None:
        """Release the SDK connection (optional: the SDK also cleans up at exit)."""
        close = getattr(self._subtensor, "close", None)
        if callable(close):
            close()


def _hex(value: Any) -> str:
    text = value.hex() if isinstance(value, bytes | bytearray) else str(value)
    return text if text.startswith("0x") else f"0x{text}"
