"""The address a validator publishes on chain for miners, and the order it publishes in.

A bind address is not a public address: ``0.0.0.0`` (or ``::``) means "every
interface here", which no miner can dial. So the published URL is
``api.public_url`` when set, else the bind address only when it names one
host; a wildcard bind without ``api.public_url`` publishes nothing. And the
hotkey must be registered on the subnet first: the chain refuses (the local
chain) or charges for (Bittensor) an endpoint of a hotkey it does not know.
"""

from __future__ import annotations

import ipaddress

from arena.chain.protocol import Chain

WILDCARDS = {"", "0.0.0.0", "::", "[::]", "*"}


class EndpointError(ValueError):
    """No endpoint can be published: the address is unreachable or the hotkey unregistered."""


def public_endpoint(public_url: str | None, host: str, port: int) -> str:
    """The URL to publish: ``public_url`` (its trailing slash dropped), else ``http://host:port`` for a named host."""
    if public_url:
        url = public_url.rstrip("/")
        if not url.startswith(("http://", "https://")):
            raise EndpointError(f"api.public_url {public_url!r} is not an http(s):// URL")
        return url
    if host.strip() in WILDCARDS:
        raise EndpointError(
            f"the API binds {host or 'every interface'}, an address miners cannot dial: set api.public_url "
            "(ARENA_API__PUBLIC_URL, e.g. https://validator.example.org) to publish where they reach it"
        )
    try:
        literal = f"[{host}]" if ipaddress.ip_address(host).version == 6 else host
    except ValueError:
        literal = host  # a host name
    return f"http://{literal}:{port}"


def publish(chain: Chain, hotkey: str, url: str) -> None:
    """Publish ``url`` for ``hotkey``, which must hold a uid on the subnet (register first)."""
    if not any(neuron.hotkey == hotkey for neuron in chain.neurons()):
        raise EndpointError(
            f"hotkey {hotkey} is not registered on netuid {chain.netuid}: register it before publishing "
            "(btcli subnets register, or `arena subnets register` on the local chain)"
        )
    chain.publish_endpoint(hotkey, url)
