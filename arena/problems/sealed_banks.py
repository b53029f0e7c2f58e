"""Sealed banks: how a suite's hidden partitions travel between validators without miners seeing them.

``seal_bank`` archives ``sealed/`` deterministically (its sha256 names the bank
and is sent beside it by another channel); ``import_sealed_bank`` verifies that
sha256 before reading a byte, refuses any member outside ``sealed/``, and
unpacks the bank as a suite.
"""

from __future__ import annotations

import gzip
import io
import os
import shutil
import tarfile
from pathlib import Path

from arena.problems.partitions import PartitionName
from arena.problems.suite_manifest import (
    MANIFEST,
    PUBLIC_MANIFEST,
    SuiteError,
    SuiteManifest,
    read_manifest,
    sha256_file,
)
from arena.problems.suites import Suite, check_suite, make_read_only, remove_tree

SEALED_PREFIX = "sealed"
MAX_MEMBER_BYTES = 1 << 30  # a problem file this big is not a suite; refuse before writing a byte


def seal_bank(suite_dir: str | Path, out_archive: str | Path) -> str:
    """Archive ``sealed/`` as a deterministic tar.gz and return its sha256.

    Sorted entries, mtime 0, uid/gid 0, no user names, fixed modes and a gzip
    header without time or name: the same suite gives the same bytes (with the
    same zlib), so the sha256 names the bank and can be sent beside it.
    """
    suite_dir, out_archive = Path(suite_dir), Path(out_archive)
    failures = check_suite(suite_dir)
    if failures:
        raise SuiteError(f"refusing to seal {suite_dir}, it fails its check: " + "; ".join(failures))
    if out_archive.exists():
        raise SuiteError(f"{out_archive} already exists; an archive is never overwritten")
    manifest = read_manifest(suite_dir)
    listed = [e.path for name, e in manifest.files.items() if name is not PartitionName.public]
    members = sorted(suite_dir / relative for relative in [*listed, MANIFEST])
    tmp = out_archive.with_name(f".{out_archive.name}.partial-{os.getpid()}")
    try:
        with tmp.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz:
            with tarfile.open(fileobj=gz, mode="w", format=tarfile.USTAR_FORMAT) as tar:
                tar.addfile(_tar_info(SEALED_PREFIX, tarfile.DIRTYPE, 0o755))
                for file in members:
                    data = file.read_bytes()
                    info = _tar_info(f"{SEALED_PREFIX}/{file.name}", tarfile.REGTYPE, 0o444, len(data))
                    tar.addfile(info, io.BytesIO(data))
        tmp.rename(out_archive)
    finally:
        tmp.unlink(missing_ok=True)
    return sha256_file(out_archive)


def _tar_info(name: str, kind: bytes, mode: int, size: int = 0) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.size = kind, mode, size
    info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
    return info


def import_sealed_bank(
    archive: str | Path, expected_sha256: str, dest: str | Path, public: str | Path | None = None
) -> Suite:
    """Verify a sealed bank's sha256, then unpack it as a suite at ``dest``.

    Nothing is read from the archive before its sha256 matches. Every member
    must be a plain file or folder under ``sealed/`` (no absolute path, no
    ``..``, no link or device), all checked before anything is written. The
    unpacked files are verified against the sealed manifest. ``public`` is the
    published ``public/`` folder of the same suite, verified and copied beside
    it; without it the copy can draw races but `check_suite` reports public/ missing.
    """
    archive, dest = Path(archive), Path(dest)
    expected = expected_sha256.lower().removeprefix("0x")
    if len(expected) != 64 or any(c not in "0123456789abcdef" for c in expected):
        raise SuiteError(f"expected sha256 {expected_sha256!r} is not 64 hex digits")
    if not archive.is_file():
        raise SuiteError(f"{archive}: no such archive")
    actual = sha256_file(archive)
    if actual != expected:
        raise SuiteError(f"{archive}: sha256 {actual} does not match the expected {expected}; refusing to extract")
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise SuiteError(f"{dest} already exists; importing never overwrites a suite")
    files = _read_members(archive)
    tmp = dest.parent / f".{dest.name}.partial-{os.getpid()}"
    remove_tree(tmp)
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        for name, data in files.items():
            target = tmp / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        manifest = read_manifest(tmp)
        if public is not None:
            _copy_public(Path(public), tmp, manifest)
        failures = [
            f"{entry.path}: missing from the archive or its sha256 differs from the sealed manifest"
            for name, entry in manifest.files.items()
            if name is not PartitionName.public
            and (not (tmp / entry.path).is_file() or sha256_file(tmp / entry.path) != entry.sha256)
        ]
        if failures:
            raise SuiteError(f"{archive}: " + "; ".join(failures))
        make_read_only(tmp)
        tmp.rename(dest)
    finally:
        remove_tree(tmp)
    return Suite(dest)


def _read_members(archive: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            for member in tar:
                name = member.name.rstrip("/")
                parts = name.split("/")
                if name.startswith("/") or ".." in parts or parts[0] != SEALED_PREFIX or "" in parts:
                    raise SuiteError(f"{archive}: member {member.name!r} is outside sealed/; refusing to extract")
                if member.isdir():
                    continue
                if not member.isfile():
                    raise SuiteError(f"{archive}: member {member.name!r} is a link or device; refusing to extract")
                if len(parts) != 2 or name in files or member.size > MAX_MEMBER_BYTES:
                    raise SuiteError(f"{archive}: member {member.name!r} is nested, repeated or too big; refusing")
                handle = tar.extractfile(member)
                assert handle is not None  # a regular file always has content
                files[name] = handle.read()
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise SuiteError(f"{archive}: not a readable tar.gz ({exc})") from None
    if f"{SEALED_PREFIX}/manifest.json" not in files:
        raise SuiteError(f"{archive}: no sealed/manifest.json inside; not a sealed bank")
    return files


def _copy_public(public: Path, tmp: Path, manifest: SuiteManifest) -> None:
    entry = manifest.files[PartitionName.public]
    qualifying = public / Path(entry.path).name
    if not qualifying.is_file() or sha256_file(qualifying) != entry.sha256:
        raise SuiteError(f"{qualifying}: missing or not the qualifying file this bank's manifest names")
    (tmp / "public").mkdir()
    shutil.copyfile(qualifying, tmp / entry.path)
    if (public / "manifest.json").is_file():
        shutil.copyfile(public / "manifest.json", tmp / PUBLIC_MANIFEST)
