"""Submission intake: the pure checks a submitted agent file must pass.

No database, no chain, no network: the API feeds in the request, the earlier
submissions' fingerprints and the chain's neurons; everything here is a
function of its arguments, so every rule is testable on its own.

Order of the content checks (the first failure decides, with its HTTP status):

1. size <= ``max_bytes`` (413), 2. UTF-8 (400), 3. ``ast.parse`` (422, names the
line), 4. a top-level ``def agent_main(problem)`` (422: the runner calls it
synchronously, so ``async def`` or a bare assignment would never run),
5. copy detection against every earlier submission (409): identical sha256,
identical normalised-AST hash, or MinHash similarity >= ``minhash_threshold``.
A collision is decided by :func:`first_committed`: the submission whose chain
commitment came first wins, so a new submission that committed earlier than
the one it collides with is accepted and ``supersedes`` names the loser.

MinHash default (threshold 0.70 over 8-token shingles, 256 permutations),
measured on the normalised AST dumps: the three reference agents in
``arena/agents`` score 0.24-0.41 against each other and distinct test agents
at most 0.54 (0.65 for two 3-line files that are mostly shared boilerplate),
while hand-made near copies (one added statement, one extra helper, a
rewritten branch, a 3-line change in the 34-line ``shortcut`` agent) score
0.75-0.97. 0.70 sits between the two groups with about two standard errors
of the 256-permutation estimate on each side. tests/test_intake.py keeps
these cases; the user guide is docs/miner-guide-submit.md.
"""

from __future__ import annotations

import ast
import hashlib
import math
import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Literal, Protocol, TypeVar

import numpy as np
from bittensor import http_auth
from pydantic import BaseModel, Field, field_validator

from arena.chain.protocol import Commitment, Neuron

ENTRYPOINT = "agent_main"
MINHASH_SEED = 1
SHINGLE_TOKENS = 8
MINHASH_PERMUTATIONS = 256
_TOKEN = re.compile(r"\w+|[^\w\s]")


class IntakeLimits(BaseModel):
    """Every intake knob, with the defaults the issue asks for."""

    max_bytes: int = Field(256 * 1024, ge=1, description="Largest accepted agent file.")
    minhash_threshold: float = Field(
        0.70, gt=0.0, le=1.0, description="Estimated Jaccard similarity at or above which a submission is a near copy."
    )
    minhash_permutations: int = Field(
        MINHASH_PERMUTATIONS, ge=16, description="MinHash size (estimate error ~ 1/sqrt(permutations))."
    )
    rate_limit: timedelta = Field(
        timedelta(hours=12), description="Minimum time between accepted submissions of a hotkey."
    )
    auth_max_age_s: float = Field(http_auth.DEFAULT_MAX_AGE, gt=0, description="btauth nonce freshness window.")
    auth_allowed_skew_s: float = Field(
        http_auth.DEFAULT_ALLOWED_SKEW, ge=0, description="Tolerated client clock drift."
    )
    near_copy_of_own: bool = Field(
        False,
        description="Also run the MinHash check against the submitter's own earlier submissions "
        "(off: a miner improving its own agent is not copying; exact and AST copies are always checked).",
    )


# --------------------------------------------------------------------------- fingerprints


class Fingerprint(BaseModel):
    """What the store keeps per submission so later ones can be compared to it."""

    sha256: str
    ast_hash: str
    minhash: list[int]  # datasketch hash values (affine32 scheme: each < 2**32)


_DOCSTRING_HOLDERS = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def normalised_dump(tree: ast.AST) -> str:
    """The AST with every name and literal abstracted, as text (the copy checks' input).

    Identifiers of any kind (variables, functions, arguments, attributes,
    imports, keywords) become ``_``; strings and bytes become ``S``, numbers
    ``0``; ``True``/``False``/``None`` stay (they are syntax). Docstrings are
    dropped; comments and formatting never reach the AST. So renaming,
    re-wording prompts or reformatting an earlier agent evades nothing.
    Rewrites ``tree`` in place (iteratively: ``ast.walk`` needs no recursion).
    """
    for node in ast.walk(tree):
        if isinstance(node, _DOCSTRING_HOLDERS) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                node.body = node.body[1:] or [ast.Pass()]
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str | bytes):
                node.value = "S"
            elif isinstance(node.value, int | float | complex) and not isinstance(node.value, bool):
                node.value = 0
            node.kind = None  # the u"" prefix
            continue
        for name, value in ast.iter_fields(node):
            if isinstance(value, str):
                setattr(node, name, "_")
            elif isinstance(value, list) and value and isinstance(value[0], str):
                setattr(node, name, ["_"] * len(value))
    return ast.dump(tree, annotate_fields=False, include_attributes=False)


