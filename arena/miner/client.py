"""The miner's side of a submission: ask each validator whether it would take the file, commit the agent's
sha256, then sign and post the file.

The dry run (``POST /v1/submissions/admission``: signature, registration, rate
limit, the content checks; no copy check, nothing stored) comes first because
a commitment costs a fee on a real chain and overwrites the previous one: a
rate-limited or unregistered hotkey must learn that before it pays. A validator
without that route (404/405) is simply posted to.

Then order matters: the commitment goes on chain before the post, because in a copy dispute
the submission whose commitment came first wins, and a hash reveals nothing
of the code. Re-running with the same file reuses the existing commitment
(keeping its earlier block) instead of writing a new one.

Each POST is signed with ``bittensor.http_auth.sign`` (``btauth/1``): the
receiver is the validator's hotkey and the signed path is the request target
exactly as sent, so a retry signs a fresh nonce. Validators answer JSON
errors; :func:`parse_error` reads both our API's ``{"error", "detail"}`` shape
and FastAPI's ``{"detail": ...}``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import bittensor as bt
import httpx
from pydantic import BaseModel, Field

from arena.chain.protocol import Chain, Commitment
from arena.intake.checks import check_submission
from arena.wallets import hotkey_address

SUBMISSIONS_PATH = "/v1/submissions"
ADMISSION_PATH = "/v1/submissions/admission"  # the dry run: checks, stores nothing
CONTENT_TYPE = "text/x-python; charset=utf-8"
AGENT_NAME_HEADER = "X-Arena-Agent-Name"  # cosmetic (not signed): the file name the leaderboard shows


class MinerClientError(ValueError):
    """The submission cannot start: unreadable file, no validator to send to, a failed commitment."""


class Validator(BaseModel):
    hotkey: str  # ss58: the receiver the request is signed for
    url: str  # base URL of its API


class SubmissionReceipt(BaseModel):
    """One validator's answer."""

    validator: Validator
    accepted: bool
    status_code: int | None = None  # None: no HTTP answer at all
    submission_id: int | str | None = None
    error: str | None = None  # the validator's error code (e.g. near_copy, rate_limited) or "unreachable"
    detail: str = ""
    retry_after: int | None = None  # seconds, from Retry-After
    body: dict[str, Any] = Field(default_factory=dict)
    dry_run: bool = False  # refused by the admission check: the file was neither committed for it nor posted


class SubmissionResult(BaseModel):
    agent: str
    sha256: str
    hotkey: str
    commitment: Commitment | None = None
    receipts: list[SubmissionReceipt] = Field(default_factory=list)

    @property
    def all_accepted(self) -> bool:
        return bool(self.receipts) and all(r.accepted for r in self.receipts)


def read_agent(path: Path) -> bytes:
    """The agent file's bytes, after the pure intake checks a validator would run first
    (size, UTF-8, syntax, ``agent_main``): failing here saves every validator a round trip."""
    try:
        code = Path(path).read_bytes()
    except OSError as exc:
        raise MinerClientError(f"cannot read agent file {path}: {exc.strerror or exc}") from exc
    verdict = check_submission(code, earlier=[])
    if not verdict.accepted:
        raise MinerClientError(f"{path}: {verdict.reason}")
    return code


def parse_validator(spec: str) -> tuple[str | None, str]:
    """``HOTKEY@URL`` or a bare ``URL`` (its hotkey is then looked up on chain)."""
    head, sep, tail = spec.partition("@")
    if sep and "://" in tail and "://" not in head and head:
        spec, hotkey = tail, head
    else:
        hotkey = None
    url = spec.rstrip("/")
    parts = httpx.URL(url)
    if parts.scheme not in ("http", "https") or not parts.host:
        raise MinerClientError(f"validator {spec!r}: expected http(s)://HOST[:PORT] or HOTKEY@http(s)://HOST[:PORT]")
    return hotkey, url


def resolve_validators(specs: list[str], chain: Chain | None, *, timeout: float = 10.0) -> list[Validator]:
    """The validators to post to: the given ones, else every validator that published an endpoint on the subnet.

    A bare URL's hotkey is the one published on chain for it, else the one the validator reports at
    ``/healthz``, trusted only when the chain lists it as a validator of this subnet (a request signed for
    a hotkey that is no validator would hand the file to whoever answers)."""
    published = chain.validator_endpoints() if chain is not None else {}
    if not specs:
        if not published:
            where = f"netuid {chain.netuid}" if chain is not None else "the subnet"
            raise MinerClientError(f"no validator has published an endpoint on {where}; pass --validator-url")
        return [Validator(hotkey=hotkey, url=url.rstrip("/")) for hotkey, url in sorted(published.items())]
    by_url = {url.rstrip("/"): hotkey for hotkey, url in published.items()}
    validators = []
    for spec in specs:
        hotkey, url = parse_validator(spec)
        hotkey = hotkey or by_url.get(url) or reported_hotkey(url, chain, timeout)
        validators.append(Validator(hotkey=hotkey, url=url))
    return validators


def reported_hotkey(url: str, chain: Chain | None, timeout: float) -> str:
    """The hotkey the validator at ``url`` reports at /healthz, once the chain confirms it is a validator."""
    given = f"give it as HOTKEY@{url} (the request is signed for that receiver)"
    try:
        answer = httpx.get(url + "/healthz", timeout=timeout)
        hotkey = answer.json().get("validator_hotkey")
    except (httpx.HTTPError, ValueError, AttributeError) as exc:
        raise MinerClientError(f"validator {url}: no hotkey published on chain, and /healthz did not answer "
                               f"({type(exc).__name__}); {given}") from exc  # fmt: skip
    if not isinstance(hotkey, str) or not hotkey:
        raise MinerClientError(f"validator {url}: no hotkey published on chain, and it reports none; {given}")
    neurons = {n.hotkey: n for n in chain.neurons()} if chain is not None else {}
    neuron = neurons.get(hotkey)
    if neuron is None or not neuron.validator_permit:
        where = f"netuid {chain.netuid}" if chain is not None else "the subnet"
        state = "holds no validator permit" if neuron is not None else "is not registered"
        raise MinerClientError(f"validator {url} reports hotkey {hotkey}, which {state} on {where}; {given}")
    return hotkey


