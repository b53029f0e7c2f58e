"""Host-wide leases on the sandbox's agent uids.

RLIMIT_NPROC counts the processes of a uid across the whole host, so two
episodes that share a uid share one process budget: a fork-happy agent would
make its neighbour's ``can't start new thread`` its loss. A per-process
counter gives every runner on the host the same uids, so each uid is leased
instead: one lock file per uid in a host-wide folder, held with ``flock`` for
as long as the episode runs. The kernel drops the lock when its holder exits,
SIGKILL included, so a crashed or restarted runner never strands a uid.
"""

from __future__ import annotations

import fcntl
import os
import random
import tempfile
from pathlib import Path

FIRST_AGENT_UID = 200_000
UID_SLOTS = 10_000


class UidsExhausted(RuntimeError):
    pass


def lease_dir() -> Path:
    """One folder per host, the same for every runner process (root or not)."""
    base = Path("/run") if os.geteuid() == 0 and os.access("/run", os.W_OK) else Path(tempfile.gettempdir())
    folder = base / f"trajectory-arena-uids-{os.geteuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder


class UidLease:
    """An agent uid held exclusively until :meth:`release` (or the process ends)."""

    def __init__(self, folder: Path | None = None, slots: int = UID_SLOTS) -> None:
        folder = folder or lease_dir()
        # Random probing: runners starting together rarely contend for the same file.
        start = random.randrange(slots)
        for step in range(slots):
            slot = (start + step) % slots
            fd = os.open(folder / f"{slot}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            self._fd: int | None = fd
            self.uid = FIRST_AGENT_UID + slot
            return
        raise UidsExhausted(f"all {slots} sandbox uids are in use on this host")

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the only descriptor drops the flock
            self._fd = None

    def __enter__(self) -> UidLease:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