def _minhash(dump: str, permutations: int) -> list[int]:
    tokens = _TOKEN.findall(dump)
    shingles = {" ".join(tokens[i : i + SHINGLE_TOKENS]) for i in range(max(1, len(tokens) - SHINGLE_TOKENS + 1))}
    # datasketch pulls in scipy: import it only when hashing (keeps `arena` start fast).
    from datasketch import MinHash

    sketch = MinHash(num_perm=permutations, seed=MINHASH_SEED, scheme="affine32")
    sketch.update_batch([s.encode() for s in sorted(shingles)])
    return [int(v) for v in sketch.hashvalues]


def fingerprint(code: bytes | str, *, permutations: int = MINHASH_PERMUTATIONS) -> Fingerprint:
    """sha256 of the bytes, hash of the normalised AST and its MinHash.

    Raises ``SyntaxError``/``ValueError``/``RecursionError`` for code that does
    not parse; :func:`check_submission` turns those into verdicts first.
    The AST dump is tied to the Python minor version: after a Python upgrade,
    re-fingerprint the stored sources before comparing.
    """
    raw = code.encode() if isinstance(code, str) else code
    return _fingerprint(raw, normalised_dump(ast.parse(_source_text(raw))), permutations)


def _fingerprint(raw: bytes, dump: str, permutations: int) -> Fingerprint:
    return Fingerprint(
        sha256=hashlib.sha256(raw).hexdigest(),
        ast_hash=hashlib.sha256(dump.encode()).hexdigest(),
        minhash=_minhash(dump, permutations),
    )


def _source_text(raw: bytes) -> str:
    return raw.decode("utf-8-sig")  # a BOM is valid in a Python file; ast.parse rejects it in a str


# --------------------------------------------------------------------------- verdicts

CheckName = Literal["size", "utf8", "syntax", "entrypoint", "exact_copy", "ast_copy", "near_copy", "accepted"]


class EarlierSubmission(BaseModel):
    id: int | str
    hotkey: str
    sha256: str
    ast_hash: str
    minhash: list[int]
    commitment_block: int | None = None  # None: never committed on chain (loses every dispute)
    submitted_at: datetime

    @field_validator("minhash", mode="before")
    @classmethod
    def _from_bytes(cls, value: object) -> object:
        """The store keeps the sketch as bytes: little-endian uint64, one per permutation.
        A row without one (None) becomes an empty sketch, which the copy check refuses by name."""
        if value is None:
            return []
        if isinstance(value, bytes | bytearray | memoryview):
            return np.frombuffer(bytes(value), dtype="<u8").tolist()
        return value


def minhash_bytes(values: Sequence[int]) -> bytes:
    """The compact form of a sketch for a binary column (inverse of EarlierSubmission's parser)."""
    return np.asarray(values, dtype="<u8").tobytes()


class Collision(BaseModel):
    submission_id: int | str
    hotkey: str
    kind: Literal["sha256", "ast", "minhash"]
    similarity: float  # 1.0 for sha256 and AST identity


class IntakeVerdict(BaseModel):
    accepted: bool
    check: CheckName  # the check that decided ("accepted" when all passed)
    status_code: int  # what the API answers: 201 accepted, else the check's error status
    reason: str
    line: int | None = None  # syntax errors
    collision: Collision | None = None  # the earlier submission that wins against this one
    supersedes: list[Collision] = Field(default_factory=list)  # earlier ones this one beats by commitment order
    fingerprint: Fingerprint | None = None  # set once the code parsed

    def raise_for_rejection(self) -> IntakeVerdict:
        if not self.accepted:
            raise SubmissionRejected(self)
        return self


def _reject(check: CheckName, status: int, reason: str, **extra: object) -> IntakeVerdict:
    return IntakeVerdict(accepted=False, check=check, status_code=status, reason=reason, **extra)


