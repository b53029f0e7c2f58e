"""Versioned suites: an immutable, checkable set of partitioned problems.

A suite directory::

    public/qualifying.jsonl    the public qualifying suite (safe to publish)
    public/manifest.json       what may be said publicly: version, content hash, counts
    sealed/race_bank.jsonl     hidden race bank: each race cycle draws from it
    sealed/train_pool.jsonl    distill train pool (empty unless a train fraction was asked)
    sealed/heldout.jsonl       held-out eval: never raced
    sealed/manifest.json       the full manifest, with the seed (so it is sealed too)
    ledger.jsonl               append-only, hash-chained events (the only file that grows)

The problem files and manifests are written read-only, and a build never
writes into an existing suite: a published version never changes. Its
content hash covers the four problem files, so a suite is named by what it
holds; the ledger's chain starts from that hash.

The seed is secret because the partition is a function of (problems, seed)
and the official problems are public: anyone who guesses the seed knows the
bank. Hence it lives in ``sealed/`` only, and a bank should be built from a
long random seed.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import orjson
from pydantic import ValidationError

from arena.problems.ledger import LedgerEvent, LedgerRead, LedgerState, read_ledger, replay
from arena.problems.model import Problem
from arena.problems.official import ProblemFileError, iter_problems
from arena.problems.partitions import (
    Counts,
    PartitionName,
    PartitionPlan,
    partition_failures,
    partition_problems,
    problem_file_bytes,
    sorted_problems,
)
from arena.problems.suite_manifest import (
    LEDGER,
    MANIFEST,
    PARTITION_FILES,
    PUBLIC_MANIFEST,
    FileEntry,
    PublicManifest,
    SourceFile,
    SuiteError,
    SuiteManifest,
    content_hash,
    read_manifest,
    sha256_file,
)

if TYPE_CHECKING:  # clustering pulls in numpy and datasketch; only a build needs it
    from arena.problems.clusters import ClusterConfig

READ_ONLY_FILE, READ_ONLY_DIR = 0o444, 0o555


def _cluster_ids(problems: Sequence[Problem]) -> list[str | None]:
    """The distinct cluster ids, sorted, as the manifest lists them (a problem without one shows as None)."""
    return sorted({p.cluster_id for p in problems}, key=lambda cluster_id: cluster_id or "")


class Suite:
    """An opened suite directory: its manifest, problems and ledger."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.manifest = read_manifest(self.path)
        self._problems: dict[PartitionName, list[Problem]] = {}

    @property
    def ledger_path(self) -> Path:
        return self.path / LEDGER

    def problems(self, partition: PartitionName, *, verify: bool = True) -> list[Problem]:
        """A partition's problems. ``verify`` (the default for every use but `check_suite`,
        which reports instead) refuses a file whose sha256 or clusters differ from the manifest,
        so a draw never runs on a changed bank."""
        if partition not in self._problems:
            file = self.path / PARTITION_FILES[partition]
            if not file.is_file():
                raise SuiteError(f"{file}: missing")
            if verify and sha256_file(file) != self.manifest.files[partition].sha256:
                raise SuiteError(f"{file}: sha256 differs from the manifest (changed after publication); run check")
            try:
                problems = list(iter_problems(file))
            except ProblemFileError as exc:
                raise SuiteError(str(exc)) from None
            if verify and _cluster_ids(problems) != self.manifest.clusters.get(partition):
                raise SuiteError(f"{file}: cluster ids differ from the manifest's list; run check")
            self._problems[partition] = problems
        return self._problems[partition]

    @cached_property
    def cluster_partition(self) -> dict[str, PartitionName]:
        """Cluster id -> partition, from the manifest (so a sealed-only copy knows the public clusters)."""
        return {cid: name for name, ids in self.manifest.clusters.items() for cid in ids}

    def read_ledger(self) -> LedgerRead:
        return read_ledger(self.ledger_path, self.manifest.content_hash)

    def replay_events(self, events: Sequence[LedgerEvent]) -> LedgerState:
        bank = set(self.manifest.clusters[PartitionName.race_bank])
        elsewhere = {cid: name.value for cid, name in self.cluster_partition.items() if cid not in bank}
        return replay(events, self.manifest.content_hash, bank, elsewhere)


