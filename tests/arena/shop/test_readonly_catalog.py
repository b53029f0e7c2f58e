"""A catalog on a read-only mount (a worker's `:ro` volume) opens and searches, and nothing is written to it."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from arena.runner.sandbox import bubblewrap_path

pytestmark = pytest.mark.skipif(bubblewrap_path() is None, reason="bubblewrap is not installed")

PROBE = """
import sys
from arena.shop.index import CatalogIndex
from arena.generator.catalog_frame import CatalogFrame
from arena.shop.index import SearchFilters
index = CatalogIndex(sys.argv[1])
hits = index.bm25("widget", SearchFilters(), 10)
frame = CatalogFrame(sys.argv[1])
print("HITS", len(hits), "FRAME", len(frame))
"""


def listing(folder):
    return sorted((p.relative_to(folder).as_posix(), p.stat().st_mtime_ns) for p in folder.rglob("*"))


def test_the_index_opens_read_only_without_writing(catalog_dir, tmp_path):
    folder = tmp_path / "catalog"
    shutil.copytree(catalog_dir, folder)
    before = listing(folder)
    done = subprocess.run(
        [bubblewrap_path(), "--bind", "/", "/", "--ro-bind", str(folder), str(folder), "--dev", "/dev",
         "--proc", "/proc", sys.executable, "-c", PROBE, str(folder)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "HITS" in done.stdout and "HITS 0" not in done.stdout
    assert listing(folder) == before
