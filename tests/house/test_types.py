"""The tree type-checks: mypy, configured by pyproject's [tool.mypy] (the packages it reads, the plugin,
the third-party packages typed as Any), finds no error in arena, judge, distill and neurons."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_mypy_finds_no_error():
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed; it is in the dev extra: scripts/bootstrap dev")
    # The cache (.mypy_cache, git-ignored) makes a second run take seconds; a cold one reads every
    # imported library's types once (about a minute).
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(REPO / ".mypy_cache")],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stdout[-8000:] + done.stderr[-2000:]
