"""Opening a tantivy index that may sit on a read-only mount.

tantivy takes its meta lock (a ``.tantivy-meta.lock`` file in the index
folder) while it loads the segment list, even to read, so on a read-only
mount (a worker's ``:ro`` catalog volume) opening fails with "Failed to
acquire Lockfile ... Read-only file system". When the folder is not writable
the index is opened through a private shadow folder instead: a symlink to
every file of the index, beside which tantivy may create its lock. Nothing is
ever written to the index folder itself. The shadow lives as long as the
process (removed at exit), and holds only links.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

import tantivy

LOCK_FILES = {".tantivy-meta.lock", ".tantivy-writer.lock"}


def _shadow(folder: Path) -> Path:
    shadow = Path(tempfile.mkdtemp(prefix="arena-index-shadow-"))
    atexit.register(shutil.rmtree, shadow, True)
    for entry in folder.iterdir():
        if entry.name not in LOCK_FILES and entry.is_file():
            (shadow / entry.name).symlink_to(entry.resolve())
    return shadow


def open_index(folder: str | Path) -> tantivy.Index:
    """``tantivy.Index.open`` that never writes to a read-only ``folder``."""
    folder = Path(folder)
    try:
        index = tantivy.Index.open(str(folder))
        index.searcher()  # the meta lock is taken here, not by open()
        return index
    except ValueError as exc:  # tantivy-py reports an IO error as ValueError
        if "Lockfile" not in str(exc) and "Read-only" not in str(exc):
            raise
    return tantivy.Index.open(str(_shadow(folder)))
