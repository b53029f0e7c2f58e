"""`arena suite import DIR`: a suite directory goes into the store; importing again is a no-op."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.test_store import make_suite

ARENA = str(Path(sys.executable).parent / "arena")


def test_suite_directory_is_imported_into_the_store_once(tmp_path):
    suite = make_suite(tmp_path / "suite", "cli", clusters=8)
    url = f"sqlite:///{tmp_path / 'arena.db'}"

    def run() -> subprocess.CompletedProcess:
        return subprocess.run([ARENA, "suite", "import", str(suite.path), "--database-url", url],
                              capture_output=True, text=True, timeout=120)  # fmt: skip

    first = run()
    assert first.returncode == 0, first.stderr
    imported = json.loads(first.stdout)
    assert imported["new_suite"] is True and imported["problems_added"] > 0
    again = json.loads(run().stdout)
    assert again["new_suite"] is False and again["problems_added"] == 0
    missing = subprocess.run([ARENA, "suite", "import", str(tmp_path / "nope.tar.gz")], capture_output=True, text=True)
    assert missing.returncode == 2 and "--sha256" in missing.stderr
