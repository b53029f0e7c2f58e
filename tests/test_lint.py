"""The house style is enforced, not hoped for: ruff's checks (pyproject's [tool.ruff]) pass on the whole tree."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def test_ruff_check_passes():
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.fail("ruff is not installed; it is in the dev extra: scripts/bootstrap dev")
    done = subprocess.run([ruff, "check", "--no-cache", str(REPO)], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
