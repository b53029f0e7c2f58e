"""A suite's layout on disk and its manifests: the sealed one (with the seed) and the public one.

The content hash covers the four problem files' paths and sha256s, so a suite
is named by what it holds; the public manifest repeats the sealed one's
identity (version, content hash, created_at) without the seed or any sealed
problem, so it commits to the bank without revealing it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from arena.problems.partitions import Counts, PartitionName, PartitionPlan

PARTITION_FILES: dict[PartitionName, str] = {
    PartitionName.public: "public/qualifying.jsonl",
    PartitionName.race_bank: "sealed/race_bank.jsonl",
    PartitionName.train_pool: "sealed/train_pool.jsonl",
    PartitionName.heldout: "sealed/heldout.jsonl",
}
MANIFEST = "sealed/manifest.json"
PUBLIC_MANIFEST = "public/manifest.json"
LEDGER = "ledger.jsonl"


class SuiteError(ValueError):
    pass


class FileEntry(BaseModel):
    path: str
    sha256: str
    problems: int


class SourceFile(BaseModel):
    name: str
    sha256: str
    problems: int


class ManifestHead(BaseModel):
    """What both manifests state about the suite (the public one copies it from the sealed one)."""

    format: Literal[1] = 1
    version: str
    content_hash: str = Field(
        description="sha256 over the problem files' paths and sha256s (see content_hash()): "
        "commits to the sealed bank without revealing it."
    )
    created_at: str


class SuiteManifest(ManifestHead):
    seed: str
    plan: PartitionPlan
    clustering: dict | None = Field(description="The leak-cluster config the problems were clustered with.")
    generator: dict | None = None
    catalog_id: str | None = None
    sources: list[SourceFile] = Field(default_factory=list)
    files: dict[PartitionName, FileEntry]
    clusters: dict[PartitionName, list[str]]
    counts: dict[PartitionName, Counts]
    cluster_count: int
    problem_count: int


class PublicManifest(ManifestHead):
    """The part of the manifest that may be published: no seed, no sealed problem."""

    qualifying: FileEntry
    counts: Counts

    @classmethod
    def of(cls, manifest: SuiteManifest) -> PublicManifest:
        return cls(
            version=manifest.version,
            content_hash=manifest.content_hash,
            created_at=manifest.created_at,
            qualifying=manifest.files[PartitionName.public],
            counts=manifest.counts[PartitionName.public],
        )


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def content_hash(files: Mapping[PartitionName, FileEntry]) -> str:
    lines = sorted(f"{entry.path}\t{entry.sha256}\n" for entry in files.values())
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def read_manifest(path: Path) -> SuiteManifest:
    file = Path(path) / MANIFEST
    if not file.is_file():
        raise SuiteError(f"{file}: missing; {path} is not a suite directory (or its sealed/ part is absent)")
    try:
        return SuiteManifest.model_validate_json(file.read_bytes())
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top)"
        raise SuiteError(f"{file}: invalid manifest: {where}: {first['msg']}") from None
