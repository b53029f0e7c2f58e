"""The README's main job: `arena demo` on a fresh directory, then again (it continues)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena.runner.sandbox import bubblewrap_path

ARENA = str(Path(sys.executable).parent / "arena")

pytestmark = pytest.mark.skipif(bubblewrap_path() is None, reason="bubblewrap is not installed")


def run_demo(workdir: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "ARENA_DATABASE_URL": f"sqlite:///{workdir / 'arena.db'}", "COLUMNS": "160"}
    done = subprocess.run(
        [ARENA, "demo", "--out", str(workdir / "demo"), "--products", "2000", "--problems", "32"],
        capture_output=True, text=True, cwd=workdir, env=env, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_demo_runs_a_whole_race_and_continues_on_rerun(tmp_path):
    first = run_demo(tmp_path)
    assert "Leaderboard after cycle 1" in first.stdout
    assert "champion: " in first.stdout and "champion: none yet" not in first.stdout
    assert "the copied agent was rejected: ast_copy" in first.stdout
    weights_line = next(line for line in first.stdout.splitlines() if line.startswith("weights"))
    weights = [float(part.split(":")[1]) for part in weights_line.split("->")[1].split(",")]
    assert abs(sum(weights) - 1.0) < 1e-6
    for name in ("train", "eval", "subtask", "rejected", "kto"):
        assert (tmp_path / "demo" / "corpus" / f"{name}.jsonl").is_file()
    assert (tmp_path / "demo" / "corpus" / "README.md").is_file()
    assert not (Path.home() / ".bittensor" / "wallets" / "tool_calling").exists()  # wallets stay in the demo folder
    assert (tmp_path / "demo" / "wallets" / "tool_calling").is_dir()

    second = run_demo(tmp_path)
    assert "Leaderboard after cycle 2" in second.stdout
    assert "catalog reusing" in second.stderr and "suite reusing" in second.stderr
