"""The intake service behind ``POST /v1/submissions``: a miner's signed agent file, checked, then stored once.

The checks run in this order, each with its own HTTP error (codes in
``arena.intake.checks`` and docs/miner-guide-submit.md): body size (413, checked
by the route as it reads the body, so an oversized body is never read whole), the ``btauth/1``
signature, freshness and receiver (401/403), registration on the subnet (403),
the rate limit and the copy budget (429 + Retry-After), then the content checks of
:func:`arena.intake.checks.check_submission` (UTF-8, syntax, ``agent_main``,
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

:meth:`SubmissionIntake.admit` (``POST /v1/submissions/admission``) is the dry run a miner asks before it pays
for a chain commitment: the same signed request and the same checks up to the
rate limit, then the pure content checks, but never the copy check (it would
let a miner probe what others submitted) and nothing stored, not even the nonce.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import cast

import numpy as np
from sqlalchemy.orm import Session

from arena.chain.protocol import Chain, Neuron
from arena.intake.checks import (
    COPY_CHECKS,
    IntakeVerdict,
    SubmissionRejected,
    check_submission,
    commitment_block_for,
)
from arena.intake.copies import Collision, EarlierSubmission, minhash_bytes
from arena.intake.limits import COPY_BUDGET_WINDOW, IntakeLimits
from arena.intake.receipts import SubmissionAccepted, SubmissionAdmission
from arena.intake.signed_requests import (
    IntakeError,
    ReplayedRequestError,
    check_copy_budget,
    check_rate_limit,
    require_registered,
    verify_request,
)
from arena.store import copy_refusals as copy_refusal_rows
from arena.store import nonces as nonce_rows
from arena.store import submissions as submission_rows
from arena.store.db import Store
from arena.store.models import SubmissionStatus, utcnow

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


class PeekedNonces:
    """A NonceStore that only asks whether a nonce was seen: the insert happens with the submission."""

    def __init__(self, store: Store, retention: float) -> None:
        self.store = store
        self.retention = retention

    def check_and_store(self, hotkey_ss58: str, nonce_ns: int) -> bool:
        with self.store.transaction() as session:
            return not nonce_rows.nonce_seen(session, hotkey_ss58, nonce_ns)


class SubmissionIntake:
    """Every check of one submission, then the one transaction that stores it."""

    def __init__(self, store: Store, chain: Chain, limits: IntakeLimits, validator_hotkey: str | None) -> None:
        self.store = store
        self.chain = chain
        self.limits = limits
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
            last = submission_rows.latest_for_hotkey(session, hotkey, statuses=COUNTED)
            refused = copy_refusal_rows.copy_refusals_since(session, hotkey, now - COPY_BUDGET_WINDOW)
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
            candidates = submission_rows.copy_candidates(session)
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
            submission_rows.lock_intake(session)
            refused = copy_refusal_rows.copy_refusals_since(session, hotkey, now - COPY_BUDGET_WINDOW)
            left = check_copy_budget(
                refused, now=now, budget=self.limits.copy_refusals_per_day, window=COPY_BUDGET_WINDOW
            )
            if not nonce_rows.check_and_store(session, hotkey, nonce):
                raise _replayed(hotkey, nonce)
            copy_refusal_rows.add_copy_refusal(session, hotkey, verdict.check, hashlib.sha256(body).hexdigest(), now)
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
            submission_rows.lock_intake(session)
            if not nonce_rows.check_and_store(session, hotkey, nonce):
                raise _replayed(hotkey, nonce)
            last = submission_rows.latest_for_hotkey(session, hotkey, statuses=COUNTED)
            check_rate_limit(last.submitted_at if last else None, now=now, window=self.limits.rate_limit)
            newer = submission_rows.copy_candidates_after(session, seen)
            supersedes = list(verdict.supersedes)
            if newer:  # stored by a concurrent request after this one's check
                supersedes += self._check(body, newer, hotkey, block, now).supersedes
            assert verdict.fingerprint is not None  # set on every accepted verdict
            submission_rows.ensure_miner(session, hotkey, neuron.uid)
            info = submission_rows.add_submission(
                session,
                submission_rows.NewSubmission(
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
            nonce_rows.purge_nonces(session, timedelta(seconds=self.retention), now=now)
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


def _earlier(candidate: submission_rows.CopyCandidate) -> EarlierSubmission:
    """A stored submission as copy detection compares it. Built without validation: every earlier
    submission is compared on every request, and re-validating 256 ints each was most of the cost."""
    sketch = np.frombuffer(candidate.minhash, dtype="<u8") if candidate.minhash else np.empty(0, dtype="<u8")
    fields = candidate.model_dump(exclude={"minhash"})
    # The array stands in for the list[int] unvalidated: find_collisions only takes its len() and np.asarray().
    return EarlierSubmission.model_construct(**fields, minhash=cast(list[int], sketch))


def _replayed(hotkey: str, nonce: int) -> ReplayedRequestError:
    return ReplayedRequestError(f"nonce {nonce} of {hotkey} was already used: this request was accepted before")


def _supersede(session: Session, winner: int, block: int | None, losers: list[Collision]) -> list[int]:
    """Reject the earlier submissions this one beats in a copy dispute (its commitment came first)."""
    replaced: list[int] = []
    for collision in losers:
        loser = submission_rows.get_submission(session, int(collision.submission_id))
        if loser is None or loser.status is SubmissionStatus.rejected:
            continue
        committed = f"block {loser.commitment_block}" if loser.commitment_block is not None else "no commitment"
        submission_rows.set_status(
            session,
            loser.id,
            SubmissionStatus.rejected,
            reason=f"{collision.kind} copy of submission {winner}, whose chain commitment (block {block}) "
            f"came before this one's ({committed})",
        )
        replaced.append(loser.id)
    return replaced
