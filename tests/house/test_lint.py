"""The house style is enforced, not hoped for: ruff's checks and formatter (pyproject's [tool.ruff])
pass on the whole tree's Python files."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _ruff(*args: str) -> subprocess.CompletedProcess:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.fail("ruff is not installed; it is in the dev extra: scripts/bootstrap dev")
    return subprocess.run([ruff, *args, "--no-cache", str(REPO)], capture_output=True, text=True, cwd=REPO)


def test_ruff_check_passes():
    done = _ruff("check")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_ruff_format_leaves_python_files_as_they_are():
    # Markdown code blocks are examples for readers, laid out by hand.
    done = _ruff("format", "--check", "--extend-exclude", "*.md")
    assert done.returncode == 0, "run `ruff format` on:\n" + done.stdout[-4000:] + done.stderr[-2000:]