def build_suite(
    problems: Sequence[Problem],
    out: str | Path,
    *,
    seed: str,
    plan: PartitionPlan | None = None,
    cluster_config: ClusterConfig | None = None,
    version: str | None = None,
    catalog_id: str | None = None,
    generator: dict | None = None,
    sources: Sequence[Path] = (),
) -> Suite:
    """Cluster ``problems`` into leak clusters, partition them by cluster and publish the suite at ``out``."""
    from arena.problems.clusters import ClusterConfig, assign_clusters

    cluster_config = cluster_config or ClusterConfig()
    clustered = assign_clusters(problems, cluster_config)
    groups = partition_problems(clustered, str(seed), plan)
    counted = Counter(p.source for p in problems)
    return write_suite(
        groups,
        out,
        seed=str(seed),
        plan=plan or PartitionPlan(),
        clustering=cluster_config.model_dump(mode="json"),
        version=version,
        catalog_id=catalog_id,
        generator=generator,
        sources=[SourceFile(name=s.name, sha256=sha256_file(s), problems=counted[s.name]) for s in sources],
    )


def write_suite(
    groups: Mapping[PartitionName, Sequence[Problem]],
    out: str | Path,
    *,
    seed: str,
    plan: PartitionPlan,
    clustering: dict | None,
    version: str | None = None,
    catalog_id: str | None = None,
    generator: dict | None = None,
    sources: Sequence[SourceFile] = (),
) -> Suite:
    """Write partitioned problems as a new suite; refuses one that fails `check_suite`.

    Written into a sibling temporary directory, checked there, then renamed
    into place, so ``out`` either does not appear or is a whole, checked suite.
    """
    out = Path(out)
    if version is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", version):
        raise SuiteError(f"version {version!r}: use letters, digits, '.', '_' and '-' only")
    failures = partition_failures(groups)
    if failures:
        raise SuiteError("refusing to publish a suite that fails its check: " + "; ".join(failures))
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise SuiteError(f"{out} already exists; a published suite is never overwritten (choose a new --out)")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.partial-{os.getpid()}"
    remove_tree(tmp)
    try:
        files: dict[PartitionName, FileEntry] = {}
        for name in PartitionName:
            problems = sorted_problems(groups.get(name, ()))
            target = tmp / PARTITION_FILES[name]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(problem_file_bytes(problems))
            files[name] = FileEntry(path=PARTITION_FILES[name], sha256=sha256_file(target), problems=len(problems))
        digest = content_hash(files)
        every = [p for name in PartitionName for p in groups.get(name, ())]
        counts = {name: Counts.of(list(groups.get(name, ()))) for name in PartitionName}
        manifest = SuiteManifest(
            version=version or f"v-{digest[:12]}",
            content_hash=digest,
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
            seed=seed,
            plan=plan,
            clustering=clustering,
            generator=generator,
            catalog_id=catalog_id,
            sources=list(sources),
            files=files,
            clusters={name: sorted({p.cluster_id for p in groups.get(name, ())}) for name in PartitionName},
            counts=counts,
            cluster_count=len({p.cluster_id for p in every}),
            problem_count=len(every),
        )
        public = PublicManifest.of(manifest)
        (tmp / MANIFEST).write_bytes(orjson.dumps(manifest.model_dump(mode="json"), option=orjson.OPT_INDENT_2))
        (tmp / PUBLIC_MANIFEST).write_bytes(orjson.dumps(public.model_dump(mode="json"), option=orjson.OPT_INDENT_2))
        make_read_only(tmp)
        failures = check_suite(tmp)
        if failures:
            raise SuiteError("refusing to publish a suite that fails its check: " + "; ".join(failures))
        try:
            tmp.rename(out)
        except OSError as exc:
            raise SuiteError(
                f"{out}: cannot publish the suite there ({exc.strerror}); was it created meanwhile?"
            ) from None
    finally:
        remove_tree(tmp)
    return Suite(out)


