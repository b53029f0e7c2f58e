"""The read-only runtime a sandboxed agent sees: the allowed packages and the SDK.

Only the distributions an agent may import (``openai``, ``httpx``,
``pydantic`` and what they require) are copied, file by file from their
installed metadata, into one folder outside the project; that folder and the
SDK are bound read-only at neutral paths (``/opt/site``, ``/opt/sdk``), so
the agent never sees the validator's virtual environment or its parents.
Built once per set of package versions and reused; runtimes nobody has
opened for a week are removed when a new one is built.
"""

from __future__ import annotations

import compileall
import hashlib
import os
import re
import shutil
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

ALLOWED_ROOTS = ("openai", "httpx", "pydantic")
# A runtime unused this long is pruned. Generous because another validator (an older
# checkout on the same machine) may still run on it: its READY file's mtime is its last use.
STALE_AFTER_S = 7 * 24 * 3600
# How often a long-running runner re-ensures (and so marks in use) its runtime.
RUNTIME_RECHECK_S = 3600
# A staging folder this old belongs to a build that died.
ABANDONED_BUILD_S = 3600
_RUNNER_DIR = Path(__file__).resolve().parent
_SDK_FILE = _RUNNER_DIR.parent / "sdk.py"
_BOOT_FILE = _RUNNER_DIR / "boot.py"


class RuntimeBuildError(RuntimeError):
    pass


def _requirement_name(requirement: str) -> str | None:
    if ";" in requirement and "extra ==" in requirement.split(";", 1)[1]:
        return None  # optional extras are not part of what an agent gets
    match = re.match(r"[A-Za-z0-9_.\-]+", requirement)
    return match.group(0) if match else None


def dependency_closure(roots: tuple[str, ...] = ALLOWED_ROOTS) -> list[metadata.Distribution]:
    seen: dict[str, metadata.Distribution] = {}
    stack = list(roots)
    while stack:
        name = stack.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            if name in roots:
                raise RuntimeBuildError(f"the sandbox needs the package {name!r}, which is not installed") from None
            continue  # an optional dependency that is not installed
        seen[key] = dist
        for requirement in dist.requires or []:
            dep = _requirement_name(requirement)
            if dep:
                stack.append(dep)
    return sorted(seen.values(), key=lambda d: d.metadata["Name"].lower())


def runtime_key(dists: list[metadata.Distribution]) -> str:
    digest = hashlib.sha256()
    for dist in dists:
        digest.update(f"{dist.metadata['Name']}=={dist.version}\n".encode())
    digest.update(_SDK_FILE.read_bytes())
    digest.update(_BOOT_FILE.read_bytes())
    digest.update(sys.version.encode())
    digest.update(b"bytecode-1")  # runtimes built before bytecode was shipped are rebuilt
    return digest.hexdigest()[:16]


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "trajectory-arena" / "sandbox-runtime"


def ensure_runtime(cache_dir: Path | None = None) -> Path:
    """The runtime folder (``site/``, ``sdk/``), built if missing. Safe under
    concurrency: built in a temporary folder and renamed into place."""
    dists = dependency_closure()
    cache_dir = cache_dir or default_cache_dir()
    target = cache_dir / runtime_key(dists)
    if (target / "READY").is_file():
        os.utime(target / "READY")  # marks it in use, so pruning leaves it alone
        return target
    cache_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".building-", dir=cache_dir))
    try:
        site = staging / "site"
        site.mkdir()
        for dist in dists:
            for file in dist.files or []:
                parts = Path(file).parts
                if not parts or parts[0] == ".." or "__pycache__" in parts or str(file).endswith(".pyc"):
                    continue  # scripts outside site-packages and bytecode are not needed
                # typeshed's SimplePath has no __fspath__; an installed (path) distribution returns a Path
                source = Path(dist.locate_file(file))  # type: ignore[arg-type]
                if source.is_file():
                    dest = site / file
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(source, dest)
        sdk = staging / "sdk" / "arena"
        sdk.mkdir(parents=True)
        (sdk / "__init__.py").write_text('"""The arena SDK, as seen inside the sandbox."""\n')
        shutil.copy2(_SDK_FILE, sdk / "sdk.py")
        shutil.copy2(_BOOT_FILE, staging / "sdk" / "boot.py")
        # Bytecode compiled once here: the sandbox's root is read-only, so without it every
        # episode would compile openai from source again (seconds per episode).
        compileall.compile_dir(str(site), quiet=2, workers=1)
        compileall.compile_dir(str(staging / "sdk"), quiet=2, workers=1)
        for path in staging.rglob("*"):
            # World-readable: the agent runs as an unprivileged uid.
            path.chmod(0o755 if path.is_dir() else 0o644)
        staging.chmod(0o755)
        (staging / "READY").write_text("\n".join(f"{d.metadata['Name']}=={d.version}" for d in dists) + "\n")
        try:
            staging.rename(target)
        except OSError:
            if not (target / "READY").is_file():
                raise
            shutil.rmtree(staging, ignore_errors=True)  # another process won the race
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    prune_runtimes(cache_dir, keep=target)
    return target


def prune_runtimes(cache_dir: Path, keep: Path, now: float | None = None) -> list[Path]:
    """Remove runtimes unused for ``STALE_AFTER_S`` and abandoned builds; returns what went.
    Each runtime is ~50 MB and every SDK or package change makes a new one."""
    now = time.time() if now is None else now
    removed = []
    for entry in cache_dir.iterdir():
        if entry == keep or not entry.is_dir():
            continue
        try:
            if entry.name.startswith(".building-"):
                stale = now - entry.stat().st_mtime > ABANDONED_BUILD_S
            else:
                stale = now - (entry / "READY").stat().st_mtime > STALE_AFTER_S
        except FileNotFoundError:
            continue  # not a runtime (or removed meanwhile): leave it
        if stale:
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed
