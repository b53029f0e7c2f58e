"""The plain files a catalog index is made of: numpy arrays and string tables.

Everything is opened read-only and memory-mapped, so an index on a read-only mount opens
without writing a byte, several worker processes share one copy in the page cache, and
opening a 2.5M-product index costs milliseconds, not a load.
"""

from __future__ import annotations

import mmap
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np


def save_array(folder: Path, name: str, values: np.ndarray) -> None:
    np.save(folder / f"{name}.npy", np.ascontiguousarray(values), allow_pickle=False)


def load_array(folder: Path, name: str) -> np.ndarray:
    return np.load(folder / f"{name}.npy", mmap_mode="r", allow_pickle=False)


class BlobWriter:
    """Appends byte strings to ``NAME.bin`` and their offsets to ``NAME_offsets.npy``."""

    def __init__(self, folder: Path, name: str) -> None:
        self.folder, self.name = folder, name
        self._file = (folder / f"{name}.bin").open("wb")
        self._offsets = [0]

    def add(self, data: bytes) -> None:
        self._file.write(data)
        self._offsets.append(self._offsets[-1] + len(data))

    def close(self) -> None:
        self._file.close()
        save_array(self.folder, f"{self.name}_offsets", np.array(self._offsets, dtype=np.int64))


def write_blobs(folder: Path, name: str, items: Iterable[bytes]) -> None:
    writer = BlobWriter(folder, name)
    for item in items:
        writer.add(item)
    writer.close()


class Blobs(Sequence[bytes]):
    """The byte strings ``BlobWriter`` wrote, by position."""

    def __init__(self, folder: Path, name: str) -> None:
        # A plain array over the mapping: a memmap's own indexing runs Python code per item.
        self._offsets = np.asarray(load_array(folder, f"{name}_offsets"))
        path = folder / f"{name}.bin"
        with path.open("rb") as handle:
            # mmap refuses an empty file; an empty table needs no mapping.
            self._data: bytes | mmap.mmap = (
                mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if path.stat().st_size else b""
            )

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def __getitem__(self, i):
        if isinstance(i, slice):
            raise TypeError("Blobs take one position at a time")
        start, end = self._offsets[i], self._offsets[i + 1]
        return self._data[start:end]  # (a slice of an mmap or of bytes is a new bytes object)

    def find(self, key: bytes) -> int | None:
        """The position of ``key`` in a table written in sorted (byte) order, or None."""
        low, high = 0, len(self)
        while low < high:
            middle = (low + high) // 2
            if self[middle] < key:
                low = middle + 1
            else:
                high = middle
        return low if low < len(self) and self[low] == key else None