def parse_error(response: httpx.Response) -> tuple[str | None, str, dict[str, Any]]:
    """(error code, human detail, JSON body) of a validator's error answer."""
    try:
        body = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        text = response.text.strip()
        return None, text[:500] or response.reason_phrase, {}
    if not isinstance(body, dict):
        return None, json.dumps(body)[:500], {"value": body}
    payload = body["detail"] if isinstance(body.get("detail"), dict) else body
    detail = payload.get("detail", payload.get("message", payload.get("reason", "")))
    if isinstance(detail, list):  # FastAPI request validation: [{"loc": [...], "msg": ...}]
        detail = "; ".join(str(item.get("msg", item)) if isinstance(item, dict) else str(item) for item in detail)
    code = payload.get("error") or payload.get("code")
    return (str(code) if code is not None else None), str(detail or response.reason_phrase), payload


def _retry_after(response: httpx.Response, payload: dict[str, Any]) -> int | None:
    for value in (response.headers.get("Retry-After"), payload.get("retry_after")):
        try:
            return int(value) if value is not None else None
        except (TypeError, ValueError):
            continue
    return None


class MinerClient:
    """Signs with one hotkey and posts agent files to validators."""

    def __init__(
        self,
        wallet: bt.Wallet,
        *,
        timeout: float = 30.0,
        retries: int = 1,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.wallet = wallet
        self.hotkey = hotkey_address(wallet)
        self.retries = retries
        self._http = httpx.Client(timeout=timeout, transport=transport)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> MinerClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def commit(self, code: bytes, chain: Chain) -> Commitment:
        """Put the agent's sha256 on chain, reusing an identical existing commitment."""
        sha256 = hashlib.sha256(code).hexdigest()
        existing = chain.get_commitment(self.hotkey)
        if existing is not None and existing.data == sha256:
            return existing
        return chain.commit(self.hotkey, sha256)

    def admit(self, code: bytes, validator: Validator) -> SubmissionReceipt | None:
        """The validator's dry run: None when it would take the file now (or has no dry run), else its refusal."""
        receipt = self.post(code, validator, path=ADMISSION_PATH)
        if receipt.accepted or receipt.status_code in (404, 405):
            return None
        return receipt.model_copy(update={"dry_run": True, "submission_id": None})

    def post(
        self, code: bytes, validator: Validator, *, agent_name: str = "agent.py", path: str = SUBMISSIONS_PATH
    ) -> SubmissionReceipt:
        url = httpx.URL(validator.url.rstrip("/") + path)
        target = url.raw_path.decode("ascii")  # path plus ?query, exactly as it goes on the wire
        last_error = ""
        for _attempt in range(self.retries + 1):
            headers = bt.http_auth.sign(
                self.wallet, method="POST", path=target, body=code, receiver_ss58=validator.hotkey
            )  # a fresh nonce per attempt: a resent nonce would be rejected as a replay
            headers.update({"Content-Type": CONTENT_TYPE, AGENT_NAME_HEADER: agent_name})
            try:
                response = self._http.post(url, content=code, headers=headers)
            except httpx.TransportError as exc:
                last_error = f"{type(exc).__name__}: {exc}"
                continue
            return self._receipt(validator, response)
        return SubmissionReceipt(validator=validator, accepted=False, error="unreachable", detail=last_error)

    def _receipt(self, validator: Validator, response: httpx.Response) -> SubmissionReceipt:
        if response.is_success:
            try:
                body = response.json()
            except (json.JSONDecodeError, UnicodeDecodeError):
                body = {}
            body = body if isinstance(body, dict) else {"value": body}
            return SubmissionReceipt(
                validator=validator,
                accepted=True,
                status_code=response.status_code,
                submission_id=body.get("id", body.get("submission_id")),
                detail=str(body.get("detail", body.get("status", "accepted"))),
                body=body,
            )
        code, detail, payload = parse_error(response)
        return SubmissionReceipt(
            validator=validator,
            accepted=False,
            status_code=response.status_code,
            error=code,
            detail=detail,
            retry_after=_retry_after(response, payload),
            body=payload,
        )

    def submit(
        self,
        agent: Path,
        validators: list[Validator],
        *,
        chain: Chain | None = None,
        commit: bool = True,
    ) -> SubmissionResult:
        """Check the file locally, ask each validator's dry run, commit its hash (unless ``commit=False``) when
        any validator would take it, then post it to those that would."""
        code = read_agent(agent)
        result = SubmissionResult(agent=str(agent), sha256=hashlib.sha256(code).hexdigest(), hotkey=self.hotkey)
        refusals = {v.url: self.admit(code, v) for v in validators}
        admitted = [v for v in validators if refusals[v.url] is None]
        if commit and admitted:
            if chain is None:
                raise MinerClientError("committing needs a chain (or pass commit=False)")
            try:
                result.commitment = self.commit(code, chain)
            except Exception as exc:  # the chain's own errors name the network and the reason
                raise MinerClientError(f"writing the commitment of {result.sha256} failed: {exc}") from exc
        posted = {v.url: self.post(code, v, agent_name=Path(agent).name) for v in admitted}
        result.receipts = [refusals[v.url] or posted[v.url] for v in validators]
        return result