def make_read_only(root: Path) -> None:
    """Problem files and manifests read-only, public/ and sealed/ closed; the root stays open for the ledger."""
    for part in ("public", "sealed"):
        folder = root / part
        if not folder.is_dir():
            continue
        for file in folder.iterdir():
            file.chmod(READ_ONLY_FILE)
        folder.chmod(READ_ONLY_DIR)


def remove_tree(path: Path) -> None:
    """rmtree that first reopens the read-only folders a suite is made of."""
    if not path.exists():
        return
    for folder, dirs, _ in os.walk(path):
        for name in dirs:
            Path(folder, name).chmod(stat.S_IRWXU)
    shutil.rmtree(path)


def check_suite(path: str | Path) -> list[str]:
    """Every broken invariant of a suite, each named; empty when the suite is sound.

    Checked: the manifest's content hash over its file list; every problem file
    against its sha256 and counts; the public manifest against the sealed one;
    no problem and no cluster in two partitions; the ledger's hash chain; no
    reveal outside the race bank (held-out above all), no cluster revealed twice.
    """
    path = Path(path)
    try:
        suite = Suite(path)
    except SuiteError as exc:
        return [str(exc)]
    manifest = suite.manifest
    failures: list[str] = []
    if set(manifest.files) != set(PartitionName):
        failures.append(f"{MANIFEST}: lists files for {sorted(manifest.files)}, not every partition")
    if content_hash(manifest.files) != manifest.content_hash:
        failures.append(f"{MANIFEST}: content_hash does not match its own file list (the manifest was edited)")
    groups: dict[PartitionName, list[Problem]] = {}
    for name, entry in manifest.files.items():
        file = path / entry.path
        if not file.is_file():
            failures.append(f"{entry.path}: missing")
            continue
        actual = sha256_file(file)
        if actual != entry.sha256:
            failures.append(
                f"{entry.path}: sha256 {actual} differs from the manifest's {entry.sha256} "
                f"(the file changed after publication)"
            )
        try:
            groups[name] = suite.problems(name, verify=False)
        except SuiteError as exc:
            failures.append(str(exc))
            continue
        if Counts.of(groups[name]) != manifest.counts.get(name):
            failures.append(f"{entry.path}: counts differ from the manifest's counts for {name}")
        if _cluster_ids(groups[name]) != manifest.clusters.get(name):
            failures.append(f"{entry.path}: cluster ids differ from the manifest's list for {name}")
    failures += _public_manifest_failures(path, manifest)
    expected = {*(e.path for e in manifest.files.values()), MANIFEST, PUBLIC_MANIFEST}
    for part in ("public", "sealed"):
        if (path / part).is_dir():
            extra = sorted(f"{part}/{f.name}" for f in (path / part).iterdir() if f"{part}/{f.name}" not in expected)
            failures += [f"{name}: not part of the suite (nothing may be added after publication)" for name in extra]
    failures += partition_failures(groups)
    failures += [f"manifest: {f}" for f in _manifest_cluster_overlaps(manifest)]
    ledger = suite.read_ledger()
    failures += ledger.failures
    failures += [f"{LEDGER}: {f}" for f in suite.replay_events(ledger.events).failures]
    return failures


def _public_manifest_failures(path: Path, manifest: SuiteManifest) -> list[str]:
    file = path / PUBLIC_MANIFEST
    if not file.is_file():
        return [f"{PUBLIC_MANIFEST}: missing"]
    try:
        public = PublicManifest.model_validate_json(file.read_bytes())
    except ValidationError:
        return [f"{PUBLIC_MANIFEST}: not a valid public manifest"]
    expected = (manifest.version, manifest.content_hash, manifest.files.get(PartitionName.public))
    if (public.version, public.content_hash, public.qualifying) != expected:
        return [f"{PUBLIC_MANIFEST}: version, content hash or qualifying file differ from {MANIFEST}"]
    return []


def _manifest_cluster_overlaps(manifest: SuiteManifest) -> list[str]:
    home: dict[str, PartitionName] = {}
    failures = []
    for name, ids in manifest.clusters.items():
        for cid in ids:
            if home.setdefault(cid, name) is not name:
                failures.append(f"cluster {cid} is listed in two partitions: {home[cid]} and {name}")
    return failures
