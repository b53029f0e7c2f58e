"""``POST /v1/submissions``: a miner's signed agent file, checked, then stored once.

The checks run in this order, each with its own HTTP error (codes in
``arena.race.intake`` and docs/miner-guide-submit.md): body size (413, before
anything else, so an oversized body is never read whole), the ``btauth/1``
signature, freshness and receiver (401/403), registration on the subnet (403),
the rate limit and the copy budget (429 + Retry-After), then the content checks of
:func:`arena.race.intake.check_submission` (UTF-8, syntax, ``agent_main``,
copies). A rejected request stores nothing: no submission, no miner row, not
even its nonce; except a refusal as a copy of another hotkey's code, which is
recorded (``copy_refusals``, with its nonce) because it draws on the hotkey's daily
copy budget. So the nonce is only *looked up* while checking, and
inserted in the same transaction that stores the submission; that
transaction holds an intake lock (an advisory lock on PostgreSQL, the write
lock on SQLite) and re-checks what a concurrent request could have changed
since: the nonce (replay), the hotkey's rate limit and copies of submissions
stored meanwhile. The whole check runs in a worker thread (the hashing,
MinHash and database calls are blocking); the event loop only reads the body.

``POST /v1/submissions/admission`` is the dry run a miner asks before it pays
for a chain commitment: the same signed request and the same checks up to the
rate limit, then the pure content checks, but never the copy check (it would
let a miner probe what others submitted) and nothing stored, not even the nonce.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, cast

import numpy as np
from fastapi import APIRouter, Request, status
from sqlalchemy import select, text
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from arena.api.deps import Context
from arena.api.schemas import ErrorBody, SubmissionAccepted, SubmissionAdmission
from arena.api.settings import ApiSettings
from arena.chain.protocol import Chain, Neuron
from arena.race.intake import (
    COPY_CHECKS,
    Collision,
    EarlierSubmission,
    IntakeError,
    IntakeVerdict,
    ReplayedRequestError,
    SubmissionRejected,
    check_copy_budget,
    check_rate_limit,
    check_submission,
    commitment_block_for,
    minhash_bytes,
    require_registered,
    verify_request,
)
from arena.race.intake_limits import COPY_BUDGET_WINDOW
from arena.store import repositories as repo
from arena.store.db import Store, is_sqlite
from arena.store.models import Nonce, Submission, SubmissionStatus, utcnow

router = APIRouter(tags=["submissions"])

AGENT_NAME_HEADER = "x-arena-agent-name"  # cosmetic and unsigned: the file name the leaderboard shows
INTAKE_LOCK = 0x6172656E61  # "arena": the advisory lock that serialises intake writes on PostgreSQL
DRAIN_LIMIT = 8 * 1024 * 1024  # an oversized body is read (and dropped) up to this, so the client sees the 413
COUNTED = [s for s in SubmissionStatus if s is not SubmissionStatus.rejected]  # what the rate limit counts

logger = logging.getLogger(__name__)


class CopyRefused(SubmissionRejected):
    """A copy of another hotkey's submission, refused and charged to the copy budget."""

    def __init__(self, verdict: IntakeVerdict, left: int) -> None:
        super().__init__(verdict)
        self.left = left

    def to_body(self) -> dict[str, object]:
        return {**super().to_body(), "copy_refusals_left": self.left}


class NotAcceptingError(IntakeError):
    status_code, code = 503, "not_accepting"


class ChainUnavailableError(IntakeError):
    status_code, code = 503, "chain_unavailable"


def too_large(size: int | None, limit: int) -> SubmissionRejected:
    what = f"{size} bytes" if size is not None else f"more than {limit} bytes"
    reason = f"the agent file is {what}; the limit is {limit} bytes"
    return SubmissionRejected(IntakeVerdict(accepted=False, check="size", status_code=413, reason=reason))


async def read_body(request: Request, limit: int) -> bytes:
    """The raw body, refused (413) once it passes ``limit`` bytes without buffering the excess."""
    declared = request.headers.get("content-length", "")
    declared_size = int(declared) if declared.isdigit() else None
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            if size > DRAIN_LIMIT:
                break
            continue  # keep draining: a client still sending would see a reset instead of the answer
        chunks.append(chunk)
    if size > limit or (declared_size is not None and declared_size > limit):
        raise too_large(declared_size if declared_size is not None and declared_size > limit else None, limit)
    return b"".join(chunks)