def check_size(code: bytes, limits: IntakeLimits) -> IntakeVerdict | None:
    if len(code) > limits.max_bytes:
        return _reject("size", 413, f"the agent file is {len(code)} bytes; the limit is {limits.max_bytes} bytes")
    if not code.strip():
        return _reject("size", 400, "the agent file is empty")
    return None


def check_utf8(code: bytes) -> IntakeVerdict | None:
    try:
        code.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = code[: exc.start].count(b"\n") + 1
        return _reject(
            "utf8", 400, f"the agent file is not UTF-8: byte {exc.start} (line {line}): {exc.reason}", line=line
        )
    return None


def check_syntax(code: bytes) -> tuple[ast.Module | None, IntakeVerdict | None]:
    try:
        return ast.parse(_source_text(code)), None
    except SyntaxError as exc:
        where = f"line {exc.lineno}" + (f", column {exc.offset}" if exc.offset else "")
        return None, _reject("syntax", 422, f"the agent file is not valid Python: {exc.msg} ({where})", line=exc.lineno)
    except (ValueError, RecursionError, MemoryError) as exc:  # null bytes; absurd nesting
        return None, _reject("syntax", 422, f"the agent file cannot be parsed: {exc.__class__.__name__}: {exc}")


def check_entrypoint(tree: ast.Module) -> IntakeVerdict | None:
    """A top-level ``def agent_main`` taking the problem as its first positional argument."""
    for node in tree.body:
        if isinstance(node, ast.AsyncFunctionDef) and node.name == ENTRYPOINT:
            return _reject(
                "entrypoint", 422, f"{ENTRYPOINT} (line {node.lineno}) is async; the runner calls it synchronously"
            )
        if isinstance(node, ast.FunctionDef) and node.name == ENTRYPOINT:
            args = node.args
            if not (args.posonlyargs or args.args or args.vararg):
                return _reject(
                    "entrypoint", 422, f"{ENTRYPOINT} (line {node.lineno}) must accept the problem dict as an argument"
                )
            return None
    return _reject("entrypoint", 422, f"the agent file defines no top-level `def {ENTRYPOINT}(problem)`")


class _Claim(Protocol):
    """Anything with a commitment block and an arrival time (a submission row, a model)."""

    @property
    def commitment_block(self) -> int | None: ...

    @property
    def submitted_at(self) -> datetime: ...


ClaimT = TypeVar("ClaimT", bound=_Claim)


def first_committed(a: ClaimT, b: ClaimT) -> ClaimT:
    """The winner of a copy dispute: the earlier chain commitment; no commitment
    loses to any; ties (or neither committed) go to the earlier submission,
    then to the smaller id so the answer is always the same."""

    def key(claim: _Claim) -> tuple[bool, int, datetime, str]:
        block = claim.commitment_block
        return (
            block is None,
            block if block is not None else 0,
            _aware(claim.submitted_at),
            str(getattr(claim, "id", "")),
        )

    return a if key(a) <= key(b) else b


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def find_collisions(
    print_: Fingerprint, earlier: Sequence[EarlierSubmission], limits: IntakeLimits, hotkey: str | None = None
) -> list[Collision]:
    """Every earlier submission this fingerprint collides with: identical bytes first,
    then identical trees, then near copies by falling similarity."""
    found: list[Collision] = []
    near: list[EarlierSubmission] = []
    for item in earlier:
        if item.sha256 == print_.sha256:
            found.append(Collision(submission_id=item.id, hotkey=item.hotkey, kind="sha256", similarity=1.0))
        elif item.ast_hash == print_.ast_hash:
            found.append(Collision(submission_id=item.id, hotkey=item.hotkey, kind="ast", similarity=1.0))
        elif limits.near_copy_of_own or hotkey is None or item.hotkey != hotkey:
            near.append(item)
    comparable = [item for item in near if len(item.minhash) == len(print_.minhash)]
    if len(comparable) != len(near):
        odd = [f"{item.id} ({len(item.minhash)})" for item in near if len(item.minhash) != len(print_.minhash)]
        raise ValueError(
            f"MinHash sketches of earlier submissions {', '.join(odd[:10])} do not have {len(print_.minhash)} "
            "values: re-fingerprint the stored sources with the current minhash_permutations"
        )
    if comparable:  # the estimate is the share of equal sketch slots (datasketch's jaccard), vectorised
        matrix = np.asarray([item.minhash for item in comparable], dtype=np.uint64)
        similarity = (matrix == np.asarray(print_.minhash, dtype=np.uint64)).mean(axis=1)
        for item, value in zip(comparable, similarity, strict=True):
            if value >= limits.minhash_threshold:
                found.append(
                    Collision(
                        submission_id=item.id, hotkey=item.hotkey, kind="minhash", similarity=round(float(value), 4)
                    )
                )
    rank = {"sha256": 0, "ast": 1, "minhash": 2}
    return sorted(found, key=lambda c: (rank[c.kind], -c.similarity))


_KIND_TEXT = {
    "sha256": "is byte-identical to",
    "ast": "has the same normalised syntax tree (names and literals abstracted) as",
    "minhash": "is a near copy ({:.0%} similar) of",
}


def check_submission(
    code: bytes,
    *,
    earlier: Sequence[EarlierSubmission],
    limits: IntakeLimits | None = None,
    hotkey: str | None = None,
    commitment_block: int | None = None,
    submitted_at: datetime | None = None,
) -> IntakeVerdict:
    """Every content check in order; the first failure decides.

    ``hotkey`` (the submitter) exempts its own earlier submissions from the
    near-copy check; ``commitment_block``/``submitted_at`` describe this
    submission in copy disputes (see :func:`first_committed`).
    """
    limits = limits or IntakeLimits()
    for verdict in (check_size(code, limits), check_utf8(code)):
        if verdict:
            return verdict
    tree, verdict = check_syntax(code)
    if verdict or tree is None:
        return verdict or _reject("syntax", 422, "the agent file cannot be parsed")
    if verdict := check_entrypoint(tree):
        return verdict
    try:
        dump = normalised_dump(tree)
    except RecursionError:
        return _reject("syntax", 422, "the agent file is nested too deeply to analyse")
    print_ = _fingerprint(code, dump, limits.minhash_permutations)
    claim = EarlierSubmission(
        id="this submission",
        hotkey=hotkey or "",
        commitment_block=commitment_block,
        submitted_at=submitted_at or datetime.now(UTC),
        **print_.model_dump(),
    )
    by_id = {item.id: item for item in earlier}
    supersedes: list[Collision] = []
    for collision in find_collisions(print_, earlier, limits, hotkey):
        other = by_id[collision.submission_id]
        if first_committed(claim, other) is claim:
            supersedes.append(collision)
            continue
        own = " your own" if hotkey and other.hotkey == hotkey else ""
        what = _KIND_TEXT[collision.kind].format(collision.similarity)
        committed = (
            f"committed at block {other.commitment_block}" if other.commitment_block is not None else "uncommitted"
        )
        return _reject(
            {"sha256": "exact_copy", "ast": "ast_copy", "minhash": "near_copy"}[collision.kind],
            409,
            f"this agent {what}{own} earlier submission {other.id} from {other.hotkey} ({committed}, "
            f"submitted {_aware(other.submitted_at).isoformat()}), which came first",
            collision=collision,
            fingerprint=print_,
        )
    return IntakeVerdict(
        accepted=True, check="accepted", status_code=201, reason="accepted", supersedes=supersedes, fingerprint=print_
    )


def commitment_block_for(sha256: str, commitment: Commitment | None) -> int | None:
    """The chain block that proves possession of this code, or None when the
    hotkey's latest commitment is absent or names other code."""
    if commitment is None or commitment.data.strip().lower() != sha256.lower():
        return None
    return commitment.block


# --------------------------------------------------------------------------- request-level errors


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


class SubmissionRejected(IntakeError):
    """A content check failed; the verdict says which and why."""

    def __init__(self, verdict: IntakeVerdict) -> None:
        super().__init__(verdict.reason)
        self.verdict = verdict
        self.status_code = verdict.status_code
        self.code = verdict.check

    def to_body(self) -> dict[str, object]:
        body = super().to_body()
        if self.verdict.line is not None:
            body["line"] = self.verdict.line
        if self.verdict.collision is not None:
            body["collides_with"] = self.verdict.collision.model_dump()
        return body


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
    wait = (_aware(last_accepted_at) + window - _aware(now)).total_seconds()
    if wait > 0:
        retry_after = max(1, math.ceil(wait))
        raise RateLimitedError(
            f"one accepted submission per {window.total_seconds() / 3600:g} h per hotkey; the last was at "
            f"{_aware(last_accepted_at).isoformat()}; retry in {retry_after} s",
            retry_after=retry_after,
        )
