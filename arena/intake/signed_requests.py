"""Signed requests: is the request signed for this validator, is the hotkey registered, may it submit now.

Each refusal is an :class:`IntakeError` carrying the HTTP answer the API gives
(status, error code, ``Retry-After``); the content checks of the agent file
itself are ``arena.intake.checks``'.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from bittensor import http_auth

from arena.chain.protocol import Neuron
from arena.duration import human_time, human_wait
from arena.intake.limits import IntakeLimits, aware


class IntakeError(Exception):
    """A rejected request, carrying the HTTP answer the API should give."""

    status_code = 400
    code = "rejected"

    def __init__(self, reason: str, *, retry_after: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)} if self.retry_after is not None else {}

    def to_body(self) -> dict[str, object]:
        body: dict[str, object] = {"error": self.code, "detail": self.reason}
        if self.retry_after is not None:
            body["retry_after"] = self.retry_after
        return body


class MalformedAuthError(IntakeError):
    status_code, code = 401, "malformed_auth"


class BadSignatureError(IntakeError):
    status_code, code = 401, "bad_signature"


class StaleRequestError(IntakeError):
    status_code, code = 401, "stale_request"


class WrongReceiverError(IntakeError):
    status_code, code = 403, "wrong_receiver"


class ReplayedRequestError(IntakeError):
    """409, not 401: the signature is valid and the sender authenticated; the
    request itself conflicts with one already accepted. Re-signing (a fresh
    nonce) is the fix, which a 401 would not suggest."""

    status_code, code = 409, "replayed_request"


class UnregisteredHotkeyError(IntakeError):
    status_code, code = 403, "unregistered_hotkey"


class RateLimitedError(IntakeError):
    status_code, code = 429, "rate_limited"


class CopyBudgetExhaustedError(IntakeError):
    """The hotkey's copy refusals of the last day are used up: no copy check runs until one ages out."""

    status_code, code = 429, "copy_budget_exhausted"


_AUTH_ERRORS: list[tuple[type[http_auth.AuthError], type[IntakeError]]] = [
    (http_auth.WrongReceiver, WrongReceiverError),
    (http_auth.StaleRequest, StaleRequestError),
    (http_auth.ReplayedRequest, ReplayedRequestError),
    (http_auth.BadSignature, BadSignatureError),
    (http_auth.MalformedAuth, MalformedAuthError),
]


def verify_request(
    headers: dict[str, str] | Iterable[tuple[str, str]],
    body: bytes,
    method: str,
    path: str,
    validator_hotkey: str,
    nonce_store: http_auth.NonceStore,
    *,
    limits: IntakeLimits | None = None,
    now_ns: int | None = None,
) -> http_auth.Caller:
    """Authenticate a ``btauth/1`` request addressed to this validator.

    ``path`` is the request target exactly as received (with any query
    string); ``body`` the raw bytes. Raises the :class:`IntakeError` subclass
    matching bittensor's AuthError. ``nonce_store`` is required: replay
    protection must outlive one process (the store's nonces table).
    """
    limits = limits or IntakeLimits()
    try:
        return http_auth.verify(
            dict(headers),
            body,
            method=method,
            path=path,
            self_hotkey_ss58=validator_hotkey,
            max_age=limits.auth_max_age_s,
            allowed_skew=limits.auth_allowed_skew_s,
            nonce_store=nonce_store,
            now_ns=now_ns,
        )
    except http_auth.AuthError as exc:
        for sdk_error, ours in _AUTH_ERRORS:
            if isinstance(exc, sdk_error):
                raise ours(str(exc)) from exc
        raise MalformedAuthError(str(exc)) from exc


def require_registered(hotkey: str, neurons: Iterable[Neuron]) -> Neuron:
    """The caller's neuron, or 403 when the hotkey holds no uid on the subnet."""
    for neuron in neurons:
        if neuron.hotkey == hotkey:
            return neuron
    raise UnregisteredHotkeyError(f"hotkey {hotkey} is not registered on this subnet")


def check_rate_limit(last_accepted_at: datetime | None, *, now: datetime, window: timedelta) -> None:
    """429 with Retry-After (whole seconds, rounded up) while the hotkey's
    previous accepted submission is younger than ``window``."""
    if last_accepted_at is None:
        return
    wait = (aware(last_accepted_at) + window - aware(now)).total_seconds()
    if wait > 0:
        retry_after = max(1, math.ceil(wait))
        raise RateLimitedError(
            f"one accepted submission per {window.total_seconds() / 3600:g} h per hotkey; the last was at "
            f"{human_time(aware(last_accepted_at))}; retry in {human_wait(retry_after)}",
            retry_after=retry_after,
        )


def check_copy_budget(refused_at: Sequence[datetime], *, now: datetime, budget: int, window: timedelta) -> int:
    """How many copy refusals the hotkey has left; 429 with Retry-After (when the oldest
    refusal in the window ages out) when none is left. ``refused_at``: the refusals in the window."""
    left = budget - len(refused_at)
    if left > 0:
        return left
    oldest = sorted(aware(moment) for moment in refused_at)[len(refused_at) - budget]
    retry_after = max(1, math.ceil((oldest + window - aware(now)).total_seconds()))
    raise CopyBudgetExhaustedError(
        f"{budget} copy refusals per {window.total_seconds() / 3600:g} h per hotkey, all used: no copy check runs "
        f"for this hotkey until one ages out; retry in {human_wait(retry_after)}",
        retry_after=retry_after,
    )