def request_target(request: Request) -> str:
    """Path and query exactly as received: what the miner signed (``btauth/1`` covers the target)."""
    raw = request.scope.get("raw_path") or request.url.path.encode()
    target = raw.decode("latin-1")
    query = request.scope.get("query_string") or b""
    return f"{target}?{query.decode('latin-1')}" if query else target


def clean_agent_name(raw: str | None) -> str:
    name = (raw or "").strip().replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(ch for ch in name if ch.isprintable())[:200]
    return name or "agent.py"


class PeekedNonces:
    """A NonceStore that only asks whether a nonce was seen: the insert happens with the submission."""

    def __init__(self, store: Store, retention: float) -> None:
        self.store = store
        self.retention = retention

    def check_and_store(self, hotkey_ss58: str, nonce_ns: int) -> bool:
        with self.store.transaction() as session:
            seen = session.execute(
                select(Nonce.nonce).where(Nonce.hotkey == hotkey_ss58, Nonce.nonce == nonce_ns)
            ).first()
        return seen is None


class SubmissionIntake:
    """Every check of one submission, then the one transaction that stores it."""

    def __init__(self, store: Store, chain: Chain, api: ApiSettings, validator_hotkey: str | None) -> None:
        self.store = store
        self.chain = chain
        self.limits = api.intake
        self.validator_hotkey = validator_hotkey
        # The verifier refuses a store that forgets nonces sooner than its freshness window.
        self.retention = self.limits.auth_max_age_s + self.limits.auth_allowed_skew_s + 60.0

    def _caller(self, headers: Mapping[str, str], body: bytes, method: str, target: str):
        if not self.validator_hotkey:
            raise NotAcceptingError("this validator has no hotkey configured (api.validator_hotkey or api.wallet_name)")
        return verify_request(
            dict(headers), body, method, target, self.validator_hotkey,
            PeekedNonces(self.store, self.retention), limits=self.limits,
        )  # fmt: skip

    def _admitted(self, hotkey: str, now: datetime) -> Neuron:
        """Registration, the rate limit and the copy budget: whether this hotkey may submit at all, now."""
        neuron = require_registered(hotkey, self._chain("list the subnet's neurons", self.chain.neurons))
        with self.store.transaction() as session:
            last = repo.latest_for_hotkey(session, hotkey, statuses=COUNTED)
            refused = repo.copy_refusals_since(session, hotkey, now - COPY_BUDGET_WINDOW)
        check_rate_limit(last.submitted_at if last else None, now=now, window=self.limits.rate_limit)
        # Before the copy check runs: with the budget spent, its answer would be one more free probe.
        check_copy_budget(refused, now=now, budget=self.limits.copy_refusals_per_day, window=COPY_BUDGET_WINDOW)
        return neuron

    def admit(self, headers: Mapping[str, str], body: bytes, method: str, target: str) -> SubmissionAdmission:
        """The dry run: authentication, registration, rate limit, pure content checks; no copy check, no write."""
        caller = self._caller(headers, body, method, target)
        neuron = self._admitted(caller.hotkey_ss58, utcnow())
        check_submission(body, earlier=[], limits=self.limits, hotkey=neuron.hotkey).raise_for_rejection()
        return SubmissionAdmission(
            hotkey=neuron.hotkey,
            uid=neuron.uid,
            sha256=hashlib.sha256(body).hexdigest(),
            size=len(body),
            detail="admissible now; the submission itself still compares it with earlier submissions",
        )

    def submit(
        self, headers: Mapping[str, str], body: bytes, method: str, target: str, agent_name: str
    ) -> SubmissionAccepted:
        caller = self._caller(headers, body, method, target)
        try:
            accepted = self._checked(caller.hotkey_ss58, caller.nonce_ns, body, agent_name)
        except IntakeError as exc:
            logger.info(
                "submission from %s refused (%s)", caller.hotkey_ss58, type(exc).__name__,
                extra={"hotkey": caller.hotkey_ss58},
            )  # fmt: skip
            # A copy of this very request may have been stored after the nonce was looked up: then
            # the honest answer is "replayed", not whatever later check the copy now trips.
            if isinstance(exc, ReplayedRequestError | CopyRefused) or PeekedNonces(
                self.store, self.retention
            ).check_and_store(caller.hotkey_ss58, caller.nonce_ns):
                raise
            raise _replayed(caller.hotkey_ss58, caller.nonce_ns) from exc
        logger.info(
            "submission %d accepted from %s (%s)", accepted.id, accepted.hotkey, accepted.agent_name,
            extra={"submission_id": accepted.id, "hotkey": accepted.hotkey},
        )  # fmt: skip
        return accepted

    def _checked(self, hotkey: str, nonce: int, body: bytes, agent_name: str) -> SubmissionAccepted:
        now = utcnow()
        neuron = self._admitted(hotkey, now)
        with self.store.transaction() as session:
            candidates = repo.copy_candidates(session)
        commitment = self._chain(f"read the commitment of {hotkey}", lambda: self.chain.get_commitment(hotkey))
        block = commitment_block_for(hashlib.sha256(body).hexdigest(), commitment)
        try:
            verdict = self._check(body, candidates, hotkey, block, now)
            seen = max((c.id for c in candidates), default=0)
            return self._store(body, agent_name, nonce, neuron, block, now, verdict, seen)
        except SubmissionRejected as exc:
            if exc.verdict.disclose or exc.verdict.check not in COPY_CHECKS.values():
                raise
            raise self._charge_copy_refusal(hotkey, nonce, body, exc.verdict, now) from None

    def _charge_copy_refusal(
        self, hotkey: str, nonce: int, body: bytes, verdict: IntakeVerdict, now: datetime
    ) -> CopyRefused:
        """Record a refusal as a copy of another hotkey's code, or withhold it when the budget is spent.

        Under the intake lock, so concurrent requests cannot each get an answer out of one last
        unit of budget. The request's nonce is spent with it: a replay of it (by anyone who saw
        it) must not burn the hotkey's budget again."""
        with self.store.transaction() as session:
            _lock_intake(session)
            refused = repo.copy_refusals_since(session, hotkey, now - COPY_BUDGET_WINDOW)
            left = check_copy_budget(
                refused, now=now, budget=self.limits.copy_refusals_per_day, window=COPY_BUDGET_WINDOW
            )
            if not repo.check_and_store(session, hotkey, nonce):
                raise _replayed(hotkey, nonce)
            repo.add_copy_refusal(session, hotkey, verdict.check, hashlib.sha256(body).hexdigest(), now)
        return CopyRefused(verdict, left - 1)

    def _chain(self, action: str, call):
        try:
            return call()
        except Exception as exc:  # each chain implementation raises its own types; all mean "cannot decide now"
            raise ChainUnavailableError(f"cannot {action} on the chain: {exc}") from exc

    def _check(self, body: bytes, candidates, hotkey: str, block: int | None, now: datetime) -> IntakeVerdict:
        earlier = [_earlier(c) for c in candidates]
        verdict = check_submission(
            body, earlier=earlier, limits=self.limits, hotkey=hotkey, commitment_block=block, submitted_at=now
        )
        return verdict.raise_for_rejection()

    def _store(
        self,
        body: bytes,
        agent_name: str,
        nonce: int,
        neuron: Neuron,
        block: int | None,
        now: datetime,
        verdict: IntakeVerdict,
        seen: int,
    ) -> SubmissionAccepted:
        hotkey = neuron.hotkey
        with self.store.transaction() as session:
            _lock_intake(session)
            if not repo.check_and_store(session, hotkey, nonce):
                raise _replayed(hotkey, nonce)
            last = repo.latest_for_hotkey(session, hotkey, statuses=COUNTED)
            check_rate_limit(last.submitted_at if last else None, now=now, window=self.limits.rate_limit)
            newer = _candidates_after(session, seen)
            supersedes = list(verdict.supersedes)
            if newer:  # stored by a concurrent request after this one's check
                supersedes += self._check(body, newer, hotkey, block, now).supersedes
            assert verdict.fingerprint is not None  # set on every accepted verdict
            repo.ensure_miner(session, hotkey, neuron.uid)
            info = repo.add_submission(
                session,
                repo.NewSubmission(
                    hotkey=hotkey,
                    agent_name=agent_name,
                    code=body,
                    ast_hash=verdict.fingerprint.ast_hash,
                    minhash=minhash_bytes(verdict.fingerprint.minhash),
                    commitment_block=block,
                    submitted_at=now,
                ),
            )
            replaced = _supersede(session, info.id, block, supersedes)
            repo.purge_nonces(session, timedelta(seconds=self.retention), now=now)
        return SubmissionAccepted(
            id=info.id,
            status=info.status,
            hotkey=hotkey,
            uid=neuron.uid,
            agent_name=info.agent_name,
            sha256=info.sha256,
            size=info.size,
            submitted_at=info.submitted_at,
            commitment_block=info.commitment_block,
            supersedes=replaced,
        )


