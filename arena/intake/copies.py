"""Copy detection: fingerprints of an agent file, collisions with earlier ones, and who wins a dispute.

A fingerprint is the sha256 of the bytes, the hash of the normalised AST (every
name and literal abstracted) and a MinHash of that AST's 8-token shingles. An
earlier submission collides when its bytes or tree are identical or its MinHash
is at least ``IntakeLimits.minhash_threshold`` similar (the threshold and its
measurements are in ``arena.intake.checks``' docstring); :func:`first_committed`
decides who keeps the code: the earlier chain commitment.
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Sequence
from datetime import datetime
from typing import Literal, Protocol, TypeVar

import numpy as np
from pydantic import BaseModel, field_validator

from arena.intake.limits import MINHASH_PERMUTATIONS, IntakeLimits, aware

MINHASH_SEED = 1
SHINGLE_TOKENS = 8
_TOKEN = re.compile(r"\w+|[^\w\s]")


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
    return fingerprint_dump(raw, normalised_dump(ast.parse(source_text(raw))), permutations)


def fingerprint_dump(raw: bytes, dump: str, permutations: int) -> Fingerprint:
    return Fingerprint(
        sha256=hashlib.sha256(raw).hexdigest(),
        ast_hash=hashlib.sha256(dump.encode()).hexdigest(),
        minhash=_minhash(dump, permutations),
    )


def source_text(raw: bytes) -> str:
    return raw.decode("utf-8-sig")  # a BOM is valid in a Python file; ast.parse rejects it in a str


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
            aware(claim.submitted_at),
            str(getattr(claim, "id", "")),
        )

    return a if key(a) <= key(b) else b


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
