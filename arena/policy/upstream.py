"""Which model server a run talks to: a configured OpenAI-compatible URL, or the
built-in offline policy served in-process (no socket, no GPU)."""

from __future__ import annotations

import httpx

from arena.policy.chat_format import MODEL_ID as POLICY_MODEL
from arena.runner.proxy import Upstream, UpstreamRegistry


class UpstreamChoiceError(ValueError):
    pass


def registry_for(
    model: str, base_url: str | None = None, api_key: str | None = None, seed: int = 0
) -> UpstreamRegistry:
    if base_url:
        return UpstreamRegistry([Upstream(name="upstream", base_url=base_url, api_key=api_key, models=[model])])
    if model != POLICY_MODEL:
        raise UpstreamChoiceError(f"without --base-url the model is the built-in {POLICY_MODEL!r}")
    from arena.policy.server import create_policy_app

    return UpstreamRegistry(
        [Upstream(name=POLICY_MODEL, base_url="http://heuristic-policy/v1", models=[POLICY_MODEL])],
        transports={POLICY_MODEL: httpx.ASGITransport(app=create_policy_app(seed=seed))},
    )