def _earlier(candidate: repo.CopyCandidate) -> EarlierSubmission:
    """A stored submission as copy detection compares it. Built without validation: every earlier
    submission is compared on every request, and re-validating 256 ints each was most of the cost."""
    sketch = np.frombuffer(candidate.minhash, dtype="<u8") if candidate.minhash else np.empty(0, dtype="<u8")
    fields = candidate.model_dump(exclude={"minhash"})
    # The array stands in for the list[int] unvalidated: find_collisions only takes its len() and np.asarray().
    return EarlierSubmission.model_construct(**fields, minhash=cast(list[int], sketch))


def _candidates_after(session: Session, seen: int) -> list[repo.CopyCandidate]:
    """Copy candidates stored after ``seen`` (by concurrent requests), oldest commitment first."""
    columns = [getattr(Submission, name) for name in repo.CopyCandidate.model_fields]
    rows = session.execute(
        select(*columns)
        .where(Submission.id > seen, Submission.status != SubmissionStatus.rejected)
        .order_by(Submission.id)
    ).mappings()
    return [repo.CopyCandidate.model_validate(dict(row)) for row in rows]


def _replayed(hotkey: str, nonce: int) -> ReplayedRequestError:
    return ReplayedRequestError(f"nonce {nonce} of {hotkey} was already used: this request was accepted before")


