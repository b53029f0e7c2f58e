"""Episode folders live under one runner-owned directory, and a dead runner's are swept away.

An episode folder holds the agent's source (``agent/agent.py``, embargoed
while the race runs) and the episode's socket. The runner removes it when the
episode ends, but a SIGKILL never runs that cleanup. So every folder sits
under one directory per host and user, inside the folder of the process that
made it::

    <root>/                      0700, owned by the runner's user (refused otherwise), short
                                 enough for the sockets below it (at most 52 bytes)
        .sweep.lock              serialises making an owner folder with sweeping
        owner-<pid>-<start>/     one per runner process (<start>: its start in ms, base 36)
            .lock                flock-held by that process for its whole life
            episode-XXXX/        agent/agent.py, arena.sock

The kernel drops a flock when its holder dies, SIGKILL included, so "the owner
is gone" is exactly "its .lock can be locked". ``sweep`` (a worker runs it at
start and every ``race.housekeeping_s``) removes the folders of every owner
gone; a process removes its own folder when it exits normally.
"""

from __future__ import annotations

import atexit
import fcntl
import logging
import os
import shutil
import stat
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

logger = logging.getLogger(__name__)

OWNER_PREFIX = "owner-"
LOCK_NAME = ".lock"
SWEEP_LOCK = ".sweep.lock"
# A Unix socket path holds at most 107 bytes; below the root come "/owner-<pid>-<start>" (at most 27),
# "/episode-XXXXXXXX" (17) and "/arena.sock" (11).
SOCKET_PATH_MAX = 107
BELOW_ROOT = 27 + 17 + 11


class WorkdirError(RuntimeError):
    """The episodes' directory is not safe to use (someone else's, a symlink, open to others)."""


def default_root() -> Path:
    return Path(tempfile.gettempdir()) / f"trajectory-arena-episodes-{os.geteuid()}"


def episodes_root(root: Path | None = None) -> Path:
    """The directory, created 0700 if missing; refused unless it is a real directory of ours, closed to others
    (in a shared /tmp another user could have made it first)."""
    root = root or default_root()
    try:
        root.mkdir(mode=0o700, parents=True)
    except FileExistsError:
        pass
    info = os.lstat(root)
    if not stat.S_ISDIR(info.st_mode):
        raise WorkdirError(f"{root} is not a directory (a symlink?); remove it or set runner.work_dir")
    if len(os.fsencode(root)) + BELOW_ROOT > SOCKET_PATH_MAX:
        raise WorkdirError(
            f"{root} is too long for the episodes' sockets (at most {SOCKET_PATH_MAX - BELOW_ROOT} bytes): "
            f"set runner.work_dir to a shorter path"
        )
    if info.st_uid != os.geteuid() or info.st_mode & 0o077:
        raise WorkdirError(
            f"{root} belongs to uid {info.st_uid} with mode {stat.filemode(info.st_mode)}; the episodes' directory "
            f"must be the runner's own (uid {os.geteuid()}, 0700): remove it or set runner.work_dir"
        )
    return root


@contextmanager
def _sweep_lock(root: Path):
    fd = os.open(root / SWEEP_LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


class _Owner:
    """This process's folder under one root, and the flock that says the process is alive."""

    def __init__(self, root: Path) -> None:
        with _sweep_lock(root):
            self.folder = root / f"{OWNER_PREFIX}{os.getpid()}-{_base36(time.time_ns() // 1_000_000)}"
            self.folder.mkdir(mode=0o700)
            self._fd = os.open(self.folder / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # new file: nobody else can hold it

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
        os.close(self._fd)


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while n:
        n, r = divmod(n, 36)
        out = digits[r] + out
    return out or "0"


_owners: dict[tuple[Path, int], _Owner] = {}
_owners_lock = threading.Lock()


def owner_folder(root: Path | None = None) -> Path:
    """This process's folder under ``root`` (made on first use)."""
    root = episodes_root(root)
    key = (root, os.getpid())  # keyed by pid: a forked child makes its own
    with _owners_lock:
        if key not in _owners or not _owners[key].folder.is_dir():  # gone: a tmp cleaner, a careless sweep by hand
            _owners[key] = _Owner(root)
        return _owners[key].folder


def new_episode_folder(root: Path | None = None) -> Path:
    """A fresh private folder for one episode, inside this process's owner folder."""
    return Path(tempfile.mkdtemp(prefix="episode-", dir=owner_folder(root)))


def _owner_gone(folder: Path) -> bool:
    try:
        fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        return True  # its maker died before locking (it made the folder under the sweep lock we now hold)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


def sweep(root: Path | None = None) -> list[Path]:
    """Remove the owner folders (episodes and all) of every runner process gone; the folders removed."""
    root = episodes_root(root)
    removed = []
    with _sweep_lock(root):
        for folder in sorted(root.glob(f"{OWNER_PREFIX}*")):
            if folder.is_dir() and not folder.is_symlink() and _owner_gone(folder):
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder)
    if removed:
        logger.warning("removed %d episode folder owner(s) left by dead runners under %s", len(removed), root)
    return removed


@atexit.register
def _remove_own_folders() -> None:
    for (_root, pid), owner in list(_owners.items()):
        if pid == os.getpid():
            owner.remove()
