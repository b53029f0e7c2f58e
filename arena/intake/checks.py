"""The content checks a submitted agent file must pass, in order.

No database, no chain, no network: the API feeds in the request, the earlier
submissions' fingerprints and the chain's neurons; everything here is a
function of its arguments, so every rule is testable on its own. This module
holds the content checks and their order; copy detection is
``arena.intake.copies``, request authentication, registration and the rate limit
are ``arena.intake.signed_requests``, the knobs ``arena.intake.limits``.

Order of the content checks (the first failure decides, with its HTTP status):

1. size <= ``max_bytes`` (413), 2. UTF-8 (400), 3. ``ast.parse`` (422, names the
line), 4. a top-level ``def agent_main(problem)`` (422: the runner calls it
synchronously, so ``async def`` or a bare assignment would never run),
5. every import resolves in the sandbox (422, names the module and line;
``arena.intake.sandbox_imports``), 6. copy detection against every earlier submission (409): identical sha256,
identical normalised-AST hash, or MinHash similarity >= ``minhash_threshold``.
A collision is decided by :func:`first_committed`: the submission whose chain
commitment came first wins, so a new submission that committed earlier than
the one it collides with is accepted and ``supersedes`` names the loser.
A refusal names the earlier submission only when it is the submitter's own: for
another hotkey's it says no more than "too close to an earlier submission" (no
id, owner or similarity), and each such refusal draws on the hotkey's daily copy
budget (``IntakeLimits.copy_refusals_per_day``), so the check is no oracle on
code the embargo hides.

MinHash default (threshold 0.70 over 8-token shingles, 256 permutations),
measured on the normalised AST dumps: the three reference agents in
``arena/agents`` score 0.24-0.41 against each other and distinct test agents
at most 0.54 (0.65 for two 3-line files that are mostly shared boilerplate),
while hand-made near copies (one added statement, one extra helper, a
rewritten branch, a 3-line change in the 34-line ``shortcut`` agent) score
0.75-0.97. 0.70 sits between the two groups with about two standard errors
of the 256-permutation estimate on each side. tests/arena/intake/test_intake.py keeps
these cases; the user guide is docs/miner-guide-submit.md.
"""

from __future__ import annotations

import ast
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, Field

from arena.chain.protocol import Commitment
from arena.intake.copies import (
    Collision,
    EarlierSubmission,
    Fingerprint,
    find_collisions,
    fingerprint_dump,
    first_committed,
    normalised_dump,
    source_text,
)
from arena.intake.limits import IntakeLimits, aware
from arena.intake.sandbox_imports import unsatisfied_import
from arena.intake.signed_requests import IntakeError
from arena.runner.runtime import ALLOWED_ROOTS

ENTRYPOINT = "agent_main"
CheckName = Literal[
    "size", "utf8", "syntax", "entrypoint", "imports", "exact_copy", "ast_copy", "near_copy", "accepted"
]
COPY_CHECKS: dict[str, CheckName] = {"sha256": "exact_copy", "ast": "ast_copy", "minhash": "near_copy"}


class IntakeVerdict(BaseModel):
    accepted: bool
    check: CheckName  # the check that decided ("accepted" when all passed)
    status_code: int  # what the API answers: 201 accepted, else the check's error status
    reason: str
    line: int | None = None  # syntax errors and unsatisfiable imports
    collision: Collision | None = None  # the earlier submission that wins against this one (validator-side)
    disclose: bool = True  # False: the answer must not name the collision (another hotkey's code)
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


def too_large(size: int | None, limit: int) -> SubmissionRejected:
    """The size refusal of a body too large to read whole (``size``: the declared size, None when unknown)."""
    what = f"{size} bytes" if size is not None else f"more than {limit} bytes"
    reason = f"the agent file is {what}; the limit is {limit} bytes"
    return SubmissionRejected(IntakeVerdict(accepted=False, check="size", status_code=413, reason=reason))


def check_utf8(code: bytes) -> IntakeVerdict | None:
    try:
        code.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = code[: exc.start].count(b"\n") + 1
        return _reject(
            "utf8", 400, f"the agent file is not UTF-8: byte {exc.start} (line {line}): {exc.reason}", line=line
        )
    return None


# ``ast.parse`` in concurrent threads failed here (CPython 3.11.7) with "SystemError: AST
# constructor recursion depth mismatch": the parser's recursion counter is not thread-safe. The
# API checks concurrent uploads in threads (seen in test_api_submissions' twenty-hotkey test as a
# 500), and a validator fault must never reach a miner as an error of theirs.
_PARSE = threading.Lock()


def check_syntax(code: bytes) -> tuple[ast.Module | None, IntakeVerdict | None]:
    try:
        with _PARSE:
            return ast.parse(source_text(code)), None
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


def check_imports(tree: ast.Module) -> IntakeVerdict | None:
    """Every import must resolve in the sandbox (arena/intake/sandbox_imports.py says what does)."""
    missing = unsatisfied_import(tree)
    if missing is None:
        return None
    module, line = missing
    return _reject(
        "imports",
        422,
        f"line {line} imports {module!r}, which the sandbox does not have: an agent may import only "
        f"the standard library, arena.sdk and {', '.join(ALLOWED_ROOTS)} (with what they depend on)",
        line=line,
    )


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
    if verdict := check_imports(tree):
        return verdict
    try:
        dump = normalised_dump(tree)
    except RecursionError:
        return _reject("syntax", 422, "the agent file is nested too deeply to analyse")
    print_ = fingerprint_dump(code, dump, limits.minhash_permutations)
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
        check = COPY_CHECKS[collision.kind]
        if not (hotkey and other.hotkey == hotkey):
            # The earlier code may be an embargoed champion's: naming it, its owner or the similarity
            # would make this answer an oracle on code the embargo hides (docs/security.md).
            reason = "this agent is too close to an earlier submission, which came first"
            return _reject(check, 409, reason, collision=collision, fingerprint=print_, disclose=False)
        what = _KIND_TEXT[collision.kind].format(collision.similarity)
        committed = (
            f"committed at block {other.commitment_block}" if other.commitment_block is not None else "uncommitted"
        )
        return _reject(
            check,
            409,
            f"this agent {what} your own earlier submission {other.id} ({committed}, "
            f"submitted {aware(other.submitted_at).isoformat()})",
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
        if self.verdict.collision is not None and self.verdict.disclose:
            body["collides_with"] = self.verdict.collision.model_dump()
        return body