def _lock_intake(session: Session) -> None:
    """Serialise intake writes (SQLite already did: its transactions begin IMMEDIATE)."""
    if not is_sqlite(session):
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": INTAKE_LOCK})


def _supersede(session: Session, winner: int, block: int | None, losers: list[Collision]) -> list[int]:
    """Reject the earlier submissions this one beats in a copy dispute (its commitment came first)."""
    replaced: list[int] = []
    for collision in losers:
        loser = repo.get_submission(session, int(collision.submission_id))
        if loser is None or loser.status is SubmissionStatus.rejected:
            continue
        committed = f"block {loser.commitment_block}" if loser.commitment_block is not None else "no commitment"
        repo.set_status(
            session,
            loser.id,
            SubmissionStatus.rejected,
            reason=f"{collision.kind} copy of submission {winner}, whose chain commitment (block {block}) "
            f"came before this one's ({committed})",
        )
        replaced.append(loser.id)
    return replaced


ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody, "description": text_}
    for code, text_ in {
        400: "Empty file or not UTF-8.",
        401: "Missing, malformed, stale or badly signed btauth/1 headers.",
        403: "Signed for another validator, or the hotkey is not registered on the subnet.",
        409: "A replayed request, or a copy of an earlier submission (named only when it is the caller's own).",
        413: "The agent file is larger than the limit.",
        422: "Not valid Python, or no top-level def agent_main(problem).",
        429: "Rate limited: one accepted submission per hotkey per window, or the day's copy refusals used up "
        "(Retry-After).",
        503: "This validator accepts no submissions now (no hotkey configured, chain unreachable).",
    }.items()
}

RAW_BODY = {
    "requestBody": {
        "required": True,
        "description": "The agent file, as raw bytes, signed with btauth/1 (bittensor.http_auth.sign) for this "
        "validator's hotkey. Optional header X-Arena-Agent-Name: the file name to show.",
        "content": {"text/x-python": {"schema": {"type": "string", "format": "binary"}}},
    }
}


@router.post(
    "/v1/submissions",
    status_code=status.HTTP_201_CREATED,
    response_model=SubmissionAccepted,
    responses=ERRORS,
    openapi_extra=RAW_BODY,
    summary="Submit a signed agent file",
)
async def post_submission(request: Request, context: Context) -> SubmissionAccepted:
    intake = context.intake
    try:
        body = await read_body(request, intake.limits.max_bytes)
        accepted = await run_in_threadpool(
            intake.submit,
            request.headers,
            body,
            request.method,
            request_target(request),
            clean_agent_name(request.headers.get(AGENT_NAME_HEADER)),
        )
    except IntakeError as exc:
        context.metrics.rejected(exc.code)
        raise
    context.metrics.accepted()
    return accepted


@router.post(
    "/v1/submissions/admission",
    response_model=SubmissionAdmission,
    responses=ERRORS,
    openapi_extra=RAW_BODY,
    summary="Dry run: may this hotkey submit this file now? (stores nothing, compares no copies)",
)
async def post_admission(request: Request, context: Context) -> SubmissionAdmission:
    intake = context.intake
    body = await read_body(request, intake.limits.max_bytes)
    return await run_in_threadpool(intake.admit, request.headers, body, request.method, request_target(request))
